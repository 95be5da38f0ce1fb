// File ▸ Import weights…: safetensors layers and .npy arrays onto the current
// scenario (weight_import.h). Reading finds the matrices (each checked for
// shape, size limits and finite values before it is used); adapt()
// (weight_adapt.cpp) then puts them into a copy of the scenario and fits the
// rest around them.

#include "attention_lab/weight_import.h"

#include "io/weight_import_internal.h"

#include "attention_lab/excerpt.h"
#include "attention_lab/limits.h"
#include "attention_lab/safetensors.h"
#include "attention_lab/seeded_fill.h"
#include "attention_lab/transformer_model.h"
#include "io/json_document.h"
#include "io/npy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace attention_lab {

namespace {

namespace fs = std::filesystem;
using namespace import_detail;

bool is_weight(StageKind k) {
  return k == StageKind::X || k == StageKind::W_q || k == StageKind::W_k || k == StageKind::W_v || k == StageKind::W_o;
}

// [SECTION] safetensors

enum class Layout { Gpt2, Proj, Mha, Ours };
enum class Part { Qkv, QkvBias, Q, K, V, O, QBias, KBias, VBias, OBias, InProj, InProjBias, MhaQ, MhaK, MhaV,
                  OursX, OursQ, OursK, OursV, OursO, OursBq, OursBk, OursBv, OursBo };

struct Suffix {
  std::string_view text;
  Part part;
};

constexpr Suffix kSuffixes[] = {
    {"c_attn.weight", Part::Qkv},     {"c_attn.bias", Part::QkvBias},    {"c_proj.weight", Part::O},
    {"c_proj.bias", Part::OBias},     {"q_proj.weight", Part::Q},        {"k_proj.weight", Part::K},
    {"v_proj.weight", Part::V},       {"o_proj.weight", Part::O},        {"out_proj.weight", Part::O},
    {"q_proj.bias", Part::QBias},     {"k_proj.bias", Part::KBias},      {"v_proj.bias", Part::VBias},
    {"o_proj.bias", Part::OBias},     {"out_proj.bias", Part::OBias},    {"in_proj_weight", Part::InProj},
    {"in_proj_bias", Part::InProjBias}, {"q_proj_weight", Part::MhaQ},   {"k_proj_weight", Part::MhaK},
    {"v_proj_weight", Part::MhaV},    {"X", Part::OursX},                {"W_q", Part::OursQ},
    {"W_k", Part::OursK},             {"W_v", Part::OursV},              {"W_o", Part::OursO},
    {"b_q", Part::OursBq},            {"b_k", Part::OursBk},             {"b_v", Part::OursBv},
    {"b_o", Part::OursBo},
};

struct Group {
  std::string prefix;
  int layer = -1;  // the last all-digit component of the prefix
  Layout layout = Layout::Ours;
  std::map<Part, const TensorInfo*> parts;
};

// The last component of `prefix` ("transformer.h.11.attn.") that is a number.
int layer_number(const std::string& prefix) {
  int found = -1;
  std::size_t start = 0;
  while (start < prefix.size()) {
    std::size_t end = prefix.find('.', start);
    if (end == std::string::npos) end = prefix.size();
    const std::string_view part(prefix.data() + start, end - start);
    if (!part.empty() && part.size() <= 9 && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
      found = std::stoi(std::string(part));
    start = end + 1;
  }
  return found;
}

const char* layout_name(Layout l, bool out_in) {
  switch (l) {
    case Layout::Gpt2: return out_in ? "minGPT (nn.Linear [out, in])" : "HF GPT-2 (Conv1D [in, out])";
    case Layout::Proj: return "Llama (nn.Linear [out, in])";
    case Layout::Mha: return "nn.MultiheadAttention ([out, in])";
    case Layout::Ours: return "scenario matrices (in × out)";
  }
  return "";
}

std::vector<Group> find_groups(const SafetensorsFile& file) {
  std::map<std::string, Group> by_prefix;
  for (const TensorInfo& t : file.tensors()) {
    for (const Suffix& s : kSuffixes) {
      const std::string& n = t.name;
      if (n.size() < s.text.size() || n.compare(n.size() - s.text.size(), s.text.size(), s.text) != 0) continue;
      const std::size_t cut = n.size() - s.text.size();
      if (cut > 0 && n[cut - 1] != '.') continue;
      Group& g = by_prefix[n.substr(0, cut)];
      g.parts.emplace(s.part, &t);
      break;
    }
  }
  std::vector<Group> groups;
  for (auto& entry : by_prefix) {
    const std::string& prefix = entry.first;
    Group& g = entry.second;
    auto has = [&g](Part p) { return g.parts.count(p) != 0; };
    if (has(Part::Qkv)) g.layout = Layout::Gpt2;
    else if (has(Part::InProj) || has(Part::MhaQ)) g.layout = Layout::Mha;
    else if (has(Part::Q)) g.layout = Layout::Proj;
    else if (has(Part::OursX) || has(Part::OursQ) || has(Part::OursK) || has(Part::OursV) || has(Part::OursO)) g.layout = Layout::Ours;
    else continue;  // an MLP's c_proj, a lone out_proj: not attention weights we know
    g.prefix = prefix;
    g.layer = layer_number(prefix);
    groups.push_back(std::move(g));
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.layer < b.layer; });
  return groups;
}

// "0–11" or "0, 2, 5"; prefixes when numbers repeat.
std::string layers_text(const std::vector<Group>& groups) {
  std::vector<int> numbers;
  for (const auto& g : groups) numbers.push_back(g.layer);
  const bool distinct = std::adjacent_find(numbers.begin(), numbers.end()) == numbers.end();
  std::string out;
  if (!distinct || (numbers.size() > 1 && numbers.front() < 0)) {
    for (std::size_t i = 0; i < groups.size() && i < 6; ++i) out += (i ? ", " : "") + tensor_name(groups[i].prefix);
    if (groups.size() > 6) out += ", …";
    return out;
  }
  bool consecutive = true;
  for (std::size_t i = 1; i < numbers.size(); ++i) consecutive = consecutive && numbers[i] == numbers[i - 1] + 1;
  if (consecutive && numbers.size() > 2) return num(numbers.front()) + "–" + num(numbers.back());
  for (std::size_t i = 0; i < numbers.size() && i < 12; ++i) out += (i ? ", " : "") + num(numbers[i]);
  if (numbers.size() > 12) out += ", …";
  return out;
}

const Group& choose_group(const std::vector<Group>& groups, int layer, const std::string& name) {
  if (groups.empty())
    fail(name + ": no attention weights found (expected attn.c_attn.weight, self_attn.q_proj.weight, in_proj_weight or "
                "W_q, W_k, W_v, under any prefix)");
  if (layer < -1) fail(name + ": layer " + num(layer) + ": expected -1 (the only one) or a layer number");
  if (layer == -1) {
    if (groups.size() == 1) return groups.front();
    fail(name + ": holds the attention weights of " + num(static_cast<long long>(groups.size())) + " layers (" +
         layers_text(groups) + "); choose one");
  }
  std::vector<const Group*> match;
  for (const auto& g : groups)
    if (g.layer == layer) match.push_back(&g);
  if (match.empty() && groups.size() == 1 && groups.front().layer == -1 && layer == 0) return groups.front();
  if (match.empty()) fail(name + ": no layer " + num(layer) + "; layers found: " + layers_text(groups));
  if (match.size() > 1) {
    std::string prefixes;
    for (std::size_t i = 0; i < match.size() && i < 6; ++i) prefixes += (i ? ", " : "") + tensor_name(match[i]->prefix);
    fail(name + ": layer " + num(layer) + " has attention weights under several prefixes (" + prefixes +
         "); importing one of them is not supported yet");
  }
  return *match.front();
}

class Reader {
 public:
  Reader(const SafetensorsFile& file, const std::string& name) : file_(file), name_(name) {}

