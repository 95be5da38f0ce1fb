// adapt(): imported matrices into a copy of the scenario, with the heads,
// sizes, biases and pins fitted around them (weight_import_internal.h).

#include "io/weight_import_internal.h"

#include "attention_lab/limits.h"
#include "attention_lab/seeded_fill.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace attention_lab::import_detail {

// [SECTION] Size limits, checked on shapes before anything is read

std::string size_problem(StageKind kind, long long rows, long long cols) {
  using namespace limits;
  long long max_rows = 1, max_cols = kMaxProjectionWidth;
  const char* rows_what = "a single row";
  const char* cols_what = "the projection width";
  switch (kind) {
    case StageKind::X: max_rows = kMaxTokens, rows_what = "T, tokens"; max_cols = kMaxModelDim, cols_what = "d_model"; break;
    case StageKind::W_q: case StageKind::W_k: case StageKind::W_v:
      max_rows = kMaxModelDim, rows_what = "d_model";
      cols_what = kind == StageKind::W_q ? "heads·d_k" : kind == StageKind::W_k ? "kv_heads·d_k" : "kv_heads·d_v";
      break;
    case StageKind::W_o: max_rows = kMaxProjectionWidth, rows_what = "heads·d_v"; max_cols = kMaxModelDim, cols_what = "d_out"; break;
    case StageKind::b_o: max_cols = kMaxModelDim, cols_what = "d_out"; break;
    default: break;
  }
  const std::string what = std::string(kind_name(kind)) + " would be " + num(rows) + " × " + num(cols) + "; expected ";
  if (rows < 1 || cols < 1) return what + "at least 1 × 1";
  if (rows > max_rows) return what + "at most " + num(max_rows) + " rows (" + rows_what + (max_rows > 1 ? ", size limit)" : ")");
  if (cols > max_cols) return what + "at most " + num(max_cols) + " columns (" + cols_what + ", size limit)";
  return {};
}

