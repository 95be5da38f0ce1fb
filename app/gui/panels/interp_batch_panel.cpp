// The Interpret tab's prompts file and head detectors: a file of prompts
// (one a line) read with the model's tokenizer, a choice of what the grids
// show (the mean over the prompts or one prompt's own values, a click from
// making it the model's text), and the head detectors run on repeated random
// tokens or over the prompts, with the focused head's (mean) pattern.

#include "panels/panels.h"

#include "attention_lab/transformer_forward.h"
#include "widgets/head_score_grids.h"
#include "widgets/score_grid.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace attention_lab::gui {

namespace {

// A prompt's line as a list entry: its number and its text, whole.
std::string prompt_entry(const Prompt& p) { return "line " + std::to_string(p.line) + ": " + p.text; }

void start_detectors(AppState& state) {
  InterpState& in = state.interp;
  const std::shared_ptr<const ModelSession> session = state.model.session;
  DetectorOutcome out;
  out.session = session;
  if (in.detector_source == 1) {
    out.batch = true;
    out.prompts = in.prompts;
    out.prompts_revision = in.prompts_revision;
    out.source = "the mean over " + std::to_string(in.prompts.size()) + " prompts of " + in.prompts_path;
  } else {
    out.prompts.assign(1, Prompt{});
    out.prompts[0].ids =
        repeated_random_tokens(session->model().config.vocab, in.random_length, static_cast<std::uint64_t>(in.random_seed));
    out.source = std::to_string(in.random_length) + " random tokens (seed " + std::to_string(in.random_seed) +
                 "), then the same " + std::to_string(in.random_length) + " again";
  }
  in.detector_error.clear();
  in.detector_task.start([out = std::move(out)](const auto& progress) mutable {
    out.heads = detect_heads_over(out.session->model(), out.prompts,
                                  [&progress](int done, int total) { return progress(static_cast<double>(done) / total); });
    return std::move(out);
  });
}

// The most tokens a random sequence may have: the model's positions allow it.
int most_random_length(const ModelConfig& c) {
  return std::clamp(c.learned_positions() ? c.max_positions / 2 : 64, 2, 64);
}

}  // namespace

std::string load_prompts(AppState& state, const std::string& path) {
  InterpState& in = state.interp;
  if (!state.model.open()) return "Open a model first: its tokenizer reads the prompts.";
  std::ifstream file(path, std::ios::binary);
  if (!file) return "Cannot read '" + path + "'.";
  std::ostringstream content;
  content << file.rdbuf();
  const ModelSession& s = *state.model.session;
  std::vector<Prompt> prompts;
  if (std::string e = read_prompts(content.str(), path, s.tokenizer(), s.model().config, PromptLayout::Single, prompts);
      !e.empty())
    return e;
  in.prompts = std::move(prompts);
  in.prompts_path = path;
  in.prompts_field = path;
  in.prompts_tokenizer = s.tokenizer_ptr();
  in.prompts_error.clear();
  ++in.prompts_revision;
  in.shown_prompt = -1;
  in.detector_source = 1;  // what a file is loaded for
  state.set_status("Read " + std::to_string(in.prompts.size()) + " prompts from " + path);
  return {};
}

