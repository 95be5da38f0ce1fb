#include "logic/interp_probe.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace attention_lab::gui {

namespace {

nlohmann::json rows_of(const Eigen::MatrixXd& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) row.push_back(std::isfinite(m(r, c)) ? nlohmann::json(m(r, c)) : nlohmann::json());
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::string interp_probe_json(const InterpState& s) {
  nlohmann::json j;
  j["corrupted_text"] = s.corrupted_text;
  j["patch_running"] = s.patch_task.running();
  j["patch_progress"] = s.patch_task.progress();
  j["patch_error"] = s.patch_error;
  j["patch_problem"] = s.patch_problem;
  if (s.patch) {
    const PatchSweep& w = s.patch->sweep;
    j["patch"] = {{"kind", to_string(w.kind)},
                  {"clean", w.clean},
                  {"corrupted", w.corrupted},
                  {"answer", s.patch->metric.answer},
                  {"wrong", s.patch->metric.wrong},
                  {"metric", s.patch->metric.kind == PatchMetric::LogitDiff ? "logit_diff" : "prob"},
                  {"corrupted_ids", s.patch->corrupted},
                  {"complete", s.patch->complete},
                  {"normalised", rows_of(w.normalised())}};
  } else {
    j["patch"] = nullptr;
  }
  j["prompts"] = {{"path", s.prompts_path}, {"count", s.prompts.size()}, {"error", s.prompts_error}, {"shown", s.shown_prompt}};
  j["detector_source"] = s.detector_source == 1 ? "prompts" : "random";
  j["detectors_running"] = s.detector_task.running();
  j["detector_error"] = s.detector_error;
  if (s.detectors) {
    const BatchHeads& h = s.detectors->heads;
    nlohmann::json mean, each = nlohmann::json::array();
    for (const HeadKind k : kHeadKinds) mean[to_string(k)] = rows_of(h.mean.of(k).cast<double>());
    for (const HeadScores& one : h.each) each.push_back(rows_of(one.of(HeadKind::Induction).cast<double>()));
    j["detectors"] = {{"source", s.detectors->source},
                      {"batch", s.detectors->batch},
                      {"complete", h.complete},
                      {"ids", s.detectors->batch ? nlohmann::json() : nlohmann::json(s.detectors->prompts.at(0).ids)},
                      {"mean", mean},
                      {"each_induction", each},
                      {"mean_patterns", h.mean_patterns.size()}};
  } else {
    j["detectors"] = nullptr;
  }
  j["lens_running"] = s.lens_task.running();
  if (s.lens) {
    nlohmann::json layers = nlohmann::json::array();
    for (const LensLayer& l : s.lens->layers) {
      nlohmann::json top = nlohmann::json::array();
      for (const LensPrediction& p : l.top) top.push_back({{"id", p.id}, {"p", p.probability}});
      layers.push_back({{"after", l.after},
                        {"top", top},
                        {"tracked", {{"id", l.tracked.id}, {"p", l.tracked.probability}, {"rank", l.tracked_rank}}}});
    }
    j["lens"] = {{"row", s.lens->row}, {"k", s.lens->k}, {"layers", layers}};
  } else {
    j["lens"] = nullptr;
  }
  j["attribution_running"] = s.attribution_task.running();
  j["attribution_error"] = s.attribution_error;
  if (s.attribution) {
    const LogitAttribution& a = s.attribution->attribution;
    j["attribution"] = {{"row", a.row},          {"token", a.token},   {"minus", a.minus},
                        {"logit", a.logit},      {"constant", a.constant}, {"embeddings", a.embeddings},
                        {"heads", rows_of(a.heads)}, {"mlp", rows_of(a.mlp.transpose())},
                        {"prompts", s.attribution->each.size()}};
  } else {
    j["attribution"] = nullptr;
  }
  j["hovered"] = s.hovered;
  return j.dump();
}

}  // namespace attention_lab::gui
