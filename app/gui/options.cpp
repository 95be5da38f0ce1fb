#include "options.h"

#include <charconv>

namespace attention_lab::gui {

namespace {
const char* const kUsage = R"(attention-lab — see and change every number of self-attention

usage: attention-lab [SCENARIO.json | LESSON.json] [options]
  --preset NAME        open a built-in scenario ({presets}), or
                       random-T-D-H: a seeded random causal layer, e.g. random-64-32-4
  --model MODEL        open a checkpoint (a Hugging Face folder with config.json and
                       model.safetensors or its shards, or a .safetensors file): GPT-2,
                       minGPT/nanoGPT, Llama, Mistral, Qwen2, Qwen3, OLMo-2, Granite,
                       Gemma 2 and 3, GPT-NeoX/Pythia, Phi-3, StarCoder2, SmolLM,
                       SmolLM3
  --text TEXT          the model's input (vocabulary strings or token ids separated by
                       spaces when the model has no BPE tokenizer)
  --layer L            the layer whose attention the pipeline shows (default 0)
  --step N             start at step N of the step-through (1-9)
  --head I             focus head I
  --size WxH           window size in pixels (default 1280x800)
  --screenshot OUT.png render, write the window to OUT.png and exit (animations
                       finished: the same arguments give the same PNG)
  --frames N           frames to render before the screenshot (default 6)
  --select STAGE:R:C   select a cell, e.g. --select scores[0]:2:1
  --lesson NAME|FILE   open a lesson: {lessons}, or a lesson .json file
  --lesson-step N      start the lesson at step N
  --view NAME          open a centre view: pipeline, heads, softmax, sqrt-dk, train, or
                       (with --model) model, block or interp
  --show WHAT          what the Pipeline shows of each stage: values (default), gradients
                       (of the scenario's loss, or a model's: ∂L/∂stage) or both
                       (Ctrl+G cycles)
  --presenter          start in presenter mode (F5): full screen, large fonts, light theme
                       (with --size: a window of that size, e.g. to rehearse a projector)
  --export WHAT OUT.png  render WHAT off screen, write it to OUT.png and exit: a stage
                       (X, W_q, weights[0], …), step (the current step) or view (the
                       whole centre view); animations are finished first
  --export-scale K     pixels per on-screen pixel of --export: 1, 2 or 4 (default 1)
  --export-with-highlights  keep the selection, the lit cells, a lesson's highlight
                       outlines and the quiz's "?" in --export (left out by default);
                       a step's slide is cropped to its content either way
  --frame-stats OUT    render --frames N frames of the finished result without waiting,
                       write median and 95th-percentile times of all but the first two
                       as JSON to OUT, exit
  --check-slides       with a lesson: show every step and page as a presenter's slide
                       (at 1280x720 unless --size), print a warning for each stage whose
                       numbers are not printed (cells under 22 px) and each quiz whose
                       inputs are not printed or whose answer is, and exit 0
  --recover            restore the unsaved work a crashed or killed session left
                       (autosaved to $XDG_STATE_HOME/attention-lab/recovery/, by default
                       ~/.local/state/attention-lab/recovery/) without asking first
  --hold-jobs-while FILE  (tests) background work starts only once FILE is gone
  --help, --version
)";

// `text` broken at spaces into lines that end by column kWidth, every line
// after the first indented to the option descriptions' column.
std::string wrap_description(const std::string& text) {
  constexpr std::size_t kWidth = 92, kIndent = 23;
  const std::string indent(kIndent, ' ');
  std::string out, line;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && kIndent + line.size() + 1 + word.size() > kWidth) {
      out += (out.empty() ? "" : "\n" + indent) + line;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + (out.empty() ? "" : "\n" + indent) + line;
}

std::string replaced(std::string text, const std::string& key, const std::string& value) {
  const auto at = text.find(key);
  return at == std::string::npos ? text : text.replace(at, key.size(), value);
}

}  // namespace

std::string usage(const std::vector<std::string>& preset_names, const std::string& lesson_names) {
  std::string presets;
  for (const auto& name : preset_names) presets += (presets.empty() ? "" : ", ") + name;
  const std::string text = replaced(kUsage, "open a built-in scenario ({presets}), or",
                  wrap_description("open a built-in scenario (" + presets + "), or"));
  return replaced(text, "open a lesson: {lessons}, or a lesson .json file",
                  wrap_description("open a lesson: " + lesson_names + ", or a lesson .json file"));
}

namespace {
bool to_int(const std::string& s, int& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}
}  // namespace

