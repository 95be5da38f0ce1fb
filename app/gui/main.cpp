// attention-lab: sets up a window (or an off-screen surface), OpenGL and Dear
// ImGui, runs the frame loop, tears down. Everything the user sees is built by App.

#include "app.h"
#include "gfx/screenshot.h"
#include "logic/animation_clock.h"
#include "logic/frame_pacer.h"
#include "logic/frame_timer.h"
#include "gfx/fonts.h"
#include "platform/surface.h"
#include "attention_lab/huge_pages.h"
#include "attention_lab/presets.h"
#include "attention_lab/version.h"
#include "panels/panels.h"
#include "options.h"

#include <glad/gl.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

namespace {

using attention_lab::gui::App;

// How often a window waiting on background work redraws (its progress bar).
constexpr double kWorkRedrawSeconds = 0.25;

// Pictures made from the command line need no display: with none (no DISPLAY,
// no WAYLAND_DISPLAY) they are drawn off screen through EGL.
bool has_display() {
  const char* x11 = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  return (x11 && *x11) || (wayland && *wayland);
}

// `text` on one line: each line break a space.
std::string one_line(const std::string& text) {
  std::string line;
  for (const char ch : text)
    if (ch != '\n') line += ch;
    else if (!line.empty() && line.back() != ' ') line += ' ';
  return line;
}

// What the command line asked of the last frame: the export, the screenshot
// (of the back buffer, fb_w × fb_h). 0, or 1 after saying what failed.
int make_picture(App& app, const attention_lab::gui::Options& opts, int fb_w, int fb_h) {
  int status = 0;
  if (!opts.export_target.empty()) {
    if (const auto export_error = app.export_now(); !export_error.empty()) {
      std::fprintf(stderr, "attention-lab: %s\n", export_error.c_str());
      status = 1;
    }
  }
  if (!opts.screenshot.empty()) {
    if (const auto shot_error = attention_lab::gfx::save_framebuffer_png(opts.screenshot, fb_w, fb_h); !shot_error.empty()) {
      std::fprintf(stderr, "attention-lab: %s\n", shot_error.c_str());
      status = 1;
    }
  }
  return status;
}

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

  const bool exporting = !opts.export_target.empty();
  const bool screenshot = !opts.screenshot.empty();
  std::string surface_error;
  std::unique_ptr<attention_lab::gui::Surface> surface =
      (exporting || screenshot || opts.check_slides) && !has_display()
          ? attention_lab::gui::open_offscreen(opts, surface_error)
          : attention_lab::gui::open_window(opts, exporting || opts.check_slides, surface_error);
  if (!surface) {
    std::fprintf(stderr, "attention-lab: %s\n", surface_error.c_str());
    return 1;
  }

  // The app exists before Dear ImGui so our window callbacks are installed
  // first; ImGui's backend then chains to them.
  std::optional<App> owner;  // reset before the GL context goes away
  App& app = owner.emplace(opts);
  surface->connect(app);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // layout is fixed; nothing to persist in the working directory
  attention_lab::gfx::apply_theme(false);
  attention_lab::gfx::load_fonts(attention_lab::gfx::kBaseFontSize);
  surface->init_imgui();
  ImGui_ImplOpenGL3_Init("#version 330 core");
  // 0.5 s, as on most desktops (ImGui's own 0.3 s misses slower double-clicks).
  io.MouseDoubleClickTime = 0.5f;

  int status = 0;
  {
    if (auto err = app.init(surface->window()); !err.empty()) {
      std::fprintf(stderr, "attention-lab: %s\n", err.c_str());
      status = 2;
    } else {
      // Pictures from the command line are made of frames of fixed length, so
      // ImGui's own timers (the text cursor's blink, tooltips) are the same every run.
      const bool fixed_frames = screenshot || exporting || opts.check_slides;
      const bool measuring = !opts.frame_stats.empty();
      attention_lab::gui::FrameTimer timer;
      attention_lab::gui::FramePacer pacer(surface->refresh_hz());
      const auto seconds_now = [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      };
      int frame = 0;  // frames of finished results
      int drawn = 0;  // every frame
      std::string last_title;
      while (!app.should_close()) {
        // Interactive frames no faster than the display refreshes (see frame_pacer.h).
        if (!fixed_frames && !measuring) {
          if (const double wait = pacer.wait_before(seconds_now()); wait > 0.0)
            std::this_thread::sleep_for(std::chrono::duration<double>(wait));
          pacer.frame_started(seconds_now());
        }
        // Idle windows sleep until input; animations and screenshots keep
        // going. While work runs on another thread the window redraws four
        // times a second for its progress (its end wakes it at once): drawn
        // continuously by a software renderer, the frames took 40 % of the
        // CPUs a model's forward pass needed, and at ten a second 15 %.
        timer.frame_started();
        surface->wait_for_events(fixed_frames || measuring || app.animating() || drawn < 3 || surface->input_pending(),
                                 app.waiting_on_work() ? kWorkRedrawSeconds : 0.25);
        const auto work_started = std::chrono::steady_clock::now();  // not the wait for input
        // A font scale change (Ctrl+plus/minus, presenter mode) rebuilds the atlas
        // at the new size between frames, so text stays sharp instead of stretched.
        if (const float size = app.wanted_font_size(); size != attention_lab::gfx::current_font_size())
          attention_lab::gfx::rebuild_fonts(size);
        ImGui_ImplOpenGL3_NewFrame();
        surface->begin_frame();
        if (fixed_frames) io.DeltaTime = static_cast<float>(attention_lab::gui::AnimationClock::kFrameSeconds);
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
        surface->framebuffer_size(fb_w, fb_h);
        glViewport(0, 0, fb_w, fb_h);
        glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
        app.after_render(fb_w, fb_h);
        // Screenshots and measurements are of finished results, not of the progress overlay.
        const bool finished_result = !app.state().busy() && !app.state().gradients.computing();
        if (finished_result) ++frame;
        ++drawn;
        const bool last_frame = frame >= std::max(opts.frames, 2);
        // A screenshot reads the back buffer, so its frame is not swapped.
        surface->end_frame(!(screenshot && last_frame));
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
          std::fprintf(stderr, "attention-lab: %s\n", one_line(app.state().error_popup).c_str());
          status = 2;
          break;
        }
        if ((exporting || screenshot) && last_frame) status = std::max(status, make_picture(app, opts, fb_w, fb_h));
        if ((fixed_frames || measuring) && last_frame && !opts.check_slides) break;  // (the check quits when done)
        if (const std::string t = app.state().window_title(); t != last_title) {
          surface->set_title(t);
          last_title = t;
        }
      }
    }
  }
  owner.reset();  // textures and shaders need the context
  ImGui_ImplOpenGL3_Shutdown();
  surface->shutdown_imgui();
  ImGui::DestroyContext();
  surface.reset();
  return status;
}
