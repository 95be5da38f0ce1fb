#include "probe_writer.h"

#include "attention_lab/stage_info.h"
#include "logic/block_derivation.h"
#include "logic/derivation.h"
#include "logic/gradient_derivation.h"
#include "logic/interp_probe.h"
#include "panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

namespace attention_lab::gui {

namespace {

using json = nlohmann::ordered_json;

json cell_json(const std::optional<CellRef>& c) {
  if (!c) return nullptr;
  return {{"stage", to_string(c->stage)}, {"row", c->row}, {"col", c->col}};
}

json rect_json(const Rect& r) { return json::array({r.x0, r.y0, r.x1, r.y1}); }

// The labels as shown (an unnamed one as its index), at most 64 of them.
json label_list(const Scenario& s, LabelKind kind) {
  const int count = kind == LabelKind::Token      ? s.T()
                    : kind == LabelKind::KeyToken ? static_cast<int>(s.X_kv.rows())
                                                  : s.d_model();
  json list = json::array();
  for (int i = 0; i < std::min(count, 64); ++i)
    list.push_back(kind == LabelKind::Token      ? s.token_label(i)
                   : kind == LabelKind::KeyToken ? s.key_label(i)
                                                 : s.feature_label(i));
  return list;
}

// The sinks' logits, or null when they are off.
json sink_list(const Scenario& s) {
  if (!s.use_sinks) return nullptr;
  json list = json::array();
  for (Eigen::Index h = 0; h < s.sinks.cols(); ++h) list.push_back(s.sinks(0, h));
  return list;
}

// What the head view drew last (lines run from left_x at a query's y to right_x at a key's).
json head_view_json(const HeadViewState& hv) {
  const auto tokens = [](const std::vector<HeadViewState::DrawnToken>& drawn) {
    json list = json::array();
    for (const auto& t : drawn) list.push_back({{"index", t.index}, {"label", t.label}, {"y", t.y}});
    return list;
  };
  return {{"left_x", hv.left_x}, {"right_x", hv.right_x}, {"queries", tokens(hv.drawn_queries)}, {"keys", tokens(hv.drawn_keys)}};
}

// The Block view of the model: per stage its shape, version and a checksum
// (the sum of its values), so a test sees what changed; null when not drawn.
json block_json(const ModelState::Block& b, const ModelSession& s) {
  if (!b.trace || b.session != &s) return nullptr;
  json stages = json::object();
  for (const BlockStageInfo& i : b.trace->stages()) {
    const Matrix& v = b.trace->values(i.stage);
    stages[i.key] = {{"rows", v.rows()}, {"cols", v.cols()}, {"version", b.trace->version(i.stage)},
                     {"sum", v.size() ? static_cast<double>(v.sum()) : 0.0}};
  }
  const auto cell = [&](const std::optional<ModelState::BlockCell>& c) -> json {
    if (!c) return nullptr;
    const BlockStageInfo* i = b.trace->info(c->stage);
    return {{"stage", i ? i->key : ""}, {"row", c->row}, {"col", c->col}};
  };
  const auto shown = b.hovered ? b.hovered : b.selected;
  const Derivation d = shown ? derive_block(*b.trace, shown->stage, shown->row, shown->col, s.token_labels(), s.unedited_attention())
                             : Derivation{};
  return {{"layer", b.trace->layer()}, {"rows_recomputed", b.rows_recomputed}, {"problem", b.problem},
          {"stages", stages},          {"hovered", cell(b.hovered)},          {"selected", cell(b.selected)},
          {"inspector", d.title},      {"inspector_numbers", d.numbers},      {"inspector_note", d.note}};
}

// Model mode: null, or the layer, the tokens and this frame's predictions.
json model_json(const AppState& state) {
  const ModelState& m = state.model;
  if (!m.open()) return nullptr;
  const ModelSession& s = *m.session;
  json out = {{"layer", s.layer()},
              {"head", state.focused_head},
              {"layers", s.model().config.layers},
              {"path", s.model().source.string()},
              {"T", s.T()},
              {"text", m.text},
              {"row", m.predicted_row()},
              {"predictions_revision_current", m.predictions.current(m.prediction_key(state.doc->revision()))},
              {"problem", m.predictions.problem},
              {"reused_layers", s.reused_layers()}};
  // the layers kept for this text, and for each whether its stages were released
  json kept = json::array(), kept_without_stages = json::array();
  const std::string run = ModelState::run_key(m.text, m.ablations());
  for (const auto& [key, layer] : m.kept_layers)
    if (key.first == run) {
      kept.push_back(key.second);
      kept_without_stages.push_back(layer.doc->stages_released());
    }
  out["kept_layers"] = kept;
  out["kept_without_stages"] = kept_without_stages;
  json ablations = json::array();
  for (const auto& a : m.ablations()) ablations.push_back(to_spec(a));
  out["ablations"] = ablations;
  json predictions = json::array();
  for (const Prediction& p : m.predictions.top)
    predictions.push_back({{"id", p.id}, {"token", s.tokenizer().token_text(p.id)}, {"p", p.probability}, {"before", p.before}});
  out["predictions"] = predictions;
  json head_scores = json::object();  // layers × heads per kind, as detect-heads --json writes them
  for (const HeadKind kind : kHeadKinds) {
    const Matrix& hs = s.head_scores().of(kind);
    json grid = json::array();
    for (Eigen::Index l = 0; l < hs.rows(); ++l) {
      json row = json::array();
      for (Eigen::Index h = 0; h < hs.cols(); ++h) row.push_back(hs(l, h));
      grid.push_back(row);
    }
    head_scores[to_string(kind)] = grid;
  }
  out["head_scores"] = head_scores;
  out["block"] = block_json(m.block, s);
  return out;
}

json heatmaps_json(const AppState& state) {
  json list = json::array();
  for (const auto& d : state.drawn)
    list.push_back({{"stage", to_string(d.stage)}, {"x0", d.rect.x0}, {"y0", d.rect.y0}, {"x1", d.rect.x1}, {"y1", d.rect.y1},
                    {"rows", d.rows}, {"cols", d.cols}, {"transposed", d.transposed}, {"cell_px", d.cell_px},
                    {"values_printed", d.values_printed}, {"values_cut", d.values_cut}, {"labels_cut", d.labels_cut}});
  return list;
}

json quiz_json(const QuizState& q, json& out) {
  const bool round = static_cast<bool>(q.round);
  out["quiz"] = round ? json(to_string(q.round->question.cell)) : json(nullptr);
  out["quiz_truth"] = round ? q.round->question.truth : 0.0;
  out["quiz_question"] = round ? q.round->question.text : std::string();
  out["quiz_answer"] = q.answer;
  out["quiz_focused"] = q.answer_focused;
  out["quiz_hint"] = q.asking() && q.hint;
  out["quiz_solved"] = round && q.round->solved;
  out["quiz_revealed"] = round && q.round->revealed;
  out["quiz_message"] = q.message;
  out["quiz_answer_box"] = rect_json(q.answer_box);
  out["quiz_hint_button"] = rect_json(q.hint_button);
  out["quiz_show_button"] = rect_json(q.show_button);
  out["quiz_right"] = q.tally.right;
  out["quiz_asked"] = q.tally.asked;
  return out;
}

void lesson_json(const AppState& state, json& out) {
  const LessonState& l = state.lesson;
  const bool on = static_cast<bool>(l.lesson);
  const bool slide = showing_slide(state);
  out["lesson_step"] = on ? l.step + 1 : 0;
  out["lesson_text_clipped"] = on && l.text_clipped;
  out["lesson_text_folded"] = on && l.folded_this_frame;
  out["lesson_text_folded_by"] = !on || !l.folded_this_frame ? "" : l.text_folded ? "you" : "slide";
  out["what_if"] = l.set_aside.summary;
  out["what_if_carried"] = l.carried;
  out["lesson_steps"] = on ? l.lesson->steps.size() : 0u;
  out["slide"] = slide;
  out["slide_cell"] = state.slide_cell;
  out["slide_page"] = slide ? state.slide.page + 1 : 1;
  out["slide_pages"] = slide ? state.slide.pages : 1;
  out["slide_room"] = state.slide.room;
  json show = json::array();
  if (on && l.step >= 0 && l.step < static_cast<int>(l.lesson->steps.size()))
    for (const StageId& id : l.lesson->steps[static_cast<std::size_t>(l.step)].show) show.push_back(to_string(id));
  out["lesson_show"] = show;
}

}  // namespace

nlohmann::ordered_json probe_json(const AppState& state) {
  const Scenario& s = state.doc->scenario();
  const std::optional<CellRef> inspected = state.hovered ? state.hovered : state.selected;
  const Gradients* grads = state.gradients.current(*state.doc);
  const Derivation derivation =
      !inspected                                   ? Derivation{}
      : inspected->stage.role == Role::Value       ? derive(*state.doc, inspected->stage, inspected->row, inspected->col)
      : grads                                      ? derive_gradient(*state.doc, *grads, inspected->stage, inspected->row, inspected->col).text
                                                   : Derivation{};
  json out = json::object();
  out["hovered"] = cell_json(state.hovered);
  out["selected"] = cell_json(state.selected);
  out["lit"] = state.lit.size();
  out["step"] = state.step;
  out["playing"] = state.playing;
  out["modified"] = state.doc->modified();
  out["undo"] = state.doc->can_undo();
  out["inspector"] = derivation.title;
  out["inspector_formula"] = derivation.formula;
  out["inspector_numbers"] = derivation.numbers;
  out["gradients"] = {{"view", to_string(state.gradient_view)},
                      {"loss", grads ? json(grads->loss) : json(nullptr)},
                      // whose loss: the scenario's own, or (model mode) the model's next-token loss
                      {"of", grads ? (grads->outside.empty() ? "scenario" : "model") : ""},
                      {"problem", state.gradients.problem()}};
  out["frame"] = ImGui::GetFrameCount();
  out["busy"] = state.busy();
  out["cancel_button"] = rect_json(state.cancel_button);
  // the scenario's settings the tests change
  out["T"] = s.T();
  out["mask"] = std::string(to_string(s.mask_kind)) + (s.mask_kind == MaskKind::Window ? " " + std::to_string(s.window) : "");
  out["alibi"] = s.alibi;
  out["kv_heads"] = s.dims().kv_heads;
  out["rope"] = s.rope.on;
  out["softcap"] = s.softcap;
  out["qk_norm"] = to_string(s.qk_norm.scope);
  out["sinks"] = sink_list(s);
  out["head_view"] = head_view_json(state.head_view);
  quiz_json(state.quiz, out);
  out["inspector_area"] = rect_json(state.inspector_rect);
  out["blank"] = state.blank;
  out["softmax_row"] = state.softmax.row;
  out["centre_view"] = static_cast<int>(state.centre);
  out["centre_overflow_x"] = state.centre_overflow_x;
  out["centre_overflow_y"] = state.centre_overflow_y;
  out["presenter"] = state.presenter;
  out["texture_uploads"] = state.texture_uploads;
  out["edits_applied"] = state.edits_applied;
  out["typing"] = state.typing.open ? cell_json(state.typing.cell) : json(nullptr);
  // Compare
  out["snapshot"] = static_cast<bool>(state.compare.snapshot);
  out["snapshot_of"] = state.compare.of_text;
  out["snapshot_T"] = state.compare.snapshot ? state.compare.snapshot->scenario->T() : 0;
  out["difference_heatmaps"] = state.difference_heatmaps.now.size();
  // questions, files and popups
  out["confirm_quit"] = state.unsaved_question && state.unsaved_question->verb == "quit";
  out["unsaved_question"] = state.unsaved_question ? json(state.unsaved_question->verb) : json(nullptr);
  out["status"] = state.status;
  out["last_export"] = {{"path", state.last_export.path}, {"width", state.last_export.width}, {"height", state.last_export.height}};
  out["file_dialog"] = state.file_dialog.mode != FileDialogMode::Closed;
  out["popup"] = ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId);
  out["file_dialog_error"] = state.file_dialog.error;
  out["text_input"] = ImGui::GetIO().WantTextInput;
  // words
  out["tokens"] = label_list(s, LabelKind::Token);
  out["features"] = label_list(s, LabelKind::Feature);
  out["key_tokens"] = label_list(s, LabelKind::KeyToken);
  out["T_k"] = s.X_kv.rows();
  const RenameState& rename = state.rename;
  out["renaming"] = !rename.open ? json(nullptr)
                                 : json{{"kind", rename.kind == LabelKind::Feature    ? "feature"
                                                 : rename.kind == LabelKind::KeyToken ? "key token"
                                                                                      : "token"},
                                        {"index", rename.index},
                                        {"editing", rename.editing},
                                        {"text", std::string(rename.buffer)}};
  out["recovery"] = {{"file", state.recovery.file()}, {"autosaves", state.recovery.autosaves},
                     {"offered", state.recovery.offered.size()}, {"error", state.recovery.error}};
  out["frame_times"] = json::parse(state.frame_times.to_json());
  out["model"] = model_json(state);
  out["interp"] = json::parse(interp_probe_json(state.interp));
  out["import_report"] = state.import_report;
  json items = json::object();
  for (const auto& [name, r] : state.probe_items) items[name] = rect_json(r);
  out["items"] = items;
  out["centre"] = rect_json(state.centre_rect);
  lesson_json(state, out);
  const TrainingRun& run = state.train.run;
  out["train"] = {{"has_loss", static_cast<bool>(s.loss)},
                  {"steps", run.steps()},
                  {"playing", run.playing},
                  {"first_loss", run.history().loss.empty() ? 0.0f : run.history().loss.front()},
                  {"last_loss", run.history().loss.empty() ? 0.0f : run.history().loss.back()},
                  {"message", run.message},
                  {"W_q_sum", static_cast<double>(s.W_q.get().sum())}};
  json model_run = {{"whole_model", state.train.whole_model},
                    {"task", to_string(state.train.model_config.task)},
                    {"started", static_cast<bool>(state.train.model_job)},
                    {"vocab", state.train.model_config.shape.vocab}};
  if (const auto& corpus = state.train.model_config.corpus) {
    model_run["text_file"] = corpus->file.string();
    model_run["text_chars"] = corpus->ids.size();
  }
  if (state.train.model_job) {
    const ModelTrainingJob::View v = state.train.model_job->view();
    model_run["running"] = state.train.model_job->running();
    model_run["steps"] = v.steps;
    model_run["target"] = v.target;
    model_run["error"] = v.error;
    model_run["message"] = state.train.model_message;
    if (!v.logs.empty()) {
      model_run["first_loss"] = v.logs.front().eval_loss;
      model_run["loss"] = v.logs.back().eval_loss;
      model_run["random_loss"] = v.logs.back().random_loss;
      model_run["repeat_loss"] = v.logs.back().repeat_loss;
    }
  }
  out["train_model"] = model_run;
  const SqrtDkTrainingResult& sq = state.sqrt_dk.train_result;
  out["sqrt_dk_training"] = {{"shown", state.sqrt_dk.training},
                             {"d_k", sq.options.d_k},
                             {"scaled_loss", sq.scaled.loss.empty() ? 0.0 : sq.scaled.loss.back()},
                             {"unscaled_loss", sq.unscaled.loss.empty() ? 0.0 : sq.unscaled.loss.back()},
                             {"summary", sq.summary}};
  out["heatmaps"] = heatmaps_json(state);
  return out;
}

void write_probe_file(const AppState& state, const std::string& path) {
  // Written beside and renamed over, so a test reading between frames never
  // sees a half-written file. No fsync: this is rewritten every frame.
  const std::string partial = path + ".partial";
  std::ofstream file(partial);
  // (a label that is not UTF-8 is written with U+FFFD, never a failed frame)
  file << probe_json(state).dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
  file.close();
  std::error_code ignored;
  if (file) std::filesystem::rename(partial, path, ignored);  // a short write keeps the last good one
}

}  // namespace attention_lab::gui
