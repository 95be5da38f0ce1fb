// The Train tab: what the head should learn (the scenario's loss), the
// optimizer, play / one step / reset, and the curves of the run. The
// matrices it trains change in the pipeline as they learn (seed 004: W_q,
// W_k and W_v). The run itself is logic/training_run (no GL).

#include "panels/panels.h"

#include "attention_lab/stage_registry.h"
#include "gfx/fonts.h"
#include "logic/number_format.h"
#include "widgets/heatmap_widget.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

namespace attention_lab::gui {

namespace {

// The scenario with `loss` (or none): one undoable edit, saved with the file.
void set_loss(AppState& state, std::optional<Loss> loss, const char* label) {
  auto next = std::make_shared<Scenario>(state.doc->scenario());
  next->loss = std::move(loss);
  state.apply(ReplaceScenario{next, label});
  state.train.run.restart();
  state.train.gesture = 0;
}

void draw_loss_section(AppState& state) {
  const Scenario& s = state.doc->scenario();
  TrainState& t = state.train;
  ImGui::TextDisabled("What should it learn?");
  if (s.loss && s.loss->kind == LossKind::Attend) {
    push_wrap_at_visible_edge();
    // (a long text names its first rows and counts the rest: the Train tab's controls stay in view)
    constexpr int kRowsNamed = 12;
    const int n = std::min(s.T(), static_cast<int>(s.loss->targets.size()));
    std::string rows;
    for (int i = 0; i < n && i < kRowsNamed; ++i)
      rows += (i ? ", '" : "'") + s.token_label(i) + "' → '" + s.key_label(s.loss->targets[static_cast<std::size_t>(i)]) + "'";
    if (n > kRowsNamed) rows += ", … and " + std::to_string(n - kRowsNamed) + " more rows (the scenario file lists every one)";
    ImGui::TextUnformatted(("Head " + s.shown_index(s.loss->head) + " should attend: " + rows).c_str());
    ImGui::TextDisabled("Loss: the mean over rows of −log of that weight (cross-entropy of each weights row).");
    ImGui::PopTextWrapPos();
  } else if (s.loss && s.loss->kind == LossKind::NextToken) {
    push_wrap_at_visible_edge();
    ImGui::Text("Each row should predict its next token: logits = output · W_U (%d tokens), cross-entropy against the "
                "targets the scenario file gives.", static_cast<int>(s.loss->W_U.cols()));
    ImGui::PopTextWrapPos();
  } else if (s.loss) {
    ImGui::TextUnformatted("The output should equal the target the scenario file gives (mean squared error).");
  } else {
    ImGui::TextWrapped("The scenario has no loss yet. Teach a head where to look:");
  }
  if (s.heads > 1) {
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    ImGui::SliderInt("head##loss", &t.loss_head, 0, s.heads - 1);
  }
  t.loss_head = std::clamp(t.loss_head, 0, s.heads - 1);
  const struct {
    const char* label;
    const char* pattern;
    const char* tip;
  } kPatterns[] = {{"the previous word", "previous", "row i attends to key i − 1 (a previous-token head)"},
                   {"the first word", "first", "every row attends to key 0 (an attention sink)"},
                   {"itself", "itself", "row i attends to key i"}};
  for (const auto& p : kPatterns) {
    same_line_if_fits(ImGui::CalcTextSize(p.label).x + 2 * ImGui::GetStyle().FramePadding.x);
    if (ImGui::Button(p.label)) {
      const std::vector<int> targets = attend_targets(s, p.pattern);
      if (targets.empty()) {
        state.set_status("A row of the mask allows no key: it cannot be taught where to look.");
      } else {
        Loss loss;
        loss.kind = LossKind::Attend;
        loss.head = t.loss_head;
        loss.targets = targets;
        set_loss(state, loss, "set the loss");
      }
    }
    state.note_item(std::string("train ") + p.pattern);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s, within what the mask allows", p.tip);
  }
  if (s.loss) {
    same_line_if_fits(ImGui::CalcTextSize("No loss").x + 2 * ImGui::GetStyle().FramePadding.x);
    if (ImGui::Button("No loss")) set_loss(state, std::nullopt, "remove the loss");
  }
}

void draw_settings_section(AppState& state) {
  TrainState& t = state.train;
  TrainSettings& o = t.run.settings;
  const Scenario& s = state.doc->scenario();
  ImGui::Separator();
  ImGui::TextDisabled("How it learns");
  static const char* const kOptimizers[] = {"SGD", "SGD with momentum", "Adam", "AdamW"};
  int kind = static_cast<int>(o.optimizer);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (ImGui::Combo("optimizer", &kind, kOptimizers, 4)) o.optimizer = static_cast<OptimizerKind>(kind);
  float lr = static_cast<float>(o.learning_rate);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (ImGui::SliderFloat("learning rate", &lr, 1e-4f, 1.0f, "%.4g", ImGuiSliderFlags_Logarithmic)) o.learning_rate = lr;
  state.note_item("train learning rate");
  float wd = static_cast<float>(o.weight_decay);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (ImGui::SliderFloat("weight decay", &wd, 0.0f, 0.1f, "%.3g")) o.weight_decay = wd;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  ImGui::SliderInt("steps per frame", &t.run.steps_per_frame, 1, 50);
  // which matrices learn: seed 004 trains W_q, W_k and W_v only
  ImGui::TextUnformatted("Train:");
  for (const StageSpec& sp : all_stages()) {
    if (!sp.input || !sp.member || sp.kind == StageKind::X || sp.kind == StageKind::X_kv || !setting_on(s, sp.requires_setting))
      continue;
    bool on = std::find(o.trained.begin(), o.trained.end(), sp.kind) != o.trained.end();
    same_line_if_fits(ImGui::CalcTextSize(sp.id_name).x + ImGui::GetFrameHeight() + 12);
    if (ImGui::Checkbox(sp.id_name, &on)) {
      if (on) o.trained.push_back(sp.kind);
      else o.trained.erase(std::remove(o.trained.begin(), o.trained.end(), sp.kind), o.trained.end());
    }
  }
  // a matrix a setting turned off is not trained
  o.trained.erase(std::remove_if(o.trained.begin(), o.trained.end(),
                                 [&](StageKind k) { return !setting_on(s, spec(k).requires_setting); }),
                  o.trained.end());
}

// Play / One step / Reset, and the steps of a playing run.
void draw_controls(AppState& state) {
  TrainState& t = state.train;
  TrainingRun& run = t.run;
  ImGui::Separator();
  const auto begin = [&] {
    if (t.gesture == 0) {
      t.gesture = state.doc->begin_gesture();
      t.before_run = std::make_shared<Scenario>(state.doc->scenario());
      // Compare shows the run's before and after: every stage's change since it began.
      state.take_snapshot();
      if (state.compare.snapshot) state.set_status("Compare: every stage shows its change since the run began");
    }
  };
  const auto apply = [&state](const Edit& e, std::uint64_t gesture) { return state.apply(e, gesture); };
  if (ImGui::Button(run.playing ? "Pause" : "Play")) {
    run.playing = !run.playing;
    if (run.playing) begin();
  }
  state.note_item("train play");
  ImGui::SameLine();
  ImGui::BeginDisabled(run.computing());
  if (ImGui::Button("One step")) {
    begin();
    run.playing = false;
    run.advance(*state.doc, 1, apply, t.gesture);
  }
  ImGui::EndDisabled();
  state.note_item("train step");
  ImGui::SameLine();
  ImGui::BeginDisabled(!t.before_run);
  if (ImGui::Button("Reset")) {
    // back to the matrices before the run, as one edit (Ctrl+Z undoes the reset)
    run.playing = false;
    // (only the matrices the run trained: an edit of another one meanwhile stays)
    const std::uint64_t g = state.doc->begin_gesture();
    for (const auto& [kind, norms] : run.history().grad_norm) {
      const SharedMatrix& was = t.before_run.get()->*spec(kind).member;
      const Matrix& now = (state.doc->scenario().*spec(kind).member).get();
      if (was.rows() == now.rows() && was.cols() == now.cols() && was.get() != now)
        state.apply(SetMatrix{StageId::input(kind), was, "reset training"}, g);
    }
    run.restart();
    t.gesture = 0;
    t.before_run.reset();
  }
  ImGui::EndDisabled();
  state.note_item("train reset");
  ImGui::SameLine();
  ImGui::TextDisabled("step %d", run.steps());
  // Steps are computed on a thread of their own; a finished batch is applied
  // here (after a Pause too), and a playing run starts the next.
  if (!state.busy()) {
    run.poll(*state.doc, apply, t.gesture);
    if (run.playing) run.play_steps(*state.doc, run.steps_per_frame);
  }
  if (!run.message.empty()) {
    push_wrap_at_visible_edge();
    text_colored(gfx::Accent::Warning, "%s", run.message.c_str());
    ImGui::PopTextWrapPos();
  }
}

// What learns, as it learns: the judged head's weights (or the output) and
// every trained matrix, hoverable and editable as in the pipeline.
void draw_learning_matrices(AppState& state) {
  const Scenario& s = state.doc->scenario();
  std::vector<StageId> shown;
  if (s.loss) shown.push_back(s.loss->kind == LossKind::Attend ? StageId::of_head(StageKind::Weights, s.loss->head)
                                                               : StageId::input(StageKind::Output));
  for (const StageKind k : state.train.run.settings.trained) shown.push_back(StageId::input(k));
  if (shown.empty()) return;
  ImGui::Separator();
  ImGui::TextDisabled("What learns (hover a cell: the inspector shows where its number comes from)");
  HeatmapOptions opt;
  opt.cell_px = 26.0f * gfx::em();
  opt.max_px = 300.0f * gfx::em();
  opt.whole_labels = true;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (i > 0) same_line_if_fits(row_label_width(state.stage_info(shown[i]), s, false, true) +
                                 static_cast<float>(state.stage_info(shown[i]).cols) * opt.cell_px + 24.0f);
    ImGui::BeginGroup();
    const HeatmapEvents ev = apply_heatmap_edits(state, draw_heatmap(state, shown[i], opt));
    if (ev.hovered) state.hovered = ev.hovered;
    ImGui::EndGroup();
  }
}

void draw_loss_curve(AppState& state) {
  const TrainingHistory& h = state.train.run.history();
  if (h.loss.empty()) {
    ImGui::TextDisabled("Press Play or One step: the matrices below change as they learn (in the Pipeline too).");
    return;
  }
  const float em = ImGui::GetFontSize();
  draw_curve("loss", h.loss, std::min(em * 24, visible_width_left() * 0.6f), em * 5);
  state.note_item("train loss curve");
}

// Per trained matrix: the gradient's norm and the update-to-data ratio.
void draw_norm_curves(AppState& state) {
  const TrainingHistory& h = state.train.run.history();
  if (h.loss.empty()) return;
  ImGui::Separator();
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("Gradient norms ‖∂L/∂W‖ and update-to-data ratios ‖ΔW‖/‖W‖ (about 1e-3 is healthy):");
  ImGui::PopTextWrapPos();
  const float em = ImGui::GetFontSize();
  for (const auto& [kind, v] : h.grad_norm) {
    ImGui::BeginGroup();
    draw_curve((std::string("‖∂L/∂") + kind_name(kind) + "‖").c_str(), v, em * 10, em * 2.5f);
    if (!v.empty() && v.back() == 0.0f) ImGui::TextDisabled("(this loss does not reach %s)", kind_name(kind));
    ImGui::EndGroup();
    const auto it = h.update_ratio.find(kind);
    if (it != h.update_ratio.end()) {
      same_line_if_fits(em * 20);
      draw_curve((std::string("ratio ") + kind_name(kind)).c_str(), it->second, em * 10, em * 2.5f);
    }
  }
}

}  // namespace

