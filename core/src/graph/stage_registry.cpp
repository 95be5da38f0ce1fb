#include "attention_lab/stage_registry.h"

#include "attention_lab/cell_ref.h"
#include "stage_specs.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

namespace attention_lab {

int extent(Extent e, const Dims& d) {
  switch (e) {
    case Extent::One: return 1;
    case Extent::T: return d.T;
    case Extent::Tk: return d.T_k;
    case Extent::d_kv: return d.d_kv;
    case Extent::d_model: return d.d_model;
    case Extent::QWidth: return d.heads * d.d_k;
    case Extent::KWidth: return d.kv_heads * d.d_k;
    case Extent::VWidth: return d.kv_heads * d.d_v;
    case Extent::ContextWidth: return d.heads * d.d_v;
    case Extent::d_k: return d.d_k;
    case Extent::d_v: return d.d_v;
    case Extent::d_out: return d.d_out;
    case Extent::Heads: return d.heads;
    case Extent::Positions: return std::max(d.T, d.T_k);
    case Extent::Pairs: return d.rotary_dims() / 2;
    case Extent::QNormWidth: return d.qk_norm_whole ? d.heads * d.d_k : d.d_k;
    case Extent::KNormWidth: return d.qk_norm_whole ? d.kv_heads * d.d_k : d.d_k;
  }
  return 0;
}

const char* extent_name(Extent e) {
  switch (e) {
    case Extent::One: return "1";
    case Extent::T: return "T";
    case Extent::Tk: return "T_k";
    case Extent::d_kv: return "d_kv";
    case Extent::d_model: return "d_model";
    case Extent::QWidth: return "heads*d_k";
    case Extent::KWidth: return "kv_heads*d_k";
    case Extent::VWidth: return "kv_heads*d_v";
    case Extent::ContextWidth: return "heads*d_v";
    case Extent::d_k: return "d_k";
    case Extent::d_v: return "d_v";
    case Extent::d_out: return "d_out";
    case Extent::Heads: return "heads";
    case Extent::Positions: return "max(T, T_k)";
    case Extent::Pairs: return "rotary/2";
    case Extent::QNormWidth: return "d_k or heads*d_k";
    case Extent::KNormWidth: return "d_k or kv_heads*d_k";
  }
  return "?";
}

namespace {

// The table, in StageKind order: each part puts its stages at their kind,
// and the whole is checked once, so a misplaced or missing entry fails the
// first run of any program rather than answering for the wrong stage.
const stage_specs::Table& checked_table() {
  static const stage_specs::Table table = [] {
    stage_specs::Table t{};
    stage_specs::put_projection_stages(t);
    stage_specs::put_other_stages(t);
    for (int k = 0; k < kStageKindCount; ++k)
      if (t[static_cast<std::size_t>(k)].kind != static_cast<StageKind>(k) || !t[static_cast<std::size_t>(k)].id_name)
        std::abort();
    return t;
  }();
  return table;
}

}  // namespace

std::span<const StageSpec> all_stages() { return checked_table(); }

const StageSpec& spec(StageKind kind) { return checked_table()[static_cast<std::size_t>(kind)]; }

std::vector<CellSource> cell_sources(const Scenario& s, StageId id, int row, int col) {
  return spec(id.kind).sources(s, s.dims(), spec(id.kind).per_head ? id.head : 0, row, col);
}

int stage_rows(StageKind kind, const Dims& d) { return extent(spec(kind).rows, d); }
int stage_cols(StageKind kind, const Dims& d) { return extent(spec(kind).cols, d); }

bool setting_on(const Scenario& s, Requires r) {
  switch (r) {
    case Requires::Nothing: return true;
    case Requires::Biases: return s.use_bias;
    case Requires::OutputProjection: return s.use_w_o;
    case Requires::OutputBias: return s.use_output_bias;
    case Requires::Alibi: return s.alibi;
    case Requires::Sinks: return s.use_sinks;
    case Requires::Rope: return s.rope.on;
    case Requires::Cross: return s.cross();
    case Requires::QkNorm: return s.qk_norm.on();
    case Requires::Softcap: return s.softcap > 0.0f;
  }
  return true;
}

const char* setting_name(Requires r) {
  switch (r) {
    case Requires::Nothing: return "nothing";
    case Requires::Biases: return "the biases";
    case Requires::OutputProjection: return "the output projection W_o";
    case Requires::OutputBias: return "the output bias b_o";
    case Requires::Alibi: return "ALiBi";
    case Requires::Sinks: return "attention sinks";
    case Requires::Rope: return "RoPE";
    case Requires::Cross: return "cross-attention (X_kv)";
    case Requires::QkNorm: return "the q/k norm";
    case Requires::Softcap: return "the soft-cap";
  }
  return "?";
}

bool setting_plural(Requires r) { return r == Requires::Biases || r == Requires::Sinks; }

std::optional<CellRef> storage_cell(const CellRef& cell, const Dims& d) {
  const StageSpec& sp = spec(cell.stage.kind);
  switch (sp.view) {
    case ViewKind::Stored: return cell;
    case ViewKind::HeadSlice: case ViewKind::KVSlice: {
      const int w = stage_cols(cell.stage.kind, d);
      StageId whole = StageId::input(sp.storage);
      whole.layer = cell.stage.layer;
      whole.role = cell.stage.role;
      const int block = sp.view == ViewKind::KVSlice ? d.kv_head(cell.stage.head) : cell.stage.head;
      return CellRef{whole, cell.row, block * w + cell.col};
    }
    case ViewKind::HeadsSideBySide: {
      const int w = stage_cols(sp.storage, d);
      if (w <= 0) return std::nullopt;
      StageId part = StageId::of_head(sp.storage, cell.col / w);
      part.layer = cell.stage.layer;
      part.role = cell.stage.role;
      return CellRef{part, cell.row, cell.col % w};
    }
  }
  return cell;
}

std::optional<CellRef> view_cell(const CellRef& stored, StageId view, const Dims& d) {
  if (stored.stage == view) return CellRef{view, stored.row, stored.col};
  const StageSpec& sp = spec(view.kind);
  if (sp.view == ViewKind::Stored || stored.stage.kind != sp.storage || stored.stage.layer != view.layer ||
      stored.stage.role != view.role)
    return std::nullopt;
  if (sp.view == ViewKind::HeadSlice || sp.view == ViewKind::KVSlice) {
    const int w = stage_cols(view.kind, d);
    const int block = sp.view == ViewKind::KVSlice ? d.kv_head(view.head) : view.head;
    if (w <= 0 || stored.col / w != block) return std::nullopt;
    return CellRef{view, stored.row, stored.col % w};
  }
  const int w = stage_cols(sp.storage, d);
  return CellRef{view, stored.row, stored.stage.head * w + stored.col};
}

int head_of_column(StageKind kind, int col, const Dims& d) {
  const StageSpec& sp = spec(kind);
  if (sp.per_head) return -1;
  if (sp.cols == Extent::Heads) return col;  // one column per head
  const int w = sp.cols == Extent::QWidth || sp.cols == Extent::KWidth ? d.d_k
                : sp.cols == Extent::VWidth || sp.cols == Extent::ContextWidth ? d.d_v : 0;
  // W_o's rows are the head blocks, not its columns.
  return w > 0 ? col / w : -1;
}

bool columns_are_kv_heads(StageKind kind) {
  const Extent c = spec(kind).cols;
  return !spec(kind).per_head && (c == Extent::KWidth || c == Extent::VWidth);
}

bool pinnable(StageKind kind, std::string* why) {
  const StageSpec& sp = spec(kind);
  const char* reason = sp.input ? "it is an input; edit it instead"
                       : sp.not_pinnable ? sp.not_pinnable
                       : sp.positional   ? "it is computed from the positions alone; pin the masked score it feeds instead"
                                         : nullptr;
  if (reason && why) *why = reason;
  return reason == nullptr;
}

}  // namespace attention_lab
