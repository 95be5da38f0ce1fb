#pragma once
// The logit lens: what the model would predict after each layer — the
// residual stream after layer l (l = 0: the embeddings alone) through the
// final norm and the unembedding, as the last layer's output goes to the
// logits. The last entry is the model's own prediction.

#include <span>
#include <vector>

namespace attention_lab {

struct TransformerModel;

struct LensPrediction {
  int id = 0;
  float logit = 0.0f;
  float probability = 0.0f;
};

struct LensLayer {
  int after = 0;  // layers run before it: 0 (the embeddings) … layers
  std::vector<LensPrediction> top;  // most likely first
  // The tracked token's logit and probability there, and its rank (0: the
  // most likely; ties go to the lower id); id −1 when none was asked for.
  LensPrediction tracked{-1, 0.0f, 0.0f};
  int tracked_rank = -1;
};

// For the token at `row` of `ids` (checked: valid ids, 0 ≤ row < T), the k
// most likely next tokens after each layer: layers + 1 entries. With
// `track` (a token id), that token's place after each layer too.
std::vector<LensLayer> logit_lens(const TransformerModel& model, std::span<const int> ids, int row, int k, int track = -1);

}  // namespace attention_lab
