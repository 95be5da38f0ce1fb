// attention-lab-cli patch: activation patching, clean → corrupted, for one
// pair of prompts or the mean over a file of pairs (--prompts).

#include "interp_commands.h"

#include "bench.h"
#include "cli.h"
#include "interp_support.h"
#include "model_args.h"

#include "attention_lab/activation_patching.h"
#include "attention_lab/json_text.h"
#include "attention_lab/prompt_batch.h"
#include "attention_lab/transformer_forward.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace attention_lab::cli {

using json_text::quote;

namespace {

// What `patch` was asked, checked: the kinds to sweep, the pairs and each
// pair's metric (its answer and wrong token).
struct PatchRequest {
  std::string metric_name;  // logit_diff or prob
  std::vector<PatchKind> kinds;
  bool batch = false;       // --prompts: the pairs of a file
  std::vector<Prompt> pairs;
  std::vector<PatchMetric> metrics;
};

// What the sweeps found: per kind the mean over the pairs, and each pair's own.
struct PatchResults {
  std::vector<PatchSweep> sweeps;
  std::vector<std::vector<PatchSweep>> per_pair;
  std::vector<double> seconds;
};

// --kind K,K,… (or all); a status other than kExitOk after saying why not.
int read_kinds(const ModelArgs& a, std::vector<PatchKind>& kinds, std::ostream& err) {
  const std::string kind_names = a.values.count("--kind") ? a.values.at("--kind") : "resid_pre";
  std::istringstream list(kind_names);
  for (std::string name; std::getline(list, name, ',');) {
    if (name == "all") {
      kinds.assign(std::begin(kPatchKinds), std::end(kPatchKinds));
      continue;
    }
    PatchKind kind{};
    if (!parse_patch_kind(name, kind)) {
      std::string known;
      for (const PatchKind k : kPatchKinds) known += std::string(known.empty() ? "" : ", ") + to_string(k);
      return fail(err, "patch: --kind: '" + name + "': expected " + known + " or all");
    }
    kinds.push_back(kind);
  }
  return kExitOk;
}

// The pairs: the two prompts given, or each line of --prompts
// (clean<TAB>corrupted[<TAB>answer<TAB>wrong]).
int read_pairs(const ModelArgs& a, const Opened& o, const PatchMetric& metric, PatchRequest& r, std::ostream& err) {
  r.batch = a.values.count("--prompts") != 0;
  if (r.batch) {
    for (const char* given : {"--clean", "--clean-ids", "--corrupted", "--corrupted-ids"})
      if (a.values.count(given)) return fail(err, std::string("patch: --prompts goes without ") + given);
    if (int status = prompts_option("patch", a, o, PromptLayout::Pairs, r.pairs, err); status != kExitOk) return status;
  } else {
    const Encoded clean = prompt_option(a, o, "--clean"), corrupted = prompt_option(a, o, "--corrupted");
    if (!clean.error.empty()) return fail(err, "patch: " + clean.error);
    if (!corrupted.error.empty()) return fail(err, "patch: " + corrupted.error);
    if (clean.ids.size() != corrupted.ids.size())  // before running either: the usual mistake, said plainly
      return fail(err, "patch: " + check_patching(o.model->config, clean.ids, corrupted.ids, metric));
    r.pairs.assign(1, Prompt{});
    r.pairs[0].ids = clean.ids;
    r.pairs[0].corrupted_ids = corrupted.ids;
  }
  for (const PatchKind kind : r.kinds)  // a mean over positions needs one length
    for (const Prompt& p : r.pairs)
      if (columns_of(kind) != PatchColumns::Heads && p.ids.size() != r.pairs[0].ids.size())
        return fail(err, "patch: --prompts: " + a.values.at("--prompts") + " line " + std::to_string(p.line) + " has " +
                             std::to_string(p.ids.size()) + " tokens and line " + std::to_string(r.pairs[0].line) + " has " +
                             std::to_string(r.pairs[0].ids.size()) + ": --kind " + to_string(kind) +
                             " averages over positions, so every pair needs one length (z, q, k, v and pattern do not)");
  return kExitOk;
}

// Each pair's metric: its line's answer and wrong token, else --answer and
// --wrong, else the prompt's own most likely next token.
int read_metrics(const ModelArgs& a, const Opened& o, const PatchMetric& metric, PatchRequest& r, std::ostream& err) {
  const TokenChoice answer = token_option(a, o, "--answer"), wrong = token_option(a, o, "--wrong");
  if (!answer.error.empty()) return fail(err, "patch: " + answer.error);
  if (!wrong.error.empty()) return fail(err, "patch: " + wrong.error);
  if (metric.kind == PatchMetric::Probability && wrong.given)
    return fail(err, "patch: --wrong goes with --metric logit_diff (prob measures the answer alone)");
  const auto top_of = [&](const std::vector<int>& ids) { return argmax(run_model(*o.model, ids, 1).logits.row(0)); };
  for (const Prompt& p : r.pairs) {
    PatchMetric m = metric;
    const std::string where = r.batch ? a.values.at("--prompts") + " line " + std::to_string(p.line) + ": " : "";
    m.answer = p.answer >= 0 ? p.answer : answer.given ? answer.id : top_of(p.ids);
    m.wrong = metric.kind == PatchMetric::Probability ? 0 : p.wrong >= 0 ? p.wrong : wrong.given ? wrong.id : top_of(p.corrupted_ids);
    if (std::string e = check_patching(o.model->config, p.ids, p.corrupted_ids, m); !e.empty())
      return fail(err, "patch: " + where + e);
    if (m.kind == PatchMetric::LogitDiff && m.answer == m.wrong)
      return fail(err, "patch: " + where + "the answer and the wrong token are both '" + o.tokenizer->label(m.answer) +
                           "': the logit difference is 0 on every run (give --answer and --wrong" +
                           (r.batch ? ", or the line's third and fourth fields)" : ")"));
    r.metrics.push_back(m);
  }
  return kExitOk;
}

int read_patch_request(const ModelArgs& a, const Opened& o, PatchRequest& r, std::ostream& err) {
  PatchMetric metric;
  r.metric_name = a.values.count("--metric") ? a.values.at("--metric") : "logit_diff";
  if (r.metric_name == "prob") metric.kind = PatchMetric::Probability;
  else if (r.metric_name != "logit_diff")
    return fail(err, "patch: --metric: expected logit_diff or prob, found '" + r.metric_name + "'");
  if (int status = read_kinds(a, r.kinds, err); status != kExitOk) return status;
  if (int status = read_pairs(a, o, metric, r, err); status != kExitOk) return status;
  return read_metrics(a, o, metric, r, err);
}

PatchResults run_patch(const TransformerModel& model, const PatchRequest& r) {
  PatchResults x;
  x.per_pair.resize(r.pairs.size());
  for (const PatchKind kind : r.kinds) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < r.pairs.size(); ++i)
      x.per_pair[i].push_back(patch_sweep(model, r.pairs[i].ids, r.pairs[i].corrupted_ids, kind, r.metrics[i]));
    std::vector<PatchSweep> of_kind;
    for (const std::vector<PatchSweep>& p : x.per_pair) of_kind.push_back(p.back());
    x.sweeps.push_back(mean_sweep(of_kind));
    x.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return x;
}

