#include "checks/npy_check.h"

#include "attention_lab/cell_ref.h"
#include "attention_lab/engine.h"
#include "attention_lab/presets.h"
#include "attention_lab/stage_info.h"
#include "attention_lab/weight_import.h"

#include <cmath>

namespace attention_lab::fuzz {

namespace {

constexpr const char* kName = "fuzz.npy";

std::string refusal_problem(const std::string& error) {
  if (error.empty()) return "refused without a message";
  if (error.size() > 1000) return "an error message of " + std::to_string(error.size()) + " bytes";
  for (const char ch : error)
    if (static_cast<unsigned char>(ch) < 0x20) return "a control character in the error message: " + error.substr(0, 200);
  if (error.rfind(std::string(kName) + ": ", 0) != 0) return "an error message that does not name the file: " + error.substr(0, 200);
  return {};
}

const Matrix& target_matrix(const Scenario& s, StageKind target) { return target == StageKind::W_q ? s.W_q : s.W_o; }

std::string check_one(const Scenario& base, std::string_view bytes, StageKind target, bool transpose) {
  const std::string what = std::string(kind_name(target)) + (transpose ? " (transposed)" : "");
  const ImportResult r = import_npy_bytes(base, bytes, kName, target, transpose);
  if (!r.scenario) {
    if (auto p = refusal_problem(r.error); !p.empty()) return what + ": " + p;
    return {};
  }
  if (!r.error.empty()) return what + ": imported with an error message";
  const Scenario& s = *r.scenario;
  if (auto e = validate(s); !e.empty()) return what + ": imported, but validate() refuses it: " + e;
  if (r.imported.size() != 1) return what + ": " + std::to_string(r.imported.size()) + " imported lines, expected 1";
  for (const auto* list : {&r.imported, &r.notes})
    for (const auto& line : *list)
      if (auto p = refusal_problem(kName + std::string(": ") + line); !p.empty()) return what + ": a note or imported line: " + p;
  if (target == StageKind::W_o && !s.use_w_o) return what + ": W_o imported but not turned on";
  const Matrix& m = target_matrix(s, target);
  const float largest = m.size() > 0 ? m.cwiseAbs().maxCoeff() : 0.0f;

  Engine engine;
  engine.recompute_all(s);
  for (const StageId id : pipeline(s)) {
    const MatrixView v = engine.stage(id);
    const StageShape shape = stage_shape(s, id);
    if (v.rows() != shape.rows || v.cols() != shape.cols) return what + ": " + to_string(id) + ": not the shape stage_shape says";
  }
  if (largest <= 1e15f) {
    const MatrixView out = engine.stage(StageId::input(StageKind::Output));
    for (Eigen::Index i = 0; i < out.rows(); ++i)
      for (Eigen::Index j = 0; j < out.cols(); ++j)
        if (!std::isfinite(out(i, j)))
          return what + ": output[" + std::to_string(i) + "][" + std::to_string(j) + "] is " + std::to_string(out(i, j)) +
                 " from imported values of at most " + std::to_string(largest);
  }
  return {};
}

}  // namespace

std::string check_npy_import(std::string_view bytes) {
  static const Scenario base = *make_preset("fat-cat");
  if (auto p = check_one(base, bytes, StageKind::W_q, false); !p.empty()) return p;
  return check_one(base, bytes, StageKind::W_o, true);
}

}  // namespace attention_lab::fuzz