  const std::string& name() const { return name_; }

  // The tensor's shape as rows × cols: 2-D, or a 1-D vector (biases) as one row.
  std::pair<long long, long long> shape2(const TensorInfo& t, bool vector) const {
    const auto& s = t.shape;
    if (vector) {
      if (s.size() == 1) return {1, s[0]};
      if (s.size() == 2 && s[0] == 1) return {1, s[1]};
      fail(name_ + ": tensor " + tensor_name(t.name) + ": expected a vector (a bias), found shape " + t.shape_text());
    }
    if (s.size() != 2) fail(name_ + ": tensor " + tensor_name(t.name) + ": expected 2 dimensions (a matrix), found shape " + t.shape_text());
    return {s[0], s[1]};
  }

  // Every value of the tensor as float, checked finite (read once, cached).
  const std::vector<float>& values(const TensorInfo& t) {
    if (auto it = cache_.find(&t); it != cache_.end()) return it->second;
    if (!is_float(t.dtype) || !(t.dtype == DType::F32 || t.dtype == DType::F16 || t.dtype == DType::BF16 || t.dtype == DType::F64))
      fail(name_ + ": tensor " + tensor_name(t.name) + ": expected F32, F16, BF16 or F64, found " + to_string(t.dtype));
    std::vector<float> out;
    std::string error;
    if (!file_.read_floats(t, out, error)) fail(error);
    const long long cols = t.shape.empty() ? 1 : t.shape.back();
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (std::isfinite(out[i])) continue;
      const std::string where = t.shape.size() == 2 ? " (row " + num(static_cast<long long>(i) / cols) + ", column " +
                                                          num(static_cast<long long>(i) % cols) + ")"
                                                    : "";
      fail(name_ + ": tensor " + tensor_name(t.name) + ": value " + num(static_cast<long long>(i)) + where + " is " +
           (std::isnan(out[i]) ? "NaN" : t.dtype == DType::F64 ? "infinite or beyond float's range" : "infinite") +
           "; expected finite weights");
    }
    return cache_.emplace(&t, std::move(out)).first->second;
  }

