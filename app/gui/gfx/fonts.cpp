#include "gfx/fonts.h"

#include "logic/data_paths.h"

#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <malloc.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace attention_lab::gfx {

namespace {
float g_font_size = 0.0f;  // the size the atlas was built at (one atlas per process)
bool g_light = false;      // the theme in use
}  // namespace

AccentColor accent(Accent which) {
  // Dark theme: bright accents; light theme: deep ones (a projector washes pale colours out).
  switch (which) {
    case Accent::Highlight: return g_light ? AccentColor{0.70f, 0.30f, 0.00f, 1} : AccentColor{1.0f, 0.85f, 0.3f, 1};
    case Accent::Pin: return g_light ? AccentColor{0.65f, 0.00f, 0.50f, 1} : AccentColor{1.0f, 0.5f, 0.85f, 1};
    case Accent::Warning: return g_light ? AccentColor{0.75f, 0.35f, 0.00f, 1} : AccentColor{1.0f, 0.6f, 0.2f, 1};
    case Accent::Error: return g_light ? AccentColor{0.75f, 0.00f, 0.00f, 1} : AccentColor{1.0f, 0.4f, 0.4f, 1};
    case Accent::Status: return g_light ? AccentColor{0.00f, 0.30f, 0.70f, 1} : AccentColor{0.6f, 0.85f, 1.0f, 1};
  }
  return {1, 1, 1, 1};
}

void add_font(ImFontAtlas* atlas, float size) {
  // Latin, Latin Extended (Ŝ), Greek, phonetic sub/superscripts (ᵀ), punctuation (′ …),
  // sub/superscript digits, arrows, math operators, control pictures (␣, the visible
  // space of GPT-2's tokens), block elements (▁, SentencePiece's space), shapes (◀),
  // Latin Extended-C (ⱼ).
  static const ImWchar ranges[] = {0x0020, 0x00FF, 0x0100, 0x024F, 0x0370, 0x03FF, 0x1D00, 0x1DBF, 0x2000, 0x206F,
                                   0x2070, 0x209F, 0x2190, 0x21FF, 0x2200, 0x22FF, 0x2400, 0x243F, 0x2580, 0x259F,
                                   0x25A0, 0x25FF, 0x2C60, 0x2C7F, 0};
  const std::string path = attention_lab::gui::font_path("DejaVuSans.ttf");
  if (!path.empty() && atlas->AddFontFromFileTTF(path.c_str(), size, nullptr, ranges)) return;
  std::fprintf(stderr,
               "attention-lab: DejaVuSans.ttf not found in %s/fonts or the system's font folders (install "
               "fonts-dejavu-core); using the built-in font (math symbols will be missing)\n",
               attention_lab::gui::data_dir().c_str());
  ImFontConfig config;
  config.SizePixels = size;
  atlas->AddFontDefault(&config);
}

void load_fonts(float size) {
  g_font_size = size;
  add_font(ImGui::GetIO().Fonts, size);
}

void rebuild_fonts(float size) {
  ImGui::GetIO().Fonts->Clear();
  load_fonts(size);
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  // Rasterizing an atlas at a large size (presenter mode, Ctrl+plus) makes
  // tens of MiB of small allocations that are freed again at once; glibc keeps
  // those pages (the soak measured 20-30 MiB kept after one trip to 4x and
  // back). A rebuild is rare and this is cheap: hand them back.
  malloc_trim(0);
}

float em() { return ImGui::GetFontSize() / kBaseFontSize; }

float current_font_size() { return g_font_size; }

bool theme_is_light() { return g_light; }

void set_accents(bool light) { g_light = light; }

void apply_theme(bool light) {
  g_light = light;
  ImGuiStyle style;  // fresh sizes, then colours
  if (light) {
    ImGui::StyleColorsLight(&style);
    ImVec4* c = style.Colors;
    // Black on white with saturated accents: survives a washed-out projector.
    c[ImGuiCol_Text] = ImVec4(0.0f, 0.0f, 0.0f, 1.0f);
    c[ImGuiCol_TextDisabled] = ImVec4(0.25f, 0.25f, 0.25f, 1.0f);
    c[ImGuiCol_WindowBg] = ImVec4(1.0f, 1.0f, 1.0f, 1.0f);
    c[ImGuiCol_ChildBg] = ImVec4(1.0f, 1.0f, 1.0f, 1.0f);
    c[ImGuiCol_Border] = ImVec4(0.0f, 0.0f, 0.0f, 0.6f);
    c[ImGuiCol_Button] = ImVec4(0.10f, 0.35f, 0.80f, 0.25f);
    c[ImGuiCol_ButtonActive] = ImVec4(0.10f, 0.35f, 0.80f, 0.9f);
    style.FrameBorderSize = 1.0f;
    style.WindowBorderSize = 2.0f;
  } else {
    ImGui::StyleColorsDark(&style);
  }
  // Dialogs opaque: at ImGui's 94 % the heatmaps' grids showed through a file list.
  style.Colors[ImGuiCol_PopupBg].w = 1.0f;
  style.FrameRounding = 3.0f;
  ImGui::GetStyle() = style;
}

}  // namespace attention_lab::gfx