void write_metric_json(std::ostream& s, const Tokenizer& t, const std::string& name, const PatchMetric& m, const PatchSweep& w) {
  s << "{\"kind\": " << quote(name) << ", \"answer\": " << m.answer << ", \"answer_token\": " << quote(t.token_text(m.answer));
  if (m.kind == PatchMetric::LogitDiff) s << ", \"wrong\": " << m.wrong << ", \"wrong_token\": " << quote(t.token_text(m.wrong));
  s << ", \"clean\": " << shortest(w.clean) << ", \"corrupted\": " << shortest(w.corrupted) << "}";
}

void write_patch_json(std::ostream& s, const Tokenizer& t, const PatchRequest& r, const PatchResults& x) {
  if (r.batch) {
    s << "{\"pairs\": [";
    for (std::size_t i = 0; i < r.pairs.size(); ++i) {
      s << (i ? ", " : "") << "{\"line\": " << r.pairs[i].line << ", \"clean\": ";
      write_ints(s, r.pairs[i].ids);
      s << ", \"corrupted\": ";
      write_ints(s, r.pairs[i].corrupted_ids);
      s << ", \"metric\": ";
      write_metric_json(s, t, r.metric_name, r.metrics[i], x.per_pair[i][0]);
      s << ", \"sweeps\": [";  // each kind's patched metric for this pair
      for (std::size_t k = 0; k < x.per_pair[i].size(); ++k) {
        s << (k ? ", " : "");
        write_rows(s, x.per_pair[i][k].metric);
      }
      s << "]}";
    }
    s << "], \"metric\": {\"kind\": " << quote(r.metric_name) << ", \"clean\": " << shortest(x.sweeps[0].clean)
      << ", \"corrupted\": " << shortest(x.sweeps[0].corrupted) << "}";
  } else {
    s << "{\"clean\": {\"ids\": ";
    write_ints(s, r.pairs[0].ids);
    s << ", \"tokens\": ";
    write_tokens(s, t, r.pairs[0].ids);
    s << "}, \"corrupted\": {\"ids\": ";
    write_ints(s, r.pairs[0].corrupted_ids);
    s << ", \"tokens\": ";
    write_tokens(s, t, r.pairs[0].corrupted_ids);
    s << "}, \"metric\": ";
    write_metric_json(s, t, r.metric_name, r.metrics[0], x.sweeps[0]);
  }
  s << ", \"sweeps\": [";
  for (std::size_t i = 0; i < x.sweeps.size(); ++i) {
    const PatchSweep& w = x.sweeps[i];
    s << (i ? ", " : "") << "{\"kind\": " << quote(to_string(w.kind)) << ", \"rows\": \"layer\", \"columns\": "
      << quote(to_string(columns_of(w.kind))) << ", \"heads\": " << w.heads << ", \"seconds\": " << shortest(x.seconds[i])
      << ", \"normalised\": ";
    write_rows(s, w.normalised());
    s << ", \"metric\": ";
    write_rows(s, w.metric);
    s << "}";
  }
  s << "]}\n";
}