  // rows × cols of the scenario's matrix from a block of the tensor: stored
  // [in, out] (taken as is) or [out, in] (transposed). The block starts at
  // stored row `row0` and column `col0`.
  Piece block(const TensorInfo& t, StageKind kind, long long row0, long long col0, long long rows, long long cols, bool out_in,
              const std::string& how) {
    if (auto p = size_problem(kind, rows, cols); !p.empty()) fail(name_ + ": tensor " + tensor_name(t.name) + ": " + p);
    const std::vector<float>& v = values(t);
    const long long stride = t.shape.back();
    Piece piece;
    piece.value.resize(rows, cols);
    for (long long r = 0; r < rows; ++r)
      for (long long c = 0; c < cols; ++c) {
        const long long sr = out_in ? row0 + c : row0 + r, sc = out_in ? col0 + r : col0 + c;
        piece.value(r, c) = v[static_cast<std::size_t>(sr * stride + sc)];
      }
    piece.source = excerpt(t.name, 80) + how + " (" + to_string(t.dtype) + "): " + size_text(rows, cols);
    return piece;
  }

  Piece vector(const TensorInfo& t, StageKind kind, long long first, long long count, const std::string& how) {
    if (auto p = size_problem(kind, 1, count); !p.empty()) fail(name_ + ": tensor " + tensor_name(t.name) + ": " + p);
    const std::vector<float>& v = values(t);
    Piece piece;
    piece.value.resize(1, count);
    for (long long i = 0; i < count; ++i) piece.value(0, i) = v[static_cast<std::size_t>(first + i)];
    piece.source = excerpt(t.name, 80) + how + " (" + to_string(t.dtype) + ")";
    return piece;
  }

