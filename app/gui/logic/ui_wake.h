#pragma once
// Work that finishes on another thread (a background job, the predictions)
// wakes the window's loop, which sleeps between redraws while it waits for
// such work (main.cpp): the result shows at once, not at the next tick.

namespace attention_lab::gui {

using UiWake = void (*)();
// The app sets glfwPostEmptyEvent (callable from any thread); tests set none.
void set_ui_wake(UiWake wake);
void wake_ui();

// Wakes the loop when it goes out of scope: the first thing a worker thread's
// function makes, so every way out of it wakes the window once its result is set.
struct WakeUiOnExit {
  WakeUiOnExit() = default;
  WakeUiOnExit(const WakeUiOnExit&) = delete;
  WakeUiOnExit& operator=(const WakeUiOnExit&) = delete;
  ~WakeUiOnExit() { wake_ui(); }
};

}  // namespace attention_lab::gui