void draw_prompts_file(AppState& state) {
  InterpState& in = state.interp;
  const ModelSession& s = *state.model.session;
  // Read with another model's tokenizer: read again with this one (or say why not).
  if (!in.prompts.empty() && in.prompts_tokenizer != s.tokenizer_ptr()) {
    const std::string path = in.prompts_path;
    in.prompts.clear();
    in.prompts_error = load_prompts(state, path);
  }
  ImGui::Text("Prompts");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(160.0f * gfx::em(), visible_width_left() - 150.0f * gfx::em()));
  const bool enter = ImGui::InputTextWithHint("##prompts path", "a text file: one prompt a line", &in.prompts_field,
                                              ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
  state.note_item("interp prompts path");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("A text file with one prompt a line (no empty lines). The head detectors and the attribution\n"
                      "can run over all of them: their mean, and each prompt's own values.");
  ImGui::SameLine();
  if ((ImGui::Button("Load##prompts") || enter) && !in.prompts_field.empty()) in.prompts_error = load_prompts(state, in.prompts_field);
  state.note_item("interp prompts load");
  ImGui::SameLine();
  if (ImGui::Button("Browse…##prompts")) {
    state.file_dialog.mode = FileDialogMode::OpenPrompts;
    state.file_dialog.name[0] = '\0';
    state.file_dialog.just_opened = true;
  }
  state.note_item("interp prompts browse");
  push_wrap_at_visible_edge();
  if (!in.prompts_error.empty()) text_colored(gfx::Accent::Error, "%s", in.prompts_error.c_str());
  ImGui::PopTextWrapPos();
  if (in.prompts.empty()) return;
  std::size_t shortest = in.prompts[0].ids.size(), longest = shortest;
  for (const Prompt& p : in.prompts) shortest = std::min(shortest, p.ids.size()), longest = std::max(longest, p.ids.size());
  ImGui::TextDisabled("%zu prompts of %zu%s tokens from %s", in.prompts.size(), shortest,
                      longest > shortest ? (" to " + std::to_string(longest)).c_str() : "", in.prompts_path.c_str());
  // What the grids below show: the mean, or one prompt's own values.
  in.shown_prompt = std::clamp(in.shown_prompt, -1, static_cast<int>(in.prompts.size()) - 1);
  const std::string mean = "the mean over the " + std::to_string(in.prompts.size()) + " prompts";
  const std::string shown = in.shown_prompt < 0 ? mean : prompt_entry(in.prompts[static_cast<std::size_t>(in.shown_prompt)]);
  // As wide as leaves room for its label and the button after it.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float after = ImGui::CalcTextSize("show").x + ImGui::CalcTextSize("Use as the model's text").x +
                      2.0f * style.FramePadding.x + 2.0f * style.ItemSpacing.x + style.ItemInnerSpacing.x + 8.0f * gfx::em();
  ImGui::SetNextItemWidth(std::max(200.0f * gfx::em(), visible_width_left() - after));
  if (ImGui::BeginCombo("show##prompt", shown.c_str())) {
    if (ImGui::Selectable(mean.c_str(), in.shown_prompt < 0)) in.shown_prompt = -1;
    state.note_item("interp prompt mean");
    for (std::size_t i = 0; i < in.prompts.size(); ++i) {
      if (ImGui::Selectable(prompt_entry(in.prompts[i]).c_str(), static_cast<int>(i) == in.shown_prompt))
        in.shown_prompt = static_cast<int>(i);
      state.note_item("interp prompt " + std::to_string(i));
    }
    ImGui::EndCombo();
  }
  state.note_item("interp prompt shown");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The detector and attribution grids over the prompts show their mean, or one prompt's own values.");
  if (in.shown_prompt >= 0) {
    ImGui::SameLine();
    ImGui::BeginDisabled(state.busy());
    if (ImGui::Button("Use as the model's text")) {
      const Prompt& p = in.prompts[static_cast<std::size_t>(in.shown_prompt)];
      state.model.text_field = p.text;
      run_model_text(state, p.text);
    }
    ImGui::EndDisabled();
    state.note_item("interp prompt use");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Run the model on this prompt: every tab then shows it.");
  }
}