 private:
  const SafetensorsFile& file_;
  std::string name_;
  std::map<const TensorInfo*, std::vector<float>> cache_;
};

std::string missing(const std::string& name, const Group& g, const char* what, const char* beside) {
  return name + ": missing tensor " + tensor_name(g.prefix + what) + " (expected beside " + tensor_name(g.prefix + beside) + ")";
}

const std::string kLinear = ", transposed (nn.Linear [out, in])";

// A whole weight stored [out, in] (out_in) or [in, out].
Piece whole(Reader& r, const TensorInfo& t, StageKind kind, bool out_in, const std::string& how) {
  const auto [a, b] = r.shape2(t, false);
  return r.block(t, kind, 0, 0, out_in ? b : a, out_in ? a : b, out_in, how);
}

Piece whole_vector(Reader& r, const TensorInfo& t, StageKind kind) {
  const auto [one, n] = r.shape2(t, true);
  (void)one;
  return r.vector(t, kind, 0, n, "");
}

void read_gpt2(Reader& r, const Group& g, std::map<StageKind, Piece>& pieces, bool& out_in) {
  const TensorInfo& qkv = *g.parts.at(Part::Qkv);
  const auto [a, b] = r.shape2(qkv, false);
  long long d;
  if (b == 3 * a) out_in = false, d = a;
  else if (a == 3 * b) out_in = true, d = b;
  else
    fail(r.name() + ": tensor " + tensor_name(qkv.name) + ": expected shape [d, 3d] (Conv1D) or [3d, d] (nn.Linear), found " +
         qkv.shape_text());
  const StageKind kinds[3] = {StageKind::W_q, StageKind::W_k, StageKind::W_v};
  for (int j = 0; j < 3; ++j) {
    if (out_in)
      pieces[kinds[j]] = r.block(qkv, kinds[j], j * d, 0, d, d, true, " rows " + range_text(j * d, d) + ", transposed (nn.Linear [out, in])");
    else
      pieces[kinds[j]] = r.block(qkv, kinds[j], 0, j * d, d, d, false, " columns " + range_text(j * d, d) + " (Conv1D [in, out])");
  }
  if (auto it = g.parts.find(Part::QkvBias); it != g.parts.end()) {
    const auto [one, n] = r.shape2(*it->second, true);
    (void)one;
    if (n != 3 * d)
      fail(r.name() + ": tensor " + tensor_name(it->second->name) + ": expected " + num(3 * d) + " values (Q|K|V), found " + num(n));
    const StageKind biases[3] = {StageKind::b_q, StageKind::b_k, StageKind::b_v};
    for (int j = 0; j < 3; ++j) pieces[biases[j]] = r.vector(*it->second, biases[j], j * d, d, " elements " + range_text(j * d, d));
  }
  if (auto it = g.parts.find(Part::O); it != g.parts.end()) {
    const TensorInfo& o = *it->second;
    const auto [oa, ob] = r.shape2(o, false);
    if ((out_in ? ob : oa) != d)
      fail(r.name() + ": tensor " + tensor_name(o.name) + ": expected " + (out_in ? "[d_out, " + num(d) + "] (nn.Linear, as c_attn)" : "[" + num(d) + ", d_out] (Conv1D, as c_attn)") +
           ", found " + o.shape_text());
    pieces[StageKind::W_o] = r.block(o, StageKind::W_o, 0, 0, d, out_in ? oa : ob, out_in,
                                     out_in ? ", transposed (nn.Linear [out, in])" : " (Conv1D [in, out])");
  }
  if (auto it = g.parts.find(Part::OBias); it != g.parts.end() && pieces.count(StageKind::W_o))
    pieces[StageKind::b_o] = whole_vector(r, *it->second, StageKind::b_o);
}