// One curve with its last value; hovering shows the step and the value.
void draw_curve(const char* label, const std::vector<float>& v, float width, float height, const std::vector<int>& steps) {
  if (v.empty()) return;
  const std::string last = format_number(v.back(), 4);
  ImGui::PlotLines(("##" + std::string(label)).c_str(), v.data(), static_cast<int>(v.size()), 0, nullptr, FLT_MAX, FLT_MAX,
                   ImVec2(width, height));
  if (ImGui::IsItemHovered()) {
    const float x = (ImGui::GetIO().MousePos.x - ImGui::GetItemRectMin().x) / std::max(1.0f, ImGui::GetItemRectSize().x);
    const int i = std::clamp(static_cast<int>(x * static_cast<float>(v.size())), 0, static_cast<int>(v.size()) - 1);
    const int step = steps.size() == v.size() ? steps[static_cast<std::size_t>(i)] : i + 1;
    ImGui::SetTooltip("%s at step %d: %s", label, step, format_number(v[static_cast<std::size_t>(i)], 4).c_str());
  }
  ImGui::SameLine();
  ImGui::Text("%s %s", label, last.c_str());
}

void draw_train_panel(AppState& state) {
  if (draw_train_choice(state)) return draw_model_training(state);
  draw_loss_section(state);
  draw_settings_section(state);
  draw_controls(state);
  draw_loss_curve(state);
  draw_learning_matrices(state);
  draw_norm_curves(state);
}

}  // namespace attention_lab::gui
