#pragma once
// What the app remembers between runs (recent files), in the user's config
// directory: $XDG_CONFIG_HOME/attention-lab or ~/.config/attention-lab.

#include <filesystem>
#include <string>
#include <vector>

namespace attention_lab::gui {

std::filesystem::path config_dir();

struct Settings {
  std::vector<std::string> recent_files;  // most recent first
  static constexpr std::size_t kMaxRecent = 8;

  void add_recent(const std::string& path);
  void load();
  void save() const;  // atomic; failures are ignored (a read-only home must not stop the app)
};

}  // namespace attention_lab::gui
