// Model mode's Interpret tab: activation patching from the model's text
// (clean) into a corrupted one, drawn as a grid of how much of the clean
// answer each patch brings back, and direct logit attribution of a token to
// every head and MLP. Both run on threads of their own (logic/task_thread.h)
// on the model as loaded: the focused layer's edits are not part of them.

#include "panels/panels.h"

#include "attention_lab/transformer_forward.h"
#include "widgets/score_grid.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace attention_lab::gui {

namespace {

// What each kind patches, for the list and the grid's title.
const char* kind_meaning(PatchKind k) {
  switch (k) {
    case PatchKind::ResidPre: return "the residual stream entering each layer, at one position";
    case PatchKind::AttnOut: return "what each layer's attention adds, at one position";
    case PatchKind::MlpOut: return "what each layer's MLP adds, at one position";
    case PatchKind::HeadOut: return "each head's output (z), at every position";
    case PatchKind::HeadQ: return "each head's queries (before RoPE), at every position";
    case PatchKind::HeadK: return "each K/V head's keys (before RoPE), at every position";
    case PatchKind::HeadV: return "each K/V head's values, at every position";
    case PatchKind::HeadPattern: return "each head's attention pattern";
    case PatchKind::HeadOutByPosition: return "each head's output at one position";
  }
  return "";
}

bool by_position(PatchKind k) { return columns_of(k) == PatchColumns::Positions; }

std::string fixed3(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", v);
  return text;
}

std::string prompt_line(const Prompt& p) { return "line " + std::to_string(p.line) + " (" + p.text + ")"; }

// The corrupted text's ids, encoded once per text typed.
struct Encoding {
  std::string text;
  const Tokenizer* tokenizer = nullptr;
  Encoded encoded;
};
const Encoded& encode_cached(const Tokenizer& t, const std::string& text) {
  static Encoding cache;
  if (cache.text != text || cache.tokenizer != &t || (cache.encoded.ids.empty() && cache.encoded.error.empty())) {
    cache.text = text;
    cache.tokenizer = &t;
    cache.encoded = text.find_first_not_of(" \t\r\n") == std::string::npos ? Encoded{} : t.encode(text);
  }
  return cache.encoded;
}

// A token typed into an answer field: "" and its id, or why it cannot be one.
std::string typed_token(const Tokenizer& t, const std::string& text, int& id) {
  if (text.empty()) return {};
  return t.single_token(text, id);
}

void take_results(InterpState& in) {
  std::string error;
  if (auto r = in.patch_task.take(error)) {
    in.patch = std::move(*r);
    in.patch_error.clear();
  } else if (!error.empty()) {
    in.patch_error = error;
  }
  error.clear();
  if (auto r = in.attribution_task.take(error)) {
    in.attribution = std::move(*r);
    in.attribution_error.clear();
  } else if (!error.empty()) {
    in.attribution_error = error;
  }
}

void start_patching(AppState& state, const std::vector<int>& corrupted, int answer, int wrong) {
  InterpState& in = state.interp;
  const std::shared_ptr<const ModelSession> session = state.model.session;
  const PatchKind kind = kPatchKinds[static_cast<std::size_t>(std::clamp(in.kind, 0, static_cast<int>(std::size(kPatchKinds)) - 1))];
  const bool probability = in.metric == 1;
  in.patch_error.clear();
  in.patch_task.start([session, corrupted, answer, wrong, kind, probability](const auto& progress) {
    const auto start = std::chrono::steady_clock::now();
    const TransformerModel& m = session->model();
    PatchOutcome out;
    out.session = session;
    out.corrupted = corrupted;
    // Unnamed answers: each text's own predicted next token.
    out.metric.kind = probability ? PatchMetric::Probability : PatchMetric::LogitDiff;
    out.metric.answer = answer >= 0 ? answer : argmax(run_model(m, session->ids(), 1).logits.row(0));
    out.metric.wrong = probability ? 0 : wrong >= 0 ? wrong : argmax(run_model(m, corrupted, 1).logits.row(0));
    if (!probability && out.metric.answer == out.metric.wrong)
      throw std::invalid_argument("both texts predict '" + session->tokenizer().label(out.metric.answer) +
                                  "': the logit difference would be 0 on every run. Type the answer and the wrong token.");
    if (std::string e = check_patching(m.config, session->ids(), corrupted, out.metric); !e.empty())
      throw std::invalid_argument(e);
    out.sweep = patch_sweep(m, session->ids(), corrupted, kind, out.metric,
                            [&progress](int done, int total) { return progress(static_cast<double>(done) / total); },
                            &out.complete);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  });
}

void start_compare(AppState& state, const std::vector<int>& corrupted) {
  InterpState& in = state.interp;
  const std::shared_ptr<const ModelSession> session = state.model.session;
  in.compare_error.clear();
  in.compare_task.start([session, corrupted](const auto&) {
    std::string error;
    const std::unique_ptr<ModelSession> run = ModelSession::start(session->model_ptr(), session->tokenizer_ptr(), corrupted,
                                                                  session->layer(), nullptr, error, {}, session->ablations());
    if (!run) throw std::invalid_argument(error);
    LayerScenario layer = run->scenario();
    if (!layer.error.empty()) throw std::invalid_argument(layer.error);
    CorruptedSnapshot out{session, corrupted, session->layer(), std::nullopt};
    out.snapshot = compute_snapshot(std::make_shared<const Scenario>(std::move(layer.scenario)));
    return out;
  });
}

// A finished corrupted run becomes Compare's snapshot (when the clean run is still the one shown).
void take_compare(AppState& state) {
  InterpState& in = state.interp;
  std::string error;
  std::optional<CorruptedSnapshot> r = in.compare_task.take(error);
  if (!error.empty()) in.compare_error = error;
  if (!r || !r->snapshot) return;
  const ModelSession& now = *state.model.session;
  if (!same_model_and_text(*r->session, now) || r->layer != now.layer()) return;  // the text or layer moved on meanwhile
  CompareState& c = state.compare;
  c.snapshot = std::move(r->snapshot);
  c.ids = r->ids;
  c.layer = r->layer;
  c.of_text = "the corrupted text '" + now.tokenizer().decode(r->ids) + "'";
  c.diffs.clear();
  ++c.taken;
  c.show = true;
  state.set_status("Compare: every stage now shows the clean text's change from the corrupted one (layer " +
                   std::to_string(r->layer) + ")");
  state.centre = CentreView::Pipeline;
  state.select_centre_tab = true;
}

// A patching run's result, of the text it was run on: what was measured and
// the grid of normalised metrics (positions × layers, or layers × heads).
void draw_patching_result(AppState& state, const ModelSession& s) {
  InterpState& in = state.interp;
  const Tokenizer& t = s.tokenizer();
  const PatchOutcome& r = *in.patch;
  const PatchSweep& w = r.sweep;
  const std::string answer_label = t.label(r.metric.answer), wrong_label = t.label(r.metric.wrong);
  const std::string metric_text = r.metric.kind == PatchMetric::LogitDiff
                                      ? "logit['" + answer_label + "'] − logit['" + wrong_label + "']"
                                      : "p('" + answer_label + "')";
  ImGui::Spacing();
  push_wrap_at_visible_edge();
  ImGui::Text("%s: %s. %s clean %.4f, corrupted %.4f. %d runs in %.2f s%s", to_string(w.kind), kind_meaning(w.kind),
              metric_text.c_str(), w.clean, w.corrupted, static_cast<int>(w.metric.size()), r.seconds,
              r.complete ? "" : " (cancelled: the cells not run are grey)");
  ImGui::PopTextWrapPos();
  const Eigen::MatrixXd n = w.normalised();
  const std::vector<std::string> labels = s.token_labels();
  ScoreGrid grid;
  grid.id = "patch";
  grid.colours = ScoreGrid::Colours::Diverging;
  grid.range = 1.0;
  if (by_position(w.kind)) {  // positions down (their tokens whole), layers across
    grid.values = n.transpose();
    for (int p = 0; p < w.positions; ++p) {
      const int a = s.ids()[static_cast<std::size_t>(p)], b = r.corrupted[static_cast<std::size_t>(p)];
      grid.row_labels.push_back(labels[static_cast<std::size_t>(p)] + (a != b ? " / " + t.label(b) : ""));
    }
    for (int l = 0; l < w.layers; ++l) grid.col_labels.push_back("L" + std::to_string(l));
  } else {
    const bool both = w.kind == PatchKind::HeadOutByPosition;
    if (both) {
      ImGui::SetNextItemWidth(260.0f * gfx::em());
      in.shown_position = std::clamp(in.shown_position, 0, w.positions - 1);
      char format[160];
      std::snprintf(format, sizeof format, "position %%d '%s'", labels[static_cast<std::size_t>(in.shown_position)].c_str());
      ImGui::SliderInt("##patch position", &in.shown_position, 0, w.positions - 1, format, ImGuiSliderFlags_AlwaysClamp);
      state.note_item("interp position");
    }
    grid.values = both ? Eigen::MatrixXd(n.middleCols(static_cast<Eigen::Index>(in.shown_position) * w.heads, w.heads)) : n;
    for (int l = 0; l < w.layers; ++l) grid.row_labels.push_back("L" + std::to_string(l));
    for (int h = 0; h < w.heads; ++h) grid.col_labels.push_back(std::to_string(h));
  }
  const bool kv = w.kind == PatchKind::HeadK || w.kind == PatchKind::HeadV;
  grid.tooltip = [&](int row, int col) {
    const bool pos = by_position(w.kind);
    const int l = pos ? col : row;
    const int i = pos ? row : w.kind == PatchKind::HeadOutByPosition ? in.shown_position * w.heads + col : col;
    char text[512];
    if (pos)
      std::snprintf(text, sizeof text, "layer %d, position %d '%s'\npatched: %s = %.4f\nnormalised %.4f (0 corrupted, 1 clean)",
                    l, row, labels[static_cast<std::size_t>(row)].c_str(), metric_text.c_str(), w.metric(l, i), n(l, i));
    else
      std::snprintf(text, sizeof text, "layer %d, %s %d%s\npatched: %s = %.4f\nnormalised %.4f (0 corrupted, 1 clean)%s", l,
                    kv ? "K/V head" : "head", col,
                    w.kind == PatchKind::HeadOutByPosition ? (", position " + std::to_string(in.shown_position)).c_str() : "",
                    metric_text.c_str(), w.metric(l, i), n(l, i), kv ? "" : "\nclick: focus this head");
    return std::string(text);
  };
  if (!by_position(w.kind) && !kv) grid.context_menu = [&state](int l, int h) { draw_ablation_menu(state, l, h); };
  GridCell hovered;
  const GridCell hit = draw_score_grid(state, grid, &hovered);
  if (hovered.valid()) in.hovered = "patch " + std::to_string(hovered.row) + " " + std::to_string(hovered.col);
  if (hit.valid() && !by_position(w.kind) && !kv && !state.busy()) focus_head(state, hit.row, hit.col);
}

void draw_patching(AppState& state) {
  InterpState& in = state.interp;
  const std::shared_ptr<ModelSession>& session = state.model.session;
  const ModelSession& s = *session;
  const Tokenizer& t = s.tokenizer();
  ImGui::Text("Activation patching");
  push_wrap_at_visible_edge();
  ImGui::TextDisabled("Run the corrupted text with one activation of the clean text's run put in its place: how much of "
                      "the clean answer comes back (0 = the corrupted run, 1 = the clean run). TransformerLens's "
                      "patching, on the model as loaded (the focused layer's edits are not part of it).");
  ImGui::TextWrapped("Clean (the model's text, %d tokens): %s", s.T(), state.model.text.c_str());
  ImGui::PopTextWrapPos();
  if (in.corrupted_text.empty() && !state.model.text.empty()) in.corrupted_text = state.model.text;
  ImGui::SetNextItemWidth(std::max(200.0f, ImGui::GetContentRegionAvail().x - 90.0f * gfx::em()));
  // A click selects the whole text: typing replaces it (as the model's text field).
  ImGui::InputText("corrupted", &in.corrupted_text, ImGuiInputTextFlags_AutoSelectAll);
  state.note_item("interp corrupted");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("The same text with a few tokens changed (the same number of tokens), so the model's answer changes.");
  const Encoded& corrupted = encode_cached(t, in.corrupted_text);
  std::string problem = corrupted.error;
  if (problem.empty() && corrupted.ids.empty()) problem = "Type a corrupted text (the clean one with a few tokens changed).";
  if (problem.empty()) problem = check_ids(s.model().config, corrupted.ids);
  if (problem.empty() && static_cast<int>(corrupted.ids.size()) != s.T())
    problem = "The clean text has " + std::to_string(s.T()) + " tokens and the corrupted one " +
              std::to_string(corrupted.ids.size()) + ": patching needs the same number of tokens.";
  std::string differs;
  if (problem.empty()) {
    for (int p = 0; p < s.T(); ++p)
      if (corrupted.ids[static_cast<std::size_t>(p)] != s.ids()[static_cast<std::size_t>(p)])
        differs += (differs.empty() ? "" : ", ") + std::to_string(p) + " ('" + t.label(s.ids()[static_cast<std::size_t>(p)]) +
                   "' → '" + t.label(corrupted.ids[static_cast<std::size_t>(p)]) + "')";
    if (differs.empty()) problem = "The corrupted text is the clean one: change a token.";
  }
  push_wrap_at_visible_edge();
  if (!problem.empty()) text_colored(gfx::Accent::Warning, "%s", problem.c_str());
  else ImGui::TextDisabled("Differs at %s", differs.c_str());
  ImGui::PopTextWrapPos();

  int answer = -1, wrong = -1;
  ImGui::SetNextItemWidth(160.0f * gfx::em());
  ImGui::InputTextWithHint("answer", "predicted", &in.answer_text, ImGuiInputTextFlags_AutoSelectAll);
  state.note_item("interp answer");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The clean text's answer token (empty: the token it predicts).");
  const std::string answer_problem = typed_token(t, in.answer_text, answer);
  if (in.metric == 0) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(160.0f * gfx::em());
    ImGui::InputTextWithHint("wrong", "predicted", &in.wrong_text, ImGuiInputTextFlags_AutoSelectAll);
    state.note_item("interp wrong");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The corrupted text's answer token (empty: the token it predicts).");
  }
  const std::string wrong_problem = in.metric == 0 ? typed_token(t, in.wrong_text, wrong) : std::string();
  push_wrap_at_visible_edge();
  if (!answer_problem.empty()) text_colored(gfx::Accent::Warning, "answer: %s", answer_problem.c_str());
  if (!wrong_problem.empty()) text_colored(gfx::Accent::Warning, "wrong: %s", wrong_problem.c_str());
  ImGui::PopTextWrapPos();

