#include "attention_lab/edit.h"

#include "attention_lab/limits.h"
#include "attention_lab/seeded_fill.h"
#include "attention_lab/stage_registry.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace attention_lab {

const char* to_string(Dimension d) {
  switch (d) {
    case Dimension::T: return "T";
    case Dimension::d_model: return "d_model";
    case Dimension::heads: return "heads";
    case Dimension::kv_heads: return "kv_heads";
    case Dimension::d_k: return "d_k";
    case Dimension::d_v: return "d_v";
    case Dimension::d_out: return "d_out";
    case Dimension::T_k: return "T_k";
    case Dimension::d_kv: return "d_kv";
  }
  return "?";
}

const char* to_string(Toggle t) {
  switch (t) {
    case Toggle::Scale: return "scale by 1/sqrt(d_k)";
    case Toggle::Bias: return "biases";
    case Toggle::OutputProjection: return "W_o";
    case Toggle::OutputBias: return "b_o";
    case Toggle::Alibi: return "ALiBi position bias";
    case Toggle::Sinks: return "attention sinks";
  }
  return "?";
}

namespace {

std::string edit_value_text(float v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc{} ? std::string(buf, end) : std::string("?");
}

std::string cell(StageId id, int r, int c) {
  return to_string(id) + "[" + std::to_string(r) + "][" + std::to_string(c) + "]";
}

SharedMatrix* input_matrix(Scenario& s, StageKind kind) {
  const auto member = spec(kind).member;
  return member ? &(s.*member) : nullptr;
}

// Whether an input is in use, so editing it means something.
std::string inactive_reason(const Scenario& s, StageKind kind) {
  const Requires r = spec(kind).requires_setting;
  if (setting_on(s, r)) return "";
  return std::string(kind_name(kind)) + ": " + setting_name(r) + " " + (setting_plural(r) ? "are" : "is") +
         " off; turn " + (setting_plural(r) ? "them" : "it") + " on first";
}

// The head that column `col` of an input belongs to (-1: every head).
int head_of_column(const Scenario& s, StageKind kind, int col) { return head_of_column(kind, col, s.dims()); }

std::string check_value(const std::string& what, float v) {
  if (std::isfinite(v)) return {};
  return what + ": expected a finite number, found " + edit_value_text(v);
}

std::string check_cell(const std::string& what, Eigen::Index rows, Eigen::Index cols, int r, int c) {
  if (r >= 0 && c >= 0 && r < rows && c < cols) return {};
  return what + ": expected a cell within " + std::to_string(rows) + " x " + std::to_string(cols) +
         ", found row " + std::to_string(r) + ", column " + std::to_string(c);
}
std::string check_cell(const std::string& what, MatrixView m, int r, int c) {
  return check_cell(what, m.rows(), m.cols(), r, c);
}

// [SECTION] Resizing that keeps what still fits

// regrow_seeded() into `m`, which keeps its buffer (shared with the copy an undo
// entry holds) when neither its shape nor its head blocks change.
void regrow_in_place(SharedMatrix& m, int rows, int cols, int old_block, int new_block, const Scenario& s,
                     StageKind kind, int fan_in) {
  if (m.rows() == rows && m.cols() == cols && old_block == new_block) return;
  m = regrow_seeded(m, rows, cols, old_block, new_block, s.seed, kind, fan_in);
}

// The dimensions `s` would have with `which` = `value`, in `n`; or why it cannot.
std::string resized_dims(const Scenario& s, Dimension which, int value, Dims& n) {
  using namespace limits;
  const Dims d = s.dims();
  n = d;
  auto bad = [&](int max) -> std::string {
    if (value >= 1 && value <= max) return {};
    std::string msg = std::string(to_string(which)) + ": expected 1 to " + std::to_string(max) + ", found " +
                      std::to_string(value);
    if (value > max) {
      // Say what the refused size would cost, so the limit reads as a reason, not a whim.
      Dims wanted = d;
      switch (which) {
        case Dimension::T: wanted.T = value; break;
        case Dimension::d_model: wanted.d_model = value; break;
        case Dimension::heads: wanted.heads = value; break;
        case Dimension::kv_heads: wanted.kv_heads = value; break;
        case Dimension::d_k: wanted.d_k = value; break;
        case Dimension::d_v: wanted.d_v = value; break;
        case Dimension::d_out: wanted.d_out = value; break;
        case Dimension::T_k: wanted.T_k = value; break;
        case Dimension::d_kv: wanted.d_kv = value; break;
      }
      msg += " (size limit; that size would need about " + format_bytes(estimated_bytes(wanted)) + ")";
    }
    return msg;
  };
  std::string err;
  switch (which) {
    case Dimension::T: err = bad(kMaxTokens); n.T = value; break;
    case Dimension::d_model: err = bad(kMaxModelDim); n.d_model = value; break;
    case Dimension::heads:
      err = bad(kMaxHeads);
      n.heads = value;
      if (d.kv_heads == d.heads) n.kv_heads = value;  // no grouping: one K/V head per query head
      else if (err.empty() && value % d.kv_heads != 0)
        err = "heads: expected a multiple of kv_heads (" + std::to_string(d.kv_heads) + "), found " +
              std::to_string(value) + "; change kv_heads first";
      break;
    case Dimension::kv_heads:
      err = bad(d.heads);
      if (err.empty() && d.heads % value != 0)
        err = "kv_heads: expected a number that divides heads (" + std::to_string(d.heads) + "), found " +
              std::to_string(value);
      n.kv_heads = value;
      break;
    case Dimension::d_k:
      err = bad(kMaxHeadDim);
      if (err.empty() && s.rope.on && value % 2 != 0)
        err = "d_k: expected an even number while RoPE is on (it turns pairs of dimensions), found " +
              std::to_string(value);
      if (err.empty() && s.rope.on && s.rope.dims > value)
        err = "d_k: expected at least " + std::to_string(s.rope.dims) + " while RoPE turns that many dimensions of a head, found " +
              std::to_string(value);
      n.d_k = value;
      break;
    case Dimension::d_v: err = bad(kMaxHeadDim); n.d_v = value; break;
    case Dimension::d_out:
      if (!s.use_w_o) return "d_out: it is h*d_v while W_o is off; turn W_o on to choose it";
      err = bad(kMaxModelDim);
      n.d_out = value;
      break;
    case Dimension::T_k:
    case Dimension::d_kv:
      if (!s.cross())
        return std::string(to_string(which)) + ": this is self-attention, whose keys are the tokens themselves (" +
               (which == Dimension::T_k ? "change T" : "change d_model") + "); give the scenario an X_kv for cross-attention";
      err = bad(which == Dimension::T_k ? kMaxTokens : kMaxModelDim);
      (which == Dimension::T_k ? n.T_k : n.d_kv) = value;
      break;
  }
  if (!err.empty()) return err;
  if (n.heads * n.d_k > kMaxProjectionWidth || n.heads * n.d_v > kMaxProjectionWidth)
    return "heads*d_k and heads*d_v: expected at most " + std::to_string(kMaxProjectionWidth) +
           ", found " + std::to_string(std::max(n.heads * n.d_k, n.heads * n.d_v)) +
           " (size limit; that size would need about " + format_bytes(estimated_bytes(n)) + ")";
  if (!s.use_w_o) n.d_out = n.heads * n.d_v;
  // Self-attention: keys are the tokens themselves. Cross-attention keeps X_kv as it is.
  if (!s.cross()) n.T_k = n.T, n.d_kv = n.d_model;
  if (s.cross() && n.T != n.T_k && (s.mask_kind == MaskKind::Causal || s.mask_kind == MaskKind::Window))
    return std::string(to_string(which)) + ": a " + to_string(s.mask_kind) + " mask needs as many queries as keys (T_k = " +
           std::to_string(n.T_k) + "), found T = " + std::to_string(n.T) + "; choose mask none or custom first";
  // W_o usually maps back to d_model; keep that link when d_model changes.
  if (which == Dimension::d_model && s.use_w_o && d.d_out == d.d_model) n.d_out = n.d_model;
  // Within the limits but more than this computer has: refuse before allocating.
  if (auto problem = memory_problem(n); !problem.empty()) return std::string(to_string(which)) + ": " + problem;
  return {};
}

// Every input of `s` regrown from dimensions `d` to `n`, keeping what still fits.
void regrow_inputs(Scenario& s, const Dims& d, const Dims& n) {
  regrow_in_place(s.X, n.T, n.d_model, 0, 0, s, StageKind::X, 1);
  if (s.cross()) regrow_in_place(s.X_kv, n.T_k, n.d_kv, 0, 0, s, StageKind::X_kv, 1);
  regrow_in_place(s.W_q, n.d_model, n.heads * n.d_k, d.d_k, n.d_k, s, StageKind::W_q, n.d_model);
  regrow_in_place(s.W_k, n.d_kv, n.kv_heads * n.d_k, d.d_k, n.d_k, s, StageKind::W_k, n.d_kv);
  regrow_in_place(s.W_v, n.d_kv, n.kv_heads * n.d_v, d.d_v, n.d_v, s, StageKind::W_v, n.d_kv);
  if (s.use_bias) {
    regrow_in_place(s.b_q, 1, n.heads * n.d_k, d.d_k, n.d_k, s, StageKind::b_q, 1);
    regrow_in_place(s.b_k, 1, n.kv_heads * n.d_k, d.d_k, n.d_k, s, StageKind::b_k, 1);
    regrow_in_place(s.b_v, 1, n.kv_heads * n.d_v, d.d_v, n.d_v, s, StageKind::b_v, 1);
  }
  if (s.use_w_o && (s.W_o.rows() != n.heads * n.d_v || s.W_o.cols() != n.d_out || d.d_v != n.d_v)) {
    // W_o's rows are head blocks: regrow its transpose by column blocks.
    const Matrix t = s.W_o.transpose();
    s.W_o = regrow_seeded(t, n.d_out, n.heads * n.d_v, d.d_v, n.d_v, s.seed, StageKind::W_o, n.heads * n.d_v).transpose();
  }
  if (s.use_output_bias) regrow_in_place(s.b_o, 1, n.d_out, 0, 0, s, StageKind::b_o, 1);
  if (s.use_sinks || s.sinks.size() > 0) {
    // One logit per head: kept heads keep theirs, new ones start at 0.
    Matrix sinks = Matrix::Zero(1, n.heads);
    const auto kept = std::min<Eigen::Index>(s.sinks.cols(), n.heads);
    if (s.sinks.rows() == 1 && kept > 0) sinks.leftCols(kept) = s.sinks.leftCols(kept);
    s.sinks = sinks;
  }
  if (s.qk_norm.on() || s.q_norm.size() > 0) {
    // The gains: one head's d_k, or every head's block; kept where a head and
    // a dimension remain, 1 (no weighting) where new.
    const bool whole = s.qk_norm.scope == QkNormScope::Whole;
    const auto regrow_gains = [&](SharedMatrix& g, int old_blocks, int blocks) {
      if (!whole) old_blocks = blocks = 1;
      Matrix next = Matrix::Ones(1, blocks * n.d_k);
      const Matrix& was = g.get();
      for (int b = 0; b < std::min(old_blocks, blocks); ++b)
        for (int i = 0; i < std::min(d.d_k, n.d_k); ++i)
          if (was.rows() == 1 && b * d.d_k + i < was.cols()) next(0, b * n.d_k + i) = was(0, b * d.d_k + i);
      g = next;
    };
    regrow_gains(s.q_norm, d.heads, n.heads);
    regrow_gains(s.k_norm, d.kv_heads, n.kv_heads);
  }
  if (s.mask_kind == MaskKind::Custom || s.custom_mask.size() > 0)
    regrow_in_place(s.custom_mask, n.T, n.T_k, 0, 0, s, StageKind::Mask, 1);
  // Names that still have a row (column) keep it; new ones are empty, shown as the index.
  if (!s.tokens.empty()) s.tokens.resize(static_cast<std::size_t>(n.T));
  if (!s.tokens_kv.empty()) s.tokens_kv.resize(static_cast<std::size_t>(n.T_k));
  if (!s.features.empty()) s.features.resize(static_cast<std::size_t>(n.d_model));
  s.heads = n.heads;
  s.kv_heads = n.kv_heads == n.heads ? 0 : n.kv_heads;
}

// Pins on Q, K and V move with their head block, as the weights' columns do;
// pins outside the new shapes (from `d`) no longer address anything.
void keep_fitting_pins(Scenario& s, const Dims& d) {
  const Dims now = s.dims();
  std::map<PinKey, float> kept;
  for (const auto& [key, v] : s.pins) {
    PinKey k = key;
    const StageSpec& sp = spec(k.stage.kind);
    const bool v_wide = sp.cols == Extent::VWidth || sp.cols == Extent::ContextWidth;
    if (const int old_w = extent(v_wide ? Extent::d_v : Extent::d_k, d);
        !sp.per_head && head_of_column(k.stage.kind, 0, d) == 0 && sp.cols != Extent::Heads && old_w > 0) {
      const int new_w = extent(v_wide ? Extent::d_v : Extent::d_k, now);
      if (k.col % old_w >= new_w) continue;  // its column of the head is gone
      k.col = k.col / old_w * new_w + k.col % old_w;
    }
    const bool head_gone = sp.per_head && k.stage.head >= now.heads;
    if (!head_gone && k.row < stage_rows(k.stage.kind, now) && k.col < stage_cols(k.stage.kind, now)) kept[k] = v;
  }
  s.pins = std::move(kept);
}

std::string resize(Scenario& s, Dimension which, int value) {
  const Dims d = s.dims();
  Dims n;
  if (auto err = resized_dims(s, which, value, n); !err.empty()) return err;
  regrow_inputs(s, d, n);
  keep_fitting_pins(s, d);
  return {};
}

// [SECTION] Pins

// Moves a pin on a view (Q[h], concat) to the storage it views.
std::optional<PinKey> normalize_pin(const Scenario& s, PinKey k) {
  if (is_input(k.stage.kind)) return std::nullopt;
  // Layer stages have no head; a stray head field would make a key nothing reads.
  if (!is_per_head(k.stage.kind)) k.stage.head = 0;
  const auto stored = storage_cell(CellRef{k.stage, k.row, k.col}, s.dims());
  if (!stored) return std::nullopt;
  return PinKey{stored->stage, stored->row, stored->col};
}

std::string check_pin(const Scenario& s, const PinKey& k) {
  const Dims d = s.dims();
  const int rows = stage_rows(k.stage.kind, d), cols = stage_cols(k.stage.kind, d);
  if (is_per_head(k.stage.kind) && (k.stage.head < 0 || k.stage.head >= d.heads))
    return "pin: expected a head from 0 to " + std::to_string(d.heads - 1) + ", found " +
           std::to_string(k.stage.head);
  if (std::string why; !pinnable(k.stage.kind, &why)) return "pin on " + to_string(k.stage) + ": " + why;
  if (k.stage.layer != 0 || k.stage.role != Role::Value)
    return "pin on " + to_string(k.stage) + ": a scenario has one layer of values; pins go on layer 0";
  if (k.row < 0 || k.col < 0 || k.row >= rows || k.col >= cols)
    return "pin on " + to_string(k.stage) + ": expected a cell within " + std::to_string(rows) + " x " +
           std::to_string(cols) + ", found row " + std::to_string(k.row) + ", column " + std::to_string(k.col);
  return {};
}

// A pin set or removed changes that one cell of its (canonical) stage.
void mark_pin(Invalidation& inv, const PinKey& k, const Dims& d) {
  const int head = is_per_head(k.stage.kind) ? k.stage.head : head_of_column(k.stage.kind, k.col, d);
  inv.mark_cell(k.stage.kind, head, k.row, k.col);
}

// [SECTION] Applying each kind of edit

struct Applier {
  Scenario& s;
  Applied out;

