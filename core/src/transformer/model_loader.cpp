// Opening a checkpoint: finding its files, reading the config, and mapping
// every tensor an architecture names onto a TransformerModel, checked.

#include "attention_lab/excerpt.h"
#include "attention_lab/limits.h"
#include "attention_lab/transformer_model.h"
#include "io/json_document.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace attention_lab {

namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxIndexBytes = 64ull << 20;

struct LoadError {
  std::string message;
};

[[noreturn]] void fail_load(std::string message) { throw LoadError{cap_message(std::move(message))}; }

// A block of `bytes` the model owns (new[] of bytes is aligned for any scalar).
std::byte* own_block(TransformerModel& m, std::size_t bytes) {
  m.owned.push_back(std::make_unique<std::byte[]>(bytes));
  m.owned_bytes += bytes;
  return m.owned.back().get();
}

struct Located {
  const SafetensorsFile* file = nullptr;
  const TensorInfo* info = nullptr;
};

// The shard files of model.safetensors.index.json, each named once.
std::vector<fs::path> read_index(const fs::path& index_path) {
  io::TextFile text = io::read_text_file(index_path, kMaxIndexBytes);
  if (!text.error.empty()) fail_load(text.error);
  io::JsonDocument doc = io::parse_json_document(text.text, index_path.string());
  // The nesting error already starts with the path.
  if (!doc.error.empty()) fail_load(doc.error.rfind(index_path.string(), 0) == 0 ? doc.error : index_path.string() + ": " + doc.error);
  const auto map = doc.root.is_object() ? doc.root.find("weight_map") : doc.root.end();
  if (!doc.root.is_object() || map == doc.root.end() || !map->is_object())
    fail_load(index_path.string() + ": expected an object with a \"weight_map\" of tensor names to file names");
  std::set<std::string> names;
  for (const auto& [tensor, file] : map->items()) {
    if (!file.is_string())
      fail_load(index_path.string() + ": weight_map '" + excerpt(tensor, 60) + "': expected a file name");
    const std::string name = file.get<std::string>();
    // Shards sit next to the index: a path elsewhere is a broken (or hostile) index.
    if (name.empty() || name.find('/') != std::string::npos || name.find('\\') != std::string::npos ||
        name == "." || name == "..")
      fail_load(index_path.string() + ": weight_map '" + excerpt(tensor, 60) + "': expected a file name in the same folder, found '" +
           excerpt(name, 60) + "'");
    names.insert(name);
  }
  if (names.empty()) fail_load(index_path.string() + ": weight_map: expected at least one tensor");
  std::vector<fs::path> files;
  for (const auto& n : names) files.push_back(index_path.parent_path() / n);
  return files;
}

class Builder {
 public:
  Builder(TransformerModel& model, const LoadProgress& progress, bool headers_only)
      : m_(model), progress_(progress), headers_only_(headers_only) {}

  void add_file(std::shared_ptr<const SafetensorsFile> file) {
    for (const auto& t : file->tensors()) {
      const auto [it, fresh] = where_.emplace(t.name, Located{file.get(), &t});
      if (!fresh)
        fail_load(file->name() + ": tensor '" + excerpt(t.name, 80) + "' is also in " + it->second.file->name() +
             " (expected each tensor once)");
    }
    total_bytes_ += file->file_bytes();
    m_.weight_bytes += file->file_bytes();
    m_.files.push_back(std::move(file));
  }

  bool has(const std::string& name) const { return where_.count(name) != 0; }

  const Located& need(const std::string& name) {
    const auto it = where_.find(name);
    if (it == where_.end())
      fail_load(m_.source.string() + ": missing tensor '" + name + "' (expected by the " + m_.layout + " layout)");
    used_.insert(name);
    return it->second;
  }

  // Refuses the first tensor of the files that no part of the model read and
  // that the layout does not name as a harmless buffer: a weight the forward
  // pass would silently leave out (a q_norm, a bias the config did not
  // announce) makes the model something else than what is computed here.
  void refuse_unused(const std::function<bool(const std::string&)>& is_buffer) const {
    for (const auto& [name, located] : where_) {
      if (used_.count(name) || is_buffer(name)) continue;
      fail_load(located.file->name() + ": tensor '" + excerpt(name, 80) + "' " + located.info->shape_text() +
                " is not part of the " + m_.layout + " layout as config.json describes it (model_type " +
                m_.config.model_type + "); refused rather than ignored");
    }
  }