namespace {

struct HeadLayout {
  int heads = 0, kv_heads = 0, d_k = 0, d_v = 0;
};

// The widths the imported matrices fix (0: not imported).
struct Widths {
  long long q = 0, k = 0, v = 0, o_rows = 0;
};

std::string widths_text(const Widths& w) {
  std::string out;
  auto add = [&](const char* name, long long n, const char* what) {
    if (n > 0) out += (out.empty() ? "" : ", ") + std::string(name) + " " + num(n) + " " + what;
  };
  add("W_q", w.q, "columns");
  add("W_k", w.k, "columns");
  add("W_v", w.v, "columns");
  add("W_o", w.o_rows, "rows");
  return out;
}

// Why `heads` query heads with `kv` K/V heads (0: the natural choice) do not
// fit the widths; "" when they do (then `out` is the layout).
std::string try_heads(const Widths& w, const Dims& cd, int heads, int kv, bool config, HeadLayout& out) {
  const std::string h_text = num(heads) + (heads == 1 ? " head" : " heads");
  if (w.q > 0 && w.q % heads != 0) return "W_q's " + num(w.q) + " columns do not divide into " + h_text;
  if (w.o_rows > 0 && w.o_rows % heads != 0) return "W_o's " + num(w.o_rows) + " rows do not divide into " + h_text;
  // Every (kv, d_k, d_v) the widths allow, the one closest to the scenario's first.
  int best_cost = std::numeric_limits<int>::max();
  std::string why;
  for (int k = 1; k <= heads; ++k) {
    if (heads % k != 0 || (kv > 0 && k != kv)) continue;
    std::vector<long long> dks;
    if (w.q > 0) dks = {w.q / heads};
    else if (w.k > 0) dks = {cd.d_k, w.k % k == 0 ? w.k / k : 0};
    else dks = {cd.d_k};
    std::vector<long long> dvs;
    if (w.v > 0) dvs = {w.v % k == 0 ? w.v / k : 0};
    else if (w.o_rows > 0) dvs = {w.o_rows / heads};
    else dvs = {cd.d_v};
    for (const long long dk : dks)
      for (const long long dv : dvs) {
        std::string problem;
        if (dk < 1) problem = "W_k's " + num(w.k) + " columns do not divide into " + num(k) + " K/V heads";
        else if (dv < 1) problem = "W_v's " + num(w.v) + " columns do not divide into " + num(k) + " K/V heads";
        else if (w.k > 0 && w.k != k * dk)
          problem = "W_k's " + num(w.k) + " columns are not " + num(k) + " K/V head" + (k == 1 ? "" : "s") + " of d_k = " + num(dk) +
                    (kv > 0 || w.k % dk != 0 ? "" : " (" + num(w.k / dk) + " K/V heads would not divide " + h_text + ")");
        else if (w.v > 0 && w.v != k * dv)
          problem = "W_v's " + num(w.v) + " columns are not " + num(k) + " K/V heads of d_v";
        else if (w.o_rows > 0 && w.o_rows != heads * dv)
          problem = "W_o's " + num(w.o_rows) + " rows are not " + h_text + " of d_v = " + num(dv) + " (W_v's width ÷ K/V heads)";
        if (!problem.empty()) {
          if (why.empty() || (k == (kv > 0 ? kv : heads))) why = problem;
          continue;
        }
        const int preferred_kv = config ? kv : heads == cd.heads ? cd.kv_heads : heads;
        const int cost = (k != preferred_kv) * 4 + (dk != cd.d_k) * 2 + (dv != cd.d_v);
        if (cost < best_cost) {
          best_cost = cost;
          out = {heads, k, static_cast<int>(std::min<long long>(dk, std::numeric_limits<int>::max())),
                 static_cast<int>(std::min<long long>(dv, std::numeric_limits<int>::max()))};
        }
      }
  }
  if (best_cost != std::numeric_limits<int>::max()) return {};
  return why.empty() ? "no number of K/V heads divides " + h_text : why;
}

HeadLayout choose_heads(const Widths& w, const Dims& cd, const Hints& hints, const std::string& name) {
  HeadLayout out;
  if (hints.config) {
    const ModelConfig& c = *hints.config;
    const std::string problem = try_heads(w, cd, c.heads, c.kv_heads, true, out);
    if (problem.empty()) return out;
    fail(name + ": config.json beside it says " + num(c.heads) + " heads and " + num(c.kv_heads) + " K/V heads, but " +
         problem + " (" + widths_text(w) + ")");
  }
  const std::string first = try_heads(w, cd, cd.heads, 0, false, out);
  if (first.empty()) return out;
  if (cd.heads == 1)
    fail(name + ": the weights do not split into 1 head: " + first + " (" + widths_text(w) +
         "); put the model's config.json beside the file to give the number of heads");
  const std::string second = try_heads(w, cd, 1, 0, false, out);
  if (second.empty()) return out;
  fail(name + ": the weights do not split into heads: with the scenario's " + num(cd.heads) + ", " + first + "; with 1, " +
       second + " (" + widths_text(w) + "); put the model's config.json beside the file to give the number of heads");
}

const Piece* find(const std::map<StageKind, Piece>& pieces, StageKind k) {
  const auto it = pieces.find(k);
  return it == pieces.end() ? nullptr : &it->second;
}

}  // namespace

