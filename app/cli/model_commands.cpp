#include "model_commands.h"

#include "cli.h"

#include "attention_lab/engine.h"
#include "attention_lab/head_detectors.h"
#include "attention_lab/logit_lens.h"
#include "attention_lab/json_text.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/tokenizer.h"
#include "attention_lab/trace_io.h"
#include "attention_lab/transformer_forward.h"

#include <algorithm>
#include <charconv>
#include <iomanip>
#include <map>
#include <sstream>

namespace attention_lab::cli {

namespace {

using json_text::quote;

// Traces keep every row of the logits up to this vocabulary size; past it, the
// last row (1024 rows × GPT-2's 50257 would be 200 MB of text).
constexpr int kAllLogitsUpToVocab = 4096;

struct ModelArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;  // --model, --text, --ids, --layer, --n, -o
  std::map<std::string, bool> flags;          // --json, --all-logits
};

int fail(std::ostream& err, const std::string& msg) {
  err << "attention-lab-cli: " << msg << '\n';
  return kExitBadInput;
}

// Parses options; those in `valued` take a value, those in `flags` do not.
std::string parse(const std::vector<std::string>& args, const std::vector<std::string>& valued,
                  const std::vector<std::string>& flags, ModelArgs& out) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--output") a = "-o";
    if (std::find(valued.begin(), valued.end(), a) != valued.end()) {
      if (i + 1 >= args.size()) return a + ": expected a value after it";
      out.values[a] = args[++i];
    } else if (std::find(flags.begin(), flags.end(), a) != flags.end()) {
      out.flags[a] = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return "unknown option '" + a + "'";
    } else {
      out.positional.push_back(a);
    }
  }
  return {};
}

// A number in its shortest round-trip form ("10000", "1e-05").
std::string shortest(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}
// A float in its shortest round-trip form as a float ("0.22", not 0.2199999988…).
std::string shortest(float v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// ", llama3 scaling ×32 (low 1, high 4, original context 64)", or nothing.
std::string rope_scaling_text(const Rope& r) {
  switch (r.scaling) {
    case RopeScaling::None: return {};
    case RopeScaling::Linear: return ", linear scaling ×" + shortest(r.factor);
    case RopeScaling::Llama3:
      return ", llama3 scaling ×" + shortest(r.factor) + " (low_freq_factor " + shortest(r.low_freq_factor) +
             ", high_freq_factor " + shortest(r.high_freq_factor) + ", original context " +
             std::to_string(r.original_max_positions) + ")";
  }
  return {};
}

bool parse_int(const std::string& text, int lo, int hi, int& out) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) return false;
  out = v;
  return true;
}

struct Opened {
  std::shared_ptr<const TransformerModel> model;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::string error;
};

Opened open_model(const std::string& path, ModelParts parts = ModelParts::Everything) {
  Opened o;
  LoadedModel m = load_model(path, {}, parts);
  if (!m.model) {
    o.error = m.error;
    return o;
  }
  o.model = m.model;
  const auto folder = std::filesystem::is_directory(path) ? std::filesystem::path(path)
                                                          : std::filesystem::path(path).parent_path();
  o.tokenizer = Tokenizer::load(folder.empty() ? "." : folder, o.model->config.vocab, o.error);
  return o;
}

// The ids from --text or --ids (exactly one of them), checked against the model.
Encoded input_ids(const ModelArgs& a, const Opened& o) {
  const bool text = a.values.count("--text") != 0, ids = a.values.count("--ids") != 0;
  Encoded e;
  if (text == ids) {
    e.error = "expected --text TEXT or --ids I,J,… (one of them)";
    return e;
  }
  e = text ? o.tokenizer->encode(a.values.at("--text")) : o.tokenizer->parse_ids(a.values.at("--ids"));
  if (e.error.empty()) {
    if (std::string problem = check_ids(o.model->config, e.ids); !problem.empty()) {
      e.ids.clear();
      e.error = problem;
    }
  }
  if (!e.error.empty()) e.error = (text ? "--text: " : "--ids: ") + e.error;
  return e;
}

void write_ints(std::ostream& out, const std::vector<int>& v) {
  out << '[';
  for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  out << ']';
}

