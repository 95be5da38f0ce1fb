#include "round_trip.h"

#include "attention_lab/cell_ref.h"
#include "attention_lab/engine.h"
#include "attention_lab/lesson.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/tiny_training.h"
#include "attention_lab/trace_io.h"
#include "attention_lab/transformer_model.h"

#include <nlohmann/json.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <sstream>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace attention_lab::fuzz {

namespace {

// Bit-for-bit equality, so NaN equals NaN and −0 differs from +0.
bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::string cell_name(const std::string& what, Eigen::Index r, Eigen::Index c) {
  return what + "[" + std::to_string(r) + "][" + std::to_string(c) + "]";
}

std::string matrix_difference(MatrixView a, MatrixView b, const std::string& what) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return what + ": shape " + std::to_string(a.rows()) + "x" + std::to_string(a.cols()) + " became " +
           std::to_string(b.rows()) + "x" + std::to_string(b.cols());
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < a.cols(); ++c)
      if (!same_bits(a(r, c), b(r, c)))
        return cell_name(what, r, c) + ": " + std::to_string(a(r, c)) + " became " + std::to_string(b(r, c));
  return {};
}

// Everything a save must keep, compared field by field.
std::string scenario_difference(const Scenario& a, const Scenario& b) {
  if (a.dims() != b.dims()) return "dims changed";
  for (auto [name, x, y] : {std::tuple{"X", &a.X, &b.X}, std::tuple{"W_q", &a.W_q, &b.W_q},
                            std::tuple{"W_k", &a.W_k, &b.W_k}, std::tuple{"W_v", &a.W_v, &b.W_v}})
    if (auto d = matrix_difference(x->get(), y->get(), name); !d.empty()) return d;
  if (a.use_bias != b.use_bias || a.use_w_o != b.use_w_o || a.use_output_bias != b.use_output_bias)
    return "bias / W_o / b_o switches changed";
  if (a.use_bias)
    for (auto [name, x, y] : {std::tuple{"b_q", &a.b_q, &b.b_q}, std::tuple{"b_k", &a.b_k, &b.b_k},
                              std::tuple{"b_v", &a.b_v, &b.b_v}})
      if (auto d = matrix_difference(x->get(), y->get(), name); !d.empty()) return d;
  if (a.use_w_o)
    if (auto d = matrix_difference(a.W_o.get(), b.W_o.get(), "W_o"); !d.empty()) return d;
  if (a.use_output_bias)
    if (auto d = matrix_difference(a.b_o.get(), b.b_o.get(), "b_o"); !d.empty()) return d;
  if (a.mask_kind != b.mask_kind) return "mask kind changed";
  if (a.mask_kind == MaskKind::Custom)
    if (auto d = matrix_difference(a.custom_mask.get(), b.custom_mask.get(), "mask"); !d.empty()) return d;
  if (a.scale != b.scale) return "scale changed";
  if (!same_bits(a.temperature, b.temperature)) return "temperature changed";
  if (a.tokens != b.tokens) return "tokens changed";
  if (a.features != b.features) return "features changed";
  if (a.title != b.title || a.description != b.description) return "title or description changed";
  if (a.seed != b.seed) return "seed changed";
  if (a.pins.size() != b.pins.size()) return "number of pins changed";
  for (auto i = a.pins.begin(), j = b.pins.begin(); i != a.pins.end(); ++i, ++j)
    if (!(i->first == j->first) || !same_bits(i->second, j->second)) return "pin on " + to_string(i->first.stage) + " changed";
  if (a.unknown_fields.size() != b.unknown_fields.size()) return "number of unknown keys kept changed";
  for (std::size_t i = 0; i < a.unknown_fields.size(); ++i)
    if (a.unknown_fields[i] != b.unknown_fields[i]) return "unknown key " + a.unknown_fields[i].first.substr(0, 40) + " changed";
  return {};
}