  std::vector<std::int64_t> shape(const std::string& name) { return need(name).info->shape; }

  void expect_shape(const Located& t, const std::vector<std::int64_t>& shape) const {
    if (t.info->shape != shape) {
      TensorInfo want;
      want.shape = shape;
      fail_load(t.file->name() + ": tensor '" + t.info->name + "': expected shape " + want.shape_text() + " (from config.json), found " +
           t.info->shape_text());
    }
  }

  // The tensor's values in the file's own type where the mapping put them
  // (F32, F16, BF16), checked finite; an F64 tensor or one not aligned to its
  // element is widened to float (the model owns the copy).
  StoredFloats floats(const std::string& name, const std::vector<std::int64_t>& shape) {
    const Located& t = need(name);
    expect_shape(t, shape);
    if (!is_float(t.info->dtype))
      fail_load(t.file->name() + ": tensor '" + name + "': expected F32, F16 or BF16, found " + to_string(t.info->dtype));
    const auto n = static_cast<std::size_t>(t.info->numel());
    if (headers_only_) {
      m_.parameters += n;
      return {};
    }
    StoredFloats data = t.file->stored_in_place(*t.info);
    if (!data) {
      std::vector<float> values;
      std::string error;
      if (!t.file->read_floats(*t.info, values, error)) fail_load(error);
      float* copy = reinterpret_cast<float*>(own(n * sizeof(float)));
      std::copy(values.begin(), values.end(), copy);
      data = {copy, StoredType::F32};
    }
    if (const std::ptrdiff_t i = data.first_non_finite(static_cast<std::ptrdiff_t>(n)); i >= 0)
      fail_load(t.file->name() + ": tensor '" + name + "': value " + std::to_string(i) + " is " +
                (std::isnan(data.at(i)) ? "NaN" : "infinite") + "; expected finite weights");
    m_.parameters += n;
    done_bytes_ += t.info->end - t.info->begin;
    // The files' bytes include headers and tensors nobody reads (GPT-2's
    // attn.bias buffers), so this ends below 1: finish() reports the 1.
    report(total_bytes_ ? std::min(1.0, static_cast<double>(done_bytes_) / static_cast<double>(total_bytes_)) : 1.0,
           "reading " + name);
    return data;
  }

  // A block the model owns, of `bytes` bytes (aligned for floats).
  std::byte* own(std::size_t bytes) { return own_block(m_, bytes); }

  // Every tensor is read and checked.
  void finish() { report(1.0, "checked"); }

  RowVector vec(const std::string& name, int n) {
    const StoredFloats p = floats(name, {n});
    RowVector out = RowVector::Zero(n);  // (stays zero when only the headers are read)
    if (p) p.widen(0, n, out.data());
    return out;
  }

  // A weight stored whole, [in, out] or [out, in].
  Linear linear(const std::string& name, int in, int out, bool out_in, const std::string& bias = {}) {
    Linear l;
    l.out_in = out_in;
    l.stored_rows = out_in ? out : in;
    l.stored_cols = out_in ? in : out;
    l.stride = l.stored_cols;
    l.values = floats(name, {l.stored_rows, l.stored_cols});
    if (!bias.empty()) l.bias = vec(bias, out);
    return l;
  }

  Norm norm(const std::string& weight, const std::string& bias, int n, bool rms, double eps) {
    Norm out;
    out.rms = rms;
    out.eps = eps;
    out.weight = vec(weight, n);
    // Gemma stores w for a gain of 1 + w: added here, in float as Gemma does
    if (rms && m_.config.norm_gain_offset != 0.0f) out.weight.array() += m_.config.norm_gain_offset;
    if (!rms) out.bias = vec(bias, n);
    return out;
  }

 private:
  void report(double fraction, const std::string& what) const {
    if (progress_ && !progress_(fraction, what)) throw LoadError{"cancelled"};
  }

  TransformerModel& m_;
  const LoadProgress& progress_;
  std::map<std::string, Located> where_;
  std::set<std::string> used_;
  std::uint64_t total_bytes_ = 0;
  std::uint64_t done_bytes_ = 0;
  bool headers_only_ = false;
};

