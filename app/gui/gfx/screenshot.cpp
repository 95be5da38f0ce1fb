#include "gfx/screenshot.h"

#include <glad/gl.h>

#include <algorithm>
#include <cstring>
#include <vector>

extern "C" {
int stbi_write_png(char const* filename, int w, int h, int comp, const void* data, int stride_in_bytes);
void stbi_flip_vertically_on_write(int flip_boolean);
}

namespace attention_lab::gfx {

std::string save_framebuffer_png(const std::string& path, int fb_w, int fb_h, int x, int y, int w, int h) {
  if (w <= 0 || h <= 0) x = 0, y = 0, w = fb_w, h = fb_h;
  x = std::clamp(x, 0, fb_w), y = std::clamp(y, 0, fb_h);
  w = std::min(w, fb_w - x), h = std::min(h, fb_h - y);
  if (w <= 0 || h <= 0) return path + ": nothing to capture";
  std::vector<unsigned char> pixels(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4);
  // A window's back buffer, or the colour of the framebuffer object drawn into off screen.
  GLint framebuffer = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &framebuffer);
  glReadBuffer(framebuffer ? GL_COLOR_ATTACHMENT0 : GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  // GL's origin is bottom-left; the rows come out upside down and are flipped on write.
  glReadPixels(x, fb_h - y - h, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  for (std::size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;  // opaque, whatever the alpha
  stbi_flip_vertically_on_write(1);
  const int ok = stbi_write_png(path.c_str(), w, h, 4, pixels.data(), w * 4);
  stbi_flip_vertically_on_write(0);
  return ok ? std::string() : path + ": could not write the PNG";
}

std::string write_rgba_png(const std::string& path, int width, int height, const unsigned char* rgba) {
  stbi_flip_vertically_on_write(0);
  return stbi_write_png(path.c_str(), width, height, 4, rgba, width * 4) ? std::string()
                                                                         : path + ": could not write the PNG";
}

}  // namespace attention_lab::gfx