  void fail(std::string msg) { out.error = std::move(msg); }

  void operator()(const SetCell& e) {
    const std::string what = cell(e.target, e.row, e.col);
    if (e.target.kind == StageKind::Mask) {
      if (e.value != 0.0f && e.value != 1.0f) return fail(what + ": expected 0 or 1, found " + edit_value_text(e.value));
      const Eigen::Index n = s.T(), nk = s.kv_source().rows();
      if (auto err = check_cell(what, n, nk, e.row, e.col); !err.empty()) return fail(err);
      if (s.mask_kind == MaskKind::Custom && s.custom_mask.rows() == n && s.custom_mask.cols() == nk) {
        // one cell back, not a T×T copy in every undo entry
        out.inverse = SetCell{e.target, e.row, e.col, s.custom_mask(e.row, e.col)};
      } else {
        out.inverse = SetMask{s.mask_kind, s.custom_mask, s.window};
        s.custom_mask = s.effective_mask();  // start from what the user sees
        s.mask_kind = MaskKind::Custom;
      }
      s.custom_mask(e.row, e.col) = e.value;
      // the effective mask changed in this one cell only
      out.stale.mark_cell(StageKind::Mask, -1, e.row, e.col);
      return;
    }
    SharedMatrix* m = input_matrix(s, e.target.kind);
    if (!m) return fail(what + ": expected an input (X, W_q, W_k, W_v, W_o, a bias or the mask); " +
                        to_string(e.target) + " is computed, pin it instead");
    if (auto err = inactive_reason(s, e.target.kind); !err.empty()) return fail(err);
    if (auto err = check_cell(what, m->get(), e.row, e.col); !err.empty()) return fail(err);
    if (auto err = check_value(what, e.value); !err.empty()) return fail(err);
    const float old_value = m->get()(e.row, e.col);
    out.inverse = SetCell{e.target, e.row, e.col, old_value};
    m->edit()(e.row, e.col) = e.value;
    out.stale.mark_cell(e.target.kind, head_of_column(s, e.target.kind, e.col), e.row, e.col, old_value);
  }

