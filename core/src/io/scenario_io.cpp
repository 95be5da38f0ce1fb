#include "attention_lab/scenario_io.h"

#include "attention_lab/excerpt.h"
#include "attention_lab/json_text.h"
#include "attention_lab/limits.h"
#include "attention_lab/stage_registry.h"
#include "io/json_document.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <fstream>
#include <limits>
#include <sstream>
#include <unistd.h>

namespace attention_lab {

using nlohmann::json;

namespace {

// Thrown inside the parser only; parse_scenario turns it into LoadResult.error (json_document.h).
using io::FieldError;
using io::fail_field;

// "Q, K, V, scores[h], …, output": the stages a pin may be stored on.
std::string pinnable_stage_names() {
  std::string out;
  for (const StageSpec& sp : all_stages()) {
    if (!pinnable(sp.kind) || sp.view != ViewKind::Stored) continue;
    out += (out.empty() ? "" : ", ") + std::string(sp.id_name) + (sp.per_head ? "[h]" : "");
  }
  return out;
}

std::string type_of(const json& j) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    const bool cut = s.size() > 20;
    if (cut) s.resize(20);
    // Quoted with escapes, so a newline in the value cannot split the one-line
    // error; `replace` turns a character cut in half into U+FFFD.
    std::string quoted = json(s).dump(-1, ' ', false, json::error_handler_t::replace);
    if (cut) quoted.insert(quoted.size() - 1, "…");
    return "string " + quoted;
  }
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_null()) return "null";
  if (j.is_array()) return "a list of " + std::to_string(j.size());
  if (j.is_object()) return "an object";
  return j.dump();
}

float read_float(const json& j, const std::string& where) {
  if (!j.is_number()) fail_field(where + ": expected a number, found " + type_of(j));
  const double v = j.get<double>();
  if (!std::isfinite(v) || std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max()))
    fail_field(where + ": expected a finite float32 number, found " + j.dump());
  return static_cast<float>(v);
}

int read_int(const json& j, const std::string& where, int lo, int hi) {
  const std::string range = std::to_string(lo) + " to " + std::to_string(hi);
  if (!j.is_number()) fail_field(where + ": expected a whole number from " + range + ", found " + type_of(j));
  const double v = j.get<double>();
  if (v != std::floor(v) || v < lo || v > hi)
    fail_field(where + ": expected a whole number from " + range + ", found " + j.dump());
  return static_cast<int>(v);
}

// A list of rows of numbers, all rows the same length, within the size limits.
Matrix read_matrix(const json& j, const std::string& name, int max_rows, const char* rows_what, int max_cols,
                   const char* cols_what) {
  if (!j.is_array()) fail_field(name + ": expected a list of rows, found " + type_of(j));
  if (j.empty()) fail_field(name + ": expected at least 1 row, found 0");
  if (j.size() > static_cast<std::size_t>(max_rows))
    fail_field(name + ": expected at most " + std::to_string(max_rows) + " rows (" + rows_what + " size limit), found " +
         std::to_string(j.size()));
  const json& first = j[0];
  if (!first.is_array()) fail_field(name + "[0]: expected a row (a list of numbers), found " + type_of(first));
  const std::size_t cols = first.size();
  if (cols == 0) fail_field(name + "[0]: expected at least 1 number, found an empty row");
  if (cols > static_cast<std::size_t>(max_cols))
    fail_field(name + ": expected at most " + std::to_string(max_cols) + " columns (" + cols_what +
         " size limit), found " + std::to_string(cols));
  Matrix m(static_cast<Eigen::Index>(j.size()), static_cast<Eigen::Index>(cols));
  for (std::size_t r = 0; r < j.size(); ++r) {
    const json& row = j[r];
    const std::string rw = name + "[" + std::to_string(r) + "]";
    if (!row.is_array()) fail_field(rw + ": expected a row (a list of numbers), found " + type_of(row));
    if (row.size() != cols)
      fail_field(rw + ": expected " + std::to_string(cols) + " numbers (like row 0), found " + std::to_string(row.size()) +
           " (ragged rows)");
    for (std::size_t c = 0; c < cols; ++c)
      m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) =
          read_float(row[c], rw + "[" + std::to_string(c) + "]");
  }
  return m;
}