  ImGui::SetNextItemWidth(220.0f * gfx::em());
  const char* metrics[] = {"logit difference", "probability of the answer"};
  ImGui::Combo("metric", &in.metric, metrics, 2);
  state.note_item("interp metric");
  // Each next to the last where it fits, else on a line of its own (a 1024-px window).
  const ImGuiStyle& style = ImGui::GetStyle();
  same_line_if_fits(160.0f * gfx::em() + style.ItemInnerSpacing.x + ImGui::CalcTextSize("patch").x);
  ImGui::SetNextItemWidth(160.0f * gfx::em());
  const PatchKind kind = kPatchKinds[static_cast<std::size_t>(in.kind)];
  if (ImGui::BeginCombo("patch", to_string(kind))) {
    for (std::size_t i = 0; i < std::size(kPatchKinds); ++i) {
      const std::string label = std::string(to_string(kPatchKinds[i])) + "  " + kind_meaning(kPatchKinds[i]);
      if (ImGui::Selectable(label.c_str(), static_cast<int>(i) == in.kind)) in.kind = static_cast<int>(i);
      state.note_item(std::string("interp kind ") + to_string(kPatchKinds[i]));
    }
    ImGui::EndCombo();
  }
  state.note_item("interp kind");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("What is patched: %s.", kind_meaning(kind));
  same_line_if_fits(ImGui::CalcTextSize("Run patching").x + 2.0f * style.FramePadding.x);
  const bool ready = problem.empty() && answer_problem.empty() && wrong_problem.empty();
  in.patch_problem = !problem.empty() ? problem : !answer_problem.empty() ? answer_problem : wrong_problem;
  // The corrupted run's focused layer as Compare's snapshot: the Pipeline's
  // every stage then shows clean − corrupted.
  same_line_if_fits(ImGui::CalcTextSize("Compare the stages").x + 2.0f * style.FramePadding.x);
  ImGui::BeginDisabled(!problem.empty() || in.compare_task.running() || state.busy());
  if (ImGui::Button("Compare the stages")) start_compare(state, corrupted.ids);
  ImGui::EndDisabled();
  state.note_item("interp compare");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Run the corrupted text and keep its layer %d as Compare's snapshot: every stage of the Pipeline\n"
                      "then shows what the clean text changes (clean − corrupted), cell by cell.", s.layer());
  if (in.patch_task.running()) {
    ImGui::ProgressBar(in.patch_task.progress(), ImVec2(160.0f * gfx::em(), 0));
    ImGui::SameLine();
    if (ImGui::Button("Cancel##patch")) in.patch_task.cancel();
    state.note_item("interp cancel");
  } else {
    ImGui::BeginDisabled(!ready);
    if (ImGui::Button("Run patching")) start_patching(state, corrupted.ids, answer, wrong);
    ImGui::EndDisabled();
    state.note_item("interp run");
  }
  if (!in.compare_error.empty()) {
    push_wrap_at_visible_edge();
    text_colored(gfx::Accent::Error, "%s", in.compare_error.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!in.patch_error.empty()) {
    push_wrap_at_visible_edge();
    text_colored(gfx::Accent::Error, "%s", in.patch_error.c_str());
    ImGui::PopTextWrapPos();
  }
  if (in.patch && same_model_and_text(*in.patch->session, s)) draw_patching_result(state, s);
}