  void operator()(const SetMatrix& e) {
    const std::string what = to_string(e.target);
    if (e.target.kind == StageKind::Mask) {
      return (*this)(SetMask{MaskKind::Custom, e.value});
    }
    SharedMatrix* m = input_matrix(s, e.target.kind);
    if (!m) return fail(what + ": expected an input matrix; computed stages cannot be set");
    if (auto err = inactive_reason(s, e.target.kind); !err.empty()) return fail(err);
    if (e.value.rows() != m->rows() || e.value.cols() != m->cols())
      return fail(what + ": expected " + std::to_string(m->rows()) + " x " + std::to_string(m->cols()) +
                  ", found " + std::to_string(e.value.rows()) + " x " + std::to_string(e.value.cols()));
    if (!e.value.get().allFinite()) return fail(what + ": expected finite numbers only");
    out.inverse = SetMatrix{e.target, *m, e.label};  // shares the old buffer: no copy
    *m = e.value;
    out.stale.mark_all_heads(e.target.kind);
  }

  void operator()(const SetPin& e) {
    // named as the user named it (Q_unrotated[1], not the matrix it views)
    if (std::string why; !is_input(e.key.stage.kind) && !pinnable(e.key.stage.kind, &why))
      return fail("pin on " + to_string(e.key.stage) + ": " + why);
    const auto key = normalize_pin(s, e.key);
    if (!key) return fail(to_string(e.key.stage) + ": inputs are edited, not pinned");
    if (auto err = check_pin(s, *key); !err.empty()) return fail(err);
    if (e.value && !std::isfinite(*e.value))
      return fail("pin on " + cell(key->stage, key->row, key->col) + ": expected a finite number, found " +
                  edit_value_text(*e.value));
    const auto it = s.pins.find(*key);
    out.inverse = SetPin{*key, it == s.pins.end() ? std::nullopt : std::optional<float>(it->second)};
    if (e.value)
      s.pins[*key] = *e.value;
    else if (it != s.pins.end())
      s.pins.erase(it);
    mark_pin(out.stale, *key, s.dims());
  }

