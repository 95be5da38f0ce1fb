#include "attention_lab/hook_cache.h"

#include "attention_lab/json_text.h"
#include "attention_lab/run_cache.h"
#include "base/nearest.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace attention_lab {

namespace {

// The per-layer hooks, in the order a layer meets them.
std::vector<std::string> layer_hooks(const ModelConfig& c) {
  std::vector<std::string> h = {"hook_resid_pre"};
  if (c.pre_norms) h.push_back("ln1.hook_normalized");
  for (const char* a : {"attn.hook_q", "attn.hook_k", "attn.hook_v", "attn.hook_attn_scores", "attn.hook_pattern",
                        "attn.hook_z", "attn.hook_result", "hook_attn_out"})
    h.emplace_back(a);
  if (!c.parallel_residual) h.emplace_back("hook_resid_mid");
  if (c.pre_norms) h.emplace_back("ln2.hook_normalized");
  for (const char* a : {"mlp.hook_pre", "mlp.hook_post", "hook_mlp_out", "hook_resid_post"}) h.emplace_back(a);
  return h;
}

// Whether `name` matches `glob` (* any run of characters, ? any one).
bool matches(const std::string& glob, const std::string& name) {
  std::size_t g = 0, n = 0, star = std::string::npos, mark = 0;
  while (n < name.size()) {
    if (g < glob.size() && (glob[g] == '?' || glob[g] == name[n])) {
      ++g, ++n;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++, mark = n;
    } else if (star != std::string::npos) {
      g = star + 1, n = ++mark;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

NamedTensor tensor_of(std::string name, std::vector<std::int64_t> shape, const Matrix& m) {
  NamedTensor t{std::move(name), std::move(shape), std::vector<float>(m.data(), m.data() + m.size())};
  return t;
}

// Per-head T × T matrices as one [heads, T, T] tensor.
NamedTensor stack(std::string name, const std::vector<Matrix>& heads) {
  NamedTensor t;
  t.name = std::move(name);
  const auto T = heads.empty() ? 0 : heads[0].rows();
  t.shape = {static_cast<std::int64_t>(heads.size()), T, T};
  for (const Matrix& m : heads) t.values.insert(t.values.end(), m.data(), m.data() + m.size());
  return t;
}

}  // namespace

std::vector<std::string> hook_names(const ModelConfig& c) {
  std::vector<std::string> out = {"hook_embed"};
  if (c.learned_positions()) out.emplace_back("hook_pos_embed");
  const std::vector<std::string> per_layer = layer_hooks(c);
  for (int l = 0; l < c.layers; ++l)
    for (const std::string& h : per_layer) out.push_back("blocks." + std::to_string(l) + "." + h);
  out.emplace_back("ln_final.hook_normalized");
  return out;
}

std::string select_hooks(const ModelConfig& c, const std::string& patterns, std::vector<std::string>& names) {
  const std::vector<std::string> all = hook_names(c);
  std::vector<bool> chosen(all.size(), false);
  std::istringstream list(patterns);
  bool any = false;
  for (std::string p; std::getline(list, p, ',');) {
    p.erase(0, p.find_first_not_of(' '));
    p.erase(p.find_last_not_of(' ') + 1);
    if (p.empty()) continue;
    any = true;
    bool found = false;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (matches(p, all[i])) chosen[i] = found = true;
    if (found) continue;
    std::string list_text;
    for (const std::string& n : nearest_names(p, all, 3)) list_text += (list_text.empty() ? "" : ", ") + n;
    return "hook '" + p + "': this model has no such hook; the nearest: " + list_text;
  }
  if (!any) return "expected at least one hook name or glob (e.g. blocks.*.attn.hook_pattern)";
  names.clear();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (chosen[i]) names.push_back(all[i]);
  return {};
}

std::vector<NamedTensor> cache_hooks(const TransformerModel& model, std::span<const int> ids,
                                     const std::vector<std::string>& names) {
  const ModelConfig& c = model.config;
  const auto T = static_cast<std::int64_t>(ids.size());
  const bool attention = std::any_of(names.begin(), names.end(), [](const std::string& n) {
    return n.find(".attn.hook_") != std::string::npos && n.find("hook_z") == std::string::npos &&
           n.find("hook_result") == std::string::npos;
  });
  const RunCache run = run_with_cache(model, ids, attention ? CacheAttention::Everything : CacheAttention::None);
  std::vector<NamedTensor> out;
  const std::int64_t d = c.d_model, H = c.heads, KV = c.kv_heads, dh = c.d_head;
  for (const std::string& name : names) {
    if (name == "hook_embed" || name == "hook_pos_embed") {
      const bool tokens = name == "hook_embed";
      Matrix m(T, d);
      for (std::int64_t t = 0; t < T; ++t) {
        if (tokens) model.token_embedding.widen(static_cast<std::ptrdiff_t>(ids[static_cast<std::size_t>(t)]) * d, d, m.row(t).data());
        else model.position_embedding.widen(t * d, d, m.row(t).data());
      }
      if (c.embedding_scale != 1.0f) m *= c.embedding_scale;
      out.push_back(tensor_of(name, {T, d}, m));
      continue;
    }
    if (name == "ln_final.hook_normalized") {
      out.push_back(tensor_of(name, {T, d}, normalize(model.final_norm, run.resid.back())));
      continue;
    }
    // blocks.L.<hook>
    const std::size_t dot = name.find('.', 7);
    const int l = std::stoi(name.substr(7, dot - 7));
    const std::string hook = name.substr(dot + 1);
    const auto L = static_cast<std::size_t>(l);
    const TransformerLayer& layer = model.layers[L];
    const Matrix mid = c.parallel_residual ? Matrix() : Matrix(run.resid[L] + run.attn_out[L]);
    if (hook == "hook_resid_pre") out.push_back(tensor_of(name, {T, d}, run.resid[L]));
    else if (hook == "hook_resid_post") out.push_back(tensor_of(name, {T, d}, run.resid[L + 1]));
    else if (hook == "hook_resid_mid") out.push_back(tensor_of(name, {T, d}, mid));
    else if (hook == "ln1.hook_normalized") out.push_back(tensor_of(name, {T, d}, attention_input(model, l, run.resid[L])));
    else if (hook == "ln2.hook_normalized")
      out.push_back(tensor_of(name, {T, d}, normalize(layer.norm2, c.parallel_residual ? run.resid[L] : mid)));
    else if (hook == "attn.hook_q") out.push_back(tensor_of(name, {T, H, dh}, run.attention[L].q));
    else if (hook == "attn.hook_k") out.push_back(tensor_of(name, {T, KV, dh}, run.attention[L].k));
    else if (hook == "attn.hook_v") out.push_back(tensor_of(name, {T, KV, dh}, run.attention[L].v));
    else if (hook == "attn.hook_attn_scores") out.push_back(stack(name, run.attention[L].scores));
    else if (hook == "attn.hook_pattern") out.push_back(stack(name, run.attention[L].weights));
    else if (hook == "attn.hook_z") out.push_back(tensor_of(name, {T, H, dh}, run.z[L]));
    else if (hook == "attn.hook_result") {
      const Matrix w_o = layer.o.in_out();  // heads·d_head × d_model
      NamedTensor t{name, {T, H, d}, std::vector<float>(static_cast<std::size_t>(T * H * d))};
      for (std::int64_t h = 0; h < H; ++h) {
        const Matrix r = run.z[L].middleCols(h * dh, dh) * w_o.middleRows(h * dh, dh);
        for (std::int64_t p = 0; p < T; ++p)
          std::memcpy(&t.values[static_cast<std::size_t>((p * H + h) * d)], r.row(p).data(), static_cast<std::size_t>(d) * sizeof(float));
      }
      out.push_back(std::move(t));
    } else if (hook == "hook_attn_out") out.push_back(tensor_of(name, {T, d}, run.attn_out[L]));
    else if (hook == "hook_mlp_out") out.push_back(tensor_of(name, {T, d}, run.mlp_out[L]));
    else if (hook == "mlp.hook_pre" || hook == "mlp.hook_post") {
      const Matrix normed = c.pre_norms ? normalize(layer.norm2, c.parallel_residual ? run.resid[L] : mid)
                                        : (c.parallel_residual ? run.resid[L] : mid);
      Matrix m;
      if (hook == "mlp.hook_pre") m = (c.gated_mlp ? layer.gate : layer.up).apply(normed);
      else (void)mlp(model, l, normed, &m);
      out.push_back(tensor_of(name, {T, m.cols()}, m));
    } else {
      throw std::invalid_argument("cache_hooks: unknown hook " + name);
    }
  }
  return out;
}

std::string safetensors_bytes(const std::vector<NamedTensor>& tensors, const std::map<std::string, std::string>& metadata) {
  std::vector<const NamedTensor*> sorted;
  for (const NamedTensor& t : tensors) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](const NamedTensor* a, const NamedTensor* b) { return a->name < b->name; });
  std::string header = "{\"__metadata__\": {";
  bool first = true;
  for (const auto& [k, v] : metadata) {
    header += (first ? "" : ", ") + json_text::quote(k) + ": " + json_text::quote(v);
    first = false;
  }
  header += "}";
  std::uint64_t offset = 0;
  for (const NamedTensor* t : sorted) {
    const std::uint64_t bytes = t->values.size() * sizeof(float);
    header += ", " + json_text::quote(t->name) + ": {\"dtype\": \"F32\", \"shape\": [";
    for (std::size_t i = 0; i < t->shape.size(); ++i) header += (i ? ", " : "") + std::to_string(t->shape[i]);
    header += "], \"data_offsets\": [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // the data starts 8-aligned
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += header;
  for (const NamedTensor* t : sorted)  // little-endian floats: this machine's order (x86-64, as the loader assumes)
    out.append(reinterpret_cast<const char*>(t->values.data()), t->values.size() * sizeof(float));
  return out;
}

std::string npy_bytes(const NamedTensor& t) {
  std::string shape = "(";
  for (std::size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  shape += t.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
  return out;
}

}  // namespace attention_lab