void draw_attribution(AppState& state) {
  InterpState& in = state.interp;
  const std::shared_ptr<ModelSession>& session = state.model.session;
  const ModelSession& s = *session;
  const Tokenizer& t = s.tokenizer();
  ImGui::Text("Direct logit attribution");
  push_wrap_at_visible_edge();
  const std::string unsupported = attribution_unsupported(s.model().config);
  if (!unsupported.empty()) {
    text_colored(gfx::Accent::Warning, "Not for this model: %s.", unsupported.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  const int row = state.model.predicted_row();
  ImGui::TextDisabled("How much each head, each MLP and the embeddings add directly to a token's logit after '%s' (%d), "
                      "through the final norm (its scale fixed at this run's) and the unembedding; the parts sum to the "
                      "logit. On the model as loaded.",
                      t.label(s.ids()[static_cast<std::size_t>(row)]).c_str(), row);
  ImGui::PopTextWrapPos();
  ImGui::SetNextItemWidth(160.0f * gfx::em());
  ImGui::InputTextWithHint("token##attribute", "predicted", &in.attribution_token, ImGuiInputTextFlags_AutoSelectAll);
  state.note_item("interp attribution token");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(160.0f * gfx::em());
  ImGui::InputTextWithHint("minus##attribute", "none", &in.attribution_minus, ImGuiInputTextFlags_AutoSelectAll);
  state.note_item("interp attribution minus");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("A second token: attribute the difference of the two logits (the answer's minus a wrong one's).");
  int token = -1, minus = -1;
  std::string problem = typed_token(t, in.attribution_token, token);
  if (const std::string e = typed_token(t, in.attribution_minus, minus); problem.empty() && !e.empty()) problem = "minus: " + e;
  if (in.prompts.empty()) in.attribution_batch = false;
  bool toggled = false;  // a choice that runs it again, typed tokens or not
  if (!in.prompts.empty()) {
    ImGui::SameLine();
    toggled = ImGui::Checkbox("over the prompts file", &in.attribution_batch);
    state.note_item("interp attribution batch");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Each prompt at its last token (of the typed token, or each one's predicted token): their mean,\n"
                        "or one prompt's own (see 'show' above).");
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(!problem.empty() || in.attribution_task.running());
  const bool run = ImGui::Button("Attribute");
  ImGui::EndDisabled();
  state.note_item("interp attribute");
  if (!problem.empty()) {
    push_wrap_at_visible_edge();
    text_colored(gfx::Accent::Warning, "%s", problem.c_str());
    ImGui::PopTextWrapPos();
  }
  // Computed for the predicted token when the text, row or batch is new; on demand for a typed one.
  if (run || toggled) in.attribution_error.clear();  // asked again: the last failure is not in the way
  const bool batch = in.attribution_batch;
  const bool stale = !in.attribution ||
                     !(batch ? same_model(*in.attribution->session, s) : same_model_and_text(*in.attribution->session, s)) ||
                     batch != !in.attribution->each.empty() ||
                     (batch ? in.attribution->prompts_revision != in.prompts_revision : in.attribution->attribution.row != row);
  if ((run || toggled || (stale && in.attribution_token.empty() && in.attribution_minus.empty())) && problem.empty() && !in.attribution_task.running() &&
      in.attribution_error.empty()) {
    std::vector<std::vector<int>> prompts;
    if (batch)
      for (const Prompt& p : in.prompts) prompts.push_back(p.ids);
    in.attribution_task.start([session, row, token, minus, prompts, revision = in.prompts_revision](const auto& progress) {
      const TransformerModel& m = session->model();
      const auto attribute = [&](const std::vector<int>& ids, int r) {
        const RunCache cache = run_with_cache(m, ids, CacheAttention::None);
        const int id = token >= 0 ? token : argmax(row_logits(m, cache.resid.back(), r));
        return direct_logit_attribution(m, cache, r, id, minus);
      };
      AttributionOutcome out{session, {}, {}, -1};
      if (prompts.empty()) {
        out.attribution = attribute(session->ids(), row);
        return out;
      }
      for (const std::vector<int>& ids : prompts) {
        out.each.push_back(attribute(ids, static_cast<int>(ids.size()) - 1));
        if (!progress(static_cast<double>(out.each.size()) / static_cast<double>(prompts.size()))) break;
      }
      out.attribution = mean_attribution(out.each);
      out.prompts_revision = revision;
      return out;
    });
  }
  if (in.attribution_task.running()) ImGui::TextDisabled("computing…");
  if (!in.attribution_error.empty()) text_colored(gfx::Accent::Error, "%s", in.attribution_error.c_str());
  if (!in.attribution || !(in.attribution->each.empty() ? same_model_and_text(*in.attribution->session, s)
                                                          : same_model(*in.attribution->session, s)))
    return;
  // Over the prompts: the mean, or the prompt chosen under "show".
  const AttributionOutcome& outcome = *in.attribution;
  const bool over_prompts = !outcome.each.empty();
  const bool one = over_prompts && outcome.prompts_revision == in.prompts_revision && in.shown_prompt >= 0 &&
                   in.shown_prompt < static_cast<int>(outcome.each.size());
  const LogitAttribution& a = one ? outcome.each[static_cast<std::size_t>(in.shown_prompt)] : outcome.attribution;
  const ModelConfig& c = s.model().config;
  const std::string parts =
      "embeddings " + fixed3(a.embeddings) + " + heads " + fixed3(a.heads.sum()) + " + attention biases " +
      fixed3(a.attention_bias.sum()) + " + MLPs " + fixed3(a.mlp.sum()) + " + constant " + fixed3(a.constant);
  const char* capped = c.logit_softcap > 0.0 ? " (before the soft-cap)" : "";
  const bool same_token = std::all_of(outcome.each.begin(), outcome.each.end(),
                                      [&](const LogitAttribution& x) { return x.token == outcome.each[0].token; });
  // "logit['A']", or "logit['A'] − logit['B']" for a difference.
  const std::string what = "logit['" + t.label(a.token) + "']" + (a.minus >= 0 ? " − logit['" + t.label(a.minus) + "']" : "");
  push_wrap_at_visible_edge();
  if (over_prompts && !one)
    ImGui::Text("The mean over %zu prompts, each at its last token, of %s: %.3f%s = %s", outcome.each.size(),
                same_token ? what.c_str()
                           : ("its predicted token's logit" + (a.minus >= 0 ? " − logit['" + t.label(a.minus) + "']" : "")).c_str(),
                a.logit, capped, parts.c_str());
  else if (one)
    ImGui::Text("%s: %s at its last token = %.3f%s = %s", prompt_line(in.prompts[static_cast<std::size_t>(in.shown_prompt)]).c_str(),
                what.c_str(), a.logit, capped, parts.c_str());
  else
    ImGui::Text("%s after '%s' = %.3f%s = %s", what.c_str(), t.label(s.ids()[static_cast<std::size_t>(a.row)]).c_str(), a.logit,
                capped, parts.c_str());
  ImGui::PopTextWrapPos();
  // Heads, then each layer's attention bias and MLP as two more columns.
  ScoreGrid grid;
  grid.id = "attribution";
  grid.colours = ScoreGrid::Colours::Diverging;
  grid.values.resize(c.layers, c.heads + 2);
  grid.values.leftCols(c.heads) = a.heads;
  grid.values.col(c.heads) = a.attention_bias;
  grid.values.col(c.heads + 1) = a.mlp;
  grid.range = std::max(1e-9, grid.values.cwiseAbs().maxCoeff());
  for (int l = 0; l < c.layers; ++l) grid.row_labels.push_back("L" + std::to_string(l));
  for (int h = 0; h < c.heads; ++h) grid.col_labels.push_back(std::to_string(h));
  grid.col_labels.push_back("bias");
  grid.col_labels.push_back("MLP");
  grid.tooltip = [&](int l, int col) {
    char text[256];
    const std::string part = col < c.heads ? "head " + std::to_string(col) : col == c.heads ? "W_o's bias" : "MLP";
    std::snprintf(text, sizeof text, "layer %d, %s: adds %+.4f to %s%s", l, part.c_str(), grid.values(l, col), what.c_str(),
                  col < c.heads ? "\nclick: focus this head" : "");
    return std::string(text);
  };
  grid.outlined = [&](int l, int h) { return h < c.heads && l == s.layer() && h == state.focused_head; };
  grid.context_menu = [&state, &c](int l, int h) { draw_ablation_menu(state, l, std::min(h, c.heads - 1)); };
  GridCell hovered;
  const GridCell hit = draw_score_grid(state, grid, &hovered);
  if (hovered.valid()) in.hovered = "attribution " + std::to_string(hovered.row) + " " + std::to_string(hovered.col);
  if (hit.valid() && hit.col < c.heads && !state.busy()) focus_head(state, hit.row, hit.col);
}

}  // namespace

void draw_interp_view(AppState& state) {
  if (!state.model.open()) return;
  InterpState& in = state.interp;
  take_results(in);
  take_compare(state);
  in.hovered.clear();
  draw_prompts_file(state);
  ImGui::Spacing();
  ImGui::Separator();
  draw_batch_detectors(state);
  ImGui::Spacing();
  ImGui::Separator();
  draw_patching(state);
  ImGui::Spacing();
  ImGui::Separator();
  draw_logit_lens(state);
  ImGui::Spacing();
  ImGui::Separator();
  draw_attribution(state);
}

}  // namespace attention_lab::gui