  void operator()(const SetPins& e) {
    for (const auto& [k, v] : e.pins) {
      if (normalize_pin(s, k) != k) return fail(to_string(k.stage) + ": cannot hold pins");
      if (auto err = check_pin(s, k); !err.empty()) return fail(err);
      if (!std::isfinite(v)) return fail("pin on " + to_string(k.stage) + ": expected a finite number");
    }
    const Dims d = s.dims();
    for (const auto& [k, v] : s.pins) mark_pin(out.stale, k, d);
    for (const auto& [k, v] : e.pins) mark_pin(out.stale, k, d);
    out.inverse = SetPins{s.pins};
    s.pins = e.pins;
  }

  void operator()(const SetDimension& e) {
    auto before = std::make_shared<const Scenario>(s);
    Scenario next = s;
    if (auto err = resize(next, e.which, e.value); !err.empty()) return fail(err);
    s = std::move(next);
    out.inverse = ReplaceScenario{std::move(before), describe(e)};
    out.stale.mark_everything();
  }

  void operator()(const SetMask& e) {
    // An empty matrix with another kind means "no custom mask kept": the exact
    // inverse of the first mask edit of a scenario that never had one.
    const bool restores_none = e.custom && e.custom->size() == 0 && e.kind != MaskKind::Custom;
    const auto T = s.X.rows(), Tk = s.kv_source().rows();
    if (e.custom && !restores_none) {
      if (e.custom->rows() != T || e.custom->cols() != Tk)
        return fail("mask: expected " + std::to_string(T) + " x " + std::to_string(Tk) + (s.cross() ? " (T x T_k)" : " (T x T)") +
                    ", found " + std::to_string(e.custom->rows()) + " x " + std::to_string(e.custom->cols()));
      if (!((e.custom->array() == 0.0f) || (e.custom->array() == 1.0f)).all())
        return fail("mask: expected only 0 and 1");
    }
    if ((e.kind == MaskKind::Causal || e.kind == MaskKind::Window) && T != Tk)
      return fail(std::string("mask: a ") + to_string(e.kind) + " mask needs as many queries as keys; this cross-attention has T = " +
                  std::to_string(T) + " queries and T_k = " + std::to_string(Tk) + " keys (choose none or custom)");
    const int window = e.window >= 0 ? e.window : s.window;
    if (e.kind == MaskKind::Window && !(window >= 1 && window <= limits::kMaxTokens))
      return fail("mask.window: expected a whole number from 1 to " + std::to_string(limits::kMaxTokens) + ", found " +
                  std::to_string(window));
    out.inverse = SetMask{s.mask_kind, s.custom_mask, s.window};
    s.mask_kind = e.kind;
    s.window = window;
    if (e.custom) s.custom_mask = *e.custom;
    if (s.mask_kind == MaskKind::Custom && (s.custom_mask.rows() != s.X.rows() || s.custom_mask.cols() != Tk))
      s.custom_mask = seeded_matrix(s.seed, StageKind::Mask, s.T(), static_cast<int>(Tk), 1);
    out.stale.mark_all_heads(StageKind::Mask);
  }