// GPT-2's c_attn holds Q, K and V side by side: block j of three.
Linear fused_block(StoredFloats data, int d, int j, bool out_in, const RowVector& bias) {
  Linear l;
  l.out_in = out_in;
  l.stored_rows = d;
  l.stored_cols = d;
  // (data is null when only the headers were read)
  if (out_in) {  // [3d, d]: rows j·d … (j+1)·d
    l.values = data.plus(static_cast<std::ptrdiff_t>(j) * d * d);
    l.stride = d;
  } else {  // [d, 3d]: columns j·d … (j+1)·d
    l.values = data.plus(static_cast<std::ptrdiff_t>(j) * d);
    l.stride = 3 * d;
  }
  l.bias = bias.segment(static_cast<Eigen::Index>(j) * d, d);
  return l;
}

void build_gpt2(TransformerModel& m, Builder& b) {
  const ModelConfig& c = m.config;
  const std::string p = b.has("transformer.wte.weight") ? "transformer." : "";
  const int d = c.d_model;
  m.layout = "gpt2";
  const auto attn_shape = b.shape(p + "h.0.attn.c_attn.weight");
  bool out_in;
  if (attn_shape == std::vector<std::int64_t>{d, 3 * d}) {
    out_in = false;
    m.layout = "HF GPT-2 (Conv1D [in, out])";
  } else if (attn_shape == std::vector<std::int64_t>{3 * d, d}) {
    out_in = true;
    m.layout = "minGPT (nn.Linear [out, in])";
  } else {
    fail_load(m.source.string() + ": tensor '" + p + "h.0.attn.c_attn.weight': expected shape [" + std::to_string(d) + ", " +
         std::to_string(3 * d) + "] (HF GPT-2) or [" + std::to_string(3 * d) + ", " + std::to_string(d) +
         "] (minGPT), found " + b.need(p + "h.0.attn.c_attn.weight").info->shape_text());
  }
  m.token_embedding = b.floats(p + "wte.weight", {c.vocab, d});
  m.position_embedding = b.floats(p + "wpe.weight", {c.max_positions, d});
  for (int i = 0; i < c.layers; ++i) {
    const std::string h = p + "h." + std::to_string(i) + ".";
    TransformerLayer layer;
    layer.norm1 = b.norm(h + "ln_1.weight", h + "ln_1.bias", d, false, c.norm_eps);
    const StoredFloats qkv = b.floats(h + "attn.c_attn.weight", out_in ? std::vector<std::int64_t>{3 * d, d}
                                                                 : std::vector<std::int64_t>{d, 3 * d});
    const RowVector qkv_bias = b.vec(h + "attn.c_attn.bias", 3 * d);
    layer.q = fused_block(qkv, d, 0, out_in, qkv_bias);
    layer.k = fused_block(qkv, d, 1, out_in, qkv_bias);
    layer.v = fused_block(qkv, d, 2, out_in, qkv_bias);
    layer.qkv.values = qkv;  // the whole of c_attn: one product for Q, K and V
    layer.qkv.out_in = out_in;
    layer.qkv.stored_rows = out_in ? 3 * d : d;
    layer.qkv.stored_cols = out_in ? d : 3 * d;
    layer.qkv.stride = layer.qkv.stored_cols;
    layer.qkv.bias = qkv_bias;
    layer.o = b.linear(h + "attn.c_proj.weight", d, d, out_in, h + "attn.c_proj.bias");
    layer.norm2 = b.norm(h + "ln_2.weight", h + "ln_2.bias", d, false, c.norm_eps);
    layer.up = b.linear(h + "mlp.c_fc.weight", d, c.d_ff, out_in, h + "mlp.c_fc.bias");
    layer.down = b.linear(h + "mlp.c_proj.weight", c.d_ff, d, out_in, h + "mlp.c_proj.bias");
    m.layers.push_back(std::move(layer));
  }
  m.final_norm = b.norm(p + "ln_f.weight", p + "ln_f.bias", d, false, c.norm_eps);
}

// Rows [first, first + count) of an nn.Linear weight [out, in] stored whole
// (Phi-3 keeps q, k and v in one tensor, and gate and up in another).
Linear row_block(StoredFloats data, int first, int count, int in) {
  Linear l;
  l.out_in = true;
  l.values = data.plus(static_cast<std::ptrdiff_t>(first) * in);  // null: headers only
  l.stored_rows = count;
  l.stored_cols = in;
  l.stride = in;
  return l;
}

