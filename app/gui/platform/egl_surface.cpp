// Frames with no display: an OpenGL 3.3 core context from Mesa's EGL
// surfaceless platform, drawn into a framebuffer object of the requested size.
// Only pictures are made this way (--export, --screenshot): there is no input.

#include "platform/surface.h"

#include "options.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <glad/gl.h>
#include <imgui.h>

#include <cfloat>
#include <cstdio>
#include <cstring>
#include <string>

namespace attention_lab::gui {
namespace {

std::string egl_error(const char* what) {
  char text[96];
  std::snprintf(text, sizeof text, "%s failed (EGL error 0x%04x)", what, static_cast<unsigned>(eglGetError()));
  return text;
}

class EglSurface final : public Surface {
 public:
  ~EglSurface() override {
    if (framebuffer_) glDeleteFramebuffers(1, &framebuffer_);
    if (colour_) glDeleteRenderbuffers(1, &colour_);
    if (display_ != EGL_NO_DISPLAY) {
      eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      if (context_ != EGL_NO_CONTEXT) eglDestroyContext(display_, context_);
      eglTerminate(display_);
    }
  }

  std::string open(int width, int height) {
    width_ = width, height_ = height;
    const auto get_platform_display =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!get_platform_display) return "this EGL has no eglGetPlatformDisplayEXT (Mesa's libegl-mesa0 has)";
    display_ = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (display_ == EGL_NO_DISPLAY) return egl_error("opening Mesa's surfaceless EGL display");
    if (!eglInitialize(display_, nullptr, nullptr)) {
      display_ = EGL_NO_DISPLAY;
      return egl_error("eglInitialize on the surfaceless display");
    }
    if (!eglBindAPI(EGL_OPENGL_API)) return egl_error("eglBindAPI(OpenGL)");
    // No surface, so no config is needed (Mesa's surfaceless platform may offer
    // none): EGL_KHR_no_config_context, or else the first OpenGL config.
    EGLConfig config = EGL_NO_CONFIG_KHR;
    const char* extensions = eglQueryString(display_, EGL_EXTENSIONS);
    if (!extensions || !std::strstr(extensions, "EGL_KHR_no_config_context")) {
      const EGLint config_attributes[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
      EGLint configs = 0;
      if (!eglChooseConfig(display_, config_attributes, &config, 1, &configs) || configs < 1)
        return egl_error("choosing an OpenGL EGL config");
    }
    const EGLint context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                         EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    context_ = eglCreateContext(display_, config, EGL_NO_CONTEXT, context_attributes);
    if (context_ == EGL_NO_CONTEXT) return egl_error("creating an OpenGL 3.3 core context");
    if (!eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_))
      return egl_error("making the surfaceless context current");
    if (!gladLoadGL(reinterpret_cast<GLADloadfunc>(eglGetProcAddress))) return "cannot load OpenGL functions through EGL";
    // The framebuffer every frame is drawn into (what a window's back buffer would be).
    glGenRenderbuffers(1, &colour_);
    glBindRenderbuffer(GL_RENDERBUFFER, colour_);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width_, height_);
    glGenFramebuffers(1, &framebuffer_);
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, colour_);
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
      return "an off-screen framebuffer of " + std::to_string(width_) + "×" + std::to_string(height_) + " px is not complete";
    return {};
  }

  GLFWwindow* window() const override { return nullptr; }
  void connect(App&) override {}
  void init_imgui() override {
    ImGuiIO& io = ImGui::GetIO();
    io.BackendPlatformName = "attention_lab_offscreen";
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  }
  void shutdown_imgui() override { ImGui::GetIO().BackendPlatformName = nullptr; }
  void wait_for_events(bool, double) override {}
  bool input_pending() const override { return false; }
  void begin_frame() override {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(static_cast<float>(width_), static_cast<float>(height_));
    io.DisplayFramebufferScale = ImVec2(1.0f, 1.0f);
    io.DeltaTime = 1.0f / 60.0f;
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_);
  }
  void framebuffer_size(int& width, int& height) const override { width = width_, height = height_; }
  void end_frame(bool) override {}
  void set_title(const std::string&) override {}
  double refresh_hz() const override { return 0.0; }  // no display: pictures are not paced

 private:
  EGLDisplay display_ = EGL_NO_DISPLAY;
  EGLContext context_ = EGL_NO_CONTEXT;
  GLuint framebuffer_ = 0, colour_ = 0;
  int width_ = 0, height_ = 0;
};

}  // namespace

std::unique_ptr<Surface> open_offscreen(const Options& opts, std::string& error) {
  auto surface = std::make_unique<EglSurface>();
  error = surface->open(opts.width, opts.height);
  if (!error.empty()) {
    error = "no display, and no off-screen OpenGL either: " + error;
    return nullptr;
  }
  return surface;
}

}  // namespace attention_lab::gui