// A bias: a flat list of numbers, kept as a 1 × n matrix.
// {"type": "linear" | "llama3", "factor": f, and for llama3 "low_freq_factor",
// "high_freq_factor", "original_max_position_embeddings"}: HF's names.
void read_rope_scaling(const json& j, const std::string& where, Rope& r) {
  if (!j.is_object())
    fail_field(where + ": expected {\"type\": \"linear\" or \"llama3\", \"factor\": …}, found " + type_of(j));
  const json* type = j.contains("type") ? &j["type"] : nullptr;
  const std::string name = type && type->is_string() ? type->get<std::string>() : "";
  std::vector<std::string> keys = {"type", "factor"};
  if (name == "linear") {
    r.scaling = RopeScaling::Linear;
  } else if (name == "llama3") {
    r.scaling = RopeScaling::Llama3;
    keys.insert(keys.end(), {"low_freq_factor", "high_freq_factor", "original_max_position_embeddings"});
  } else {
    fail_field(where + ".type: expected \"linear\" or \"llama3\", found " + (type ? type->dump() : std::string("nothing")));
  }
  for (const auto& [key, value] : j.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      fail_field(where + "." + key + ": unknown key for " + name + " scaling");
  for (const auto& key : keys)
    if (!j.contains(key)) fail_field(where + ": expected \"" + key + "\" for " + name + " scaling");
  r.factor = read_float(j["factor"], where + ".factor");
  if (r.scaling == RopeScaling::Llama3) {
    r.low_freq_factor = read_float(j["low_freq_factor"], where + ".low_freq_factor");
    r.high_freq_factor = read_float(j["high_freq_factor"], where + ".high_freq_factor");
    r.original_max_positions =
        read_int(j["original_max_position_embeddings"], where + ".original_max_position_embeddings", 1, 1 << 30);
  }
}

// {"theta": 10000, "pairs": "half" | "interleaved", "scaling": {…}}, every key optional.
Rope read_rope(const json& j, const std::string& where) {
  Rope r;
  r.on = true;
  if (!j.is_object())
    fail_field(where + ": expected {\"theta\": 10000, \"pairs\": \"half\" or \"interleaved\"}, found " + type_of(j));
  for (const auto& [key, value] : j.items())
    if (key != "theta" && key != "pairs" && key != "scaling" && key != "dims")
      fail_field(where + "." + key + ": unknown key (expected theta, pairs, scaling, dims)");
  if (j.contains("dims"))  // partial rotary: how many of each head's dimensions turn
    r.dims = read_int(j["dims"], where + ".dims", 2, limits::kMaxHeadDim);
  if (j.contains("theta")) {
    r.theta = read_float(j["theta"], where + ".theta");
    if (!(r.theta > 1.0f)) fail_field(where + ".theta: expected a number greater than 1, found " + j["theta"].dump());
  }
  if (j.contains("pairs")) {
    const json& p = j["pairs"];
    const std::string name = p.is_string() ? p.get<std::string>() : "";
    if (name == "half") r.pairs = RopePairs::Half;
    else if (name == "interleaved") r.pairs = RopePairs::Interleaved;
    else fail_field(where + ".pairs: expected \"half\" (HF Llama's rotate_half) or \"interleaved\" (GPT-J), found " + p.dump());
  }
  if (j.contains("scaling")) read_rope_scaling(j["scaling"], where + ".scaling", r);
  if (std::string problem = check_rope(r, where); !problem.empty()) fail_field(problem);
  return r;
}

Matrix read_vector(const json& j, const std::string& name, std::size_t expected, const char* what) {
  if (!j.is_array()) fail_field(name + ": expected a list of " + std::to_string(expected) + " numbers, found " + type_of(j));
  if (j.size() != expected)
    fail_field(name + ": expected " + std::to_string(expected) + " numbers (" + what + "), found " + std::to_string(j.size()));
  Matrix m(1, static_cast<Eigen::Index>(expected));
  for (std::size_t c = 0; c < expected; ++c)
    m(0, static_cast<Eigen::Index>(c)) = read_float(j[c], name + "[" + std::to_string(c) + "]");
  return m;
}

// {"scope": "head" | "whole", "eps": 1e-6, "q": [gains…], "k": [gains…]}: an
// RMSNorm of Q and K before RoPE; the gains are d_k wide per head, or as wide
// as Q and K over the whole row. Every key but eps is required.
void read_qk_norm(const json& j, std::size_t wq, std::size_t wk, int heads, const char* k_what, Scenario& s) {
  const std::string where = "qk_norm";
  if (!j.is_object())
    fail_field(where + ": expected {\"scope\": \"head\" or \"whole\", \"eps\": 1e-6, \"q\": […], \"k\": […]}, found " +
               type_of(j));
  for (const auto& [key, value] : j.items())
    if (key != "scope" && key != "eps" && key != "q" && key != "k")
      fail_field(where + "." + key + ": unknown key (expected scope, eps, q, k)");
  for (const char* key : {"scope", "q", "k"})
    if (!j.contains(key)) fail_field(where + ": expected \"" + std::string(key) + "\"");
  const json& scope = j["scope"];
  const std::string name = scope.is_string() ? scope.get<std::string>() : "";
  if (name == "head") s.qk_norm.scope = QkNormScope::PerHead;
  else if (name == "whole") s.qk_norm.scope = QkNormScope::Whole;
  else fail_field(where + ".scope: expected \"head\" (each head's d_k values) or \"whole\" (the whole row), found " + scope.dump());
  if (j.contains("eps")) {
    s.qk_norm.eps = read_float(j["eps"], where + ".eps");
    if (!(s.qk_norm.eps >= 0.0f)) fail_field(where + ".eps: expected a number ≥ 0, found " + j["eps"].dump());
  }
  const bool whole = s.qk_norm.scope == QkNormScope::Whole;
  const std::size_t dk = wq / static_cast<std::size_t>(heads);
  s.q_norm = read_vector(j["q"], where + ".q", whole ? wq : dk, whole ? "heads*d_k" : "d_k: one gain per dimension of a head");
  s.k_norm = read_vector(j["k"], where + ".k", whole ? wk : dk, whole ? k_what : "d_k: one gain per dimension of a head");
}

// "loss": {"kind": "mse", "target": T × d_out}, {"kind": "attend", "head": h, "targets": [T keys]}
// or {"kind": "next_token", "W_U": d_out × vocabulary, "targets": [T token ids]}.
// Its sizes are checked where it is used (gradients_problem), not here: an
// edit of T after it was set must not make the saved file unreadable.
Loss read_loss(const json& j) {
  if (!j.is_object()) fail_field("loss: expected an object such as {\"kind\": \"attend\", \"head\": 0, \"targets\": […]}, found " + type_of(j));
  if (!j.contains("kind") || !j["kind"].is_string()) fail_field("loss.kind: expected \"mse\", \"attend\" or \"next_token\"");
  const std::string kind = j["kind"].get<std::string>();
  Loss loss;
  const auto only = [&](std::initializer_list<const char*> keys) {
    for (const auto& item : j.items()) {
      const std::string& key = item.key();  // (a name, not a structured binding: clang's lambdas cannot capture those)
      if (std::find_if(keys.begin(), keys.end(), [&](const char* k) { return key == k; }) == keys.end())
        fail_field("loss." + key + ": not a key of a \"" + kind + "\" loss");
    }
  };
  if (kind == "mse") {
    only({"kind", "target"});
    if (!j.contains("target")) fail_field("loss.target: missing (the T x d_out output an mse loss wants)");
    loss.kind = LossKind::Mse;
    loss.target = read_matrix(j["target"], "loss.target", limits::kMaxTokens, "T", limits::kMaxModelDim, "d_out");
  } else if (kind == "attend") {
    only({"kind", "head", "targets"});
    loss.kind = LossKind::Attend;
    loss.head = j.contains("head") ? read_int(j["head"], "loss.head", 0, limits::kMaxHeads - 1) : 0;
    if (!j.contains("targets") || !j["targets"].is_array()) fail_field("loss.targets: expected a list of T key indices");
    const json& t = j["targets"];
    if (t.size() > static_cast<std::size_t>(limits::kMaxTokens))
      fail_field("loss.targets: expected at most " + std::to_string(limits::kMaxTokens) + " keys, found " + std::to_string(t.size()));
    for (std::size_t i = 0; i < t.size(); ++i)
      loss.targets.push_back(read_int(t[i], "loss.targets[" + std::to_string(i) + "]", 0, limits::kMaxTokens - 1));
  } else if (kind == "next_token") {
    only({"kind", "W_U", "targets"});
    loss.kind = LossKind::NextToken;
    if (!j.contains("W_U")) fail_field("loss.W_U: missing (the d_out x vocabulary unembedding: logits = output · W_U)");
    loss.W_U = read_matrix(j["W_U"], "loss.W_U", limits::kMaxModelDim, "d_out", limits::kMaxLossVocabulary, "vocabulary");
    if (!j.contains("targets") || !j["targets"].is_array()) fail_field("loss.targets: expected a list of T token ids");
    const json& t = j["targets"];
    if (t.size() > static_cast<std::size_t>(limits::kMaxTokens))
      fail_field("loss.targets: expected at most " + std::to_string(limits::kMaxTokens) + " token ids, found " + std::to_string(t.size()));
    const int vocab = static_cast<int>(loss.W_U.cols());
    for (std::size_t i = 0; i < t.size(); ++i)
      loss.targets.push_back(read_int(t[i], "loss.targets[" + std::to_string(i) + "]", 0, vocab - 1));
  } else {
    fail_field("loss.kind: expected \"mse\", \"attend\" or \"next_token\", found " + j["kind"].dump());
  }
  return loss;
}

const std::vector<std::string>& known_keys() {
  static const std::vector<std::string> keys = {"X", "X_kv", "tokens_kv", "W_q", "W_k", "W_v", "heads", "kv_heads", "rope", "qk_norm", "b_q", "b_k", "b_v", "W_o", "b_o",
                                                "mask", "scale", "scale_factor", "softcap", "temperature", "alibi", "sinks", "tokens", "features", "title",
                                                "description", "symbols", "index_base", "loss", "attention_lab"};
  return keys;
}

constexpr const char* kOwnKey = "attention_lab";  // our own settings: pins, seed

// The widths the projections set, which the biases and W_o are checked against.
struct ProjectionWidths {
  std::size_t wq = 0, wk = 0, wv = 0;  // W_q's, W_k's and W_v's columns
  std::size_t wc = 0;                  // the heads' contexts side by side: heads·d_v
  const char* k_what = "heads*d_k";    // what W_k's columns are, as messages name them
  const char* v_what = "heads*d_v";
};

// X, heads, kv_heads, X_kv, W_q, W_k and W_v, RoPE and the q/k norm.
ProjectionWidths read_projections(const json& root, Scenario& s) {
  using namespace limits;
  s.X = read_matrix(root["X"], "X", kMaxTokens, "T", kMaxModelDim, "d_model");
  const int D = s.d_model();
  s.heads = read_int(root["heads"], "heads", 1, kMaxHeads);
  const int H = s.heads;
  auto read_weight = [&](const char* name, const char* width_what, const char* head_dim) {
    Matrix W = read_matrix(root[name], name, kMaxModelDim, "d_model", kMaxProjectionWidth, width_what);
    if (W.rows() != D)
      fail_field(std::string(name) + ": expected " + std::to_string(D) + " rows (d_model, the columns of X) x heads*" +
           head_dim + " columns, found " + std::to_string(W.rows()) + " x " +
           std::to_string(W.cols()));
    if (W.cols() % H != 0)
      fail_field(std::string(name) + ": expected a column count divisible by heads (" + std::to_string(H) + "), found " +
           std::to_string(W.cols()) + " columns");
    return W;
  };
  if (root.contains("kv_heads")) {
    s.kv_heads = read_int(root["kv_heads"], "kv_heads", 1, kMaxHeads);
    if (H % s.kv_heads != 0)
      fail_field("kv_heads: expected a number that divides heads (" + std::to_string(H) + "), found " +
           std::to_string(s.kv_heads));
    if (s.kv_heads == H) s.kv_heads = 0;  // one K/V head per query head: plain multi-head attention
  }
  // Cross-attention: K and V are projected from X_kv, whose width W_k and W_v's rows follow.
  if (root.contains("X_kv")) s.X_kv = read_matrix(root["X_kv"], "X_kv", kMaxTokens, "T_k", kMaxModelDim, "d_kv");
  const int Dkv = s.cross() ? static_cast<int>(s.X_kv.cols()) : D;
  const std::string kv_rows = s.cross() ? "d_kv, the columns of X_kv" : "d_model, the columns of X";
  const int KV = s.kv_head_count();
  ProjectionWidths w;
  w.k_what = KV == H ? "heads*d_k" : "kv_heads*d_k";
  w.v_what = KV == H ? "heads*d_v" : "kv_heads*d_v";
  s.W_q = read_weight("W_q", "heads*d_k", "d_k");
  w.wq = static_cast<std::size_t>(s.W_q.cols());
  w.wk = w.wq / static_cast<std::size_t>(H) * static_cast<std::size_t>(KV);
  s.W_k = read_matrix(root["W_k"], "W_k", kMaxModelDim, "d_model", kMaxProjectionWidth, w.k_what);
  if (s.W_k.rows() != Dkv || static_cast<std::size_t>(s.W_k.cols()) != w.wk)
    fail_field("W_k: expected " + std::to_string(Dkv) + " rows (" + (s.cross() ? "d_kv" : "d_model") + ") x " +
         std::to_string(w.wk) + " columns (" + w.k_what +
         (KV == H ? ", like W_q" : ", d_k from W_q") + "), found " + std::to_string(s.W_k.rows()) + " x " +
         std::to_string(s.W_k.cols()));
  s.W_v = read_matrix(root["W_v"], "W_v", kMaxModelDim, "d_model", kMaxProjectionWidth, w.v_what);
  if (s.W_v.rows() != Dkv)
    fail_field("W_v: expected " + std::to_string(Dkv) + " rows (" + kv_rows + ") x " + w.v_what +
         " columns, found " + std::to_string(s.W_v.rows()) + " x " + std::to_string(s.W_v.cols()));
  if (s.W_v.cols() % KV != 0)
    fail_field(std::string("W_v: expected a column count divisible by ") + (KV == H ? "heads" : "kv_heads") + " (" +
         std::to_string(KV) + "), found " + std::to_string(s.W_v.cols()) + " columns");
  w.wv = static_cast<std::size_t>(s.W_v.cols());
  const auto d_v = static_cast<int>(w.wv) / KV;
  w.wc = static_cast<std::size_t>(d_v) * static_cast<std::size_t>(H);
  const int d_k = static_cast<int>(w.wq) / H;
  if (d_k > kMaxHeadDim || d_v > kMaxHeadDim)
    fail_field("d_k, d_v: expected at most " + std::to_string(kMaxHeadDim) + " (size limit), found " +
         std::to_string(d_k) + ", " + std::to_string(d_v));
  if (root.contains("rope")) {
    s.rope = read_rope(root["rope"], "rope");
    if (d_k % 2 != 0)
      fail_field("rope: expected an even d_k (RoPE turns pairs of dimensions), found d_k = " + std::to_string(d_k));
  }
  if (root.contains("qk_norm")) read_qk_norm(root["qk_norm"], w.wq, w.wk, H, w.k_what, s);
  return w;
}

// b_q, b_k, b_v, W_o and b_o.
void read_biases_and_output(const json& root, const ProjectionWidths& w, Scenario& s) {
  using namespace limits;
  if (root.contains("b_q") || root.contains("b_k") || root.contains("b_v")) {
    // A missing bias next to given ones is zero, as in a layer with bias=False for one projection.
    auto bias = [&](const char* name, std::size_t width, const char* what) {
      return root.contains(name) ? read_vector(root[name], name, width, what) : Matrix::Zero(1, to_index(static_cast<int>(width)));
    };
    s.b_q = bias("b_q", w.wq, "heads*d_k");
    s.b_k = bias("b_k", w.wk, w.k_what);
    s.b_v = bias("b_v", w.wv, w.v_what);
    s.use_bias = true;
  }
  if (root.contains("W_o")) {
    s.W_o = read_matrix(root["W_o"], "W_o", kMaxProjectionWidth, "heads*d_v", kMaxModelDim, "d_out");
    if (static_cast<std::size_t>(s.W_o.rows()) != w.wc)
      fail_field("W_o: expected " + std::to_string(w.wc) + " rows (heads*d_v, the heads' contexts side by side), found " +
           std::to_string(s.W_o.rows()) + " x " + std::to_string(s.W_o.cols()));
    s.use_w_o = true;
  }
  if (root.contains("b_o")) {
    const std::size_t d_out = s.use_w_o ? static_cast<std::size_t>(s.W_o.cols()) : w.wc;
    s.b_o = read_vector(root["b_o"], "b_o", d_out, s.use_w_o ? "d_out, the columns of W_o" : "heads*d_v, no W_o");
    s.use_output_bias = true;
  }
}

// "mask": "none", "causal", {"window": W} or a T × T_k list of rows of 0/1.
void read_mask_setting(const json& m, Scenario& s) {
  using namespace limits;
  if (m.is_string()) {
    const auto kind = m.get<std::string>();
    if (kind == "none") s.mask_kind = MaskKind::None;
    else if (kind == "causal") s.mask_kind = MaskKind::Causal;
    else fail_field("mask: expected \"none\", \"causal\", {\"window\": W} or a T x T list of rows of 0/1, found " + type_of(m));
  } else if (m.is_object()) {
    // name what is wrong with the object: the key it lacks or one it should not have
    for (const auto& [key, value] : m.items())
      if (key != "window")
        fail_field("mask: expected {\"window\": W} (the keys each query sees, itself included), found the key " +
             json(key).dump());
    if (!m.contains("window"))
      fail_field("mask: expected {\"window\": W} (the keys each query sees, itself included), found an object without "
           "\"window\"");
    s.window = read_int(m["window"], "mask.window", 1, kMaxTokens);
    s.mask_kind = MaskKind::Window;
  } else {
    const int T = s.T();
    const int Tk = static_cast<int>(s.kv_source().rows());
    s.custom_mask = read_matrix(m, "mask", kMaxTokens, "T", kMaxTokens, s.cross() ? "T_k" : "T");
    if (s.custom_mask.rows() != T || s.custom_mask.cols() != Tk)
      fail_field("mask: expected " + std::to_string(T) + " rows x " + std::to_string(Tk) + " columns (" +
           (s.cross() ? "T x T_k" : "T x T") + "), found " + std::to_string(s.custom_mask.rows()) + " x " +
           std::to_string(s.custom_mask.cols()));
    for (Eigen::Index r = 0; r < T; ++r)
      for (Eigen::Index c = 0; c < Tk; ++c)
        if (s.custom_mask(r, c) != 0.0f && s.custom_mask(r, c) != 1.0f)
          fail_field("mask[" + std::to_string(r) + "][" + std::to_string(c) + "]: expected 0 or 1, found " +
               m[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)].dump());
    s.mask_kind = MaskKind::Custom;
  }
}