void read_proj(Reader& r, const Group& g, std::map<StageKind, Piece>& pieces) {
  const std::pair<Part, const char*> need[] = {{Part::K, "k_proj.weight"}, {Part::V, "v_proj.weight"}};
  for (const auto& [part, what] : need)
    if (!g.parts.count(part)) fail(missing(r.name(), g, what, "q_proj.weight"));
  pieces[StageKind::W_q] = whole(r, *g.parts.at(Part::Q), StageKind::W_q, true, kLinear);
  pieces[StageKind::W_k] = whole(r, *g.parts.at(Part::K), StageKind::W_k, true, kLinear);
  pieces[StageKind::W_v] = whole(r, *g.parts.at(Part::V), StageKind::W_v, true, kLinear);
  if (g.parts.count(Part::O)) pieces[StageKind::W_o] = whole(r, *g.parts.at(Part::O), StageKind::W_o, true, kLinear);
  for (auto [part, kind] : {std::pair{Part::QBias, StageKind::b_q}, std::pair{Part::KBias, StageKind::b_k},
                            std::pair{Part::VBias, StageKind::b_v}})
    if (g.parts.count(part)) pieces[kind] = whole_vector(r, *g.parts.at(part), kind);
  if (g.parts.count(Part::OBias) && pieces.count(StageKind::W_o))
    pieces[StageKind::b_o] = whole_vector(r, *g.parts.at(Part::OBias), StageKind::b_o);
}

void read_mha(Reader& r, const Group& g, std::map<StageKind, Piece>& pieces) {
  long long d = 0;
  if (auto it = g.parts.find(Part::InProj); it != g.parts.end()) {
    const TensorInfo& t = *it->second;
    const auto [a, b] = r.shape2(t, false);
    if (a != 3 * b) fail(r.name() + ": tensor " + tensor_name(t.name) + ": expected shape [3d, d], found " + t.shape_text());
    d = b;
    const StageKind kinds[3] = {StageKind::W_q, StageKind::W_k, StageKind::W_v};
    for (int j = 0; j < 3; ++j)
      pieces[kinds[j]] = r.block(t, kinds[j], j * d, 0, d, d, true, " rows " + range_text(j * d, d) + ", transposed [out, in]");
  } else {
    const std::pair<Part, const char*> need[] = {{Part::MhaK, "k_proj_weight"}, {Part::MhaV, "v_proj_weight"}};
    for (const auto& [part, what] : need)
      if (!g.parts.count(part)) fail(missing(r.name(), g, what, "q_proj_weight"));
    pieces[StageKind::W_q] = whole(r, *g.parts.at(Part::MhaQ), StageKind::W_q, true, kLinear);
    pieces[StageKind::W_k] = whole(r, *g.parts.at(Part::MhaK), StageKind::W_k, true, kLinear);
    pieces[StageKind::W_v] = whole(r, *g.parts.at(Part::MhaV), StageKind::W_v, true, kLinear);
    d = pieces[StageKind::W_q].value.cols();
  }
  if (auto it = g.parts.find(Part::InProjBias); it != g.parts.end()) {
    const long long wq = pieces[StageKind::W_q].value.cols(), wk = pieces[StageKind::W_k].value.cols(),
                    wv = pieces[StageKind::W_v].value.cols();
    const auto [one, n] = r.shape2(*it->second, true);
    (void)one;
    if (n != wq + wk + wv)
      fail(r.name() + ": tensor " + tensor_name(it->second->name) + ": expected " + num(wq + wk + wv) + " values (Q|K|V), found " + num(n));
    pieces[StageKind::b_q] = r.vector(*it->second, StageKind::b_q, 0, wq, " elements " + range_text(0, wq));
    pieces[StageKind::b_k] = r.vector(*it->second, StageKind::b_k, wq, wk, " elements " + range_text(wq, wk));
    pieces[StageKind::b_v] = r.vector(*it->second, StageKind::b_v, wq + wk, wv, " elements " + range_text(wq + wk, wv));
  }
  (void)d;
  if (g.parts.count(Part::O)) pieces[StageKind::W_o] = whole(r, *g.parts.at(Part::O), StageKind::W_o, true, kLinear);
  if (g.parts.count(Part::OBias) && pieces.count(StageKind::W_o))
    pieces[StageKind::b_o] = whole_vector(r, *g.parts.at(Part::OBias), StageKind::b_o);
}

