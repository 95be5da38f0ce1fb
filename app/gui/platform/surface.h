#pragma once
// Where the app's frames go: a window on the desktop (GLFW), or, for a picture
// made on a machine without a display, a framebuffer of its own (EGL).

#include <memory>
#include <string>

struct GLFWwindow;

namespace attention_lab::gui {

class App;
struct Options;

class Surface {
 public:
  virtual ~Surface() = default;
  // The desktop window, or nullptr off screen (no presenter full screen, no title).
  virtual GLFWwindow* window() const = 0;
  // Input reaches the app (its callbacks are installed before Dear ImGui's backend).
  virtual void connect(App& app) = 0;
  // Dear ImGui's platform side: after ImGui::CreateContext, before the first frame.
  virtual void init_imgui() = 0;
  virtual void shutdown_imgui() = 0;
  // Waits for input (or up to `timeout_s`), or only takes what came when `poll`.
  virtual void wait_for_events(bool poll, double timeout_s) = 0;
  // True while input is held back for the next frames (a double-click within one frame).
  virtual bool input_pending() const = 0;
  // Before ImGui::NewFrame: the display size, time and input of this frame.
  virtual void begin_frame() = 0;
  virtual void framebuffer_size(int& width, int& height) const = 0;
  // After the frame is rendered: `present` shows it (a picture's last frame is
  // read, not swapped away).
  virtual void end_frame(bool present) = 0;
  virtual void set_title(const std::string& title) = 0;
  // The display's refresh rate in Hz, or 0 when there is none or it is unknown.
  virtual double refresh_hz() const = 0;
};

// The desktop window (hidden for --export). Empty with `error` set when there
// is no display or no OpenGL 3.3.
std::unique_ptr<Surface> open_window(const Options& opts, bool hidden, std::string& error);
// An off-screen OpenGL 3.3 core context of opts' size through Mesa's EGL
// surfaceless platform: --export and --screenshot with no X display.
std::unique_ptr<Surface> open_offscreen(const Options& opts, std::string& error);

}  // namespace attention_lab::gui