void build_llama(TransformerModel& m, Builder& b) {
  const ModelConfig& c = m.config;
  const bool fused = c.model_type == "phi3";
  m.layout = fused             ? "Phi-3 (fused qkv_proj and gate_up_proj, nn.Linear [out, in])"
             : !c.gated_mlp ? "StarCoder2 (LayerNorm, c_fc/c_proj MLP, nn.Linear [out, in])"
             : c.post_norms && c.pre_norms ? "Gemma (norms before and after the attention and the MLP, nn.Linear [out, in])"
             : c.post_norms ? "OLMo-2 (norms after the attention and the MLP, nn.Linear [out, in])"
                            : "Llama (nn.Linear [out, in])";
  const int d = c.d_model;
  const int qw = c.heads * c.d_head;
  const int kvw = c.kv_heads * c.d_head;
  m.token_embedding = b.floats("model.embed_tokens.weight", {c.vocab, d});
  for (int i = 0; i < c.layers; ++i) {
    const std::string h = "model.layers." + std::to_string(i) + ".";
    const auto bias = [&](const char* name, bool on) { return on ? h + "self_attn." + name + "_proj.bias" : std::string(); };
    TransformerLayer layer;
    if (c.pre_norms)
      layer.norm1 = b.norm(h + "input_layernorm.weight", h + "input_layernorm.bias", d, c.rms_norm, c.norm_eps);
    if (fused) {  // Phi-3: qkv_proj [q; k; v] and gate_up_proj [gate; up], nn.Linear [out, in]
      const StoredFloats qkv = b.floats(h + "self_attn.qkv_proj.weight", {qw + 2 * kvw, d});
      layer.q = row_block(qkv, 0, qw, d);
      layer.k = row_block(qkv, qw, kvw, d);
      layer.v = row_block(qkv, qw + kvw, kvw, d);
      const StoredFloats gate_up = b.floats(h + "mlp.gate_up_proj.weight", {2 * c.d_ff, d});
      layer.gate = row_block(gate_up, 0, c.d_ff, d);
      layer.up = row_block(gate_up, c.d_ff, c.d_ff, d);
    } else {
      layer.q = b.linear(h + "self_attn.q_proj.weight", d, qw, true, bias("q", c.qkv_bias));
      layer.k = b.linear(h + "self_attn.k_proj.weight", d, kvw, true, bias("k", c.qkv_bias));
      layer.v = b.linear(h + "self_attn.v_proj.weight", d, kvw, true, bias("v", c.qkv_bias));
      if (c.gated_mlp) {
        layer.gate = b.linear(h + "mlp.gate_proj.weight", d, c.d_ff, true);
        layer.up = b.linear(h + "mlp.up_proj.weight", d, c.d_ff, true);
      } else {  // StarCoder2: GPT-2's MLP under GPT-2's names, as nn.Linear
        layer.up = b.linear(h + "mlp.c_fc.weight", d, c.d_ff, true, c.mlp_bias ? h + "mlp.c_fc.bias" : "");
      }
    }
    if (c.qk_norm != QkNormScope::Off) {  // RMSNorm gains: one head's d_head, or the whole q and k rows
      const bool whole = c.qk_norm == QkNormScope::Whole;
      layer.q_norm = b.norm(h + "self_attn.q_norm.weight", "", whole ? qw : c.d_head, true, c.norm_eps);
      layer.k_norm = b.norm(h + "self_attn.k_norm.weight", "", whole ? kvw : c.d_head, true, c.norm_eps);
    }
    layer.o = b.linear(h + "self_attn.o_proj.weight", qw, d, true, bias("o", c.o_bias));
    if (c.post_norms) {  // OLMo-2, Gemma: post_attention_layernorm is on the attention's output, not before the MLP
      layer.post_attn = b.norm(h + "post_attention_layernorm.weight", "", d, true, c.norm_eps);
      layer.post_mlp = b.norm(h + "post_feedforward_layernorm.weight", "", d, true, c.norm_eps);
      if (c.pre_norms) layer.norm2 = b.norm(h + "pre_feedforward_layernorm.weight", "", d, true, c.norm_eps);
    } else {
      layer.norm2 = b.norm(h + "post_attention_layernorm.weight", h + "post_attention_layernorm.bias", d, c.rms_norm, c.norm_eps);
    }
    layer.down = c.gated_mlp ? b.linear(h + "mlp.down_proj.weight", c.d_ff, d, true)
                             : b.linear(h + "mlp.c_proj.weight", c.d_ff, d, true, c.mlp_bias ? h + "mlp.c_proj.bias" : "");
    m.layers.push_back(std::move(layer));
  }
  m.final_norm = b.norm("model.norm.weight", "model.norm.bias", d, c.rms_norm, c.norm_eps);
}

