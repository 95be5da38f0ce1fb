#include "gfx/offscreen_target.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace attention_lab::gfx {

int max_offscreen_size() {
  GLint texture = 0, renderbuffer = 0, viewport[2] = {};
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &texture);
  glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &renderbuffer);
  glGetIntegerv(GL_MAX_VIEWPORT_DIMS, viewport);
  return std::min({texture, renderbuffer, viewport[0], viewport[1]});
}

OffscreenTarget::~OffscreenTarget() {
  if (framebuffer_) glDeleteFramebuffers(1, &framebuffer_);
  if (colour_) glDeleteTextures(1, &colour_);
}

std::string OffscreenTarget::create(int width, int height) {
  const int limit = max_offscreen_size();
  if (width <= 0 || height <= 0 || width > limit || height > limit)
    return "the picture would be " + std::to_string(width) + "×" + std::to_string(height) +
           " pixels; this OpenGL renders at most " + std::to_string(limit) + " on a side (choose a smaller scale)";
  // Creating binds the new objects: remember what was bound to put it back.
  GLint previous_texture = 0, previous_framebuffer = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous_texture);
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previous_framebuffer);
  glGenTextures(1, &colour_);
  glBindTexture(GL_TEXTURE_2D, colour_);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glGenFramebuffers(1, &framebuffer_);
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, colour_, 0);
  const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(previous_framebuffer));
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous_texture));
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    char code[16];
    std::snprintf(code, sizeof code, "0x%04x", status);
    return std::string("the off-screen framebuffer is incomplete (status ") + code + ")";
  }
  width_ = width, height_ = height;
  return {};
}

OffscreenTarget::Binding::Binding(const OffscreenTarget& target) {
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previous_framebuffer_);
  glGetIntegerv(GL_VIEWPORT, previous_viewport_);
  glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer_);
  glViewport(0, 0, target.width_, target.height_);
}

OffscreenTarget::Binding::~Binding() {
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(previous_framebuffer_));
  glViewport(previous_viewport_[0], previous_viewport_[1], previous_viewport_[2], previous_viewport_[3]);
}

std::vector<unsigned char> OffscreenTarget::read_rgba() const {
  const std::size_t stride = static_cast<std::size_t>(width_) * 4;
  std::vector<unsigned char> pixels(stride * static_cast<std::size_t>(height_));
  GLint previous_framebuffer = 0;
  glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &previous_framebuffer);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer_);
  glReadBuffer(GL_COLOR_ATTACHMENT0);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, static_cast<GLuint>(previous_framebuffer));
  // GL's rows run bottom-up: put the top row first.
  std::vector<unsigned char> row(stride);
  for (int y = 0; y < height_ / 2; ++y) {
    unsigned char* a = pixels.data() + static_cast<std::size_t>(y) * stride;
    unsigned char* b = pixels.data() + static_cast<std::size_t>(height_ - 1 - y) * stride;
    std::memcpy(row.data(), a, stride);
    std::memcpy(a, b, stride);
    std::memcpy(b, row.data(), stride);
  }
  for (std::size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;
  return pixels;
}

}  // namespace attention_lab::gfx