  void operator()(const SetToggle& e) {
    const Dims d = s.dims();
    // Turning a feature on may create its matrices, and W_o changes the shape
    // b_o needs: then only the whole previous scenario is an exact inverse.
    const bool creates =
        e.which == Toggle::OutputProjection ||
        (e.on && e.which == Toggle::Bias &&
         (s.b_q.cols() != stage_cols(StageKind::b_q, d) || s.b_k.cols() != stage_cols(StageKind::b_k, d) ||
          s.b_v.cols() != stage_cols(StageKind::b_v, d))) ||
        (e.on && e.which == Toggle::OutputBias && s.b_o.cols() != d.d_out) ||
        (e.on && e.which == Toggle::Sinks && s.sinks.cols() != d.heads);
    if (creates)
      out.inverse = ReplaceScenario{std::make_shared<const Scenario>(s), describe(e)};
    else
      out.inverse = SetToggle{e.which, current(e.which)};
    switch (e.which) {
      case Toggle::Scale:
        s.scale = e.on;
        out.stale.mark_all_heads(StageKind::Scaled);
        return;
      case Toggle::Bias:
        for (StageKind k : {StageKind::b_q, StageKind::b_k, StageKind::b_v})
          if (SharedMatrix& b = s.*spec(k).member; e.on && b.cols() != stage_cols(k, d))
            b = seeded_matrix(s.seed, k, 1, stage_cols(k, d), 1);
        s.use_bias = e.on;
        for (auto k : {StageKind::b_q, StageKind::b_k, StageKind::b_v}) out.stale.mark_all_heads(k);
        return;
      case Toggle::OutputProjection: {
        if (e.on && s.W_o.rows() != d.heads * d.d_v)
          s.W_o = seeded_matrix(s.seed, StageKind::W_o, d.heads * d.d_v, d.d_model, d.heads * d.d_v);
        s.use_w_o = e.on;
        const int d_out = s.dims().d_out;
        if (s.use_output_bias && s.b_o.cols() != d_out) s.b_o = seeded_matrix(s.seed, StageKind::b_o, 1, d_out, 1);
        // the output changes width: pins beyond it address nothing (undo restores them with the whole scenario)
        const Dims now = s.dims();
        std::erase_if(s.pins, [&](const auto& pin) {
          const PinKey& k = pin.first;
          return k.row >= stage_rows(k.stage.kind, now) || k.col >= stage_cols(k.stage.kind, now);
        });
        out.stale.mark_everything();  // the output changes shape
        return;
      }
      case Toggle::OutputBias:
        if (e.on && s.b_o.cols() != d.d_out) s.b_o = seeded_matrix(s.seed, StageKind::b_o, 1, d.d_out, 1);
        s.use_output_bias = e.on;
        out.stale.mark_all_heads(StageKind::b_o);
        return;
      case Toggle::Alibi:
        s.alibi = e.on;
        out.stale.mark_all_heads(StageKind::PositionBias);
        return;
      case Toggle::Sinks:
        // A sink of logit 0 to start with: as strong as a key whose score is 0.
        if (e.on && s.sinks.cols() != d.heads) s.sinks = Matrix::Zero(1, d.heads);
        s.use_sinks = e.on;
        out.stale.mark_all_heads(StageKind::Sinks);
        return;
    }
  }

