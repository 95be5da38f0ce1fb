#include "interp_commands.h"

#include "cli.h"
#include "bench.h"
#include "model_args.h"

#include "attention_lab/ablation.h"
#include "attention_lab/activation_patching.h"
#include "attention_lab/head_detectors.h"
#include "attention_lab/hook_cache.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/logit_attribution.h"
#include "attention_lab/json_text.h"
#include "attention_lab/logit_lens.h"
#include "attention_lab/prompt_batch.h"
#include "attention_lab/transformer_forward.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace attention_lab::cli {

using json_text::quote;

namespace {

// One token named by --NAME TEXT (which must tokenize to exactly one token)
// or --NAME-id N. `given` is false when neither was.
struct TokenChoice {
  int id = -1;
  bool given = false;
  std::string error;
};
TokenChoice token_option(const ModelArgs& a, const Opened& o, const std::string& name) {
  TokenChoice t;
  const auto text = a.values.find(name), id = a.values.find(name + "-id");
  if (text != a.values.end() && id != a.values.end()) {
    t.error = name + " and " + name + "-id: expected one of them";
    return t;
  }
  t.given = text != a.values.end() || id != a.values.end();
  if (id != a.values.end()) {
    if (!parse_int(id->second, 0, o.model->config.vocab - 1, t.id))
      t.error = name + "-id: expected 0 to " + std::to_string(o.model->config.vocab - 1) + ", found '" + id->second + "'";
  } else if (text != a.values.end()) {
    if (std::string e = o.tokenizer->single_token(text->second, t.id); !e.empty())
      t.error = name + " " + e + (e.find("expected one") != std::string::npos ? "; give " + name + "-id N for a token by its id" : "");
  }
  return t;
}

// The ids of --NAME TEXT or --NAME-ids I,J,… (one of them), checked against the model.
Encoded prompt_option(const ModelArgs& a, const Opened& o, const std::string& name) {
  const auto text = a.values.find(name), ids = a.values.find(name + "-ids");
  Encoded e;
  if ((text == a.values.end()) == (ids == a.values.end())) {
    e.error = "expected " + name + " TEXT or " + name + "-ids I,J,… (one of them)";
    return e;
  }
  e = text != a.values.end() ? o.tokenizer->encode(text->second) : o.tokenizer->parse_ids(ids->second);
  if (e.error.empty()) {
    if (std::string problem = check_ids(o.model->config, e.ids); !problem.empty()) {
      e.ids.clear();
      e.error = problem;
    }
  }
  if (!e.error.empty()) e.error = (text != a.values.end() ? name : name + "-ids") + ": " + e.error;
  return e;
}

// Writes a matrix of doubles as nested JSON arrays (NaN as null).
void write_rows(std::ostream& s, const Eigen::MatrixXd& m) {
  s << '[';
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    s << (r ? ", " : "") << '[';
    for (Eigen::Index c = 0; c < m.cols(); ++c) s << (c ? ", " : "") << (std::isfinite(m(r, c)) ? shortest(m(r, c)) : "null");
    s << ']';
  }
  s << ']';
}