// The properties every computed scenario has, whatever its numbers: weights
// in [0, 1], each row summing to 1 (or 0 when its mask allows no key) unless
// the user pinned a weight of that row.
std::string weights_problem(const Scenario& s, StageId id, MatrixView w) {
  const std::string what = to_string(id);
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    const auto pinned = std::find_if(s.pins.begin(), s.pins.end(), [&](const auto& pin) {
      return pin.first.stage == id && pin.first.row == r;
    });
    if (pinned != s.pins.end()) continue;
    double sum = 0;
    bool finite = true;
    for (Eigen::Index c = 0; c < w.cols(); ++c) {
      const float v = w(r, c);
      if (!std::isfinite(v)) { finite = false; continue; }
      if (v < 0.0f || v > 1.0f) return cell_name(what, r, c) + ": a weight outside [0, 1]: " + std::to_string(v);
      sum += static_cast<double>(v);
    }
    // A row sums to 1, or to 0 when its mask allows no key (README: "The math, exactly");
    // with attention sinks to 1 minus the sink's share, so to anything from 0 to 1.
    if (finite && s.use_sinks && sum > 1.0 + 1e-3)
      return what + " row " + std::to_string(r) + ": weights sum to " + std::to_string(sum) + " with a sink";
    if (finite && !s.use_sinks && std::abs(sum - 1.0) > 1e-3 && sum != 0.0)
      return what + " row " + std::to_string(r) + ": weights sum to " + std::to_string(sum);
  }
  return {};
}

// Computes every stage of `s`, saves it, loads it back and computes again.
std::string check_scenario(const Scenario& s) {
  Engine engine;
  engine.recompute_all(s);
  const auto stages = pipeline(s);
  for (const StageId id : stages) {
    const MatrixView m = engine.stage(id);
    const StageShape shape = stage_shape(s, id);
    if (m.rows() != shape.rows || m.cols() != shape.cols) return to_string(id) + ": not the shape stage_shape says";
    if (id.kind == StageKind::Weights)
      if (auto p = weights_problem(s, id, m); !p.empty()) return p;
  }
  const std::string saved = scenario_to_json(s);
  LoadResult again = parse_scenario(saved);
  if (!again.scenario) return "the saved scenario does not load again: " + again.error;
  if (auto d = scenario_difference(s, *again.scenario); !d.empty()) return "save and reload: " + d;
  if (scenario_to_json(*again.scenario) != saved) return "saving the reloaded scenario gives other text";
  Engine reloaded;
  reloaded.recompute_all(*again.scenario);
  for (const StageId id : stages)
    if (auto d = matrix_difference(engine.stage(id), reloaded.stage(id), to_string(id)); !d.empty())
      return "computed again after reloading: " + d;
  return {};
}

// A parser's error: one line, short (error messages quote files only in short, escaped excerpts).
std::string error_problem(const std::string& error) {
  if (error.empty()) return "refused without a message";
  if (error.size() > 1000) return "an error message of " + std::to_string(error.size()) + " bytes";
  for (const char ch : error)
    if (static_cast<unsigned char>(ch) < 0x20) return "a control character in the error message: " + error.substr(0, 200);
  return {};
}

float trace_number(const nlohmann::json& j) {
  if (j.is_string()) {
    const auto s = j.get<std::string>();
    if (s == "inf") return std::numeric_limits<float>::infinity();
    if (s == "-inf") return -std::numeric_limits<float>::infinity();
    if (s == "nan") return std::numeric_limits<float>::quiet_NaN();
    throw std::runtime_error("a string that is not inf, -inf or nan: " + s.substr(0, 40));
  }
  // Written in shortest round-trip float32 form: reading it as double and
  // rounding to float gives the same bits back.
  return static_cast<float>(j.get<double>());
}

std::string trace_matrix_difference(const nlohmann::json& j, MatrixView m, const std::string& what) {
  if (!j.is_array() || j.size() != static_cast<std::size_t>(m.rows())) return what + ": not " + std::to_string(m.rows()) + " rows";
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    const auto& row = j[static_cast<std::size_t>(r)];
    if (!row.is_array() || row.size() != static_cast<std::size_t>(m.cols()))
      return what + "[" + std::to_string(r) + "]: not " + std::to_string(m.cols()) + " numbers";
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      const float v = trace_number(row[static_cast<std::size_t>(c)]);
      // NaN's payload and sign are not kept by "nan"; every other number is.
      if (!(std::isnan(v) && std::isnan(m(r, c))) && !same_bits(v, m(r, c)))
        return cell_name(what, r, c) + ": the trace says " + std::to_string(v) + ", the engine " + std::to_string(m(r, c));
    }
  }
  return {};
}

}  // namespace

void configure_for_fuzzing() {
  Eigen::setNbThreads(1);
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  // 64 MiB: T up to ~2000 with one head. Larger sizes exercise the refusal path.
  ::setenv("ATTENTION_LAB_MEMORY_LIMIT_MIB", "64", 1);
}

std::string check_scenario_file(std::string_view bytes) {
  const LoadResult r = parse_scenario(std::string(bytes));
  if (!r.scenario) return error_problem(r.error);
  if (!r.error.empty()) return "a loaded scenario with an error message";
  if (auto e = validate(*r.scenario); !e.empty()) return "loaded, but validate() refuses it: " + e;
  return check_scenario(*r.scenario);
}

