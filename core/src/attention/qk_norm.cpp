// The q/k norm (Qwen3, Gemma 3, OLMo-2): Q and K normalised by their root mean
// square before RoPE, per head or over the whole row, with the arithmetic the
// model's own norms use (attention_lab/row_norm.h), so every path that
// computes a row of Q or K gives the same floats.

#include "attention/engine_internal.h"
#include "attention_lab/row_norm.h"

namespace attention_lab {

using namespace engine_detail;

void Engine::refresh_qk_norm() {
  const Scenario& s = *scenario_;
  norm_on_ = s.qk_norm.on();
  qk_norm_ = s.qk_norm;
  if (!norm_on_) {
    Qp_.resize(0, 0);
    Kp_.resize(0, 0);
  }
}

void Engine::ensure_transform_storage(StageKind kind) {
  const Matrix& final_out = projection(kind);
  const auto fit = [&](Matrix& m) {
    if (m.rows() != final_out.rows() || m.cols() != final_out.cols()) m.resize(final_out.rows(), final_out.cols());
  };
  if (rotates(kind)) fit(unrotated(kind));
  if (normalizes(kind)) fit(raw(kind));
}

void Engine::finish_rows(StageKind kind, Index r0, Index rows, Index first, Index width) {
  if (normalizes(kind)) {
    const Matrix& in = raw(kind);
    Matrix& out = unrotated(kind);
    const float* gain = (kind == StageKind::Q ? scenario_->q_norm : scenario_->k_norm).get().data();
    const double eps = qk_norm_.eps;
    if (qk_norm_.scope == QkNormScope::Whole) {  // the mean square spans the row: all of it changes
      first = 0;
      width = out.cols();
      for (Index r = r0; r < r0 + rows; ++r) rms_normalize(in.row(r).data(), out.row(r).data(), gain, width, eps);
    } else {
      const Index dk = dims_.d_k;
      for (Index r = r0; r < r0 + rows; ++r)
        for (Index c0 = first; c0 < first + width; c0 += dk)
          rms_normalize(in.row(r).data() + c0, out.row(r).data() + c0, gain, dk, eps);
    }
  }
  if (rotates(kind)) rotate_rows(kind, r0, rows, first, width);
}

}  // namespace attention_lab
