#pragma once
// The stage registry's table (stage_registry.h) is written in parts, one
// file each: stage_specs_projections.cpp (W_q, W_k, W_v, their biases, the
// projections and every form of Q, K and V) and stage_specs_stages.cpp
// (every other stage). Here are the pieces the parts share; each part puts
// its stages at their kind's place in the table, which stage_registry.cpp
// assembles and checks.

#include "attention_lab/stage_registry.h"

#include <array>
#include <span>
#include <string>
#include <vector>

namespace attention_lab::stage_specs {

using K = StageKind;
using E = Extent;
using L = SideLabels;
using Sources = std::vector<CellSource>;
using Table = std::array<StageSpec, kStageKindCount>;

inline StageId layer(K k) { return StageId::input(k); }
inline StageId head(K k, int h) { return StageId::of_head(k, h); }
inline std::string fixed(const char* text) { return text; }

// Cell sources (provenance): a row, a column or a cell of a stage.
inline CellSource row_of(StageId id, int r) { return {id, r, -1, -1, -1}; }
inline CellSource col_of(StageId id, int c) { return {id, -1, c, -1, -1}; }
inline CellSource cell_of(StageId id, int r, int c) { return {id, -1, -1, r, c}; }
inline Sources no_sources(const Scenario&, const Dims&, int, int, int) { return {}; }

// A number as short as "%g" writes it.
std::string short_number(float v);
// How RoPE turns Q and K, in words (its θ, pairing and any scaling).
std::string rope_words(const Scenario& s);
// With cross-attention, what position schemes compare (a note, or "").
std::string cross_positions_note(const Scenario& s);

// Puts `specs` into `t`, each at its kind's place.
inline void put(Table& t, std::span<const StageSpec> specs) {
  for (const StageSpec& s : specs) t[static_cast<std::size_t>(s.kind)] = s;
}

// Puts each part's stages into `t` at their kind.
void put_projection_stages(Table& t);
void put_other_stages(Table& t);

}  // namespace attention_lab::stage_specs
