#pragma once
// The window's own icon (_NET_WM_ICON on X11), for a window manager that does
// not match the window to the desktop entry's icon.

struct GLFWwindow;

namespace attention_lab::gfx {

// Loads the icon's PNGs from the data folder (logic/data_paths.h). An icon
// that is not found leaves the window manager's default: the app works without it.
void set_window_icon(GLFWwindow* window);

}  // namespace attention_lab::gfx