// What is done to the scores: scale, softcap, scale_factor, sinks, alibi, temperature.
void read_score_settings(const json& root, Scenario& s) {
  if (root.contains("scale")) {
    const json& scale = root["scale"];
    if (!scale.is_boolean()) fail_field("scale: expected true or false, found " + type_of(scale));
    s.scale = scale.get<bool>();
  }
  if (root.contains("softcap")) {  // Gemma 2's attention soft-cap: c·tanh(scaled/c)
    s.softcap = read_float(root["softcap"], "softcap");
    if (!(s.softcap > 0.0f && std::isfinite(s.softcap)))
      fail_field("softcap: expected a number greater than 0 (the scores' cap, c·tanh(s/c)), found " + root["softcap"].dump());
  }
  if (root.contains("scale_factor")) {  // what the scores are multiplied by instead of 1/√d_k
    s.score_scale = read_float(root["scale_factor"], "scale_factor");
    if (!(s.score_scale > 0.0f && std::isfinite(s.score_scale)))
      fail_field("scale_factor: expected a number greater than 0 (what the scores are multiplied by instead of 1/√d_k), found " +
                 root["scale_factor"].dump());
  }
  if (root.contains("sinks")) {
    s.sinks = read_vector(root["sinks"], "sinks", static_cast<std::size_t>(s.heads), "heads: one logit per head");
    s.use_sinks = true;
  }
  if (root.contains("alibi")) {
    if (!root["alibi"].is_boolean()) fail_field("alibi: expected true or false, found " + type_of(root["alibi"]));
    s.alibi = root["alibi"].get<bool>();
  }
  if (root.contains("temperature")) {
    s.temperature = read_float(root["temperature"], "temperature");
    if (!(s.temperature > 0.0f)) fail_field("temperature: expected a number greater than 0, found " + root["temperature"].dump());
  }
}