std::string check_lesson_file(std::string_view bytes, const std::filesystem::path& folder) {
  const std::string text(bytes);
  const bool sniffed = is_lesson_text(text);
  const LoadedLesson l = parse_lesson(text, folder);
  if (!l.lesson) return error_problem(l.error);
  if (!sniffed) return "a lesson that is_lesson_text does not recognize";
  const Lesson& lesson = *l.lesson;
  if (auto e = validate_lesson(lesson); !e.empty()) return "parsed, but validate_lesson refuses it: " + e;
  for (int step = -1; step < static_cast<int>(lesson.steps.size()); ++step) {
    const Scenario s = scenario_at_step(lesson, step);
    if (auto e = validate(s); !e.empty()) return "step " + std::to_string(step) + ": an invalid scenario: " + e;
    if (auto e = check_scenario(s); !e.empty()) return "step " + std::to_string(step) + ": " + e;
  }
  return {};
}

std::string check_trace_of(std::string_view scenario_bytes) {
  const LoadResult r = parse_scenario(std::string(scenario_bytes));
  if (!r.scenario) return error_problem(r.error);
  Engine engine;
  engine.recompute_all(*r.scenario);
  std::ostringstream out;
  write_trace(out, engine, *r.scenario);
  try {
    const auto trace = nlohmann::json::parse(out.str());
    if (trace.at("format") != kTraceFormat) return "the trace's format tag";
    const Dims d = engine.dims();
    const auto& dims = trace.at("dims");
    if (dims.at("T") != d.T || dims.at("d_model") != d.d_model || dims.at("heads") != d.heads ||
        dims.at("d_k") != d.d_k || dims.at("d_v") != d.d_v || dims.at("d_out") != d.d_out)
      return "the trace's dims";
    for (auto kind : {StageKind::X, StageKind::Q, StageKind::K, StageKind::V, StageKind::Concat, StageKind::Output})
      if (auto e = trace_matrix_difference(trace.at(kind_name(kind)), engine.stage(StageId::input(kind)), kind_name(kind));
          !e.empty())
        return e;
    const auto& heads = trace.at("heads");
    if (!heads.is_array() || heads.size() != static_cast<std::size_t>(d.heads)) return "the trace's list of heads";
    for (int h = 0; h < d.heads; ++h)
      for (auto kind : {StageKind::HeadQ, StageKind::HeadK, StageKind::HeadV, StageKind::Scores, StageKind::Scaled,
                        StageKind::Masked, StageKind::Weights, StageKind::Context}) {
        const StageId id = StageId::of_head(kind, h);
        if (auto e = trace_matrix_difference(heads[static_cast<std::size_t>(h)].at(kind_name(kind)), engine.stage(id),
                                             to_string(id));
            !e.empty())
          return e;
      }
    if (trace.at("warnings").size() != engine.warnings().size()) return "the trace's warnings";
  } catch (const std::exception& e) {
    return std::string("the trace is not the JSON it should be: ") + e.what();
  }
  return {};
}

