#pragma once
// Reads the back buffer (after ImGui rendered, before the swap) into a PNG.

#include <string>

namespace attention_lab::gfx {

// Whole framebuffer, or the sub-rectangle (x, y, w, h) in window pixels
// (top-left origin) when w > 0. Returns "" or an error message.
std::string save_framebuffer_png(const std::string& path, int fb_width, int fb_height, int x = 0, int y = 0,
                                 int w = 0, int h = 0);

// RGBA pixels, top row first, as a PNG. Returns "" or an error message.
std::string write_rgba_png(const std::string& path, int width, int height, const unsigned char* rgba);

}  // namespace attention_lab::gfx