void write_tokens(std::ostream& out, const Tokenizer& t, const std::vector<int>& ids) {
  out << '[';
  for (std::size_t i = 0; i < ids.size(); ++i) out << (i ? ", " : "") << quote(t.token_text(ids[i]));
  out << ']';
}

int emit_text(const std::string& text, const ModelArgs& a, std::ostream& out, std::ostream& err) {
  const auto it = a.values.find("-o");
  if (it == a.values.end() || it->second == "-") {
    out << text;
    return kExitOk;
  }
  if (auto e = write_file_atomically(it->second, text); !e.empty()) {
    err << "attention-lab-cli: " << e << '\n';
    return kExitFailure;
  }
  return kExitOk;
}

// Opens --model and reads the input ids; returns a non-zero status on failure.
int prepare(const std::string& cmd, const ModelArgs& a, Opened& o, Encoded& ids, std::ostream& err) {
  if (!a.positional.empty()) return fail(err, cmd + ": unexpected argument '" + a.positional[0] + "' (see --help)");
  const auto model = a.values.find("--model");
  if (model == a.values.end()) return fail(err, cmd + ": expected --model MODEL (see --help)");
  o = open_model(model->second);
  if (!o.error.empty()) return fail(err, o.error);
  ids = input_ids(a, o);
  if (!ids.error.empty()) return fail(err, cmd + ": " + ids.error);
  return kExitOk;
}

// --layer L, default 0.
int read_layer(const std::string& cmd, const ModelArgs& a, const ModelConfig& c, int& layer, std::ostream& err) {
  layer = 0;
  const auto it = a.values.find("--layer");
  if (it != a.values.end() && !parse_int(it->second, 0, c.layers - 1, layer))
    return fail(err, cmd + ": --layer: expected 0 to " + std::to_string(c.layers - 1) + ", found '" + it->second + "'");
  return kExitOk;
}

}  // namespace

bool names_a_model(const std::vector<std::string>& args) {
  return std::find(args.begin(), args.end(), "--model") != args.end();
}