// A CSV field: quoted, with quotes doubled.
std::string csv(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The characters of UTF-8 text (a token label's "␣" is one).
std::size_t shown_width(const std::string& text) {
  std::size_t shown = 0;
  for (const char c : text) shown += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return shown;
}

// `text` right-aligned in `width` characters.
std::string pad(const std::string& text, std::size_t width) {
  const std::size_t shown = shown_width(text);
  return std::string(width > shown ? width - shown : 0, ' ') + text;
}

// The prompts of --prompts FILE (read_prompts' rules); a status other than
// kExitOk after saying why not.
int prompts_option(const std::string& cmd, const ModelArgs& a, const Opened& o, PromptLayout layout,
                   std::vector<Prompt>& out, std::ostream& err) {
  const std::string& file = a.values.at("--prompts");
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(err, cmd + ": --prompts: cannot read '" + file + "'");
  std::ostringstream content;
  content << in.rdbuf();
  if (std::string e = read_prompts(content.str(), file, *o.tokenizer, o.model->config, layout, out); !e.empty())
    return fail(err, cmd + ": --prompts: " + e);
  return kExitOk;
}

// The ids of --text, --ids or --prompts (exactly one), as prompts; a status
// other than kExitOk after saying why not.
int inputs_option(const std::string& cmd, const ModelArgs& a, const Opened& o, PromptLayout layout,
                  std::vector<Prompt>& out, std::ostream& err) {
  if (a.values.count("--text") + a.values.count("--ids") + a.values.count("--prompts") != 1)
    return fail(err, cmd + ": expected one of --text TEXT, --ids I,J,… or --prompts FILE");
  if (a.values.count("--prompts")) return prompts_option(cmd, a, o, layout, out, err);
  Encoded input = input_ids(a, o);
  if (!input.error.empty()) return fail(err, cmd + ": " + input.error);
  out.assign(1, Prompt{});
  out[0].ids = std::move(input.ids);
  return kExitOk;
}

// Writes one layers × heads score table per kind as JSON: {"kind": [[…], …], …}.
void write_head_scores(std::ostream& s, const HeadScores& scores, const ModelConfig& c) {
  s << '{';
  for (const HeadKind kind : kHeadKinds) {
    s << (kind == kHeadKinds[0] ? "" : ", ") << quote(to_string(kind)) << ": [";
    for (int l = 0; l < c.layers; ++l) {
      s << (l ? ", " : "") << '[';
      for (int h = 0; h < c.heads; ++h) s << (h ? ", " : "") << shortest(scores.of(kind)(l, h));
      s << ']';
    }
    s << ']';
  }
  s << '}';
}

}  // namespace

// Every head's previous-token, duplicate-token and induction scores.
int cmd_detect_heads(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {"--model", "--text", "--ids", "--prompts", "--repeat", "--seed", "-o"}, {"--json", "--csv"}, a);
      !e.empty())
    return fail(err, "detect-heads: " + e + " (see --help)");
  if (!a.positional.empty()) return fail(err, "detect-heads: unexpected argument '" + a.positional[0] + "' (see --help)");
  if (a.flags.count("--json") && a.flags.count("--csv")) return fail(err, "detect-heads: --json and --csv: expected one of them");
  const auto model = a.values.find("--model");
  if (model == a.values.end()) return fail(err, "detect-heads: expected --model MODEL (see --help)");
  const bool repeat = a.values.count("--repeat") != 0;
  if (repeat + a.values.count("--text") + a.values.count("--ids") + a.values.count("--prompts") != 1)
    return fail(err, "detect-heads: expected one of --text TEXT, --ids I,J,…, --prompts FILE or --repeat N");
  if (a.values.count("--seed") && !repeat) return fail(err, "detect-heads: --seed goes with --repeat N");
  const Opened o = open_model(model->second);
  if (!o.error.empty()) return fail(err, o.error);
  std::vector<Prompt> prompts;
  if (repeat) {
    int n = 0, seed = 1;
    const int most = std::max(1, o.model->config.learned_positions() ? o.model->config.max_positions / 2 : 4096);
    if (!parse_int(a.values.at("--repeat"), 1, most, n))
      return fail(err, "detect-heads: --repeat: expected a length from 1 to " + std::to_string(most) +
                           " (the sequence is twice as long), found '" + a.values.at("--repeat") + "'");
    if (a.values.count("--seed") && !parse_int(a.values.at("--seed"), 0, 1 << 30, seed))
      return fail(err, "detect-heads: --seed: expected 0 to 1073741824, found '" + a.values.at("--seed") + "'");
    prompts.assign(1, Prompt{});
    prompts[0].ids = repeated_random_tokens(o.model->config.vocab, n, static_cast<std::uint64_t>(seed));
  } else if (int status = inputs_option("detect-heads", a, o, PromptLayout::Single, prompts, err); status != kExitOk) {
    return status;
  }
  std::vector<HeadScores> each;
  for (const Prompt& p : prompts) {
    if (p.ids.size() < 2)
      return fail(err, "detect-heads: " + (p.line ? a.values.at("--prompts") + " line " + std::to_string(p.line) + ": " : "") +
                           "expected at least 2 tokens, found " + std::to_string(p.ids.size()));
    each.push_back(detect_heads(*o.model, p.ids));
  }
  const HeadScores scores = mean_head_scores(each);
  const bool batch = a.values.count("--prompts") != 0;
  const ModelConfig& c = o.model->config;
  std::ostringstream s;
  if (a.flags.count("--json")) {
    if (batch) {
      s << "{\"prompts\": [";
      for (std::size_t i = 0; i < prompts.size(); ++i) {
        s << (i ? ", " : "") << "{\"line\": " << prompts[i].line << ", \"ids\": ";
        write_ints(s, prompts[i].ids);
        s << ", \"scores\": ";
        write_head_scores(s, each[i], c);
        s << '}';
      }
      s << "]";
    } else {
      s << "{\"ids\": ";
      write_ints(s, prompts[0].ids);
      s << ", \"tokens\": ";
      write_tokens(s, *o.tokenizer, prompts[0].ids);
    }
    s << ", \"layers\": " << c.layers << ", \"heads\": " << c.heads << ", \"scores\": ";
    write_head_scores(s, scores, c);
    s << "}\n";
  } else if (a.flags.count("--csv")) {  // with --prompts, the mean first, then each prompt by its line
    s << (batch ? "prompt," : "") << "kind,layer,head,score\n";
    for (std::size_t i = 0; i <= (batch ? each.size() : 0); ++i) {
      const HeadScores& table = i == 0 ? scores : each[i - 1];
      const std::string prompt = !batch ? "" : i == 0 ? "mean," : std::to_string(prompts[i - 1].line) + ",";
      for (const HeadKind kind : kHeadKinds)
        for (int l = 0; l < c.layers; ++l)
          for (int h = 0; h < c.heads; ++h)
            s << prompt << to_string(kind) << ',' << l << ',' << h << ',' << shortest(table.of(kind)(l, h)) << '\n';
    }
  } else {
    s << "head scores (TransformerLens's detect_head, \"mul\"): the share of each head's attention on the positions\n"
      << "the pattern names, "
      << (batch ? "the mean over " + std::to_string(prompts.size()) + " prompts of " + a.values.at("--prompts")
                : "over " + std::to_string(prompts[0].ids.size()) + " tokens" + (repeat ? " (random, then repeated)" : ""))
      << '\n';
    for (const HeadKind kind : kHeadKinds) {
      const Matrix& m = scores.of(kind);
      s << '\n' << to_string(kind) << " (layer × head):\n        ";
      for (int h = 0; h < c.heads; ++h) s << std::setw(6) << ("h" + std::to_string(h));
      s << '\n';
      for (int l = 0; l < c.layers; ++l) {
        s << std::setw(8) << std::left << ("  L" + std::to_string(l)) << std::right;
        for (int h = 0; h < c.heads; ++h) s << std::setw(6) << std::fixed << std::setprecision(2) << m(l, h);
        s << '\n';
      }
      Eigen::Index bl = 0, bh = 0;
      m.maxCoeff(&bl, &bh);
      s << "  most: layer " << bl << ", head " << bh << " (" << std::setprecision(3) << m(bl, bh) << ")\n";
    }
  }
  return emit_text(s.str(), a, out, err);
}