void draw_batch_detectors(AppState& state) {
  InterpState& in = state.interp;
  const std::shared_ptr<ModelSession>& session = state.model.session;
  const ModelSession& s = *session;
  const ModelConfig& c = s.model().config;
  std::string error;
  if (auto r = in.detector_task.take(error)) in.detectors = std::move(*r), in.detector_error.clear();
  else if (!error.empty()) in.detector_error = error;

  ImGui::Text("Head detectors");
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("The share of each head's attention where a kind of head looks (TransformerLens's detect_head), on "
                      "text made for it: an induction head shows on a random sequence repeated. (The Model tab scores "
                      "the model's own text.)");
  ImGui::PopTextWrapPos();
  const char* sources[] = {"repeated random tokens", "the prompts file"};
  if (in.prompts.empty()) in.detector_source = 0;
  ImGui::AlignTextToFramePadding();
  ImGui::Text("Run on");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(200.0f * gfx::em());
  ImGui::BeginDisabled(in.prompts.empty());
  ImGui::Combo("##detector source", &in.detector_source, sources, 2);
  ImGui::EndDisabled();
  state.note_item("interp detector source");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(in.prompts.empty() ? "Load a prompts file above to run them over it." : "What the detectors run on.");
  if (in.detector_source == 0) {
    const int most = most_random_length(c);
    in.random_length = std::clamp(in.random_length, 2, most);
    same_line_if_fits(260.0f * gfx::em());
    ImGui::SetNextItemWidth(150.0f * gfx::em());
    ImGui::SliderInt("##random length", &in.random_length, 2, most, "%d tokens, twice", ImGuiSliderFlags_AlwaysClamp);
    state.note_item("interp random length");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("How many random tokens; the sequence is them, then the same again.");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(90.0f * gfx::em());
    ImGui::InputInt("seed##random", &in.random_seed);
    in.random_seed = std::clamp(in.random_seed, 0, 1 << 30);
    state.note_item("interp random seed");
  }
  same_line_if_fits(ImGui::CalcTextSize("Run detectors").x + 2.0f * ImGui::GetStyle().FramePadding.x);
  if (in.detector_task.running()) {
    ImGui::ProgressBar(in.detector_task.progress(), ImVec2(140.0f * gfx::em(), 0));
    ImGui::SameLine();
    if (ImGui::Button("Cancel##detectors")) in.detector_task.cancel();
    state.note_item("interp detectors cancel");
  } else {
    if (ImGui::Button("Run detectors")) start_detectors(state);
    state.note_item("interp detectors run");
  }
  if (!in.detector_error.empty()) {
    push_wrap_at_visible_edge();
    text_colored(gfx::Accent::Error, "%s", in.detector_error.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!in.detectors || !same_model(*in.detectors->session, s)) return;
  const DetectorOutcome& d = *in.detectors;
  // The mean, or the shown prompt's own scores (when these ran over the file shown).
  const bool one = d.batch && in.shown_prompt >= 0 && in.shown_prompt < static_cast<int>(d.heads.each.size()) &&
                   d.prompts_revision == in.prompts_revision;
  const HeadScores& scores = one ? d.heads.each[static_cast<std::size_t>(in.shown_prompt)] : d.heads.mean;
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("On %s%s%s", one ? prompt_entry(d.prompts[static_cast<std::size_t>(in.shown_prompt)]).c_str() : d.source.c_str(),
                      d.heads.complete ? "" : " (cancelled: the prompts run so far)", ". Click a cell to focus that head.");
  ImGui::PopTextWrapPos();
  // Over the prompts, the mean's tooltip lists each prompt's score too.
  const auto each_prompt = [&](HeadKind kind, int l, int h) {
    if (!d.batch || one || d.heads.each.size() < 2) return std::string();
    std::string tip = "\nthe mean of each prompt's:";
    char text[64];
    for (std::size_t i = 0; i < d.heads.each.size() && i < 12; ++i) {
      std::snprintf(text, sizeof text, "\n  line %d: %.3f", d.prompts[i].line, static_cast<double>(d.heads.each[i].of(kind)(l, h)));
      tip += text;
    }
    if (d.heads.each.size() > 12) tip += "\n  … (choose a prompt under 'show' for its own grid)";
    return tip;
  };
  if (std::string hovered = draw_head_score_grids(state, scores, "interp detector", each_prompt); !hovered.empty())
    in.hovered = hovered;
  // The focused head's pattern on that text (the mean over prompts of one length).
  const std::size_t at = static_cast<std::size_t>(s.layer() * c.heads + state.focused_head);
  if (one || at >= d.heads.mean_patterns.size()) {
    if (d.batch && d.heads.mean_patterns.empty())
      ImGui::TextDisabled("(No mean pattern: the prompts differ in length, or are longer than %d tokens.)", kMeanPatternTokens);
    return;
  }
  const Matrix& pattern = d.heads.mean_patterns[at];
  ImGui::Text("Layer %d, head %d's pattern%s", s.layer(), state.focused_head, d.batch ? ", the mean over the prompts" : "");
  ScoreGrid grid;
  grid.id = "interp pattern";
  grid.values = pattern.cast<double>();
  grid.min_cell_px = 4.0f;
  const std::vector<std::string> labels = d.batch ? std::vector<std::string>{} : s.tokenizer().labels(d.prompts[0].ids);
  for (Eigen::Index i = 0; i < pattern.rows(); ++i) {
    // Token labels carry their position where tokens repeat (a repeated sequence always does).
    const std::string label = labels.empty() ? std::to_string(i) : labels[static_cast<std::size_t>(i)];
    grid.row_labels.push_back(label);
    grid.col_labels.push_back(std::to_string(i));
  }
  grid.tooltip = [&](int r, int col) {
    char text[256];
    std::snprintf(text, sizeof text, "query %s → key %s: %.4f", grid.row_labels[static_cast<std::size_t>(r)].c_str(),
                  grid.row_labels[static_cast<std::size_t>(col)].c_str(), static_cast<double>(pattern(r, col)));
    return std::string(text);
  };
  GridCell hovered;
  draw_score_grid(state, grid, &hovered);
  if (hovered.valid()) in.hovered = "interp pattern " + std::to_string(hovered.row) + " " + std::to_string(hovered.col);
}

}  // namespace attention_lab::gui