void read_ours(Reader& r, const Group& g, std::map<StageKind, Piece>& pieces) {
  for (auto [part, kind] : {std::pair{Part::OursX, StageKind::X}, std::pair{Part::OursQ, StageKind::W_q},
                            std::pair{Part::OursK, StageKind::W_k}, std::pair{Part::OursV, StageKind::W_v},
                            std::pair{Part::OursO, StageKind::W_o}})
    if (g.parts.count(part)) pieces[kind] = whole(r, *g.parts.at(part), kind, false, "");
  for (auto [part, kind] : {std::pair{Part::OursBq, StageKind::b_q}, std::pair{Part::OursBk, StageKind::b_k},
                            std::pair{Part::OursBv, StageKind::b_v}, std::pair{Part::OursBo, StageKind::b_o}})
    if (g.parts.count(part)) pieces[kind] = whole_vector(r, *g.parts.at(part), kind);
}

// Reads config.json beside the weights, when there is one.
std::optional<ModelConfig> config_beside(const fs::path& path, std::vector<std::string>& notes) {
  const fs::path config_path = (path.has_parent_path() ? path.parent_path() : fs::path(".")) / "config.json";
  std::error_code ec;
  if (!fs::is_regular_file(config_path, ec)) return std::nullopt;
  io::TextFile text = io::read_text_file(config_path, limits::kMaxConfigBytes);
  if (!text.error.empty()) {
    notes.push_back("config.json beside the file not used: " + text.error);
    return std::nullopt;
  }
  ParsedConfig parsed = parse_model_config(text.text, config_path.string());
  if (!parsed.error.empty()) {
    notes.push_back("config.json beside the file not used: " + parsed.error);
    return std::nullopt;
  }
  return parsed.config;
}

std::shared_ptr<const SafetensorsFile> open_weights(const fs::path& path) {
  std::string error;
  auto file = SafetensorsFile::open(path, error);
  if (!file) fail(error);
  return file;
}

std::string cross_refusal(const std::string& name) {
  return name + ": importing weights into a cross-attention scenario (X_kv) is not supported yet; open a self-attention "
                "scenario first";
}

ImportResult failed(std::string message) {
  ImportResult r;
  r.error = cap_message(std::move(message));
  return r;
}

}  // namespace

WeightLayers list_weight_layers(const fs::path& path) {
  WeightLayers out;
  try {
    const auto file = open_weights(path);
    const std::vector<Group> groups = find_groups(*file);
    if (groups.empty()) choose_group(groups, -1, path.string());  // the "none found" error
    std::set<int> numbers;
    for (const auto& g : groups) numbers.insert(g.layer);
    out.layers.assign(numbers.begin(), numbers.end());
    bool out_in = false;
    if (groups.front().layout == Layout::Gpt2) {
      const auto& s = groups.front().parts.at(Part::Qkv)->shape;
      out_in = s.size() == 2 && s[0] == 3 * s[1];
    }
    out.layout = layout_name(groups.front().layout, out_in);
  } catch (const ImportError& e) {
    out = WeightLayers();
    out.error = cap_message(e.message);
  }
  return out;
}

