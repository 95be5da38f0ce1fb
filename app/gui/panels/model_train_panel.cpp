// The Train tab's other half: a tiny Transformer (GPT-2's layout) trained
// from scratch on copy, reverse, sort or induction, on a thread of its own
// (logic/model_training_job), with its loss curves and, on induction, each
// head's induction and previous-token scores; paused, it opens in model mode
// as an ordinary model.

#include "panels/panels.h"

#include "logic/number_format.h"

#include <imgui.h>

#include <optional>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace attention_lab::gui {

namespace {

constexpr TrainTask kTasks[] = {TrainTask::Induction, TrainTask::Copy, TrainTask::Reverse, TrainTask::Sort, TrainTask::Text};

const char* task_help(TrainTask task) {
  switch (task) {
    case TrainTask::Induction:
      return "Random tokens that start repeating themselves part way (the period varies): the repeat can only be "
             "predicted by finding the earlier copy of the current token and reading what came after it.";
    case TrainTask::Copy: return "A few tokens, then the same tokens again: the loss is on the copy.";
    case TrainTask::Reverse: return "A few tokens, then the same tokens backwards.";
    case TrainTask::Sort: return "Six digits from {0, 1, 2}, then the same digits sorted (minGPT's demo).";
    case TrainTask::Text:
      return "A text file, one character a token: each position predicts the next character (minGPT's char "
             "demo). The vocabulary is the file's characters.";
  }
  return "";
}

// Where "Open in model mode" saves: $XDG_CACHE_HOME/attention-lab/trained, else ~/.cache/….
std::filesystem::path trained_folder(const TinyTrainConfig& c, int steps) {
  std::filesystem::path base;
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache == '/') base = cache;
  else if (const char* home = std::getenv("HOME"); home && *home) base = std::filesystem::path(home) / ".cache";
  else base = std::filesystem::temp_directory_path();
  return base / "attention-lab" / "trained" /
         (std::string(to_string(c.task)) + "-L" + std::to_string(c.shape.layers) + "H" + std::to_string(c.shape.heads) +
          "-d" + std::to_string(c.shape.d_model) + "-step" + std::to_string(steps));
}

// An integer setting with a tooltip; true when changed.
bool int_setting(AppState& state, const char* label, const char* item, int& value, int lo, int hi, const char* tip) {
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  const bool changed = ImGui::InputInt(label, &value, 1, 8);
  value = std::clamp(value, lo, hi);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s (%d to %d)", tip, lo, hi);
  state.note_item(item);
  return changed;
}

void draw_model_settings(AppState& state) {
  TinyTrainConfig& c = state.train.model_config;
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("A GPT-2 (learned positions, LayerNorm, GELU MLP) trained from scratch with AdamW:");
  ImGui::PopTextWrapPos();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
  if (ImGui::BeginCombo("task", to_string(c.task))) {
    for (const TrainTask task : kTasks)
      if (ImGui::Selectable(to_string(task), task == c.task)) {
        c.task = task;
        if (task == TrainTask::Sort) c.length = 6, c.shape.vocab = 3;
        if (task == TrainTask::Copy || task == TrainTask::Reverse) c.length = 6, c.shape.vocab = 10;
        if (task == TrainTask::Induction) c.length = 32, c.shape.vocab = 64;
        if (task == TrainTask::Text) c.length = 64;
      }
    ImGui::EndCombo();
  }
  state.note_item("train model task");
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("%s", task_help(c.task));
  ImGui::PopTextWrapPos();
  if (c.task == TrainTask::Text) {
    if (ImGui::Button("Text file…")) {
      state.file_dialog.mode = FileDialogMode::OpenTrainingText;
      state.file_dialog.name[0] = '\0';
      state.file_dialog.just_opened = true;
    }
    state.note_item("train model text file");
    ImGui::SameLine();
    push_wrap_at_visible_edge();
    if (c.corpus)
      ImGui::TextDisabled("%s: %zu characters, %zu different", c.corpus->file.filename().string().c_str(), c.corpus->ids.size(),
                          c.corpus->alphabet.size());
    else
      text_colored(gfx::Accent::Warning, "Choose a UTF-8 text file to learn from.");
    ImGui::PopTextWrapPos();
    if (c.corpus) c.shape.vocab = static_cast<int>(c.corpus->alphabet.size());
  } else {
    c.corpus.reset();
  }
  // The settings flow onto the next line where the panel is narrow (1024×768, a projector's large text).
  const auto next = [](const char* label) {
    same_line_if_fits(ImGui::GetFontSize() * 7 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x);
  };
  int_setting(state, "layers", "train model layers", c.shape.layers, 1, 8, "Transformer blocks");
  next("heads");
  int_setting(state, "heads", "train model heads", c.shape.heads, 1, 16, "attention heads per block (divides d_model)");
  next("d_model");
  int_setting(state, "d_model", "train model d_model", c.shape.d_model, 8, 512, "width of the residual stream");
  int_setting(state, "length", "train model length", c.length, 2, 256,
              c.task == TrainTask::Text ? "characters each position sees (the context)" : "tokens of the question, or of the random part");
  next("vocabulary");
  ImGui::BeginDisabled(c.task == TrainTask::Text);  // the file's characters
  int_setting(state, "vocabulary", "train model vocab", c.shape.vocab, 2, 4096, "token ids 0 … vocabulary − 1");
  ImGui::EndDisabled();
  next("batch");
  int_setting(state, "batch", "train model batch", c.batch, 1, 256, "sequences per step");
  int_setting(state, "steps", "train model steps", c.steps, 1, 100000, "steps of the run");
  same_line_if_fits(ImGui::GetFontSize() * 9 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize("learning rate").x);
  float lr = static_cast<float>(c.optimizer.learning_rate);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
  if (ImGui::SliderFloat("learning rate##model", &lr, 1e-4f, 1e-1f, "%.4g", ImGuiSliderFlags_Logarithmic))
    c.optimizer.learning_rate = static_cast<double>(lr);
  state.note_item("train model learning rate");
  c.shape.d_ff = 4 * c.shape.d_model;
  c.shape.context = task_context(c.task, c.length);
  c.log_every = std::max(1, c.steps / 200);  // about 200 points on each curve
}