// One of q, k, v (which = 0, 1, 2) of GPT-NeoX's query_key_value, whose rows
// are [q; k; v] per head ([heads, 3, d_head] × in): gathered into a
// [heads·d_head, in] block of its own (the rows of one are not evenly spaced).
Linear neox_part(TransformerModel& m, StoredFloats qkv, const RowVector& bias, int which, int heads, int d_head, int in) {
  Linear l = row_block({}, 0, heads * d_head, in);
  if (!qkv) return l;  // headers only
  const std::size_t size = stored_bytes(qkv.type), row = static_cast<std::size_t>(in) * size;
  std::byte* owned = own_block(m, static_cast<std::size_t>(heads) * static_cast<std::size_t>(d_head) * row);
  const auto* from_rows = static_cast<const std::byte*>(qkv.data);
  if (bias.size() > 0) l.bias = RowVector(heads * d_head);
  for (int h = 0; h < heads; ++h)
    for (int d = 0; d < d_head; ++d) {
      const std::ptrdiff_t from = (static_cast<std::ptrdiff_t>(h) * 3 + which) * d_head + d, to = static_cast<std::ptrdiff_t>(h) * d_head + d;
      std::memcpy(owned + static_cast<std::size_t>(to) * row, from_rows + static_cast<std::size_t>(from) * row, row);
      if (bias.size() > 0) l.bias(to) = bias(from);
    }
  l.values = {owned, qkv.type};
  return l;
}

// GPT-NeoX / Pythia: LayerNorms with biases, the fused per-head
// query_key_value, partial rotary, a GELU MLP (dense_h_to_4h, dense_4h_to_h),
// every projection with a bias, the attention and the MLP side by side
// (use_parallel_residual), and its own lm head (embed_out).
void build_gpt_neox(TransformerModel& m, Builder& b) {
  const ModelConfig& c = m.config;
  m.layout = "GPT-NeoX (per-head fused query_key_value, nn.Linear [out, in])";
  const int d = c.d_model, width = c.heads * c.d_head;
  m.token_embedding = b.floats("gpt_neox.embed_in.weight", {c.vocab, d});
  for (int i = 0; i < c.layers; ++i) {
    const std::string h = "gpt_neox.layers." + std::to_string(i) + ".";
    TransformerLayer layer;
    layer.norm1 = b.norm(h + "input_layernorm.weight", h + "input_layernorm.bias", d, false, c.norm_eps);
    const StoredFloats qkv = b.floats(h + "attention.query_key_value.weight", {3 * width, d});
    const RowVector qkv_bias = c.qkv_bias ? b.vec(h + "attention.query_key_value.bias", 3 * width) : RowVector();
    layer.q = neox_part(m, qkv, qkv_bias, 0, c.heads, c.d_head, d);
    layer.k = neox_part(m, qkv, qkv_bias, 1, c.heads, c.d_head, d);
    layer.v = neox_part(m, qkv, qkv_bias, 2, c.heads, c.d_head, d);
    layer.o = b.linear(h + "attention.dense.weight", width, d, true, c.o_bias ? h + "attention.dense.bias" : "");
    layer.norm2 = b.norm(h + "post_attention_layernorm.weight", h + "post_attention_layernorm.bias", d, false, c.norm_eps);
    layer.up = b.linear(h + "mlp.dense_h_to_4h.weight", d, c.d_ff, true, h + "mlp.dense_h_to_4h.bias");
    layer.down = b.linear(h + "mlp.dense_4h_to_h.weight", c.d_ff, d, true, h + "mlp.dense_4h_to_h.bias");
    m.layers.push_back(std::move(layer));
  }
  m.final_norm = b.norm("gpt_neox.final_layer_norm.weight", "gpt_neox.final_layer_norm.bias", d, false, c.norm_eps);
  if (b.has("embed_out.weight")) {
    m.lm_head = b.linear("embed_out.weight", d, c.vocab, true);
  } else if (c.tied_embeddings) {
    m.lm_head_tied = true;
    m.lm_head = row_block(m.token_embedding, 0, c.vocab, d);
  } else {
    fail_load(m.source.string() + ": missing tensor 'embed_out.weight' (config.json says tie_word_embeddings: false)");
  }
}