// A list of `count` short labels, one per row (tokens) or column (features) of X.
std::vector<std::string> read_labels(const json& root, const char* name, int count, const char* count_what, const char* noun) {
  std::vector<std::string> out;
  const json& t = root[name];
  if (!t.is_array())
    fail_field(std::string(name) + ": expected a list of " + std::to_string(count) + " strings, found " + type_of(t));
  if (t.size() != static_cast<std::size_t>(count))
    fail_field(std::string(name) + ": expected " + std::to_string(count) + " " + noun + " (" + count_what + "), found " +
         std::to_string(t.size()));
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string where = std::string(name) + "[" + std::to_string(i) + "]";
    if (!t[i].is_string()) fail_field(where + ": expected a string, found " + type_of(t[i]));
    auto label = t[i].get<std::string>();
    if (auto e = limits::check_label_length(where, label); !e.empty()) fail_field(e);
    out.push_back(std::move(label));
  }
  return out;
}

// What the file calls things: tokens, features, tokens_kv, symbols, index_base, title, description.
void read_names(const json& root, Scenario& s) {
  if (root.contains("tokens")) s.tokens = read_labels(root, "tokens", s.T(), "T, the rows of X", "labels");
  if (root.contains("features")) s.features = read_labels(root, "features", s.d_model(), "d_model, the columns of X", "names");
  if (root.contains("tokens_kv")) {
    if (!s.cross()) fail_field("tokens_kv: labels the rows of X_kv, but there is no \"X_kv\" (cross-attention)");
    s.tokens_kv = read_labels(root, "tokens_kv", static_cast<int>(s.X_kv.rows()), "T_k, the rows of X_kv", "labels");
  }
  if (root.contains("symbols")) s.symbols = io::read_symbol_names(root["symbols"], "symbols");
  if (root.contains("index_base")) s.index_base = io::read_index_base(root["index_base"], "index_base");
  for (const char* key : {"title", "description"}) {
    if (!root.contains(key)) continue;
    if (!root[key].is_string()) fail_field(std::string(key) + ": expected a string, found " + type_of(root[key]));
    (key[0] == 't' ? s.title : s.description) = root[key].get<std::string>();
  }
}