ImportResult import_safetensors(const Scenario& current, const fs::path& path, int layer) {
  const std::string name = path.string();
  if (current.cross()) return failed(cross_refusal(name));
  try {
    const auto file = open_weights(path);
    const std::vector<Group> groups = find_groups(*file);
    const Group& g = choose_group(groups, layer, name);
    Reader reader(*file, name);
    std::map<StageKind, Piece> pieces;
    bool out_in = true;
    switch (g.layout) {
      case Layout::Gpt2: read_gpt2(reader, g, pieces, out_in); break;
      case Layout::Proj: read_proj(reader, g, pieces); break;
      case Layout::Mha: read_mha(reader, g, pieces); break;
      case Layout::Ours: read_ours(reader, g, pieces); break;
    }
    std::vector<std::string> notes;
    notes.push_back(std::string(layout_name(g.layout, out_in)) +
                    (g.layer >= 0 ? ", layer " + num(g.layer) : std::string()) +
                    (g.prefix.empty() ? std::string() : " (" + tensor_name(g.prefix) + ")"));
    Hints hints;
    hints.whole_layer = pieces.count(StageKind::W_q) && pieces.count(StageKind::W_k) && pieces.count(StageKind::W_v);
    hints.layer = std::max(g.layer, 0);
    // Our own names are a scenario's matrices, not a model's layer: no config applies.
    if (g.layout != Layout::Ours) hints.config = config_beside(path, notes);
    return adapt(current, pieces, hints, name, std::move(notes));
  } catch (const ImportError& e) {
    return failed(e.message);
  } catch (const std::bad_alloc&) {
    return failed(name + ": not enough memory to import the weights");
  }
}

ImportResult import_npy_bytes(const Scenario& current, std::string_view bytes, const std::string& name, StageKind target,
                              bool transpose) {
  if (!is_weight(target))
    return failed(name + ": target: expected X, W_q, W_k, W_v or W_o, found " + kind_name(target));
  if (current.cross()) return failed(cross_refusal(name));
  try {
    const io::NpyArray a = io::parse_npy(bytes, name);
    if (!a.error.empty()) fail(a.error);
    if (a.shape.size() != 2) fail(name + ": expected a 2-D array (a matrix), found shape " + a.shape_text());
    const long long rows = transpose ? a.shape[1] : a.shape[0], cols = transpose ? a.shape[0] : a.shape[1];
    if (auto p = size_problem(target, rows, cols); !p.empty()) fail(name + ": shape " + a.shape_text() + ": " + p);
    Piece piece;
    piece.value.resize(rows, cols);
    for (long long r = 0; r < rows; ++r)
      for (long long c = 0; c < cols; ++c) {
        const long long ar = transpose ? c : r, ac = transpose ? r : c;
        const double v = a.at(ar, ac);
        if (!std::isfinite(v) || std::abs(v) > static_cast<double>(std::numeric_limits<float>::max()))
          fail(name + ": value at row " + num(ar) + ", column " + num(ac) + " is " +
               (std::isnan(v) ? "NaN" : std::isinf(v) ? "infinite" : "beyond float's range") + "; expected finite numbers");
        piece.value(r, c) = static_cast<float>(v);
      }
    piece.source = excerpt(fs::path(name).filename().string(), 80) + " (" + a.descr + " " + a.shape_text() + ", " +
                   (a.fortran_order ? "Fortran order" : "C order") + (transpose ? ", transposed [out, in]" : "") +
                   "): " + size_text(rows, cols);
    std::map<StageKind, Piece> pieces;
    pieces.emplace(target, std::move(piece));
    return adapt(current, pieces, Hints{}, name, {});
  } catch (const ImportError& e) {
    return failed(e.message);
  } catch (const std::bad_alloc&) {
    return failed(name + ": not enough memory to import the array");
  }
}

ImportResult import_npy(const Scenario& current, const fs::path& path, StageKind target, bool transpose) {
  if (!is_weight(target))
    return failed(path.string() + ": target: expected X, W_q, W_k, W_v or W_o, found " + kind_name(target));
  if (current.cross()) return failed(cross_refusal(path.string()));
  io::TextFile file = io::read_text_file(path, kMaxNpyFileBytes);
  if (!file.error.empty()) return failed(file.error);
  return import_npy_bytes(current, file.text, path.string(), target, transpose);
}

}  // namespace attention_lab