// With --prompts, the mean first, then each pair by its line.
void write_patch_csv(std::ostream& s, const PatchRequest& r, const PatchResults& x) {
  s << (r.batch ? "pair," : "") << "kind,layer,position,head,metric,normalised\n";
  for (std::size_t pair = 0; pair <= (r.batch ? r.pairs.size() : 0); ++pair)
    for (std::size_t k = 0; k < x.sweeps.size(); ++k) {
      const PatchSweep& w = pair == 0 ? x.sweeps[k] : x.per_pair[pair - 1][k];
      const std::string prefix = !r.batch ? "" : pair == 0 ? "mean," : std::to_string(r.pairs[pair - 1].line) + ",";
      const Eigen::MatrixXd n = w.normalised();
      const PatchColumns columns = columns_of(w.kind);
      for (Eigen::Index l = 0; l < n.rows(); ++l)
        for (Eigen::Index i = 0; i < n.cols(); ++i) {
          const Eigen::Index position = columns == PatchColumns::Positions          ? i
                                        : columns == PatchColumns::PositionsByHeads ? i / w.heads
                                                                                    : -1;
          const Eigen::Index head = columns == PatchColumns::Positions          ? -1
                                    : columns == PatchColumns::PositionsByHeads ? i % w.heads
                                                                                : i;
          s << prefix << to_string(w.kind) << ',' << l << ',' << (position < 0 ? "" : std::to_string(position)) << ','
            << (head < 0 ? "" : std::to_string(head)) << ',' << shortest(w.metric(l, i)) << ','
            << (std::isfinite(n(l, i)) ? shortest(n(l, i)) : "") << '\n';
        }
    }
}