// What the model would predict after each layer (the logit lens).
int cmd_logit_lens(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {"--model", "--text", "--ids", "--row", "--k", "--track", "--track-id", "-o"}, {"--json", "--csv"}, a);
      !e.empty())
    return fail(err, "logit-lens: " + e + " (see --help)");
  if (a.flags.count("--json") && a.flags.count("--csv")) return fail(err, "logit-lens: --json and --csv: expected one of them");
  Opened o;
  Encoded input;
  if (int status = prepare("logit-lens", a, o, input, err); status != kExitOk) return status;
  const int T = static_cast<int>(input.ids.size());
  int row = T - 1, k = 5;
  if (const auto it = a.values.find("--row"); it != a.values.end() && !parse_int(it->second, 0, T - 1, row))
    return fail(err, "logit-lens: --row: expected 0 to " + std::to_string(T - 1) + " (the text's tokens), found '" +
                         it->second + "'");
  if (const auto it = a.values.find("--k"); it != a.values.end() && !parse_int(it->second, 1, o.model->config.vocab, k))
    return fail(err, "logit-lens: --k: expected 1 to " + std::to_string(o.model->config.vocab) + ", found '" + it->second + "'");
  const TokenChoice track = token_option(a, o, "--track");
  if (!track.error.empty()) return fail(err, "logit-lens: " + track.error);
  const std::vector<LensLayer> lens = logit_lens(*o.model, input.ids, row, k, track.given ? track.id : -1);
  const Tokenizer& t = *o.tokenizer;
  std::ostringstream s;
  if (a.flags.count("--json")) {
    s << "{\"ids\": ";
    write_ints(s, input.ids);
    s << ", \"row\": " << row << ", \"token\": " << quote(t.token_text(input.ids[static_cast<std::size_t>(row)]))
      << ", \"layers\": [";
    for (std::size_t l = 0; l < lens.size(); ++l) {
      s << (l ? ", " : "") << "{\"after\": " << lens[l].after << ", \"top\": [";
      for (std::size_t i = 0; i < lens[l].top.size(); ++i) {
        const LensPrediction& p = lens[l].top[i];
        s << (i ? ", " : "") << "{\"id\": " << p.id << ", \"token\": " << quote(t.token_text(p.id))
          << ", \"logit\": " << shortest(p.logit) << ", \"p\": " << shortest(p.probability) << "}";
      }
      s << "]";
      if (track.given)
        s << ", \"tracked\": {\"id\": " << track.id << ", \"logit\": " << shortest(lens[l].tracked.logit) << ", \"p\": "
          << shortest(lens[l].tracked.probability) << ", \"rank\": " << lens[l].tracked_rank << "}";
      s << "}";
    }
    s << "]}\n";
  } else if (a.flags.count("--csv")) {  // "after": 0 the embeddings, l + 1 layer l
    s << "after,rank,id,token,logit,p\n";
    for (const LensLayer& l : lens)
      for (std::size_t i = 0; i < l.top.size(); ++i)
        s << l.after << ',' << i << ',' << l.top[i].id << ',' << csv(t.token_text(l.top[i].id)) << ','
          << shortest(l.top[i].logit) << ',' << shortest(l.top[i].probability) << '\n';
  } else {
    s << "the next token after '" << t.label(input.ids[static_cast<std::size_t>(row)]) << "' (" << row
      << "), read from the residual stream after each layer through the final norm and the unembedding\n";
    for (const LensLayer& l : lens) {
      s << (l.after == 0 ? std::string("embeddings") : "layer " + std::to_string(l.after - 1)) << ':';
      for (const LensPrediction& p : l.top)
        s << "  '" << t.label(p.id) << "' " << std::fixed << std::setprecision(3) << p.probability;
      if (track.given)
        s << "   ['" << t.label(track.id) << "': " << std::fixed << std::setprecision(4) << l.tracked.probability << ", rank "
          << l.tracked_rank + 1 << "]";
      s << '\n';
    }
  }
  return emit_text(s.str(), a, out, err);
}