int cmd_model_info(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {}, {"--json"}, a); !e.empty()) return fail(err, "model-info: " + e + " (see --help)");
  if (a.positional.size() != 1) return fail(err, "model-info: expected one model folder or .safetensors file (see --help)");
  // The headers say everything it prints: no weight is read (a 2 GB file in milliseconds).
  const Opened o = open_model(a.positional[0], ModelParts::Headers);
  if (!o.error.empty()) return fail(err, o.error);
  const TransformerModel& m = *o.model;
  const ModelConfig& c = m.config;
  std::ostringstream s;
  if (a.flags.count("--json")) {
    s << "{\"model_type\": " << quote(c.model_type) << ", \"layout\": " << quote(m.layout) << ", \"layers\": " << c.layers
      << ", \"heads\": " << c.heads << ", \"kv_heads\": " << c.kv_heads << ", \"d_model\": " << c.d_model
      << ", \"d_head\": " << c.d_head << ", \"d_ff\": " << c.d_ff << ", \"vocab\": " << c.vocab
      << ", \"max_positions\": " << c.max_positions << ", \"norm\": " << quote(c.rms_norm ? "rmsnorm" : "layernorm")
      << ", \"activation\": " << quote(to_string(c.activation)) << ", \"positions\": "
      << quote(c.learned_positions() ? "learned" : "rope") << ", \"rope_theta\": " << (c.learned_positions() ? 0.0 : static_cast<double>(c.rope.theta))
      << ", \"rope_scaling\": " << quote(c.learned_positions() ? "none" : to_string(c.rope.scaling))
      << ", \"rope_factor\": " << (c.learned_positions() ? 1.0 : static_cast<double>(c.rope.factor))
      << ", \"qk_norm\": " << quote(to_string(c.qk_norm)) << ", \"norms\": "
      << quote(c.pre_norms && c.post_norms ? "pre+post" : c.post_norms ? "post" : "pre")
      << ", \"embedding_scale\": " << shortest(c.embedding_scale) << ", \"residual_scale\": " << shortest(c.residual_scale)
      << ", \"score_scale\": " << c.attention_scale() << ", \"logits_divisor\": " << c.logits_divisor
      << ", \"sliding_window\": " << c.sliding_window << ", \"tied_embeddings\": " << (m.lm_head_tied ? "true" : "false")
      << ", \"dtype\": " << quote(to_string(m.dtype)) << ", \"parameters\": " << m.parameters
      << ", \"bytes\": " << m.weight_bytes << ", \"files\": " << m.files.size() << ", \"tokenizer\": " << quote(o.tokenizer->kind())
      << "}\n";
  } else {
    s << "model:      " << m.source.string() << '\n'
      << "type:       " << c.model_type << ", " << m.layout << '\n'
      << "layers:     " << c.layers << '\n'
      << "heads:      " << c.heads << " (K/V heads " << c.kv_heads << "), d_head " << c.d_head << '\n'
      << "d_model:    " << c.d_model << ", MLP " << c.d_ff << " (" << to_string(c.activation)
      << (c.gated_mlp ? ", SwiGLU" : "") << ")\n"
      << "vocabulary: " << c.vocab << " (" << o.tokenizer->kind() << ")\n"
      << "positions:  "
      << (c.learned_positions() ? "learned, " + std::to_string(c.max_positions)
                                : "RoPE θ " + shortest(c.rope.theta) + rope_scaling_text(c.rope) + ", up to " + std::to_string(c.max_positions))
      << (c.sliding_window ? ", sliding window " + std::to_string(c.sliding_window) : std::string()) << '\n'
      << "norm:       " << (c.rms_norm ? "RMSNorm" : "LayerNorm") << ", eps " << shortest(c.norm_eps)
      << (c.qk_norm == QkNormScope::Off           ? ""
          : c.qk_norm == QkNormScope::PerHead ? "; q and k RMSNorm per head"
                                              : "; q and k RMSNorm over the whole row")
      << (c.post_norms ? (c.pre_norms ? "; also on the attention's and the MLP's outputs"
                                      : "; on the attention's and the MLP's outputs, not their inputs")
                       : "")
      << '\n'
      << (c.embedding_scale != 1.0f || c.residual_scale != 1.0f || c.score_scale > 0.0 || c.logits_divisor != 1.0
              ? "scales:     embeddings ×" + shortest(c.embedding_scale) + ", residual sums' terms ×" +
                    shortest(c.residual_scale) + ", scores ×" + shortest(c.attention_scale()) + ", logits ÷" +
                    shortest(c.logits_divisor) + '\n'
              : std::string())
      << "lm_head:    " << (m.lm_head_tied ? "tied to the token embeddings" : "its own") << '\n'
      << "weights:    " << to_string(m.dtype) << ", " << m.parameters << " parameters, " << m.weight_bytes << " bytes in "
      << m.files.size() << (m.files.size() == 1 ? " file" : " files") << '\n';
  }
  return emit_text(s.str(), a, out, err);
}

int cmd_tokenize(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {}, {}, a); !e.empty()) return fail(err, "tokenize: " + e + " (see --help)");
  if (a.positional.size() != 2) return fail(err, "tokenize: expected MODEL TEXT (see --help)");
  const Opened o = open_model(a.positional[0]);
  if (!o.error.empty()) return fail(err, o.error);
  const Encoded e = o.tokenizer->encode(a.positional[1]);
  if (!e.error.empty()) return fail(err, "tokenize: " + e.error);
  out << "{\"ids\": ";
  write_ints(out, e.ids);
  out << ", \"tokens\": ";
  write_tokens(out, *o.tokenizer, e.ids);
  out << "}\n";
  return kExitOk;
}

int cmd_generate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {"--model", "--text", "--ids", "--n", "-o"}, {"--json"}, a); !e.empty())
    return fail(err, "generate: " + e + " (see --help)");
  Opened o;
  Encoded prompt;
  if (int status = prepare("generate", a, o, prompt, err); status != kExitOk) return status;
  int n = 0;
  const auto it = a.values.find("--n");
  if (it == a.values.end() || !parse_int(it->second, 0, 100000, n))
    return fail(err, "generate: --n: expected the number of tokens to add (0 to 100000)" +
                         (it == a.values.end() ? std::string() : ", found '" + it->second + "'"));
  const std::vector<int> all = generate_greedy(*o.model, prompt.ids, n);
  const std::vector<int> added(all.begin() + static_cast<std::ptrdiff_t>(prompt.ids.size()), all.end());
  if (static_cast<int>(added.size()) < n)
    err << "warning: stopped after " << added.size() << " tokens: the model has " << o.model->config.max_positions
        << " positions\n";
  std::ostringstream s;
  if (a.flags.count("--json")) {
    s << "{\"ids\": ";
    write_ints(s, all);
    s << ", \"new_ids\": ";
    write_ints(s, added);
    s << ", \"tokens\": ";
    write_tokens(s, *o.tokenizer, all);
    s << ", \"text\": " << quote(o.tokenizer->decode(all)) << "}\n";
  } else {
    s << o.tokenizer->decode(all) << '\n';
  }
  return emit_text(s.str(), a, out, err);
}

