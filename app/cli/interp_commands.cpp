#include "interp_commands.h"

#include "cli.h"
#include "bench.h"
#include "interp_support.h"
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
  if (int status = read_model_options("detect-heads", args, {"--model", "--text", "--ids", "--prompts", "--repeat", "--seed", "-o"},
                                      {"--json", "--csv"}, a, err);
      status != kExitOk)
    return status;
  const auto model = a.values.find("--model");
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
  if (int status = read_model_options("logit-lens", args, {"--model", "--text", "--ids", "--row", "--k", "--track", "--track-id", "-o"},
                                      {"--json", "--csv"}, a, err);
      status != kExitOk)
    return status;
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
  if (int status = read_model_options("ablate", args, {"--model", "--text", "--ids", "--ablate", "--k", "-o"}, {"--json", "--csv"}, a, err);
      status != kExitOk)
    return status;
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
// Each head's, attention bias's and MLP's direct share of one token's logit.
int cmd_attribute(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (int status = read_model_options(
          "attribute", args, {"--model", "--text", "--ids", "--prompts", "--row", "--token", "--token-id", "--minus", "--minus-id", "-o"},
          {"--json", "--csv"}, a, err);
      status != kExitOk)
    return status;
  const Opened o = open_model(a.values.at("--model"));
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
  if (int status = read_model_options("cache", args, {"--model", "--text", "--ids", "--prompts", "--hooks", "--npy", "-o"}, {"--list"}, a, err);
      status != kExitOk)
    return status;
  const Opened o = open_model(a.values.at("--model"));
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
        tensors, {{"format", "pt"}, {"model", a.values.at("--model")}, {"ids", a.values.count("--prompts") ? "[" + ids_text + "]" : ids_text}});
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