namespace {

// A parser's refusal: one short line starting with the name the input was given.
std::string refusal_problem(const std::string& error, const std::string& name) {
  if (auto p = error_problem(error); !p.empty()) return p;
  if (error.rfind(name + ": ", 0) != 0) return "an error message not starting with '" + name + ": ': " + error.substr(0, 200);
  return {};
}

template <typename T>
bool same_value(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

std::string check_train_run(std::string_view bytes) {
  const std::string name = "run.json";
  std::string error;
  const TinyTrainConfig c = parse_tiny_train_config(std::string(bytes), name, error);
  if (!error.empty()) return refusal_problem(error, name);
  if (const std::string p = tiny_gpt_shape_problem(c.shape); !p.empty()) return "a shape the model refuses: " + p;
  if (c.shape.context != task_context(c.task, c.length)) return "a context the task does not make";
  if (c.batch < 1 || c.steps < 0 || c.log_every < 1) return "a batch, steps or log_every out of range";
  if (!(c.optimizer.learning_rate > 0.0) || !std::isfinite(c.optimizer.learning_rate)) return "a learning rate not above 0";
  return {};
}

std::string check_safetensors(std::string_view bytes) {
  const std::string name = "fuzz.safetensors";
  std::string error;
  const auto file = SafetensorsFile::parse(bytes, name, error);
  if (!file) return refusal_problem(error, name);
  if (!error.empty()) return "accepted with an error message";
  if (bytes.size() < 8) return "accepted fewer than 8 bytes";
  std::uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = (header << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  if (header > kMaxSafetensorsHeaderBytes || header > bytes.size() - 8) return "accepted a header length past the end";
  const std::uint64_t data_start = 8 + header, data_bytes = bytes.size() - data_start;
  if (file->file_bytes() != bytes.size()) return "file_bytes() is not the input's size";

  // Conversions are capped so a big file stays cheap: tensors over a million
  // elements are only checked for their place.
  constexpr std::int64_t kMaxConverted = 1 << 20;
  std::int64_t converted = 0;
  const TensorInfo* reach = nullptr;  // the non-empty tensor ending furthest so far
  std::uint64_t last_begin = 0;
  for (const TensorInfo& t : file->tensors()) {
    const std::string what = "tensor '" + t.name.substr(0, 60) + "'";
    if (file->find(t.name) != &t) return "find() does not give " + what;
    if (t.begin > t.end || t.end > data_bytes) return what + ": accepted outside the data";
    if (t.begin < last_begin) return what + ": tensors() not in the order of their data";
    last_begin = t.begin;
    if (t.begin != t.end) {
      if (reach != nullptr && t.begin < reach->end) return what + ": accepted overlapping '" + reach->name.substr(0, 60) + "'";
      reach = &t;
    }
    if (t.shape.size() > 8) return what + ": accepted more than 8 dimensions";
    for (const auto d : t.shape)
      if (d < 0) return what + ": accepted a negative dimension";
    const std::int64_t numel = t.numel();
    if (numel < 0 || static_cast<std::uint64_t>(numel) * dtype_bytes(t.dtype) != t.end - t.begin)
      return what + ": numel() × dtype size is not its byte range";
    const auto raw = file->bytes(t);
    if (raw.size() != t.end - t.begin) return what + ": bytes() is not its byte range";
    if (!raw.empty() && std::memcmp(raw.data(), bytes.data() + data_start + t.begin, raw.size()) != 0)
      return what + ": bytes() are not the input's bytes";

    if (numel > kMaxConverted || converted + numel > 4 * kMaxConverted) continue;
    converted += numel;
    std::vector<float> f;
    std::vector<double> d;
    std::string ef, ed;
    const bool read_f = file->read_floats(t, f, ef), read_d = file->read_doubles(t, d, ed);
    if (t.dtype == DType::Bool) {
      if (read_f || read_d) return what + ": BOOL read as numbers";
      if (auto p = refusal_problem(ef, name); !p.empty()) return p;
      if (ef.find("tensor '") == std::string::npos) return what + ": BOOL refused without naming the tensor: " + ef;
      continue;
    }
    if (!read_f || !read_d) return what + ": " + to_string(t.dtype) + " does not convert: " + ef + ed;
    if (!ef.empty() || !ed.empty()) return what + ": converted with an error message";
    if (f.size() != static_cast<std::size_t>(numel) || d.size() != f.size()) return what + ": converted to the wrong count";
    // int64 → float rounds once, int64 → double → float may round twice.
    if (t.dtype != DType::I64)
      for (std::size_t i = 0; i < f.size(); ++i)
        if (!same_value(f[i], static_cast<float>(d[i])))
          return what + ": value " + std::to_string(i) + ": read_floats and read_doubles differ";
    if (const float* in_place = file->f32_in_place(t)) {
      if (t.dtype != DType::F32) return what + ": f32_in_place for " + to_string(t.dtype);
      if (!f.empty() && std::memcmp(in_place, f.data(), f.size() * sizeof(float)) != 0)
        return what + ": f32_in_place differs from read_floats";
    }
  }
  if (file->find("__metadata__") != nullptr) return "__metadata__ as a tensor";
  return {};
}

std::string check_model_config(std::string_view bytes) {
  const std::string name = "config.json";
  const ParsedConfig parsed = parse_model_config(std::string(bytes), name);
  if (!parsed.error.empty()) return refusal_problem(parsed.error, name);
  const ModelConfig& c = parsed.config;
  if (c.layers < 1 || c.layers > 1024) return "layers " + std::to_string(c.layers);
  for (auto [what, n] : {std::pair{"heads", c.heads}, std::pair{"kv_heads", c.kv_heads}, std::pair{"d_model", c.d_model},
                         std::pair{"d_head", c.d_head}, std::pair{"d_ff", c.d_ff}, std::pair{"vocab", c.vocab},
                         std::pair{"max_positions", c.max_positions}})
    if (n < 1) return std::string(what) + " " + std::to_string(n);
  if (c.heads % c.kv_heads != 0) return "heads not a multiple of kv_heads";
  // Q's width is an int in the loader and the forward pass.
  if (static_cast<long long>(c.heads) * c.d_head > (1 << 20)) return "heads × d_head over 2^20";
  if (!std::isfinite(c.norm_eps) || !(c.norm_eps > 0)) return "norm_eps " + std::to_string(c.norm_eps);
  if (c.sliding_window < 0) return "a negative sliding window";
  if (std::string(to_string(c.activation)) == "?") return "an activation without a name";
  if (c.family == ModelFamily::Gpt2) {
    if (c.model_type != "gpt2") return "GPT-2 family from model_type " + c.model_type.substr(0, 40);
    if (c.rms_norm || c.gated_mlp || !c.mlp_bias || c.rope.on) return "GPT-2 with a Llama feature";
    if (c.kv_heads != c.heads) return "GPT-2 with grouped K/V heads";
    if (static_cast<long long>(c.heads) * c.d_head != c.d_model) return "GPT-2 heads × d_head ≠ d_model";
    if (c.activation == Activation::Silu) return "GPT-2 with silu";
    if (c.sliding_window != 0) return "GPT-2 with a sliding window";
    if (!c.qkv_bias || !c.o_bias) return "GPT-2 without its biases";
    if (!c.learned_positions()) return "GPT-2 without learned positions";
  } else {
    const std::string& t = c.model_type;
    const bool gemma = t == "gemma2" || t == "gemma3_text", neox = t == "gpt_neox";
    if (t != "llama" && t != "mistral" && t != "qwen2" && t != "qwen3" && t != "olmo2" && t != "granite" && !gemma &&
        !neox && t != "phi3" && t != "starcoder2" && t != "smollm3")
      return "Llama family from model_type " + t.substr(0, 40);
    if (c.d_head % 2 != 0) return "Llama family with an odd d_head (RoPE turns pairs)";
    if (!c.rope.on) return "Llama family without RoPE";
    if (std::string problem = check_rope(c.rope); !problem.empty()) return problem;
    if (c.rope.dims != 0 && (!neox || c.rope.dims % 2 != 0 || c.rope.dims < 2 || c.rope.dims > c.d_head))
      return "partial rotary outside GPT-NeoX, or not an even part of a head";
    if (c.rope_sliding.on && t != "gemma3_text") return "a second RoPE outside Gemma 3";
    if (c.sliding_window != 0 && t != "mistral" && t != "phi3" && t != "starcoder2" && !gemma)
      return "a sliding window outside Mistral, Phi-3, StarCoder2 and Gemma";
    if (!c.sliding_layers.empty() && (!gemma || c.sliding_layers.size() != static_cast<std::size_t>(c.layers)))
      return "layers of two kinds outside Gemma, or not one per layer";
    if ((c.qk_norm != QkNormScope::Off) != (t == "qwen3" || t == "olmo2" || t == "gemma3_text"))
      return "a q/k norm where model_type " + t + " has none, or none where it has one";
    if (c.post_norms != (t == "olmo2" || gemma) || c.pre_norms == (t == "olmo2")) return "norms where model_type " + t + " has none";
    if (c.parallel_residual && !neox) return "a parallel residual outside GPT-NeoX";
    if ((c.attn_softcap > 0.0 || c.logit_softcap > 0.0) && t != "gemma2") return "a soft-cap outside Gemma 2";
    for (const double v : {static_cast<double>(c.embedding_scale), static_cast<double>(c.residual_scale), c.logits_divisor})
      if (!(v > 0.0) || !std::isfinite(v)) return "a scale that is not a positive number";
    if (c.score_scale < 0.0 || !std::isfinite(c.score_scale)) return "a negative score scale";
    if (t == "qwen2" && (!c.qkv_bias || c.o_bias)) return "Qwen2 without q/k/v biases or with an o bias";
    if (t == "phi3" && c.qkv_bias) return "Phi-3 with q/k/v biases";
    if (c.learned_positions()) return "Llama family with learned positions";
    // StarCoder2 and GPT-NeoX have LayerNorm and GPT-2's ungated MLP; only SmolLM3 has layers without positions.
    const bool layer_norm = t == "starcoder2" || neox;
    if (c.rms_norm == layer_norm || c.gated_mlp == layer_norm) return "norm or MLP kind not the one of model_type " + t;
    if (c.mlp_bias && !layer_norm) return "MLP biases outside StarCoder2 and GPT-NeoX";
    if (!c.nope_layers.empty() && (t != "smollm3" || c.nope_layers.size() != static_cast<std::size_t>(c.layers)))
      return "layers without positions that are not SmolLM3's, one per layer";
  }
  return {};
}

}  // namespace attention_lab::fuzz
