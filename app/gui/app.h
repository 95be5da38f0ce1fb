#pragma once
// The app: owns the state, builds each frame from the panels, handles
// shortcuts, and serves screenshots and the test probe.

#include "app_state.h"
#include "slide_checker.h"

#include <optional>

namespace attention_lab::gui {

class App {
 public:
  explicit App(Options options);

  // After the GL context exists: shaders, settings, the first scenario.
  // Returns "" or a message for stderr (the app then exits with status 2).
  std::string init(GLFWwindow* window);

  void frame();                 // one ImGui frame
  void after_render(int fb_w, int fb_h);  // Export PNG requests, off screen, after the frame
  // --export: writes the PNG the options ask for. Returns "" or an error.
  std::string export_now();
  bool animating() const;       // keep rendering without input: playing, a step's animation
  // Work on another thread (a background job, the predictions): the window
  // redraws a few times a second for its progress, and its end wakes it.
  bool waiting_on_work() const;
  bool should_close() const { return state_.quit; }
  void request_close();         // the window's close button
  void drop_files(int count, const char** paths);
  // Called from GLFW's key callback. Dear ImGui 1.86 only sees key state once
  // per frame, so a press and release within one frame would be lost; the
  // shortcuts read this queue instead.
  void on_key(int key, int mods);

  AppState& state() { return state_; }
  // The font size the next frame should use (presenter mode and Ctrl+plus/minus).
  float wanted_font_size() const;
  // F5: full screen, controls hidden, large fonts, light high-contrast theme.
  // `full_screen` false: stay a window of the same size (--presenter --size WxH).
  void toggle_presenter(bool full_screen = true);

 private:
  void start_frame();  // frame()'s bookkeeping before anything is drawn
  void handle_shortcuts();
  // The parts of handle_shortcuts, by who owns the key.
  void key_while_editing_text(int key, bool ctrl, bool shift);
  void key_while_a_dialog_asks(int key, bool ctrl);
  void ctrl_shortcut(int key, bool shift);
  bool lesson_key(int key, bool shift);  // true: the lesson took it
  void view_key(int key);
  void update_provenance();
  void write_probe() const;

  void change_font_scale(float factor);

  int windowed_[4] = {100, 100, 1280, 800};  // x, y, w, h to return to after presenter mode
  struct KeyPress {
    int key;
    int mods;
  };
  std::vector<KeyPress> key_presses_;
  AppState state_;
  std::optional<SlideChecker> slide_checker_;  // --check-slides
};

}  // namespace attention_lab::gui