int cmd_trace_model(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {"--model", "--text", "--ids", "--layer", "-o"}, {"--all-logits"}, a); !e.empty())
    return fail(err, "trace: " + e + " (see --help)");
  Opened o;
  Encoded ids;
  if (int status = prepare("trace", a, o, ids, err); status != kExitOk) return status;
  const TransformerModel& m = *o.model;
  int layer = 0;
  if (int status = read_layer("trace", a, m.config, layer, err); status != kExitOk) return status;

  // The layers before the focused one, then its attention by the engine (what
  // the trace shows), then the rest from the engine's output.
  std::vector<Matrix> residual{embed(m, ids.ids)};
  for (int l = 0; l < layer; ++l) residual.push_back(run_layer(m, l, residual.back()));
  const Matrix normed = attention_input(m, layer, residual.back());
  LayerScenario ls = layer_scenario(m, layer, normed, o.tokenizer->labels(ids.ids));
  if (!ls.error.empty()) return fail(err, "trace: " + ls.error);
  Engine engine;
  engine.recompute_all(ls.scenario);
  for (const auto& w : engine.warnings()) err << "warning: " << w.message << '\n';
  residual.push_back(finish_layer(m, layer, residual.back(), engine.stage(StageId::input(StageKind::Output))));
  for (int l = layer + 1; l < m.config.layers; ++l) residual.push_back(run_layer(m, l, residual.back()));
  const int T = static_cast<int>(ids.ids.size());
  const bool all_rows = a.flags.count("--all-logits") || m.config.vocab <= kAllLogitsUpToVocab;
  const int first_row = all_rows ? 0 : T - 1;
  const Matrix logit_rows = logits(m, residual.back(), first_row, T - first_row);

  std::ostringstream text;
  write_trace(text, engine, ls.scenario, [&](std::ostream& s) {
    s << "  \"model\": {\n    \"source\": " << quote(m.source.string()) << ",\n    \"layer\": " << layer
      << ",\n    \"ids\": ";
    write_ints(s, ids.ids);
    s << ",\n    \"tokens\": ";
    write_tokens(s, *o.tokenizer, ids.ids);
    s << ",\n    \"layers\": [";
    for (int l = 0; l < m.config.layers; ++l) {
      s << (l ? ", " : "") << "{\n      \"input\": ";
      json_text::write_matrix(s, residual[static_cast<std::size_t>(l)], 6);
      s << ",\n      \"output\": ";
      json_text::write_matrix(s, residual[static_cast<std::size_t>(l + 1)], 6);
      s << "\n    }";
    }
    s << "],\n    \"logits_first_row\": " << first_row << ",\n    \"logits\": ";
    json_text::write_matrix(s, logit_rows, 4);
    s << "\n  },\n";
  });
  return emit_text(text.str(), a, out, err);
}

int cmd_extract(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {"--model", "--text", "--ids", "--layer", "-o"}, {}, a); !e.empty())
    return fail(err, "extract: " + e + " (see --help)");
  Opened o;
  Encoded ids;
  if (int status = prepare("extract", a, o, ids, err); status != kExitOk) return status;
  if (!a.values.count("-o")) return fail(err, "extract: expected -o SCENARIO.json");
  const TransformerModel& m = *o.model;
  int layer = 0;
  if (int status = read_layer("extract", a, m.config, layer, err); status != kExitOk) return status;
  Matrix x = embed(m, ids.ids);
  for (int l = 0; l < layer; ++l) x = run_layer(m, l, x);
  LayerScenario ls = layer_scenario(m, layer, attention_input(m, layer, x),
                                    o.tokenizer->labels(ids.ids));
  if (!ls.error.empty()) return fail(err, "extract: " + ls.error);
  return emit_text(scenario_to_json(ls.scenario), a, out, err);
}

