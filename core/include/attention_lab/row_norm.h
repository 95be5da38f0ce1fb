#pragma once
// The arithmetic of one normalised row, shared by the model's LayerNorm and
// RMSNorm and the engine's q/k norm, so a layer shown as a scenario computes
// the same floats as the model that runs it.

#include <Eigen/Core>

namespace attention_lab {

// Σ x_i / n and Σ (x_i − about)² / n over n floats, in double.
double row_mean(const float* x, Eigen::Index n);
double row_mean_square(const float* x, Eigen::Index n, double about = 0.0);

// 1/√(spread + eps), computed in double and rounded once.
float inverse_root(double spread, double eps);

// out_i = (x_i · 1/√(mean(x²) + eps)) · gain_i: RMSNorm of one row (out may be x).
void rms_normalize(const float* x, float* out, const float* gain, Eigen::Index n, double eps);

}  // namespace attention_lab
