#include "model_commands.h"

#include "cli.h"
#include "model_args.h"

#include "attention_lab/engine.h"
#include "attention_lab/gradients.h"
#include "attention_lab/json_text.h"
#include "attention_lab/model_gradient.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/tokenizer.h"
#include "attention_lab/trace_io.h"
#include "attention_lab/transformer_forward.h"

#include <algorithm>
#include <charconv>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

namespace attention_lab::cli {

namespace {

using json_text::quote;

// Traces keep every row of the logits up to this vocabulary size; past it, the
// last row (1024 rows × GPT-2's 50257 would be 200 MB of text).
constexpr int kAllLogitsUpToVocab = 4096;

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
  if (auto e = parse(args, {"--model", "--text", "--ids", "--layer", "-o"}, {"--all-logits", "--grad"}, a); !e.empty())
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
  // --grad: the model's next-token loss and the gradient of every stage of the layer
  std::optional<Gradients> grads;
  if (a.flags.count("--grad")) {
    std::string problem;
    const auto backward = ModelGradient::make(m, problem);
    if (!backward) return fail(err, "trace --grad: " + problem);
    if (problem = gradients_problem(ls.scenario); !problem.empty()) return fail(err, "trace --grad: " + problem);
    try {
      const Matrix output = engine.stage(StageId::input(StageKind::Output));
      const LayerOutputGradient g = backward->at_layer(ids.ids, layer, &output);
      grads = backward_from_output(engine, ls.scenario, g.d_output, g.loss, "the model's next-token loss");
    } catch (const std::invalid_argument& e) {
      return fail(err, std::string("trace --grad: ") + e.what());
    }
  }

  std::ostringstream text;
  write_trace(text, engine, ls.scenario, [&](std::ostream& s) {
    if (grads) write_gradients(s, *grads, ls.scenario);
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

}  // namespace attention_lab::cli