  bool current(Toggle t) const {
    switch (t) {
      case Toggle::Scale: return s.scale;
      case Toggle::Bias: return s.use_bias;
      case Toggle::OutputProjection: return s.use_w_o;
      case Toggle::OutputBias: return s.use_output_bias;
      case Toggle::Alibi: return s.alibi;
      case Toggle::Sinks: return s.use_sinks;
    }
    return false;
  }

  void operator()(const SetRope& e) {
    const int d_k = s.dims().d_k;
    if (e.value.on && d_k % 2 != 0)
      return fail("rope: expected an even d_k (RoPE turns pairs of dimensions), found d_k = " + std::to_string(d_k));
    if (std::string problem = check_rope(e.value); !problem.empty()) return fail(problem);
    out.inverse = SetRope{s.rope};
    s.rope = e.value;
    out.stale.mark_all_heads(StageKind::Q);  // Q and K are rotated anew (or not at all)
    out.stale.mark_all_heads(StageKind::K);
  }

  void operator()(const SetSoftcap& e) {
    if (!(std::isfinite(e.value) && e.value >= 0.0f))
      return fail("softcap: expected 0 (none) or a finite number greater than 0, found " + edit_value_text(e.value));
    out.inverse = SetSoftcap{s.softcap};
    s.softcap = e.value;
    out.stale.mark_all_heads(StageKind::Scaled);  // everything from the scaled scores on
  }