// Returns what the run's thread has done, copied once a frame (the curves draw it too).
std::optional<ModelTrainingJob::View> draw_model_controls(AppState& state) {
  TrainState& t = state.train;
  TinyTrainConfig& c = t.model_config;
  std::string problem = tiny_gpt_shape_problem(c.shape);
  if (c.task == TrainTask::Text && !c.corpus) problem = "Choose a text file first.";
  if (c.corpus && c.corpus->ids.size() <= static_cast<std::size_t>(c.length))
    problem = "The text has " + std::to_string(c.corpus->ids.size()) + " characters: fewer than length + 1.";
  ImGui::BeginDisabled(!problem.empty());
  if (ImGui::Button(t.model_job ? "New run" : "Start")) {
    t.model_job = std::make_unique<ModelTrainingJob>(c);
    t.model_job->play();
    t.model_message.clear();
  }
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", problem.empty() ? "A fresh model with these settings (seeded: the same run every time)"
                                            : problem.c_str());
  state.note_item("train model start");
  if (!t.model_job) {
    if (!problem.empty()) text_colored(gfx::Accent::Warning, "%s", problem.c_str());
    return std::nullopt;
  }
  ModelTrainingJob& job = *t.model_job;
  const ModelTrainingJob::View v = job.view();
  ImGui::SameLine();
  const bool done = v.steps >= v.target || !v.error.empty();
  ImGui::BeginDisabled(done);
  if (ImGui::Button(job.running() ? "Pause" : "Play")) job.running() ? job.pause() : job.play();
  ImGui::EndDisabled();
  state.note_item("train model play");
  ImGui::SameLine();
  ImGui::BeginDisabled(job.running());
  if (ImGui::Button("Open in model mode")) {
    const std::filesystem::path folder = trained_folder(job.config(), v.steps);
    if (const std::string e = job.save(folder); !e.empty()) {
      t.model_message = e;
    } else {
      t.model_message = "Saved as a GPT-2 folder: " + folder.string();
      ModelRequest request;
      request.path = folder.string();
      state.open_model(std::move(request));
    }
  }
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Pause first. Saves the model as it is now (config.json, model.safetensors, vocab.json) and "
                      "opens it: every stage of every layer, ablations and patching, as for any checkpoint.");
  state.note_item("train model open");
  const float bar = ImGui::GetFontSize() * 16;  // room for "step 10000 of 10000, 123.4 s"
  same_line_if_fits(bar);
  const float fraction = v.target > 0 ? static_cast<float>(v.steps) / static_cast<float>(v.target) : 0.0f;
  const std::string progress = "step " + std::to_string(v.steps) + " of " + std::to_string(v.target) +
                               (v.logs.empty() ? "" : ", " + format_number(static_cast<float>(v.logs.back().seconds), 3) + " s");
  ImGui::ProgressBar(fraction, ImVec2(bar, 0), progress.c_str());
  state.note_item("train model progress");
  if (!v.error.empty()) {
    push_wrap_at_visible_edge();
    text_colored(gfx::Accent::Warning, "Stopped: %s. The model keeps the last finite step.", v.error.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!t.model_message.empty()) {
    push_wrap_at_visible_edge();
    ImGui::TextDisabled("%s", t.model_message.c_str());
    ImGui::PopTextWrapPos();
  }
  return v;
}