// The last row's predictions with some parts of the model ablated.
int cmd_ablate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {"--model", "--text", "--ids", "--ablate", "--k", "-o"}, {"--json", "--csv"}, a); !e.empty())
    return fail(err, "ablate: " + e + " (see --help)");
  if (a.flags.count("--json") && a.flags.count("--csv")) return fail(err, "ablate: --json and --csv: expected one of them");
  Opened o;
  Encoded input;
  if (int status = prepare("ablate", a, o, input, err); status != kExitOk) return status;
  const ModelConfig& c = o.model->config;
  const auto specs = a.values.find("--ablate");
  if (specs == a.values.end()) return fail(err, "ablate: expected --ablate SPEC[,SPEC…] (e.g. L3H1, L2.mlp@5:mean)");
  std::vector<Ablation> ablations;
  std::istringstream list(specs->second);
  for (std::string spec; std::getline(list, spec, ',');) {
    Ablation ab;
    if (std::string e = parse_ablation(spec, ab); !e.empty()) return fail(err, "ablate: --ablate " + e);
    if (std::string e = check(ab, c, static_cast<int>(input.ids.size())); !e.empty())
      return fail(err, "ablate: --ablate " + spec + ": " + e);
    ablations.push_back(ab);
  }
  if (ablations.empty()) return fail(err, "ablate: --ablate: expected at least one SPEC");
  int k = 10;
  if (const auto it = a.values.find("--k"); it != a.values.end() && !parse_int(it->second, 1, c.vocab, k))
    return fail(err, "ablate: --k: expected 1 to " + std::to_string(c.vocab) + ", found '" + it->second + "'");

  const RunCache clean = run_with_cache(*o.model, input.ids, CacheAttention::None);
  const ActivationMeans means = activation_means(std::span<const RunCache>(&clean, 1));
  const RunCache ablated = run_with_cache(*o.model, input.ids, CacheAttention::None, ablation_hooks(c, ablations, means));
  const int row = static_cast<int>(input.ids.size()) - 1;
  const RowVector before = row_logits(*o.model, clean.resid.back(), row), after = row_logits(*o.model, ablated.resid.back(), row);
  const RowVector p0 = next_token_probabilities(before), p1 = next_token_probabilities(after);
  // The k likeliest tokens before, then those that became likeliest after.
  const auto top = [&](const RowVector& z) {
    std::vector<int> order(static_cast<std::size_t>(z.size()));
    std::iota(order.begin(), order.end(), 0);
    const auto n = static_cast<std::ptrdiff_t>(std::min<std::size_t>(static_cast<std::size_t>(k), order.size()));
    std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](int x, int y) { return z(x) != z(y) ? z(x) > z(y) : x < y; });
    order.resize(static_cast<std::size_t>(n));
    return order;
  };
  std::vector<int> shown = top(before);
  for (const int id : top(after))
    if (std::find(shown.begin(), shown.end(), id) == shown.end()) shown.push_back(id);
  const Tokenizer& t = *o.tokenizer;
  std::string specs_text;
  for (const Ablation& ab : ablations) specs_text += (specs_text.empty() ? "" : ",") + to_spec(ab);
  std::ostringstream s;
  if (a.flags.count("--json")) {
    s << "{\"ids\": ";
    write_ints(s, input.ids);
    s << ", \"row\": " << row << ", \"ablations\": [";
    for (std::size_t i = 0; i < ablations.size(); ++i) s << (i ? ", " : "") << quote(to_spec(ablations[i]));
    s << "], \"top_before\": " << argmax(before) << ", \"top_after\": " << argmax(after) << ", \"tokens\": [";
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const int id = shown[i];
      s << (i ? ", " : "") << "{\"id\": " << id << ", \"token\": " << quote(t.token_text(id)) << ", \"logit_before\": "
        << shortest(before(id)) << ", \"logit_after\": " << shortest(after(id)) << ", \"p_before\": " << shortest(p0(id))
        << ", \"p_after\": " << shortest(p1(id)) << "}";
    }
    s << "]}\n";
  } else if (a.flags.count("--csv")) {
    s << "id,token,logit_before,logit_after,p_before,p_after\n";
    for (const int id : shown)
      s << id << ',' << csv(t.token_text(id)) << ',' << shortest(before(id)) << ',' << shortest(after(id)) << ','
        << shortest(p0(id)) << ',' << shortest(p1(id)) << '\n';
  } else {
    s << "the next token after '" << t.label(input.ids.back()) << "' (" << row << ") with " << specs_text << " ablated\n"
      << "  token               p before   p after   logit before → after\n";
    for (const int id : shown)
      s << "  " << std::left << std::setw(18) << ("'" + t.label(id) + "'") << std::right << std::setw(10) << bench::fixed(p0(id), 4)
        << std::setw(10) << bench::fixed(p1(id), 4) << "   " << bench::fixed(before(id), 3) << " → " << bench::fixed(after(id), 3) << '\n';
  }
  return emit_text(s.str(), a, out, err);
}

