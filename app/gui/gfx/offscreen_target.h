#pragma once
// An off-screen framebuffer (RGBA8 colour texture) to render exports into,
// never the window: what is on screen (a dialog, a tooltip) cannot leak into
// the picture, and the picture may be larger than the window.

#include <glad/gl.h>

#include <string>
#include <vector>

namespace attention_lab::gfx {

class OffscreenTarget {
 public:
  OffscreenTarget() = default;
  ~OffscreenTarget();
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;

  // Allocates width × height pixels. Returns "" or why not (larger than this
  // GL allows, incomplete framebuffer).
  std::string create(int width, int height);
  int width() const { return width_; }
  int height() const { return height_; }

  // Draws go to this target while a Binding lives; it restores the
  // framebuffer and viewport that were bound before.
  class Binding {
   public:
    explicit Binding(const OffscreenTarget& target);
    ~Binding();
    Binding(const Binding&) = delete;
    Binding& operator=(const Binding&) = delete;

   private:
    GLint previous_framebuffer_ = 0;
    GLint previous_viewport_[4] = {};
  };

  // The pixels, top row first, RGBA, alpha forced opaque.
  std::vector<unsigned char> read_rgba() const;

 private:
  GLuint framebuffer_ = 0;
  GLuint colour_ = 0;
  int width_ = 0, height_ = 0;
};

// The largest width or height create() accepts on this GL.
int max_offscreen_size();

}  // namespace attention_lab::gfx