// The first logged step where the repeat's loss fell below half the random part's, or −1.
int in_context_step(const std::vector<TinyTrainLog>& logs) {
  for (const TinyTrainLog& l : logs)
    if (l.step > 0 && l.repeat_loss < 0.5 * l.random_loss) return l.step;
  return -1;
}

void draw_model_curves(AppState& state, const ModelTrainingJob::View& v) {
  if (!state.train.model_job || v.logs.empty()) return;
  const bool induction = state.train.model_job->config().task == TrainTask::Induction;
  std::vector<int> steps;
  std::vector<float> loss, eval, random_part, repeat;
  for (const TinyTrainLog& l : v.logs) {
    steps.push_back(l.step);
    loss.push_back(static_cast<float>(l.loss));
    eval.push_back(static_cast<float>(l.eval_loss));
    random_part.push_back(static_cast<float>(l.random_loss));
    repeat.push_back(static_cast<float>(l.repeat_loss));
  }
  ImGui::Separator();
  const float em = ImGui::GetFontSize(), width = std::min(em * 22, visible_width_left() * 0.45f);
  ImGui::BeginGroup();
  draw_curve("training loss", loss, width, em * 4, steps);
  state.note_item("train model loss curve");
  if (induction) {
    draw_curve("loss on the random part", random_part, width, em * 4, steps);
    draw_curve("loss on the repeat", repeat, width, em * 4, steps);
  } else {
    draw_curve("loss on a fixed batch", eval, width, em * 4, steps);
  }
  ImGui::EndGroup();
  if (!induction) return;
  push_wrap_at_visible_edge();
  const TinyTrainLog& last = v.logs.back();
  const int formed = in_context_step(v.logs);
  if (formed > 0)
    ImGui::Text("Since step %d the repeat costs less than half the random part (now %s against %s nats): the model "
                "predicts from what it has read, which only attention can do.",
                formed, format_number(static_cast<float>(last.repeat_loss), 3).c_str(), format_number(static_cast<float>(last.random_loss), 3).c_str());
  else
    ImGui::TextDisabled("The repeat costs as much as the random part (%s against %s nats) until the model learns to look "
                        "back for the earlier copy.",
                        format_number(static_cast<float>(last.repeat_loss), 3).c_str(), format_number(static_cast<float>(last.random_loss), 3).c_str());
  ImGui::PopTextWrapPos();
  ImGui::Separator();
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("Each head's induction score (its weight on the token after the earlier copy of the current one) "
                      "and previous-token score, on the repeat:");
  ImGui::PopTextWrapPos();
  for (std::size_t l = 0; l < last.induction_score.size(); ++l)
    for (std::size_t h = 0; h < last.induction_score[l].size(); ++h) {
      std::vector<float> induction_curve, previous_curve;
      for (const TinyTrainLog& log : v.logs) {
        induction_curve.push_back(static_cast<float>(log.induction_score[l][h]));
        previous_curve.push_back(static_cast<float>(log.previous_token_score[l][h]));
      }
      // a curve, its label and its value ("L0H3 previous 6.5246e-04"), and the gap to the next
      const float group = em * 7 + ImGui::GetStyle().ItemSpacing.x * 2 + ImGui::CalcTextSize("L00H00 induction 0.00000e-00").x;
      if (h > 0) same_line_if_fits(group);
      ImGui::BeginGroup();
      const std::string name = "L" + std::to_string(l) + "H" + std::to_string(h);
      draw_curve((name + " induction").c_str(), induction_curve, em * 7, em * 2.5f, steps);
      draw_curve((name + " previous").c_str(), previous_curve, em * 7, em * 2.5f, steps);
      ImGui::EndGroup();
    }
}

}  // namespace

bool draw_train_choice(AppState& state) {
  bool& whole = state.train.whole_model;
  if (ImGui::RadioButton("this layer's matrices", !whole)) whole = false;
  state.note_item("train layer");
  ImGui::SameLine();
  if (ImGui::RadioButton("a tiny Transformer from scratch", whole)) whole = true;
  state.note_item("train whole model");
  ImGui::Separator();
  return whole;
}

void draw_model_training(AppState& state) {
  draw_model_settings(state);
  if (const auto view = draw_model_controls(state)) draw_model_curves(state, *view);
}

}  // namespace attention_lab::gui