// Activation patching sweeps from a clean prompt into a corrupted one.
int cmd_patch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args,
                     {"--model", "--clean", "--clean-ids", "--corrupted", "--corrupted-ids", "--answer", "--answer-id",
                      "--wrong", "--wrong-id", "--metric", "--kind", "--prompts", "-o"},
                     {"--json", "--csv"}, a);
      !e.empty())
    return fail(err, "patch: " + e + " (see --help)");
  if (!a.positional.empty()) return fail(err, "patch: unexpected argument '" + a.positional[0] + "' (see --help)");
  if (a.flags.count("--json") && a.flags.count("--csv")) return fail(err, "patch: --json and --csv: expected one of them");
  const auto model = a.values.find("--model");
  if (model == a.values.end()) return fail(err, "patch: expected --model MODEL (see --help)");
  const Opened o = open_model(model->second);
  if (!o.error.empty()) return fail(err, o.error);
  PatchMetric metric;
  const std::string metric_name = a.values.count("--metric") ? a.values.at("--metric") : "logit_diff";
  if (metric_name == "prob") metric.kind = PatchMetric::Probability;
  else if (metric_name != "logit_diff")
    return fail(err, "patch: --metric: expected logit_diff or prob, found '" + metric_name + "'");
  std::vector<PatchKind> kinds;
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
  const TokenChoice answer = token_option(a, o, "--answer"), wrong = token_option(a, o, "--wrong");
  if (!answer.error.empty()) return fail(err, "patch: " + answer.error);
  if (!wrong.error.empty()) return fail(err, "patch: " + wrong.error);
  if (metric.kind == PatchMetric::Probability && wrong.given)
    return fail(err, "patch: --wrong goes with --metric logit_diff (prob measures the answer alone)");
  // The pairs: the two prompts given, or each line of --prompts (clean<TAB>corrupted[<TAB>answer<TAB>wrong]).
  const bool batch = a.values.count("--prompts") != 0;
  std::vector<Prompt> pairs;
  if (batch) {
    for (const char* given : {"--clean", "--clean-ids", "--corrupted", "--corrupted-ids"})
      if (a.values.count(given)) return fail(err, std::string("patch: --prompts goes without ") + given);
    if (int status = prompts_option("patch", a, o, PromptLayout::Pairs, pairs, err); status != kExitOk) return status;
  } else {
    const Encoded clean = prompt_option(a, o, "--clean"), corrupted = prompt_option(a, o, "--corrupted");
    if (!clean.error.empty()) return fail(err, "patch: " + clean.error);
    if (!corrupted.error.empty()) return fail(err, "patch: " + corrupted.error);
    if (clean.ids.size() != corrupted.ids.size())  // before running either: the usual mistake, said plainly
      return fail(err, "patch: " + check_patching(o.model->config, clean.ids, corrupted.ids, metric));
    pairs.assign(1, Prompt{});
    pairs[0].ids = clean.ids;
    pairs[0].corrupted_ids = corrupted.ids;
  }
  for (const PatchKind kind : kinds)  // a mean over positions needs one length
    for (const Prompt& p : pairs)
      if (columns_of(kind) != PatchColumns::Heads && p.ids.size() != pairs[0].ids.size())
        return fail(err, "patch: --prompts: " + a.values.at("--prompts") + " line " + std::to_string(p.line) + " has " +
                             std::to_string(p.ids.size()) + " tokens and line " + std::to_string(pairs[0].line) + " has " +
                             std::to_string(pairs[0].ids.size()) + ": --kind " + to_string(kind) +
                             " averages over positions, so every pair needs one length (z, q, k, v and pattern do not)");
  // Unnamed answers: each prompt's own most likely next token.
  const auto top_of = [&](const std::vector<int>& ids) {
    return argmax(run_model(*o.model, ids, 1).logits.row(0));
  };
  std::vector<PatchMetric> metrics;
  for (const Prompt& p : pairs) {
    PatchMetric m = metric;
    const std::string where = batch ? a.values.at("--prompts") + " line " + std::to_string(p.line) + ": " : "";
    m.answer = p.answer >= 0 ? p.answer : answer.given ? answer.id : top_of(p.ids);
    m.wrong = metric.kind == PatchMetric::Probability ? 0 : p.wrong >= 0 ? p.wrong : wrong.given ? wrong.id : top_of(p.corrupted_ids);
    if (std::string e = check_patching(o.model->config, p.ids, p.corrupted_ids, m); !e.empty())
      return fail(err, "patch: " + where + e);
    if (m.kind == PatchMetric::LogitDiff && m.answer == m.wrong)
      return fail(err, "patch: " + where + "the answer and the wrong token are both '" + o.tokenizer->label(m.answer) +
                           "': the logit difference is 0 on every run (give --answer and --wrong" +
                           (batch ? ", or the line's third and fourth fields)" : ")"));
    metrics.push_back(m);
  }
  metric = metrics[0];

  const Tokenizer& t = *o.tokenizer;
  std::vector<PatchSweep> sweeps;
  std::vector<std::vector<PatchSweep>> per_pair(pairs.size());
  std::vector<double> seconds;
  for (const PatchKind kind : kinds) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < pairs.size(); ++i)
      per_pair[i].push_back(patch_sweep(*o.model, pairs[i].ids, pairs[i].corrupted_ids, kind, metrics[i]));
    std::vector<PatchSweep> of_kind;
    for (const std::vector<PatchSweep>& p : per_pair) of_kind.push_back(p.back());
    sweeps.push_back(mean_sweep(of_kind));
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  // Positions are named by the first pair's tokens; in a batch by number (the pairs' tokens differ).
  std::vector<std::string> labels = t.labels(pairs[0].ids);
  if (batch)
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = "p" + std::to_string(i);
  std::ostringstream s;
  const auto metric_of = [&](const PatchMetric& m) {
    return m.kind == PatchMetric::LogitDiff ? "logit['" + t.label(m.answer) + "'] − logit['" + t.label(m.wrong) + "']"
                                            : "p('" + t.label(m.answer) + "')";
  };
  const bool one_metric = std::all_of(metrics.begin(), metrics.end(), [&](const PatchMetric& m) {
    return m.answer == metric.answer && m.wrong == metric.wrong;
  });
  const std::string metric_text = one_metric ? metric_of(metric)
                                  : metric.kind == PatchMetric::LogitDiff ? "each pair's logit difference of its answer and wrong token"
                                                                          : "each pair's p(answer)";
  const auto write_metric = [&](const PatchMetric& m, const PatchSweep& w) {
    s << "{\"kind\": " << quote(metric_name) << ", \"answer\": " << m.answer << ", \"answer_token\": " << quote(t.token_text(m.answer));
    if (m.kind == PatchMetric::LogitDiff) s << ", \"wrong\": " << m.wrong << ", \"wrong_token\": " << quote(t.token_text(m.wrong));
    s << ", \"clean\": " << shortest(w.clean) << ", \"corrupted\": " << shortest(w.corrupted) << "}";
  };
  if (a.flags.count("--json")) {
    if (batch) {
      s << "{\"pairs\": [";
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        s << (i ? ", " : "") << "{\"line\": " << pairs[i].line << ", \"clean\": ";
        write_ints(s, pairs[i].ids);
        s << ", \"corrupted\": ";
        write_ints(s, pairs[i].corrupted_ids);
        s << ", \"metric\": ";
        write_metric(metrics[i], per_pair[i][0]);
        s << ", \"sweeps\": [";  // each kind's patched metric for this pair
        for (std::size_t k = 0; k < per_pair[i].size(); ++k) {
          s << (k ? ", " : "");
          write_rows(s, per_pair[i][k].metric);
        }
        s << "]}";
      }
      s << "], \"metric\": {\"kind\": " << quote(metric_name) << ", \"clean\": " << shortest(sweeps[0].clean)
        << ", \"corrupted\": " << shortest(sweeps[0].corrupted) << "}";
    } else {
      s << "{\"clean\": {\"ids\": ";
      write_ints(s, pairs[0].ids);
      s << ", \"tokens\": ";
      write_tokens(s, t, pairs[0].ids);
      s << "}, \"corrupted\": {\"ids\": ";
      write_ints(s, pairs[0].corrupted_ids);
      s << ", \"tokens\": ";
      write_tokens(s, t, pairs[0].corrupted_ids);
      s << "}, \"metric\": ";
      write_metric(metric, sweeps[0]);
    }
    s << ", \"sweeps\": [";
    for (std::size_t i = 0; i < sweeps.size(); ++i) {
      const PatchSweep& w = sweeps[i];
      s << (i ? ", " : "") << "{\"kind\": " << quote(to_string(w.kind)) << ", \"rows\": \"layer\", \"columns\": "
        << quote(to_string(columns_of(w.kind))) << ", \"heads\": " << w.heads << ", \"seconds\": " << shortest(seconds[i])
        << ", \"normalised\": ";
      write_rows(s, w.normalised());
      s << ", \"metric\": ";
      write_rows(s, w.metric);
      s << "}";
    }
    s << "]}\n";
  } else if (a.flags.count("--csv")) {  // with --prompts, the mean first, then each pair by its line
    s << (batch ? "pair," : "") << "kind,layer,position,head,metric,normalised\n";
    for (std::size_t pair = 0; pair <= (batch ? pairs.size() : 0); ++pair)
      for (std::size_t k = 0; k < sweeps.size(); ++k) {
        const PatchSweep& w = pair == 0 ? sweeps[k] : per_pair[pair - 1][k];
        const std::string prefix = !batch ? "" : pair == 0 ? "mean," : std::to_string(pairs[pair - 1].line) + ",";
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
  } else {
    s << "activation patching, clean → corrupted ("
      << (batch ? "the mean over " + std::to_string(pairs.size()) + " pairs of " + a.values.at("--prompts")
                : std::to_string(pairs[0].ids.size()) + " tokens")
      << "); metric " << metric_text << ": clean " << bench::fixed(sweeps[0].clean, 4) << ", corrupted "
      << bench::fixed(sweeps[0].corrupted, 4) << "; shown normalised: 0 = corrupted, 1 = clean\n";
    if (batch)
      for (std::size_t i = 0; i < pairs.size(); ++i)
        s << "  line " << pairs[i].line << ": " << metric_of(metrics[i]) << " clean " << bench::fixed(per_pair[i][0].clean, 4)
          << ", corrupted " << bench::fixed(per_pair[i][0].corrupted, 4) << '\n';
    for (std::size_t i = 0; i < sweeps.size(); ++i) {
      const PatchSweep& w = sweeps[i];
      const Eigen::MatrixXd n = w.normalised();
      const bool by_position = columns_of(w.kind) == PatchColumns::Positions;
      const int blocks = columns_of(w.kind) == PatchColumns::PositionsByHeads ? w.positions : 1;
      for (int b = 0; b < blocks; ++b) {
        s << '\n' << to_string(w.kind) << " (layer × " << (by_position ? "position" : "head")
          << (blocks > 1 ? ", position " + std::to_string(b) + " '" + labels[static_cast<std::size_t>(b)] + "'" : "")
          << (b == 0 ? ", " + bench::fixed(seconds[i], 2) + " s" : "") << "):\n      ";
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
  }
  return emit_text(s.str(), a, out, err);
}

// Each head's, attention bias's and MLP's direct share of one token's logit.
int cmd_attribute(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args,
                     {"--model", "--text", "--ids", "--prompts", "--row", "--token", "--token-id", "--minus", "--minus-id", "-o"},
                     {"--json", "--csv"}, a);
      !e.empty())
    return fail(err, "attribute: " + e + " (see --help)");
  if (!a.positional.empty()) return fail(err, "attribute: unexpected argument '" + a.positional[0] + "' (see --help)");
  if (a.flags.count("--json") && a.flags.count("--csv")) return fail(err, "attribute: --json and --csv: expected one of them");
  const auto model = a.values.find("--model");
  if (model == a.values.end()) return fail(err, "attribute: expected --model MODEL (see --help)");
  const Opened o = open_model(model->second);
  if (!o.error.empty()) return fail(err, o.error);
  std::vector<Prompt> prompts;
  if (int status = inputs_option("attribute", a, o, PromptLayout::Single, prompts, err); status != kExitOk) return status;
  const bool batch = a.values.count("--prompts") != 0;
  if (batch && a.values.count("--row"))
    return fail(err, "attribute: --row goes with --text or --ids (with --prompts each prompt's last row is attributed)");
  const ModelConfig& c = o.model->config;
  if (std::string e = attribution_unsupported(c); !e.empty()) return fail(err, "attribute: " + e);
  const int T = static_cast<int>(prompts[0].ids.size());
  int row = T - 1;
  if (const auto it = a.values.find("--row"); it != a.values.end() && !parse_int(it->second, 0, T - 1, row))
    return fail(err, "attribute: --row: expected 0 to " + std::to_string(T - 1) + " (the text's tokens), found '" + it->second + "'");
  const TokenChoice token = token_option(a, o, "--token"), minus = token_option(a, o, "--minus");
  if (!token.error.empty()) return fail(err, "attribute: " + token.error);
  if (!minus.error.empty()) return fail(err, "attribute: " + minus.error);
  std::vector<LogitAttribution> each;
  for (const Prompt& p : prompts) {
    const int r = batch ? static_cast<int>(p.ids.size()) - 1 : row;
    const RunCache run = run_with_cache(*o.model, p.ids, CacheAttention::None);
    // Unnamed: the token the model predicts there.
    const int id = token.given ? token.id : argmax(row_logits(*o.model, run.resid.back(), r));
    each.push_back(direct_logit_attribution(*o.model, run, r, id, minus.given ? minus.id : -1));
  }
  const LogitAttribution d = mean_attribution(each);
  const Tokenizer& t = *o.tokenizer;
  std::ostringstream s;
  const auto write_json = [&](const LogitAttribution& x) {
    s << "\"row\": " << x.row << ", \"token\": " << x.token << ", \"token_text\": " << quote(t.token_text(x.token));
    if (x.minus >= 0) s << ", \"minus\": " << x.minus << ", \"minus_text\": " << quote(t.token_text(x.minus));
    s << ", \"logit\": " << shortest(x.logit) << ", \"constant\": " << shortest(x.constant) << ", \"embeddings\": "
      << shortest(x.embeddings) << ", \"heads\": ";
    write_rows(s, x.heads);
    s << ", \"attention_bias\": ";
    write_rows(s, x.attention_bias.transpose());
    s << ", \"mlp\": ";
    write_rows(s, x.mlp.transpose());
  };
  if (a.flags.count("--json")) {
    if (batch) {  // the mean's row and token are left out: they differ per prompt
      s << "{\"prompts\": [";
      for (std::size_t i = 0; i < prompts.size(); ++i) {
        s << (i ? ", " : "") << "{\"line\": " << prompts[i].line << ", \"ids\": ";
        write_ints(s, prompts[i].ids);
        s << ", ";
        write_json(each[i]);
        s << '}';
      }
      s << "], \"mean\": {\"logit\": " << shortest(d.logit) << ", \"constant\": " << shortest(d.constant)
        << ", \"embeddings\": " << shortest(d.embeddings) << ", \"heads\": ";
      write_rows(s, d.heads);
      s << ", \"attention_bias\": ";
      write_rows(s, d.attention_bias.transpose());
      s << ", \"mlp\": ";
      write_rows(s, d.mlp.transpose());
      s << "}}\n";
    } else {
      s << "{\"ids\": ";
      write_ints(s, prompts[0].ids);
      s << ", ";
      write_json(d);
      s << "}\n";
    }
  } else if (a.flags.count("--csv")) {  // with --prompts, the mean first, then each prompt by its line
    s << (batch ? "prompt," : "") << "part,layer,head,value\n";
    for (std::size_t i = 0; i <= (batch ? each.size() : 0); ++i) {
      const LogitAttribution& x = i == 0 ? d : each[i - 1];
      const std::string prompt = !batch ? "" : i == 0 ? "mean," : std::to_string(prompts[i - 1].line) + ",";
      s << prompt << "constant,,," << shortest(x.constant) << '\n' << prompt << "embeddings,,," << shortest(x.embeddings) << '\n';
      for (int l = 0; l < c.layers; ++l) {
        for (int h = 0; h < c.heads; ++h) s << prompt << "head," << l << ',' << h << ',' << shortest(x.heads(l, h)) << '\n';
        s << prompt << "attention_bias," << l << ",," << shortest(x.attention_bias(l)) << '\n'
          << prompt << "mlp," << l << ",," << shortest(x.mlp(l)) << '\n';
      }
    }
  } else {
    const auto named = [&](const LogitAttribution& x) {
      return "logit['" + t.label(x.token) + "']" + (x.minus >= 0 ? " − logit['" + t.label(x.minus) + "']" : "");
    };
    if (batch) {
      s << "direct logit attribution, the mean over " << prompts.size() << " prompts of " << a.values.at("--prompts")
        << " (each at its last token, of " << (token.given ? "'" + t.label(token.id) + "'" : std::string("its predicted token"))
        << "): " << bench::fixed(d.logit, 4) << (c.logit_softcap > 0.0 ? " (before the soft-cap)" : "") << '\n';
      for (std::size_t i = 0; i < prompts.size(); ++i)
        s << "  line " << prompts[i].line << ": " << named(each[i]) << " = " << bench::fixed(each[i].logit, 4) << '\n';
    } else {
      s << "direct logit attribution of " << named(d) << " after '" << t.label(prompts[0].ids[static_cast<std::size_t>(row)])
        << "' (" << row << "): " << bench::fixed(d.logit, 4) << (c.logit_softcap > 0.0 ? " (before the soft-cap)" : "") << '\n';
    }
    s << "  = embeddings " << bench::fixed(d.embeddings, 3) << " + heads " << bench::fixed(d.heads.sum(), 3) << " + attention biases "
      << bench::fixed(d.attention_bias.sum(), 3) << " + MLPs " << bench::fixed(d.mlp.sum(), 3) << " + constant " << bench::fixed(d.constant, 3)
      << "\n\nheads (layer × head), then the attention bias and the MLP of each layer:\n      ";
    for (int h = 0; h < c.heads; ++h) s << std::setw(8) << ("h" + std::to_string(h));
    s << std::setw(9) << "bias" << std::setw(9) << "MLP" << '\n';
    for (int l = 0; l < c.layers; ++l) {
      s << std::setw(6) << std::left << ("L" + std::to_string(l)) << std::right;
      for (int h = 0; h < c.heads; ++h) s << std::setw(8) << bench::fixed(d.heads(l, h), 2);
      s << std::setw(9) << bench::fixed(d.attention_bias(l), 2) << std::setw(9) << bench::fixed(d.mlp(l), 2) << '\n';
    }
  }
  return emit_text(s.str(), a, out, err);
}

