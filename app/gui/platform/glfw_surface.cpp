// The desktop window: GLFW, its input callbacks and Dear ImGui's GLFW backend.

#include "platform/surface.h"

#include "app.h"
#include "gfx/window_icon.h"
#include "logic/mouse_button_pacer.h"
#include "logic/ui_wake.h"
#include "options.h"

#include <glad/gl.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <vector>

namespace attention_lab::gui {
namespace {

// Key releases held back by one frame (see the key callback in init_imgui).
struct DeferredKeys {
  struct Release {
    int key, scancode, mods;
  };
  bool pressed_this_frame[GLFW_KEY_LAST + 1] = {};
  std::vector<Release> deferred;

  // After each frame: deliver the releases held back, so the next frame sees the keys up.
  void frame_done(GLFWwindow* window) {
    std::fill(std::begin(pressed_this_frame), std::end(pressed_this_frame), false);
    const auto releases = std::move(deferred);
    deferred.clear();
    for (const Release& r : releases) ImGui_ImplGlfw_KeyCallback(window, r.key, r.scancode, GLFW_RELEASE, r.mods);
  }
};
DeferredKeys g_keys;  // GLFW callbacks are plain functions: one window, one instance
MouseButtonPacer g_mouse;

class GlfwSurface final : public Surface {
 public:
  explicit GlfwSurface(GLFWwindow* window) : window_(window) {}
  ~GlfwSurface() override {
    glfwSetWindowUserPointer(window_, nullptr);
    glfwDestroyWindow(window_);
    set_ui_wake(nullptr);  // a detached job may end after this
    glfwTerminate();
  }

  GLFWwindow* window() const override { return window_; }

  void connect(App& app) override {
    glfwSetWindowUserPointer(window_, &app);
    glfwSetKeyCallback(window_, [](GLFWwindow* w, int key, int, int action, int mods) {
      if (action == GLFW_PRESS || action == GLFW_REPEAT) static_cast<App*>(glfwGetWindowUserPointer(w))->on_key(key, mods);
    });
    glfwSetWindowCloseCallback(window_, [](GLFWwindow* w) {
      glfwSetWindowShouldClose(w, GLFW_FALSE);  // ask first when there are unsaved changes
      static_cast<App*>(glfwGetWindowUserPointer(w))->request_close();
    });
    glfwSetDropCallback(window_, [](GLFWwindow* w, int count, const char** paths) {
      static_cast<App*>(glfwGetWindowUserPointer(w))->drop_files(count, paths);
    });
  }

  void init_imgui() override {
    // ImGui's backend chains to the callbacks connect() installed.
    ImGui_ImplGlfw_InitForOpenGL(window_, true);
    // Dear ImGui 1.86 reads key state once per frame, so a key pressed and
    // released within one frame (a fast typist, xdotool, a presentation
    // clicker) would vanish. Releases of keys pressed this frame wait for the next.
    glfwSetKeyCallback(window_, [](GLFWwindow* w, int key, int scancode, int action, int mods) {
      if (action == GLFW_RELEASE && key >= 0 && key < GLFW_KEY_LAST + 1 && g_keys.pressed_this_frame[key]) {
        g_keys.deferred.push_back({key, scancode, mods});
        return;
      }
      if (action == GLFW_PRESS && key >= 0 && key <= GLFW_KEY_LAST) g_keys.pressed_this_frame[key] = true;
      ImGui_ImplGlfw_KeyCallback(w, key, scancode, action, mods);
    });
    // Mouse buttons reach ImGui through the pacer: one change a frame, so a
    // double-click within one slow frame is still two clicks.
    glfwSetMouseButtonCallback(window_, [](GLFWwindow* w, int button, int action, int mods) {
      g_mouse.event(button, action == GLFW_PRESS);
      ImGui_ImplGlfw_MouseButtonCallback(w, button, action, mods);
    });
  }

  void shutdown_imgui() override { ImGui_ImplGlfw_Shutdown(); }

  void wait_for_events(bool poll, double timeout_s) override {
    if (poll) glfwPollEvents();
    else glfwWaitEventsTimeout(timeout_s);
  }

  bool input_pending() const override { return g_mouse.pending(); }

  void begin_frame() override {
    ImGui_ImplGlfw_NewFrame();
    g_mouse.advance(ImGui::GetIO().MouseDown);  // after the backend, which reads only "down now"
  }

  void framebuffer_size(int& width, int& height) const override { glfwGetFramebufferSize(window_, &width, &height); }

  void end_frame(bool present) override {
    g_keys.frame_done(window_);
    if (present) glfwSwapBuffers(window_);
  }

  void set_title(const std::string& title) override { glfwSetWindowTitle(window_, title.c_str()); }

  double refresh_hz() const override {
    GLFWmonitor* monitor = glfwGetWindowMonitor(window_);  // full screen: its own monitor
    if (monitor == nullptr) monitor = glfwGetPrimaryMonitor();
    const GLFWvidmode* mode = monitor != nullptr ? glfwGetVideoMode(monitor) : nullptr;
    return mode != nullptr ? mode->refreshRate : 0.0;
  }

 private:
  GLFWwindow* window_;
};

}  // namespace

std::unique_ptr<Surface> open_window(const Options& opts, bool hidden, std::string& error) {
  glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) {
    error = "cannot initialise GLFW (is there a display? try xvfb-run; --export and --screenshot need none)";
    return nullptr;
  }
  set_ui_wake(glfwPostEmptyEvent);  // (thread-safe in GLFW)
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_AUTO_ICONIFY, GLFW_FALSE);  // presenter mode stays up when focus moves away
  // WM_CLASS, so a dock matches the window to attention-lab.desktop (StartupWMClass) and its icon.
  glfwWindowHintString(GLFW_X11_CLASS_NAME, "attention-lab");
  glfwWindowHintString(GLFW_X11_INSTANCE_NAME, "attention-lab");
  if (hidden) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);  // --export renders off screen; nothing to show
  GLFWwindow* window = glfwCreateWindow(opts.width, opts.height, "Attention Lab", nullptr, nullptr);
  if (!window) {
    error = "cannot create an OpenGL 3.3 window";
    set_ui_wake(nullptr);
    glfwTerminate();
    return nullptr;
  }
  auto surface = std::make_unique<GlfwSurface>(window);
  gfx::set_window_icon(window);
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);
  if (!gladLoadGL(glfwGetProcAddress)) {
    error = "cannot load OpenGL functions";
    return nullptr;
  }
  return surface;
}

}  // namespace attention_lab::gui