ImportResult adapt(const Scenario& current, const std::map<StageKind, Piece>& pieces, const Hints& hints,
                   const std::string& name, std::vector<std::string> notes) {
  using namespace limits;
  const Dims cd = current.dims();
  const Piece* X = find(pieces, StageKind::X);
  const Piece* Wq = find(pieces, StageKind::W_q);
  const Piece* Wk = find(pieces, StageKind::W_k);
  const Piece* Wv = find(pieces, StageKind::W_v);
  const Piece* Wo = find(pieces, StageKind::W_o);
  const Piece* bq = find(pieces, StageKind::b_q);
  const Piece* bk = find(pieces, StageKind::b_k);
  const Piece* bv = find(pieces, StageKind::b_v);
  const Piece* bo = find(pieces, StageKind::b_o);

  // The input width: every matrix that reads X must agree.
  long long D = 0;
  const char* D_from = nullptr;
  for (auto [kind, piece] : {std::pair{"X", X}, std::pair{"W_q", Wq}, std::pair{"W_k", Wk}, std::pair{"W_v", Wv}}) {
    if (piece == nullptr) continue;
    const long long width = kind == std::string_view("X") ? piece->value.cols() : piece->value.rows();
    if (D_from == nullptr) {
      D = width, D_from = kind;
    } else if (width != D) {
      fail(name + ": " + kind + " takes inputs of width " + num(width) + " but " + D_from + " of width " + num(D) +
           " (expected one d_model; weights that read another input are cross-attention, not supported yet)");
    }
  }
  if (D_from == nullptr) D = cd.d_model;
  const long long T = X ? X->value.rows() : cd.T;

  // A bias must match its matrix.
  for (auto [b, W, bname, wname] : {std::tuple{bq, Wq, "b_q", "W_q"}, std::tuple{bk, Wk, "b_k", "W_k"},
                                    std::tuple{bv, Wv, "b_v", "W_v"}, std::tuple{bo, Wo, "b_o", "W_o"}})
    if (b && W && b->value.cols() != W->value.cols())
      fail(name + ": " + bname + " has " + num(b->value.cols()) + " values, expected " + num(W->value.cols()) + " (the columns of " +
           wname + ")");

  Hints h = hints;
  if (h.config && h.config->d_model != D) {
    notes.push_back("config.json beside the file not used: it says d_model " + num(h.config->d_model) + ", the weights take " +
                    num(D));
    h.config.reset();
  }
  Widths w;
  w.q = Wq ? Wq->value.cols() : bq ? bq->value.cols() : 0;
  w.k = Wk ? Wk->value.cols() : bk ? bk->value.cols() : 0;
  w.v = Wv ? Wv->value.cols() : bv ? bv->value.cols() : 0;
  w.o_rows = Wo ? Wo->value.rows() : 0;
  const HeadLayout hl = choose_heads(w, cd, h, name);
  const int H = hl.heads, KV = hl.kv_heads, dk = hl.d_k, dv = hl.d_v;

  const bool use_w_o = Wo != nullptr || current.use_w_o;
  long long d_out;
  if (Wo) d_out = Wo->value.cols();
  else if (current.use_w_o) d_out = (cd.d_out == cd.d_model && D != cd.d_model) ? D : cd.d_out;
  else d_out = static_cast<long long>(H) * dv;
  if (bo && bo->value.cols() != d_out)
    fail(name + ": b_o has " + num(bo->value.cols()) + " values, expected " + num(d_out) + " (d_out, " +
         (use_w_o ? "the columns of W_o" : "heads·d_v") + ")");

  // Size limits, with the numbers.
  auto over = [&](const std::string& what, long long value, long long max) {
    if (value > max) fail(name + ": " + what + " would be " + num(value) + "; expected at most " + num(max) + " (size limit)");
  };
  over("heads", H, kMaxHeads);
  over("d_k", dk, kMaxHeadDim);
  over("d_v", dv, kMaxHeadDim);
  over("heads·d_k", static_cast<long long>(H) * dk, kMaxProjectionWidth);
  over("heads·d_v", static_cast<long long>(H) * dv, kMaxProjectionWidth);
  over("d_model", D, kMaxModelDim);
  over("d_out", d_out, kMaxModelDim);
  over("T", T, kMaxTokens);
  Dims n;
  n.T = static_cast<int>(T);
  n.d_model = static_cast<int>(D);
  n.heads = H;
  n.kv_heads = KV;
  n.d_k = dk;
  n.d_v = dv;
  n.d_out = static_cast<int>(d_out);
  n.T_k = n.T;
  n.d_kv = n.d_model;
  if (auto problem = memory_problem(n); !problem.empty()) fail(name + ": " + problem);

  ImportResult result;
  Scenario s = current;
  const std::uint64_t seed = s.seed;

  // X and the labels.
  if (X) {
    s.X = X->value;
    if (n.T != cd.T) {
      if (!s.tokens.empty()) {
        s.tokens.resize(static_cast<std::size_t>(n.T));
        notes.push_back("tokens: " + num(std::min(n.T, cd.T)) + " labels kept, T changed from " + num(cd.T) + " to " + num(n.T));
      }
      if (s.mask_kind == MaskKind::Custom || s.custom_mask.size() > 0) {
        s.custom_mask = regrow_seeded(s.custom_mask, n.T, n.T, 0, 0, seed, StageKind::Mask, 1);
        if (s.mask_kind == MaskKind::Custom) notes.push_back("custom mask resized to " + size_text(n.T, n.T) + " (new cells causal)");
      }
    }
  } else if (n.d_model != cd.d_model) {
    s.X = seeded_matrix(seed, StageKind::X, n.T, n.d_model, n.d_model);
    notes.push_back("X refilled (seeded): its width changed from " + num(cd.d_model) + " to " + num(n.d_model));
  }
  if (!s.features.empty() && static_cast<int>(s.features.size()) != n.d_model) {
    const auto old = s.features.size();
    bool dropped = false;
    for (std::size_t i = static_cast<std::size_t>(n.d_model); i < old; ++i) dropped = dropped || !s.features[i].empty();
    s.features.resize(static_cast<std::size_t>(n.d_model));
    if (dropped) notes.push_back("feature names beyond the first " + num(n.d_model) + " dropped (d_model is now " + num(n.d_model) + ")");
    else if (n.d_model > static_cast<int>(old)) notes.push_back("features " + num(static_cast<long long>(old)) + "–" + num(n.d_model - 1) + " unnamed");
  }

  // The projections: imported, kept, or regrown around their head blocks.
  auto place = [&](SharedMatrix& m, const Piece* piece, StageKind kind, int rows, int cols, int old_block, int new_block, int fan_in,
                   bool used) {
    if (piece) {
      m = piece->value;
      result.imported.push_back(std::string(kind_name(kind)) + " ← " + piece->source);
    } else if (m.rows() != rows || m.cols() != cols) {
      m = regrow_seeded(m, rows, cols, old_block, new_block, seed, kind, fan_in);
      if (used) notes.push_back(std::string(kind_name(kind)) + " regrown to " + size_text(rows, cols) + " (what fits kept, new cells seeded)");
    }
  };
  if (X) result.imported.push_back("X ← " + X->source);
  place(s.W_q, Wq, StageKind::W_q, n.d_model, H * dk, cd.d_k, dk, n.d_model, true);
  place(s.W_k, Wk, StageKind::W_k, n.d_model, KV * dk, cd.d_k, dk, n.d_model, true);
  place(s.W_v, Wv, StageKind::W_v, n.d_model, KV * dv, cd.d_v, dv, n.d_model, true);
  if (Wo) {
    place(s.W_o, Wo, StageKind::W_o, H * dv, n.d_out, 0, 0, H * dv, true);
    if (!current.use_w_o) notes.push_back("W_o turned on");
    s.use_w_o = true;
  } else if (s.use_w_o && (s.W_o.rows() != H * dv || s.W_o.cols() != n.d_out)) {
    // W_o's rows are head blocks: regrow its transpose by column blocks.
    const Matrix t = s.W_o.transpose();
    s.W_o = regrow_seeded(t, n.d_out, H * dv, cd.d_v, dv, seed, StageKind::W_o, H * dv).transpose();
    notes.push_back("W_o regrown to " + size_text(H * dv, n.d_out) + " (what fits kept, new cells seeded)");
  }

  // Biases.
  const bool any_qkv_bias = bq || bk || bv;
  const bool bias_was_on = current.use_bias;
  for (auto [b, m, kind, width] : {std::tuple{bq, &s.b_q, StageKind::b_q, H * dk}, std::tuple{bk, &s.b_k, StageKind::b_k, KV * dk},
                                   std::tuple{bv, &s.b_v, StageKind::b_v, KV * dv}}) {
    if (b) {
      *m = b->value;
      result.imported.push_back(std::string(kind_name(kind)) + " ← " + b->source);
    } else if (any_qkv_bias || h.whole_layer) {
      *m = Matrix::Zero(1, width);
      if (any_qkv_bias) notes.push_back(std::string(kind_name(kind)) + " set to zeros (not in the file)");
    } else if (m->rows() != 1 || m->cols() != width) {
      *m = Matrix::Zero(1, width);
      if (bias_was_on) notes.push_back(std::string(kind_name(kind)) + " reset to zeros: its width changed to " + num(width));
    }
  }
  if (any_qkv_bias) {
    if (!bias_was_on) notes.push_back("q/k/v biases turned on");
    s.use_bias = true;
  } else if (h.whole_layer && bias_was_on) {
    notes.push_back("q/k/v biases turned off: the layer has none");
    s.use_bias = false;
  }
  if (bo) {
    s.b_o = bo->value;
    result.imported.push_back("b_o ← " + bo->source);
    if (!current.use_output_bias) notes.push_back("output bias turned on");
    s.use_output_bias = true;
  } else if (Wo && h.whole_layer) {
    s.b_o = Matrix::Zero(1, n.d_out);
    if (current.use_output_bias) notes.push_back("output bias turned off: the layer has none");
    s.use_output_bias = false;
  } else if (s.b_o.rows() != 1 || s.b_o.cols() != n.d_out) {
    s.b_o = Matrix::Zero(1, n.d_out);
    if (s.use_output_bias) notes.push_back("b_o reset to zeros: its width changed to " + num(n.d_out));
  }

  // Heads and what depends on them.
  s.heads = H;
  s.kv_heads = KV == H ? 0 : KV;
  if (H != cd.heads) notes.push_back("heads: " + num(cd.heads) + " → " + num(H) + (h.config ? " (config.json)" : ""));
  else if (!h.config && h.whole_layer)  // a layer's weights fit the scenario's heads; the file may have meant others
    notes.push_back("heads: kept at " + num(H) + " (the file does not say how many; a config.json beside it would)");
  if (KV != cd.kv_heads) notes.push_back("K/V heads: " + num(cd.kv_heads) + " → " + num(KV) + (KV < H ? " (grouped-query attention)" : ""));
  if (dk != cd.d_k) notes.push_back("d_k: " + num(cd.d_k) + " → " + num(dk));
  if (dv != cd.d_v) notes.push_back("d_v: " + num(cd.d_v) + " → " + num(dv));
  if (s.sinks.size() > 0 && s.sinks.cols() != H) {
    Matrix sinks = Matrix::Zero(1, H);
    const auto kept = std::min<Eigen::Index>(s.sinks.cols(), H);
    if (s.sinks.rows() == 1 && kept > 0) sinks.leftCols(kept) = s.sinks.leftCols(kept);
    s.sinks = sinks;
    if (s.use_sinks) notes.push_back("sinks: one per head, new heads' at 0");
  }
  if (h.config) {
    const ModelConfig& c = *h.config;
    if (const Rope rope = c.rope_of(h.layer); rope.on) {
      if (!(s.rope == rope))
        notes.push_back("RoPE on, θ = " + number_text(static_cast<double>(rope.theta)) +
                        (rope.scaling == RopeScaling::None ? "" : std::string(", ") + to_string(rope.scaling) + " scaling") +
                        " (config.json)");
      s.rope = rope;
    } else if (s.rope.on) {
      s.rope.on = false;
      notes.push_back(c.rope.on ? "RoPE turned off: layer " + num(h.layer) + " of this model has no positions (NoPE)"
                                : "RoPE turned off: GPT-2 uses learned positions, added to X before the layer");
    }
    if (s.alibi) notes.push_back("ALiBi turned off: the model does not use it");
    s.alibi = false;
    if (s.use_sinks) notes.push_back("attention sinks turned off: the model does not use them");
    s.use_sinks = false;
    if (c.sliding_window > 0 && !(s.mask_kind == MaskKind::Window && s.window == c.sliding_window))
      notes.push_back("the model attends to a sliding window of " + num(c.sliding_window) + " keys; the mask is kept as it was");
    else if (c.sliding_window == 0 && s.mask_kind != MaskKind::Causal)
      notes.push_back("the model attends causally; the mask is kept as \"" + std::string(to_string(s.mask_kind)) + "\"");
  } else if (s.rope.on && dk % 2 != 0) {
    s.rope.on = false;
    notes.push_back("RoPE turned off: d_k is now " + num(dk) + ", and RoPE turns pairs of dimensions");
  }

  if (!(s.dims() == cd) && !s.pins.empty()) {
    s.pins.clear();
    notes.push_back("pins cleared: the shapes changed");
  }
  if (auto e = validate(s); !e.empty()) fail(name + ": the imported weights do not make a valid scenario: " + e);
  result.scenario = std::move(s);
  result.notes = std::move(notes);
  return result;
}

}  // namespace attention_lab::import_detail
