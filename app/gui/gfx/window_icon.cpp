#include "gfx/window_icon.h"

#include "logic/data_paths.h"

#include <GLFW/glfw3.h>
#include <stb/stb_image.h>  // declarations only: the implementation is Debian's libstb, which imgui links

#include <vector>

namespace attention_lab::gfx {

void set_window_icon(GLFWwindow* window) {
  std::vector<GLFWimage> images;
  std::vector<unsigned char*> pixels;
  for (int size : {16, 32, 48, 64, 128}) {
    const auto path = gui::icon_path(size);
    int w = 0, h = 0, channels = 0;
    unsigned char* p = path.empty() ? nullptr : stbi_load(path.c_str(), &w, &h, &channels, 4);
    if (!p) continue;
    pixels.push_back(p);
    images.push_back(GLFWimage{w, h, p});
  }
  if (!images.empty()) glfwSetWindowIcon(window, static_cast<int>(images.size()), images.data());
  for (unsigned char* p : pixels) stbi_image_free(p);  // GLFW copied them
}

}  // namespace attention_lab::gfx
