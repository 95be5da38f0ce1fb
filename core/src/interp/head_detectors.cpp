#include "attention_lab/head_detectors.h"

#include "attention_lab/transformer_forward.h"
#include "attention_lab/transformer_model.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <stdexcept>

namespace attention_lab {

const char* to_string(HeadKind kind) {
  switch (kind) {
    case HeadKind::PreviousToken: return "previous_token";
    case HeadKind::DuplicateToken: return "duplicate_token";
    case HeadKind::Induction: return "induction";
  }
  return "?";
}

Matrix detection_pattern(HeadKind kind, std::span<const int> ids) {
  const auto T = static_cast<Eigen::Index>(ids.size());
  Matrix p = Matrix::Zero(T, T);
  const auto id = [&](Eigen::Index i) { return ids[static_cast<std::size_t>(i)]; };
  for (Eigen::Index i = 0; i < T; ++i) {
    switch (kind) {
      case HeadKind::PreviousToken:
        if (i > 0) p(i, i - 1) = 1.0f;
        break;
      case HeadKind::DuplicateToken:
        for (Eigen::Index j = 0; j < i; ++j) p(i, j) = id(j) == id(i) ? 1.0f : 0.0f;
        break;
      case HeadKind::Induction:
        // TransformerLens: the duplicate pattern shifted one key to the
        // right, its first column cleared, the upper triangle dropped.
        for (Eigen::Index j = 1; j <= i; ++j) p(i, j) = id(j - 1) == id(i) ? 1.0f : 0.0f;
        break;
    }
  }
  return p;
}

double detection_score(const Matrix& weights, const Matrix& pattern) {
  if (weights.rows() != pattern.rows() || weights.cols() != pattern.cols())
    throw std::invalid_argument("detection_score: the weights and the pattern differ in shape");
  double hit = 0.0, all = 0.0;
  for (Eigen::Index i = 0; i < weights.rows(); ++i)
    for (Eigen::Index j = 0; j < weights.cols(); ++j) {
      hit += static_cast<double>(weights(i, j)) * static_cast<double>(pattern(i, j));
      all += static_cast<double>(weights(i, j));
    }
  return all != 0.0 ? hit / all : std::numeric_limits<double>::quiet_NaN();
}

HeadDetector::HeadDetector(std::span<const int> ids) : T_(static_cast<Eigen::Index>(ids.size())) {
  for (const HeadKind kind : kHeadKinds) {
    const Matrix p = detection_pattern(kind, ids);
    std::vector<std::pair<int, int>> on;
    for (Eigen::Index i = 0; i < p.rows(); ++i)
      for (Eigen::Index j = 0; j <= i; ++j)
        if (p(i, j) != 0.0f) on.emplace_back(static_cast<int>(i), static_cast<int>(j));
    cells_.push_back(std::move(on));
  }
}

std::vector<double> HeadDetector::scores(const Matrix& weights) const {
  if (weights.rows() != T_ || weights.cols() != T_)
    throw std::invalid_argument("HeadDetector::scores: expected " + std::to_string(T_) + " × " + std::to_string(T_) +
                                " weights, found " + std::to_string(weights.rows()) + " × " + std::to_string(weights.cols()));
  // Summed in double where the weights are: a double copy of every head's
  // T × T weights doubled the scoring's memory traffic as a session opens.
  double all = 0.0;
  const float* w = weights.data();
  for (Eigen::Index i = 0; i < weights.size(); ++i) all += static_cast<double>(w[i]);
  std::vector<double> out;
  for (const auto& on : cells_) {
    double hit = 0.0;
    for (const auto& [i, j] : on) hit += static_cast<double>(weights(i, j));
    out.push_back(all != 0.0 ? hit / all : std::numeric_limits<double>::quiet_NaN());
  }
  return out;
}

HeadScores detect_heads(const TransformerModel& model, std::span<const int> ids, std::vector<Matrix>* patterns) {
  const ModelConfig& c = model.config;
  if (ids.size() < 2) throw std::invalid_argument("detect_heads: expected at least 2 tokens");
  if (const std::string e = check_ids(c, ids); !e.empty()) throw std::invalid_argument("detect_heads: " + e);
  HeadScores out;
  out.ids.assign(ids.begin(), ids.end());
  for (std::size_t k = 0; k < std::size(kHeadKinds); ++k) out.scores.push_back(Matrix::Zero(c.layers, c.heads));
  const HeadDetector detector(ids);
  Matrix x = embed(model, ids);
  for (int l = 0; l < c.layers; ++l) {
    AttentionDetail detail;
    detail.weights_only = true;
    const Matrix attn = attention(model, l, attention_input(model, l, x), &detail);
    for (int h = 0; h < c.heads; ++h) out.set(l, h, detector.scores(detail.weights[static_cast<std::size_t>(h)]));
    if (patterns)
      for (Matrix& w : detail.weights) patterns->push_back(std::move(w));
    x = finish_layer(model, l, x, attn);
  }
  return out;
}

std::vector<int> repeated_random_tokens(int vocab, int length, std::uint64_t seed) {
  if (vocab < 1 || length < 1) throw std::invalid_argument("repeated_random_tokens: expected a vocabulary and a length");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, vocab - 1);
  std::vector<int> ids(static_cast<std::size_t>(length));
  for (int& id : ids) id = pick(rng);
  ids.insert(ids.end(), ids.begin(), ids.end());
  return ids;
}

}  // namespace attention_lab
