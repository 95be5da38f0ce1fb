#pragma once
// attention-lab's command line.

#include <optional>
#include <string>
#include <vector>

namespace attention_lab::gui {

struct Options {
  std::string scenario_path;   // positional SCENARIO.json or LESSON.json
  std::string preset;          // --preset NAME
  int step = -1;               // --step N (1-based on the command line; -1 = everything shown)
  int head = 0;                // --head I
  int width = 1280, height = 800;  // --size WxH
  bool size_given = false;     // --size was given: --presenter then stays a window of that size
  std::string screenshot;      // --screenshot OUT.png: render, save, exit
  int frames = 6;              // --frames N before the screenshot
  std::string probe;           // --probe FILE: write UI state as JSON each frame (for tests)
  std::string hold_jobs_while; // --hold-jobs-while FILE: background work waits while FILE exists (for tests)
  std::string frame_stats;     // --frame-stats OUT.json: render --frames N frames, write timings, exit
  std::string select;          // --select STAGE:R:C, e.g. scores[0]:2:1
  std::string model;           // --model FOLDER|FILE.safetensors
  std::string text;            // --text TEXT (the model's input)
  int layer = 0;               // --layer L (the model's focused layer)
  std::string lesson;          // --lesson NAME|FILE
  int lesson_step = 0;         // --lesson-step N (1-based on the command line)
  std::string view;            // --view pipeline|heads|softmax|sqrt-dk: the centre view to open
  std::string show;            // --show values|gradients|both: what the Pipeline shows of each stage
  bool presenter = false;      // --presenter: start in presenter mode (F5)
  std::string export_target;   // --export STAGE|step|view OUT.png: write that PNG off screen and exit
  std::string export_path;
  int export_scale = 1;        // --export-scale K: 1, 2 or 4
  bool export_with_highlights = false;  // --export-with-highlights: hover, selection, lit cells and the quiz's "?" too
  bool check_slides = false;   // --check-slides: walk a lesson's steps as slides, print what is not readable, exit
  bool recover = false;        // --recover: restore the newest unsaved work a crashed session left, without asking
  bool help = false;
  bool version = false;
};

// Returns the options or an error message naming the bad argument.
struct ParsedOptions {
  std::optional<Options> options;
  std::string error;
};
ParsedOptions parse_options(const std::vector<std::string>& args);

// --help's text, with the built-in presets and lessons named.
std::string usage(const std::vector<std::string>& preset_names, const std::string& lesson_names);

}  // namespace attention_lab::gui
