#pragma once
// Fonts and themes: DejaVu Sans with the math glyphs we print (·, √, ∞, Σ,
// −, ÷, ᵀ, subscripts), rebuilt at a new size when the font scale changes,
// and the dark (desk) and light high-contrast (projector) themes.

struct ImFontAtlas;

namespace attention_lab::gfx {

inline constexpr float kBaseFontSize = 16.0f;
// The current ImGui font size over the base size: sizes written for a 16 px
// font (a 52 px label strip) are multiplied by it, so they grow with the text.
float em();

void load_fonts(float size);         // before the first frame
void rebuild_fonts(float size);      // between frames: atlas and GL texture
float current_font_size();
// The same font into another atlas (an export's context), leaving the screen's alone.
void add_font(ImFontAtlas* atlas, float size);

// Dark for the desk; light with strong contrast for a projector (presenter mode).
void apply_theme(bool light_high_contrast);
bool theme_is_light();
// Only the accents of a theme (an export draws with the light one, then the screen's comes back).
void set_accents(bool light_high_contrast);

// Text accents that read on the current theme's background.
enum class Accent { Highlight, Pin, Warning, Error, Status };
struct AccentColor {
  float r, g, b, a;
};
AccentColor accent(Accent which);

}  // namespace attention_lab::gfx