ParsedOptions parse_options(const std::vector<std::string>& args) {
  Options o;
  ParsedOptions result;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--model") {
      if (!value(o.model)) return {std::nullopt, "--model: expected a model folder or .safetensors file"};
    } else if (a == "--text") {
      if (!value(o.text)) return {std::nullopt, "--text: expected the model's input text"};
    } else if (a == "--layer") {
      int n = 0;
      if (!value(v) || !to_int(v, n) || n < 0) return {std::nullopt, "--layer: expected a whole number ≥ 0, found '" + v + "'"};
      o.layer = n;
    } else if (a == "--lesson") {
      if (!value(o.lesson)) return {std::nullopt, "--lesson: expected a lesson name or file"};
    } else if (a == "--lesson-step") {
      int n = 0;
      if (!value(v) || !to_int(v, n) || n < 1) return {std::nullopt, "--lesson-step: expected a whole number ≥ 1, found '" + v + "'"};
      o.lesson_step = n - 1;
    } else if (a == "--show") {
      if (!value(o.show) || (o.show != "values" && o.show != "gradients" && o.show != "both"))
        return {std::nullopt, "--show: expected values, gradients or both, found '" + o.show + "'"};
    } else if (a == "--view") {
      if (!value(o.view) || (o.view != "pipeline" && o.view != "heads" && o.view != "softmax" && o.view != "sqrt-dk" && o.view != "train" &&
                             o.view != "model" && o.view != "block" && o.view != "interp"))
        return {std::nullopt, "--view: expected pipeline, heads, softmax, sqrt-dk, train, or model, block or interp (with --model), found '" +
                                  o.view + "'"};
    } else if (a == "--export") {
      if (!value(o.export_target) || !value(o.export_path))
        return {std::nullopt, "--export: expected WHAT OUT.png, e.g. --export weights[0] a.png"};
    } else if (a == "--export-scale") {
      int k = 0;
      if (!value(v) || !to_int(v, k) || (k != 1 && k != 2 && k != 4))
        return {std::nullopt, "--export-scale: expected 1, 2 or 4, found '" + v + "'"};
      o.export_scale = k;
    } else if (a == "--export-with-highlights") {
      o.export_with_highlights = true;
    } else if (a == "--check-slides") {
      o.check_slides = true;
    } else if (a == "--recover") {
      o.recover = true;
    } else if (a == "--presenter") {
      o.presenter = true;
    } else if (a == "--version") {
      o.version = true;
    } else if (a == "--preset") {
      if (!value(o.preset)) return {std::nullopt, "--preset: expected a preset name"};
    } else if (a == "--step" || a == "--head" || a == "--frames") {
      int n = 0;
      if (!value(v) || !to_int(v, n) || n < 0) return {std::nullopt, a + ": expected a whole number ≥ 0, found '" + v + "'"};
      (a == "--step" ? o.step : a == "--head" ? o.head : o.frames) = a == "--step" ? n - 1 : n;
    } else if (a == "--size") {
      const auto x = value(v) ? v.find('x') : std::string::npos;
      if (x == std::string::npos || !to_int(v.substr(0, x), o.width) || !to_int(v.substr(x + 1), o.height) ||
          o.width < 320 || o.height < 240 || o.width > 8192 || o.height > 8192)
        return {std::nullopt, "--size: expected WxH between 320x240 and 8192x8192, found '" + v + "'"};
      o.size_given = true;
    } else if (a == "--screenshot") {
      if (!value(o.screenshot)) return {std::nullopt, "--screenshot: expected an output .png path"};
    } else if (a == "--probe") {
      if (!value(o.probe)) return {std::nullopt, "--probe: expected a file path"};
    } else if (a == "--hold-jobs-while") {
      if (!value(o.hold_jobs_while)) return {std::nullopt, "--hold-jobs-while: expected a file path"};
    } else if (a == "--frame-stats") {
      if (!value(o.frame_stats)) return {std::nullopt, "--frame-stats: expected an output .json path"};
    } else if (a == "--select") {
      if (!value(o.select)) return {std::nullopt, "--select: expected STAGE:ROW:COL"};
    } else if (!a.empty() && a[0] == '-') {
      return {std::nullopt, "unknown option '" + a + "'"};
    } else if (o.scenario_path.empty()) {
      o.scenario_path = a;
    } else {
      return {std::nullopt, "expected one scenario file, found a second: '" + a + "'"};
    }
  }
  if (o.check_slides) {
    // A projector's slides: presenter mode in a window of the projector's size.
    o.presenter = true;
    if (!o.size_given) o.width = 1280, o.height = 720, o.size_given = true;
  }
  result.options = o;
  return result;
}

}  // namespace attention_lab::gui