// "attention_lab": our own settings, the seed and the pins.
void read_own_settings(const json& own, Scenario& s) {
  if (!own.is_object()) fail_field(std::string(kOwnKey) + ": expected an object, found " + type_of(own));
  if (own.contains("seed")) {
    if (!own["seed"].is_number_unsigned()) fail_field("attention_lab.seed: expected a whole number ≥ 0, found " + type_of(own["seed"]));
    s.seed = own["seed"].get<std::uint64_t>();
  }
  if (!own.contains("pins")) return;
  const json& pins = own["pins"];
  if (!pins.is_array()) fail_field("attention_lab.pins: expected a list, found " + type_of(pins));
  const Dims d = s.dims();
  for (std::size_t i = 0; i < pins.size(); ++i) {
    const std::string w = "attention_lab.pins[" + std::to_string(i) + "]";
    const json& p = pins[i];
    if (!p.is_object() || !p.contains("stage") || !p["stage"].is_string())
      fail_field(w + ": expected {\"stage\": \"scores[0]\", \"row\": r, \"col\": c, \"value\": v}, found " + type_of(p));
    const auto id = parse_stage_id(p["stage"].get<std::string>());
    // Files keep pins where they are stored: not on inputs, not on views (Q[h], concat).
    const bool can_pin = id && pinnable(id->kind) && spec(id->kind).view == ViewKind::Stored && id->layer == 0 &&
                         id->role == Role::Value;
    if (!can_pin) fail_field(w + ".stage: expected one of " + pinnable_stage_names() + ", found " + type_of(p["stage"]));
    if (is_per_head(id->kind) && id->head >= s.heads)
      fail_field(w + ".stage: expected a head below " + std::to_string(s.heads) + ", found \"" + to_string(*id) + "\"");
    const int cols = stage_cols(id->kind, d);
    if (!p.contains("row") || !p.contains("col") || !p.contains("value"))
      fail_field(w + ": expected the keys row, col and value");
    const int r = read_int(p["row"], w + ".row", 0, stage_rows(id->kind, d) - 1);
    const int c = read_int(p["col"], w + ".col", 0, cols - 1);
    s.pins[PinKey{*id, r, c}] = read_float(p["value"], w + ".value");
  }
}