// Named activations (TransformerLens hook names, globs) as safetensors or .npy.
int cmd_cache(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {"--model", "--text", "--ids", "--prompts", "--hooks", "--npy", "-o"}, {"--list"}, a); !e.empty())
    return fail(err, "cache: " + e + " (see --help)");
  if (!a.positional.empty()) return fail(err, "cache: unexpected argument '" + a.positional[0] + "' (see --help)");
  const auto model = a.values.find("--model");
  if (model == a.values.end()) return fail(err, "cache: expected --model MODEL (see --help)");
  const Opened o = open_model(model->second);
  if (!o.error.empty()) return fail(err, o.error);
  const ModelConfig& c = o.model->config;
  if (a.flags.count("--list")) {  // every hook name this model has
    for (const std::string& n : hook_names(c)) out << n << '\n';
    return kExitOk;
  }
  std::vector<std::string> names;
  const auto hooks = a.values.find("--hooks");
  if (hooks == a.values.end()) return fail(err, "cache: expected --hooks NAME[,NAME…] (globs allowed; --list names them)");
  if (std::string e = select_hooks(c, hooks->second, names); !e.empty()) return fail(err, "cache: --hooks: " + e);
  if (!a.values.count("-o") && !a.values.count("--npy"))
    return fail(err, "cache: expected -o FILE.safetensors or --npy DIR (or both)");
  // One prompt, or a file of them (one a line, all of one length in tokens: a batch).
  std::vector<std::vector<int>> prompts;
  if (a.values.count("--prompts")) {
    if (a.values.count("--text") || a.values.count("--ids")) return fail(err, "cache: --prompts goes without --text and --ids");
    std::vector<Prompt> read;
    if (int status = prompts_option("cache", a, o, PromptLayout::OneLength, read, err); status != kExitOk) return status;
    for (Prompt& p : read) prompts.push_back(std::move(p.ids));
  } else {
    const Encoded input = input_ids(a, o);
    if (!input.error.empty()) return fail(err, "cache: " + input.error);
    prompts.push_back(input.ids);
  }
  // Each prompt's tensors; with a file, stacked along a first (batch) dimension.
  std::vector<NamedTensor> tensors;
  for (const std::vector<int>& ids : prompts) {
    std::vector<NamedTensor> one = cache_hooks(*o.model, ids, names);
    if (tensors.empty()) {
      tensors = std::move(one);
      continue;
    }
    for (std::size_t i = 0; i < one.size(); ++i)
      tensors[i].values.insert(tensors[i].values.end(), one[i].values.begin(), one[i].values.end());
  }
  if (a.values.count("--prompts"))
    for (NamedTensor& t : tensors) t.shape.insert(t.shape.begin(), static_cast<std::int64_t>(prompts.size()));
  std::string ids_text;
  for (const std::vector<int>& ids : prompts) {
    ids_text += ids_text.empty() ? "[" : ", [";
    for (std::size_t i = 0; i < ids.size(); ++i) ids_text += (i ? ", " : "") + std::to_string(ids[i]);
    ids_text += "]";
  }
  std::uint64_t bytes = 0;
  for (const NamedTensor& t : tensors) bytes += t.values.size() * sizeof(float);
  if (const auto file = a.values.find("-o"); file != a.values.end()) {
    const std::string blob = safetensors_bytes(
        tensors, {{"format", "pt"}, {"model", model->second}, {"ids", a.values.count("--prompts") ? "[" + ids_text + "]" : ids_text}});
    if (std::string e = write_file_atomically(file->second, blob); !e.empty()) {
      err << "attention-lab-cli: cache: " << e << '\n';
      return kExitFailure;
    }
  }
  if (const auto dir = a.values.find("--npy"); dir != a.values.end()) {
    std::error_code ec;
    std::filesystem::create_directories(dir->second, ec);
    for (const NamedTensor& t : tensors)
      if (std::string e = write_file_atomically(std::filesystem::path(dir->second) / (t.name + ".npy"), npy_bytes(t)); !e.empty()) {
        err << "attention-lab-cli: cache: " << e << '\n';
        return kExitFailure;
      }
  }
  out << "cached " << tensors.size() << " tensors (" << bench::fixed(static_cast<double>(bytes) / 1e6, 2) << " MB, float32) of "
      << prompts.size() << (prompts.size() == 1 ? " prompt" : " prompts") << " of " << prompts[0].size() << " tokens\n";
  return kExitOk;
}

}  // namespace attention_lab::cli