  void operator()(const SetQkNorm& e) {
    if (!(std::isfinite(e.value.eps) && e.value.eps >= 0.0f))
      return fail("qk_norm.eps: expected a finite number ≥ 0, found " + edit_value_text(e.value.eps));
    Scenario next_dims = s;  // the gains' widths under the new scope
    next_dims.qk_norm = e.value;
    const Dims d = next_dims.dims();
    const int wq = stage_cols(StageKind::QNorm, d), wk = stage_cols(StageKind::KNorm, d);
    const bool creates = e.value.on() && (s.q_norm.rows() != 1 || s.q_norm.cols() != wq || s.k_norm.rows() != 1 ||
                                          s.k_norm.cols() != wk);
    if (creates)
      out.inverse = ReplaceScenario{std::make_shared<const Scenario>(s), describe(e)};
    else
      out.inverse = SetQkNorm{s.qk_norm};
    if (creates) {
      s.q_norm = Matrix::Ones(1, wq);
      s.k_norm = Matrix::Ones(1, wk);
    }
    s.qk_norm = e.value;
    out.stale.mark_everything();  // Q_proj and K_proj appear or go, the gains may change width
  }

  void operator()(const SetTemperature& e) {
    if (!(std::isfinite(e.value) && e.value > 0.0f))
      return fail("temperature: expected a finite number greater than 0, found " + edit_value_text(e.value));
    out.inverse = SetTemperature{s.temperature};
    s.temperature = e.value;
    out.stale.mark_all_heads(StageKind::Scaled);
  }

  // A label list of the scenario: its entries, how many it has when named,
  // and what the user calls one and the count.
  struct Labels {
    std::vector<std::string>& list;
    int count;
    const char* one;    // "token label"
    const char* all;    // "tokens"
    const char* count_name;  // "T"
  };
  Labels labels(LabelList which) {
    switch (which) {
      case LabelList::Features: return {s.features, s.d_model(), "feature name", "features", "d_model"};
      case LabelList::KeyTokens:
        return {s.tokens_kv, static_cast<int>(s.X_kv.rows()), "key token label", "tokens_kv", "T_k"};
      case LabelList::Tokens: break;
    }
    return {s.tokens, s.T(), "token label", "tokens", "T"};
  }

  // Renames entry `index` of a label list that has `count` entries when named.
  void rename(LabelList which, int index, const std::string& label) {
    const Labels l = labels(which);
    if (which == LabelList::KeyTokens && !s.cross())
      return fail("key token label: this is self-attention, whose keys are the tokens; rename the token instead");
    if (index < 0 || index >= l.count)
      return fail(std::string(l.one) + ": expected an index from 0 to " + std::to_string(l.count - 1) + ", found " +
                  std::to_string(index) + " (" + l.count_name + " = " + std::to_string(l.count) + ")");
    if (auto e = limits::check_label_length(l.one, label); !e.empty()) return fail(e);
    auto& list = l.list;
    if (list.empty()) {
      // The exact inverse is "no names" again, not `count` empty ones.
      out.inverse = SetLabels{which, {}};
      list.resize(static_cast<std::size_t>(l.count));
    } else if (which == LabelList::Features) {
      out.inverse = SetFeatureLabel{index, list[static_cast<std::size_t>(index)]};
    } else {
      out.inverse = SetTokenLabel{index, list[static_cast<std::size_t>(index)], which == LabelList::KeyTokens};
    }
    list[static_cast<std::size_t>(index)] = label;
    // Labels change no number. Warnings mention tokens, and every recompute,
    // even of nothing, rebuilds the warnings.
  }