Scenario parse_object(const json& root) {
  if (!root.is_object()) fail_field("scenario: expected a JSON object { … }, found " + type_of(root));
  // A lesson (or a lesson that forgot its "format") opened as a scenario.
  if (root.contains("steps") && !root.contains("X"))
    fail_field("steps: expected a scenario (\"X\", \"W_q\", …), found what looks like a lesson (\"steps\" and no \"X\"): "
               "a lesson file starts with \"format\": \"attention-lab/lesson@1\", which this one lacks");
  for (const char* key : {"X", "W_q", "W_k", "W_v", "heads"})
    if (!root.contains(key)) fail_field(std::string(key) + ": missing (required keys: X, W_q, W_k, W_v, heads)");

  Scenario s;
  const ProjectionWidths widths = read_projections(root, s);
  read_biases_and_output(root, widths, s);
  if (root.contains("mask")) read_mask_setting(root["mask"], s);
  read_score_settings(root, s);
  read_names(root, s);
  if (root.contains(kOwnKey)) read_own_settings(root[kOwnKey], s);
  if (root.contains("loss")) s.loss = read_loss(root["loss"]);
  for (const auto& [key, value] : root.items()) {
    const auto& known = known_keys();
    if (std::find(known.begin(), known.end(), key) == known.end()) s.unknown_fields.emplace_back(key, value.dump());
  }
  if (auto err = validate(s); !err.empty()) fail_field(err);
  // The engine's T×T stages per head are what a big file costs; refused here, before they exist.
  if (auto err = limits::memory_problem(s.dims()); !err.empty()) fail_field(err);
  return s;
}


}  // namespace

