#pragma once
// What the app remembers between runs, in the user's config directory
// ($XDG_CONFIG_HOME/attention-lab or ~/.config/attention-lab/settings.txt):
// recent files and the font scales of the normal and presenter views.

#include <filesystem>
#include <string>
#include <vector>

namespace attention_lab::gui {

std::filesystem::path config_dir();

struct Settings {
  std::vector<std::string> recent_files;  // most recent first
  float font_scale = 1.0f;                // normal view
  float presenter_font_scale = 1.75f;     // presenter mode (F5): readable from the back of a room
  static constexpr std::size_t kMaxRecent = 8;
  static constexpr float kFontStep = 1.125f;  // one Ctrl+plus or Ctrl+minus
  static constexpr float kMinFontScale = 0.75f;
  static constexpr float kMaxFontScale = 4.0f;

  void add_recent(const std::string& path);
  // Unknown or malformed lines are ignored: a damaged file never stops the app.
  void load();
  void save() const;  // atomic; failures are ignored (a read-only home must not stop the app)

  // "key=value" lines, for load/save and tests.
  static Settings parse(const std::string& text);
  std::string to_text() const;
};

}  // namespace attention_lab::gui