// Every head's previous-token, duplicate-token and induction scores.
int cmd_detect_heads(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {"--model", "--text", "--ids", "--repeat", "--seed", "-o"}, {"--json"}, a); !e.empty())
    return fail(err, "detect-heads: " + e + " (see --help)");
  if (!a.positional.empty()) return fail(err, "detect-heads: unexpected argument '" + a.positional[0] + "' (see --help)");
  const auto model = a.values.find("--model");
  if (model == a.values.end()) return fail(err, "detect-heads: expected --model MODEL (see --help)");
  const bool repeat = a.values.count("--repeat") != 0;
  if (repeat + a.values.count("--text") + a.values.count("--ids") != 1)
    return fail(err, "detect-heads: expected one of --text TEXT, --ids I,J,… or --repeat N");
  if (a.values.count("--seed") && !repeat) return fail(err, "detect-heads: --seed goes with --repeat N");
  const Opened o = open_model(model->second);
  if (!o.error.empty()) return fail(err, o.error);
  Encoded input;
  if (repeat) {
    int n = 0, seed = 1;
    const int most = std::max(1, o.model->config.learned_positions() ? o.model->config.max_positions / 2 : 4096);
    if (!parse_int(a.values.at("--repeat"), 1, most, n))
      return fail(err, "detect-heads: --repeat: expected a length from 1 to " + std::to_string(most) +
                           " (the sequence is twice as long), found '" + a.values.at("--repeat") + "'");
    if (a.values.count("--seed") && !parse_int(a.values.at("--seed"), 0, 1 << 30, seed))
      return fail(err, "detect-heads: --seed: expected 0 to 1073741824, found '" + a.values.at("--seed") + "'");
    input.ids = repeated_random_tokens(o.model->config.vocab, n, static_cast<std::uint64_t>(seed));
  } else {
    input = input_ids(a, o);
    if (!input.error.empty()) return fail(err, "detect-heads: " + input.error);
  }
  if (input.ids.size() < 2) return fail(err, "detect-heads: expected at least 2 tokens, found " + std::to_string(input.ids.size()));
  const HeadScores scores = detect_heads(*o.model, input.ids);
  const ModelConfig& c = o.model->config;
  std::ostringstream s;
  if (a.flags.count("--json")) {
    s << "{\"ids\": ";
    write_ints(s, input.ids);
    s << ", \"tokens\": ";
    write_tokens(s, *o.tokenizer, input.ids);
    s << ", \"layers\": " << c.layers << ", \"heads\": " << c.heads << ", \"scores\": {";
    for (const HeadKind kind : kHeadKinds) {
      s << (kind == kHeadKinds[0] ? "" : ", ") << quote(to_string(kind)) << ": [";
      for (int l = 0; l < c.layers; ++l) {
        s << (l ? ", " : "") << '[';
        for (int h = 0; h < c.heads; ++h) s << (h ? ", " : "") << shortest(static_cast<double>(scores.of(kind)(l, h)));
        s << ']';
      }
      s << ']';
    }
    s << "}}\n";
  } else {
    s << "head scores (TransformerLens's detect_head, \"mul\"): the share of each head's attention on the positions\n"
      << "the pattern names, over " << input.ids.size() << " tokens" << (repeat ? " (random, then repeated)" : "") << '\n';
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
  if (auto e = parse(args, {"--model", "--text", "--ids", "--row", "--k", "-o"}, {"--json"}, a); !e.empty())
    return fail(err, "logit-lens: " + e + " (see --help)");
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
  const std::vector<LensLayer> lens = logit_lens(*o.model, input.ids, row, k);
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
      s << "]}";
    }
    s << "]}\n";
  } else {
    s << "the next token after '" << t.label(input.ids[static_cast<std::size_t>(row)]) << "' (" << row
      << "), read from the residual stream after each layer through the final norm and the unembedding\n";
    for (const LensLayer& l : lens) {
      s << (l.after == 0 ? std::string("embeddings") : "layer " + std::to_string(l.after - 1)) << ':';
      for (const LensPrediction& p : l.top)
        s << "  '" << t.label(p.id) << "' " << std::fixed << std::setprecision(3) << p.probability;
      s << '\n';
    }
  }
  return emit_text(s.str(), a, out, err);
}

}  // namespace attention_lab::cli