std::string parse_rope_setting(const std::string& json_text, const std::string& where, Rope& out) {
  try {
    out = read_rope(json::parse(json_text), where);
  } catch (const FieldError& e) {
    return e.message;
  } catch (const json::exception& e) {
    return where + ": invalid JSON: " + json_error_message(e.what());
  }
  return {};
}

std::string rope_setting_json(const Rope& r) {
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out << "{\"theta\": ";
  json_text::write_number(out, r.theta);
  out << ", \"pairs\": " << json_text::quote(to_string(r.pairs));
  if (r.dims > 0) out << ", \"dims\": " << r.dims;
  if (r.scaling != RopeScaling::None) {
    out << ", \"scaling\": {\"type\": " << json_text::quote(to_string(r.scaling)) << ", \"factor\": ";
    json_text::write_number(out, r.factor);
    if (r.scaling == RopeScaling::Llama3) {
      out << ", \"low_freq_factor\": ";
      json_text::write_number(out, r.low_freq_factor);
      out << ", \"high_freq_factor\": ";
      json_text::write_number(out, r.high_freq_factor);
      out << ", \"original_max_position_embeddings\": " << r.original_max_positions;
    }
    out << '}';
  }
  out << "}";
  return out.str();
}

LoadResult parse_scenario(const std::string& text) {
  LoadResult result;
  // The parser is iterative but dump() recurses once per level: an unknown key
  // nested 100 000 deep (valid JSON) would overflow the stack when we keep it.
  io::JsonDocument doc = io::parse_json_document(text, "scenario");
  if (!doc.error.empty()) {
    result.error = std::move(doc.error);
    return result;
  }
  try {
    result.scenario = parse_object(doc.root);
  } catch (const FieldError& e) {
    result.error = cap_message(e.message);
  } catch (const std::exception& e) {  // e.g. out of memory: report, never crash
    result.error = cap_message(std::string("could not load: ") + e.what());
  }
  return result;
}

LoadResult load_scenario(const std::filesystem::path& path) {
  io::TextFile file = io::read_text_file(path, kMaxScenarioFileBytes);
  if (!file.error.empty()) {
    LoadResult result;
    result.error = std::move(file.error);
    return result;
  }
  return parse_scenario(file.text);
}

