#pragma once
// Gemma 2's soft-cap of a score, c·tanh(x/c), in float as torch computes it
// (x/c, tanh, ×c). One out-of-line function every path calls: a loop the
// compiler vectorised would call a vector tanh whose last bit can differ from
// the scalar one, and an incrementally updated score must be the very float a
// full recompute gives.

namespace attention_lab {

float softcap(float x, float c);

}  // namespace attention_lab