// One sweep as a layer × position (or head) table, a block per position for
// the kinds by position and head.
void write_sweep_table(std::ostream& s, const PatchSweep& w, double seconds, const std::vector<std::string>& labels) {
  const Eigen::MatrixXd n = w.normalised();
  const bool by_position = columns_of(w.kind) == PatchColumns::Positions;
  const int blocks = columns_of(w.kind) == PatchColumns::PositionsByHeads ? w.positions : 1;
  for (int b = 0; b < blocks; ++b) {
    s << '\n' << to_string(w.kind) << " (layer × " << (by_position ? "position" : "head")
      << (blocks > 1 ? ", position " + std::to_string(b) + " '" + labels[static_cast<std::size_t>(b)] + "'" : "")
      << (b == 0 ? ", " + bench::fixed(seconds, 2) + " s" : "") << "):\n      ";
    const int width = static_cast<int>(by_position ? n.cols() : w.heads);
    std::vector<std::string> heads;
    std::size_t column = 6;  // each column as wide as the longest token label, whole
    for (int col = 0; col < width; ++col) {
      heads.push_back(by_position ? labels[static_cast<std::size_t>(col)] : "h" + std::to_string(col));
      column = std::max(column, shown_width(heads.back()) + 1);
    }
    for (const std::string& head : heads) s << pad(head, column + 1);
    s << '\n';
    for (Eigen::Index l = 0; l < n.rows(); ++l) {
      s << std::setw(6) << std::left << ("L" + std::to_string(l)) << std::right;
      for (int col = 0; col < width; ++col) {
        const double v = n(l, static_cast<Eigen::Index>(b) * width + col);
        s << pad(std::isfinite(v) ? bench::fixed(v, 2) : "—", column + 1);
      }
      s << '\n';
    }
  }
}

void write_patch_table(std::ostream& s, const Tokenizer& t, const PatchRequest& r, const PatchResults& x,
                       const std::string& prompts_file) {
  const auto metric_of = [&](const PatchMetric& m) {
    return m.kind == PatchMetric::LogitDiff ? "logit['" + t.label(m.answer) + "'] − logit['" + t.label(m.wrong) + "']"
                                            : "p('" + t.label(m.answer) + "')";
  };
  const PatchMetric& first = r.metrics[0];
  const bool one_metric = std::all_of(r.metrics.begin(), r.metrics.end(), [&](const PatchMetric& m) {
    return m.answer == first.answer && m.wrong == first.wrong;
  });
  const std::string metric_text = one_metric ? metric_of(first)
                                  : first.kind == PatchMetric::LogitDiff ? "each pair's logit difference of its answer and wrong token"
                                                                         : "each pair's p(answer)";
  s << "activation patching, clean → corrupted ("
    << (r.batch ? "the mean over " + std::to_string(r.pairs.size()) + " pairs of " + prompts_file
                : std::to_string(r.pairs[0].ids.size()) + " tokens")
    << "); metric " << metric_text << ": clean " << bench::fixed(x.sweeps[0].clean, 4) << ", corrupted "
    << bench::fixed(x.sweeps[0].corrupted, 4) << "; shown normalised: 0 = corrupted, 1 = clean\n";
  if (r.batch)
    for (std::size_t i = 0; i < r.pairs.size(); ++i)
      s << "  line " << r.pairs[i].line << ": " << metric_of(r.metrics[i]) << " clean " << bench::fixed(x.per_pair[i][0].clean, 4)
        << ", corrupted " << bench::fixed(x.per_pair[i][0].corrupted, 4) << '\n';
  // Positions are named by the first pair's tokens; in a batch by number (the pairs' tokens differ).
  std::vector<std::string> labels = t.labels(r.pairs[0].ids);
  if (r.batch)
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = "p" + std::to_string(i);
  for (std::size_t i = 0; i < x.sweeps.size(); ++i) write_sweep_table(s, x.sweeps[i], x.seconds[i], labels);
}

}  // namespace

int cmd_patch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (int status = read_model_options("patch", args,
                                      {"--model", "--clean", "--clean-ids", "--corrupted", "--corrupted-ids", "--answer",
                                       "--answer-id", "--wrong", "--wrong-id", "--metric", "--kind", "--prompts", "-o"},
                                      {"--json", "--csv"}, a, err);
      status != kExitOk)
    return status;
  const Opened o = open_model(a.values.at("--model"));
  if (!o.error.empty()) return fail(err, o.error);
  PatchRequest r;
  if (int status = read_patch_request(a, o, r, err); status != kExitOk) return status;
  const PatchResults x = run_patch(*o.model, r);
  std::ostringstream s;
  if (a.flags.count("--json")) write_patch_json(s, *o.tokenizer, r, x);
  else if (a.flags.count("--csv")) write_patch_csv(s, r, x);
  else write_patch_table(s, *o.tokenizer, r, x, r.batch ? a.values.at("--prompts") : "");
  return emit_text(s.str(), a, out, err);
}

}  // namespace attention_lab::cli