std::string scenario_to_json(const Scenario& s) {
  using json_text::quote;
  std::ostringstream out;
  out << "{\n";
  bool first = true;
  auto key = [&](const std::string& k) {  // std::string: a kept key may hold a NUL (fuzz/regressions)
    out << (first ? "" : ",\n") << "  " << quote(k) << ": ";
    first = false;
  };
  if (!s.title.empty()) key("title"), out << quote(s.title);
  if (!s.description.empty()) key("description"), out << quote(s.description);
  if (!s.tokens.empty()) {
    key("tokens");
    out << '[';
    // The labels as they are: an empty one stays empty (shown as the index), so
    // a round trip gives back the same scenario.
    for (std::size_t t = 0; t < s.tokens.size(); ++t) out << (t ? ", " : "") << quote(s.tokens[t]);
    out << ']';
  }
  if (!s.symbols.empty()) {
    key("symbols");
    out << '{';
    bool first_symbol = true;
    for (const auto& [from, to] : s.symbols) out << (first_symbol ? "" : ", ") << quote(from) << ": " << quote(to), first_symbol = false;
    out << '}';
  }
  if (s.index_base != 0) {
    key("index_base");
    out << s.index_base;
  }
  if (!s.features.empty()) {
    key("features");
    out << '[';
    for (std::size_t i = 0; i < s.features.size(); ++i) out << (i ? ", " : "") << quote(s.features[i]);
    out << ']';
  }
  key("heads"), out << s.heads;
  if (s.kv_heads > 0) key("kv_heads"), out << s.kv_heads;
  if (s.rope.on) key("rope"), out << rope_setting_json(s.rope);
  if (s.qk_norm.on()) {
    key("qk_norm");
    out << "{\"scope\": " << quote(to_string(s.qk_norm.scope)) << ", \"eps\": ";
    json_text::write_number(out, s.qk_norm.eps);
    out << ", \"q\": ";
    json_text::write_row(out, s.q_norm.get(), 0);
    out << ", \"k\": ";
    json_text::write_row(out, s.k_norm.get(), 0);
    out << '}';
  }
  key("mask");
  if (s.mask_kind == MaskKind::Custom)
    json_text::write_matrix(out, s.custom_mask.get(), 2);
  else if (s.mask_kind == MaskKind::Window)
    out << "{\"window\": " << s.window << "}";
  else
    out << quote(to_string(s.mask_kind));
  key("scale"), out << (s.scale ? "true" : "false");
  if (s.score_scale > 0.0f) key("scale_factor"), json_text::write_number(out, s.score_scale);
  if (s.softcap > 0.0f) key("softcap"), json_text::write_number(out, s.softcap);
  if (s.alibi) key("alibi"), out << "true";
  if (s.use_sinks) key("sinks"), json_text::write_row(out, s.sinks.get(), 0);
  key("temperature"), json_text::write_number(out, s.temperature);
  if (!s.tokens_kv.empty()) {
    key("tokens_kv");
    out << '[';
    for (std::size_t t = 0; t < s.tokens_kv.size(); ++t) out << (t ? ", " : "") << quote(s.tokens_kv[t]);
    out << ']';
  }
  key("X"), json_text::write_matrix(out, s.X.get(), 2);
  if (s.cross()) key("X_kv"), json_text::write_matrix(out, s.X_kv.get(), 2);
  key("W_q"), json_text::write_matrix(out, s.W_q.get(), 2);
  key("W_k"), json_text::write_matrix(out, s.W_k.get(), 2);
  key("W_v"), json_text::write_matrix(out, s.W_v.get(), 2);
  if (s.use_bias) {
    key("b_q"), json_text::write_row(out, s.b_q.get(), 0);
    key("b_k"), json_text::write_row(out, s.b_k.get(), 0);
    key("b_v"), json_text::write_row(out, s.b_v.get(), 0);
  }
  if (s.use_w_o) key("W_o"), json_text::write_matrix(out, s.W_o.get(), 2);
  if (s.use_output_bias) key("b_o"), json_text::write_row(out, s.b_o.get(), 0);
  if (s.loss) {
    key("loss");
    out << "{\"kind\": " << quote(to_string(s.loss->kind));
    if (s.loss->kind == LossKind::Mse) {
      out << ", \"target\": ";
      json_text::write_matrix(out, s.loss->target.get(), 4);
    } else if (s.loss->kind == LossKind::NextToken) {
      out << ", \"W_U\": ";
      json_text::write_matrix(out, s.loss->W_U.get(), 4);
      out << ", \"targets\": [";
      for (std::size_t i = 0; i < s.loss->targets.size(); ++i) out << (i ? ", " : "") << s.loss->targets[i];
      out << ']';
    } else {
      out << ", \"head\": " << s.loss->head << ", \"targets\": [";
      for (std::size_t i = 0; i < s.loss->targets.size(); ++i) out << (i ? ", " : "") << s.loss->targets[i];
      out << ']';
    }
    out << '}';
  }
  key("attention_lab");
  out << "{\"seed\": " << s.seed << ", \"pins\": [";
  bool first_pin = true;
  for (const auto& [k, v] : s.pins) {
    out << (first_pin ? "\n    " : ",\n    ") << "{\"stage\": " << quote(to_string(k.stage)) << ", \"row\": " << k.row
        << ", \"col\": " << k.col << ", \"value\": ";
    json_text::write_number(out, v);
    out << '}';
    first_pin = false;
  }
  out << (first_pin ? "]}" : "\n  ]}");
  for (const auto& [k, v] : s.unknown_fields) key(k), out << v;
  out << "\n}\n";
  return out.str();
}

std::string write_file_atomically(const std::filesystem::path& path, const std::string& contents) {
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return path.string() + ": cannot create a temporary file in " + dir.string() + ": " + std::strerror(errno);
  auto give_up = [&](const char* what) {
    const std::string msg = path.string() + ": " + what + ": " + std::strerror(errno);
    ::close(fd);
    ::unlink(tmpl.c_str());
    return msg;
  };
  std::size_t written = 0;
  while (written < contents.size()) {
    const auto n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return give_up("cannot write");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return give_up("cannot flush to disk");
  // mkstemp creates 0600; a saved document should have the usual permissions.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    const std::string msg = path.string() + ": cannot close: " + std::strerror(errno);
    ::unlink(tmpl.c_str());
    return msg;
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const std::string msg = path.string() + ": cannot replace: " + std::strerror(errno);
    ::unlink(tmpl.c_str());
    return msg;
  }
  return {};
}

std::string save_scenario(const Scenario& scenario, const std::filesystem::path& path) {
  return write_file_atomically(path, scenario_to_json(scenario));
}

}  // namespace attention_lab
