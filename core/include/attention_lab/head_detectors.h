#pragma once
// Head detectors: how much of each head's attention falls where a kind of
// head is known to look — the previous token, an earlier copy of the same
// token, or the token after that earlier copy (induction) — as
// TransformerLens's head_detector defines them (error measure "mul", no
// position excluded): score = Σᵢⱼ Aᵢⱼ·Pᵢⱼ / Σᵢⱼ Aᵢⱼ, P the kind's 0/1
// detection pattern of the token ids, lower triangular.

#include "attention_lab/matrix.h"

#include <cstdint>
#include <span>
#include <utility>
#include <string>
#include <vector>

namespace attention_lab {

struct TransformerModel;

enum class HeadKind { PreviousToken, DuplicateToken, Induction };
inline constexpr HeadKind kHeadKinds[] = {HeadKind::PreviousToken, HeadKind::DuplicateToken, HeadKind::Induction};

// "previous_token", "duplicate_token", "induction" (TransformerLens's names without "_head").
const char* to_string(HeadKind kind);

// The T × T detection pattern of `kind` for `ids`:
//   previous token  Pᵢⱼ = 1 where j = i − 1;
//   duplicate token Pᵢⱼ = 1 where j < i and ids[j] = ids[i];
//   induction       Pᵢⱼ = 1 where 0 < j ≤ i and ids[j − 1] = ids[i]
//                   (the token after an earlier copy of the current one).
Matrix detection_pattern(HeadKind kind, std::span<const int> ids);

// Σ A⊙P / Σ A of one head's T × T weights; NaN when A sums to 0.
double detection_score(const Matrix& weights, const Matrix& pattern);

// The three patterns of one sequence as the cells where they are 1, found
// once: scoring a head is then a sum over those cells and over A (T² reads,
// not three T² products: a session scores every head as it opens).
class HeadDetector {
 public:
  explicit HeadDetector(std::span<const int> ids);
  // One head's T × T weights: its score for each kind, indexed by HeadKind
  // (detection_score's value, to float rounding of the sums).
  std::vector<double> scores(const Matrix& weights) const;

 private:
  Eigen::Index T_ = 0;
  std::vector<std::vector<std::pair<int, int>>> cells_;  // per kind
};

// Every head of every layer, for each kind: scores[kind] is layers × heads.
struct HeadScores {
  std::vector<int> ids;
  std::vector<Matrix> scores;  // indexed by HeadKind
  const Matrix& of(HeadKind kind) const { return scores[static_cast<std::size_t>(kind)]; }
  // Head h of layer l's scores, indexed by HeadKind (HeadDetector::scores).
  void set(int l, int h, const std::vector<double>& by_kind) {
    for (std::size_t k = 0; k < by_kind.size() && k < scores.size(); ++k) scores[k](l, h) = static_cast<float>(by_kind[k]);
  }
};

// Runs `ids` through the model (the unedited forward) and scores every head.
// `ids` must be valid for the model (check_ids); at least two tokens. With
// `patterns`, every head's T × T weights too, at l·heads + h.
HeadScores detect_heads(const TransformerModel& model, std::span<const int> ids, std::vector<Matrix>* patterns = nullptr);

// `length` seeded random token ids (uniform over 0 … vocab − 1), then the
// same `length` again: the usual input of induction detection, where every
// token of the second half has a copy `length` back.
std::vector<int> repeated_random_tokens(int vocab, int length, std::uint64_t seed);

}  // namespace attention_lab
