// attention-lab: sets up GLFW, OpenGL and Dear ImGui, runs the frame loop,
// tears down. Everything the user sees is built by App.

#include "app.h"
#include "gfx/screenshot.h"
#include "logic/animation_clock.h"
#include "logic/frame_timer.h"
#include "logic/mouse_button_pacer.h"
#include "logic/ui_wake.h"
#include "gfx/fonts.h"
#include "gfx/window_icon.h"
#include "attention_lab/huge_pages.h"
#include "attention_lab/presets.h"
#include "attention_lab/version.h"
#include "panels/panels.h"
#include "options.h"

#include <glad/gl.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <cfloat>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

namespace {

using attention_lab::gui::App;

// How often a window waiting on background work redraws (its progress bar).
constexpr double kWorkRedrawSeconds = 0.25;

// Key releases held back by one frame (see the key callback in main).
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
attention_lab::gui::MouseButtonPacer g_mouse;

}  // namespace

int main(int argc, char** argv) {
  attention_lab::restart_with_huge_pages(argv);
  const auto parsed = attention_lab::gui::parse_options(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.options) {
    std::fprintf(stderr, "attention-lab: %s (see --help)\n", parsed.error.c_str());
    return 2;
  }
  const auto& opts = *parsed.options;
  if (opts.help) {
    std::vector<std::string> presets;
    for (const auto& p : attention_lab::presets()) presets.push_back(p.name);
    std::fputs(attention_lab::gui::usage(presets, attention_lab::gui::builtin_lesson_names()).c_str(), stdout);
    return 0;
  }
  if (opts.version) {
    std::printf("attention-lab %s\n", attention_lab::version());
    return 0;
  }

  glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) {
    std::fprintf(stderr, "attention-lab: cannot initialise GLFW (is there a display? try xvfb-run)\n");
    return 1;
  }
  attention_lab::gui::set_ui_wake(glfwPostEmptyEvent);  // (thread-safe in GLFW)
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_AUTO_ICONIFY, GLFW_FALSE);  // presenter mode stays up when focus moves away
  // WM_CLASS, so a dock matches the window to attention-lab.desktop (StartupWMClass) and its icon.
  glfwWindowHintString(GLFW_X11_CLASS_NAME, "attention-lab");
  glfwWindowHintString(GLFW_X11_INSTANCE_NAME, "attention-lab");
  const bool exporting = !opts.export_target.empty();
  if (exporting) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);  // --export renders off screen; nothing to show
  GLFWwindow* window = glfwCreateWindow(opts.width, opts.height, "Attention Lab", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "attention-lab: cannot create an OpenGL 3.3 window\n");
    attention_lab::gui::set_ui_wake(nullptr);
    glfwTerminate();
    return 1;
  }
  attention_lab::gfx::set_window_icon(window);
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);
  if (!gladLoadGL(glfwGetProcAddress)) {
    std::fprintf(stderr, "attention-lab: cannot load OpenGL functions\n");
    return 1;
  }

  // The app exists before Dear ImGui so our GLFW callbacks are installed
  // first; ImGui's backend then chains to them.
  std::optional<App> owner;  // reset before the GL context goes away
  App& app = owner.emplace(opts);
  glfwSetWindowUserPointer(window, &app);
  glfwSetKeyCallback(window, [](GLFWwindow* w, int key, int, int action, int mods) {
    if (action == GLFW_PRESS || action == GLFW_REPEAT) static_cast<App*>(glfwGetWindowUserPointer(w))->on_key(key, mods);
  });
  glfwSetWindowCloseCallback(window, [](GLFWwindow* w) {
    glfwSetWindowShouldClose(w, GLFW_FALSE);  // ask first when there are unsaved changes
    static_cast<App*>(glfwGetWindowUserPointer(w))->request_close();
  });
  glfwSetDropCallback(window, [](GLFWwindow* w, int count, const char** paths) {
    static_cast<App*>(glfwGetWindowUserPointer(w))->drop_files(count, paths);
  });

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // layout is fixed; nothing to persist in the working directory
  attention_lab::gfx::apply_theme(false);
  attention_lab::gfx::load_fonts(attention_lab::gfx::kBaseFontSize);
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  // Dear ImGui 1.86 reads key state once per frame, so a key pressed and
  // released within one frame (a fast typist, xdotool, a presentation
  // clicker) would vanish. Releases of keys pressed this frame wait for the next.
  glfwSetKeyCallback(window, [](GLFWwindow* w, int key, int scancode, int action, int mods) {
    if (action == GLFW_RELEASE && key >= 0 && key < GLFW_KEY_LAST + 1 && g_keys.pressed_this_frame[key]) {
      g_keys.deferred.push_back({key, scancode, mods});
      return;
    }
    if (action == GLFW_PRESS && key >= 0 && key <= GLFW_KEY_LAST) g_keys.pressed_this_frame[key] = true;
    ImGui_ImplGlfw_KeyCallback(w, key, scancode, action, mods);
  });

  // Mouse buttons reach ImGui through the pacer: one change a frame, so a
  // double-click within one slow frame is still two clicks.
  glfwSetMouseButtonCallback(window, [](GLFWwindow* w, int button, int action, int mods) {
    g_mouse.event(button, action == GLFW_PRESS);
    ImGui_ImplGlfw_MouseButtonCallback(w, button, action, mods);
  });
  // 0.5 s, as on most desktops (ImGui's own 0.3 s misses slower double-clicks).
  io.MouseDoubleClickTime = 0.5f;

  int status = 0;
  {
    if (auto err = app.init(window); !err.empty()) {
      std::fprintf(stderr, "attention-lab: %s\n", err.c_str());
      status = 2;
    } else {
      const bool screenshot = !opts.screenshot.empty();
      // Pictures from the command line are made of frames of fixed length, so
      // ImGui's own timers (the text cursor's blink, tooltips) are the same every run.
      const bool fixed_frames = screenshot || exporting;
      const bool measuring = !opts.frame_stats.empty();
      attention_lab::gui::FrameTimer timer;
      int frame = 0;  // frames of finished results
      int drawn = 0;  // every frame
      std::string last_title;
      while (!app.should_close()) {
        // Idle windows sleep until input; animations and screenshots keep
        // going. While work runs on another thread the window redraws four
        // times a second for its progress (its end wakes it at once): drawn
        // continuously by a software renderer, the frames took 40 % of the
        // CPUs a model's forward pass needed, and at ten a second 15 %.
        timer.frame_started();
        if (fixed_frames || measuring || app.animating() || drawn < 3 || g_mouse.pending())
          glfwPollEvents();
        else
          glfwWaitEventsTimeout(app.waiting_on_work() ? kWorkRedrawSeconds : 0.25);
        const auto work_started = std::chrono::steady_clock::now();  // not the wait for input
        // A font scale change (Ctrl+plus/minus, presenter mode) rebuilds the atlas
        // at the new size between frames, so text stays sharp instead of stretched.
        if (const float size = app.wanted_font_size(); size != attention_lab::gfx::current_font_size())
          attention_lab::gfx::rebuild_fonts(size);
        ImGui_ImplOpenGL3_NewFrame();
        ImGui_ImplGlfw_NewFrame();
        if (fixed_frames) io.DeltaTime = static_cast<float>(attention_lab::gui::AnimationClock::kFrameSeconds);
        g_mouse.advance(io.MouseDown);  // after the backend, which reads only "down now"
        // A picture made from the command line is the same wherever the pointer
        // happens to be: no hover, no tooltip of its own.
        if (fixed_frames) {
          io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
          for (bool& down : io.MouseDown) down = false;
        }
        ImGui::NewFrame();
        app.frame();
        ImGui::Render();
        int fb_w = 0, fb_h = 0;
        glfwGetFramebufferSize(window, &fb_w, &fb_h);
        glViewport(0, 0, fb_w, fb_h);
        glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
        app.after_render(fb_w, fb_h);
        g_keys.frame_done(window);
        // Screenshots and measurements are of finished results, not of the progress overlay.
        const bool finished_result = !app.state().busy();
        if (finished_result) ++frame;
        ++drawn;
        const bool last_frame = frame >= std::max(opts.frames, 2);
        // A screenshot reads the back buffer, so its frame is not swapped.
        if (!(screenshot && last_frame)) glfwSwapBuffers(window);
        app.state().frame_times.add(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - work_started).count());
        if (measuring && last_frame) glFinish();  // the last frame ends when the GPU is done, before any PNG
        timer.frame_finished(measuring && finished_result);  // an interactive session keeps no times
        if (measuring && last_frame) {
          if (const auto stats_error = timer.write(opts.frame_stats, app.state().texture_uploads); !stats_error.empty()) {
            std::fprintf(stderr, "attention-lab: %s\n", stats_error.c_str());
            status = 1;
          }
        }
        // A picture asked for on the command line is not made of an error:
        // a model or file that did not open, a --select outside its stage.
        if (fixed_frames && last_frame && !app.state().error_popup.empty()) {
          std::string message;  // on one line
          for (const char ch : app.state().error_popup)
            if (ch != '\n') message += ch;
            else if (!message.empty() && message.back() != ' ') message += ' ';
          std::fprintf(stderr, "attention-lab: %s\n", message.c_str());
          status = 2;
          break;
        }
        if (exporting && last_frame) {
          if (const auto export_error = app.export_now(); !export_error.empty()) {
            std::fprintf(stderr, "attention-lab: %s\n", export_error.c_str());
            status = 1;
          }
        }
        if (screenshot && last_frame) {
          const auto shot_error = attention_lab::gfx::save_framebuffer_png(opts.screenshot, fb_w, fb_h);
          if (!shot_error.empty()) {
            std::fprintf(stderr, "attention-lab: %s\n", shot_error.c_str());
            status = 1;
          }
        }
        if ((fixed_frames || measuring) && last_frame) break;
        if (const std::string t = app.state().window_title(); t != last_title) {
          glfwSetWindowTitle(window, t.c_str());
          last_title = t;
        }
      }
    }
  }
  owner.reset();  // textures and shaders need the context
  glfwSetWindowUserPointer(window, nullptr);
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  attention_lab::gui::set_ui_wake(nullptr);  // a detached job may end after this
  glfwTerminate();
  return status;
}