void build_lm_head(TransformerModel& m, Builder& b) {
  const ModelConfig& c = m.config;
  if (b.has("lm_head.weight")) {
    m.lm_head = b.linear("lm_head.weight", c.d_model, c.vocab, true);
  } else if (c.tied_embeddings) {  // logits = x·Eᵀ: the embedding matrix [vocab, d] is lm_head's [out, in]
    m.lm_head_tied = true;
    m.lm_head.values = m.token_embedding;
    m.lm_head.stored_rows = c.vocab;
    m.lm_head.stored_cols = c.d_model;
    m.lm_head.stride = c.d_model;
    m.lm_head.out_in = true;
  } else {
    fail_load(m.source.string() + ": missing tensor 'lm_head.weight' (config.json says tie_word_embeddings: false)");
  }
}

// Tensors a family's files carry that are not weights: HF GPT-2's causal-mask
// buffers (h.N.attn.bias, h.N.attn.masked_bias) and the RoPE frequencies older
// Llama conversions saved (…rotary_emb.inv_freq, which HF itself skips on load).
bool is_known_buffer(ModelFamily family, const std::string& name) {
  const auto ends_with = [&](std::string_view tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (family == ModelFamily::Gpt2) return ends_with(".attn.bias") || ends_with(".attn.masked_bias");
  // (GPT-NeoX files of older transformers carry its causal mask and RoPE frequencies too)
  return ends_with(".self_attn.rotary_emb.inv_freq") || ends_with(".attention.rotary_emb.inv_freq") ||
         ends_with(".attention.bias") || ends_with(".attention.masked_bias");
}

}  // namespace

LoadedModel load_model(const fs::path& path, const LoadProgress& progress, ModelParts parts) {
  LoadedModel result;
  auto model = std::make_shared<TransformerModel>();
  model->source = path;
  try {
    std::error_code ec;
    fs::path folder;
    std::vector<fs::path> weight_files;
    if (fs::is_directory(path, ec)) {
      folder = path;
      if (fs::exists(path / "model.safetensors.index.json", ec)) {
        weight_files = read_index(path / "model.safetensors.index.json");
      } else if (fs::exists(path / "model.safetensors", ec)) {
        weight_files = {path / "model.safetensors"};
      } else {
        fail_load(path.string() + ": expected model.safetensors or model.safetensors.index.json in this folder");
      }
    } else if (fs::exists(path, ec)) {
      // A file must be a checkpoint; a scenario or lesson (.json) opens with File ▸ Open instead.
      if (path.extension() != ".safetensors")
        fail_load(path.string() + ": expected a model folder (config.json with model.safetensors) or a .safetensors file, found a " +
             (path.has_extension() ? path.extension().string() + " file" : std::string("file without an extension")) +
             (path.extension() == ".json" ? " (a scenario or lesson opens with File ▸ Open…)" : ""));
      folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
      weight_files = {path};
    } else {
      fail_load(path.string() + ": no such file or folder");
    }

    const fs::path config_path = folder / "config.json";
    io::TextFile config_text = io::read_text_file(config_path, limits::kMaxConfigBytes);
    if (!config_text.error.empty()) fail_load(config_text.error + " (a model needs its config.json)");
    ParsedConfig parsed = parse_model_config(config_text.text, config_path.string());
    if (!parsed.error.empty()) fail_load(parsed.error);
    model->config = parsed.config;

    model->weights_read = parts == ModelParts::Everything;
    Builder builder(*model, progress, !model->weights_read);
    for (const auto& file : weight_files) {
      std::string error;
      auto opened = SafetensorsFile::open(file, error);
      if (!opened) fail_load(error);
      builder.add_file(std::move(opened));
    }
    const bool neox = model->config.model_type == "gpt_neox";
    if (model->config.family == ModelFamily::Gpt2) build_gpt2(*model, builder);
    else if (neox) build_gpt_neox(*model, builder);
    else build_llama(*model, builder);
    if (!neox) build_lm_head(*model, builder);
    const std::string first = model->config.family == ModelFamily::Gpt2
                                  ? (builder.has("transformer.wte.weight") ? "transformer.wte.weight" : "wte.weight")
                              : neox ? "gpt_neox.embed_in.weight"
                                     : "model.embed_tokens.weight";
    model->dtype = builder.need(first).info->dtype;
    const ModelFamily family = model->config.family;
    builder.refuse_unused([family](const std::string& name) { return is_known_buffer(family, name); });
    builder.finish();
  } catch (const LoadError& e) {
    result.error = e.message;
    return result;
  } catch (const std::bad_alloc&) {
    result.error = path.string() + ": not enough memory to load the model";
    return result;
  }
  result.model = std::move(model);
  return result;
}

}  // namespace attention_lab