  void operator()(const SetTokenLabel& e) { rename(e.key ? LabelList::KeyTokens : LabelList::Tokens, e.index, e.label); }
  void operator()(const SetFeatureLabel& e) { rename(LabelList::Features, e.index, e.label); }

  void operator()(const SetLabels& e) {
    const Labels l = labels(e.which);
    if (e.which == LabelList::KeyTokens && !s.cross() && !e.labels.empty())
      return fail("tokens_kv: this is self-attention, whose keys are the tokens; name the tokens instead");
    if (!e.labels.empty() && e.labels.size() != static_cast<std::size_t>(l.count))
      return fail(std::string(l.all) + ": expected " + std::to_string(l.count) + " labels (" + l.count_name +
                  ") or none, found " + std::to_string(e.labels.size()));
    for (std::size_t i = 0; i < e.labels.size(); ++i)
      if (auto err = limits::check_label_length(std::string(l.all) + "[" + std::to_string(i) + "]", e.labels[i]);
          !err.empty())
        return fail(err);
    out.inverse = SetLabels{e.which, l.list};
    l.list = e.labels;
  }

  void operator()(const ReplaceScenario& e) {
    if (!e.scenario) return fail("replace scenario: no scenario given");
    if (auto err = validate(*e.scenario); !err.empty()) return fail(err);
    out.inverse = ReplaceScenario{std::make_shared<const Scenario>(s), e.label};
    s = *e.scenario;
    out.stale.mark_everything();
  }
};

}  // namespace

std::string describe(const Edit& edit) {
  struct Describer {
    std::string operator()(const SetCell& e) const { return cell(e.target, e.row, e.col) + " = " + edit_value_text(e.value); }
    std::string operator()(const SetMatrix& e) const { return e.label + " " + to_string(e.target); }
    std::string operator()(const SetPin& e) const {
      const std::string where = cell(e.key.stage, e.key.row, e.key.col);
      return e.value ? "pin " + where + " = " + edit_value_text(*e.value) : "unpin " + where;
    }
    std::string operator()(const SetPins& e) const {
      return e.pins.empty() ? "clear pins" : "set " + std::to_string(e.pins.size()) + " pins";
    }
    std::string operator()(const SetDimension& e) const {
      return std::string(to_string(e.which)) + " = " + std::to_string(e.value);
    }
    std::string operator()(const SetMask& e) const { return std::string("mask = ") + to_string(e.kind); }
    std::string operator()(const SetToggle& e) const {
      return std::string(to_string(e.which)) + (e.on ? " on" : " off");
    }
    std::string operator()(const SetTemperature& e) const { return "temperature = " + edit_value_text(e.value); }
    std::string operator()(const SetSoftcap& e) const {
      return e.value > 0.0f ? "soft-cap = " + edit_value_text(e.value) : std::string("soft-cap off");
    }
    std::string operator()(const SetQkNorm& e) const {
      if (!e.value.on()) return "q/k norm off";
      return std::string("q/k norm ") + (e.value.scope == QkNormScope::PerHead ? "per head" : "over the whole row") +
             ", ε = " + edit_value_text(e.value.eps);
    }
    std::string operator()(const SetRope& e) const {
      if (!e.value.on) return "RoPE off";
      return "RoPE θ = " + edit_value_text(e.value.theta) + ", pairs " + to_string(e.value.pairs) +
             (e.value.scaling == RopeScaling::None ? "" : std::string(", ") + to_string(e.value.scaling) + " scaling ×" + edit_value_text(e.value.factor));
    }
    std::string operator()(const SetTokenLabel& e) const {
      return (e.key ? "key token " : "token ") + std::to_string(e.index) + " = \"" + e.label + "\"";
    }
    std::string operator()(const SetFeatureLabel& e) const {
      return "feature " + std::to_string(e.index) + " = \"" + e.label + "\"";
    }
    std::string operator()(const SetLabels& e) const {
      const char* what = e.which == LabelList::Tokens     ? "token labels"
                         : e.which == LabelList::KeyTokens ? "key token labels"
                                                           : "feature names";
      return e.labels.empty() ? std::string("clear ") + what : std::string("set ") + what;
    }
    std::string operator()(const ReplaceScenario& e) const { return e.label; }
  };
  return std::visit(Describer{}, edit);
}

Applied apply_edit(Scenario& scenario, const Edit& edit) {
  Applier applier{scenario, {}};
  std::visit(applier, edit);
  return std::move(applier.out);
}

}  // namespace attention_lab
