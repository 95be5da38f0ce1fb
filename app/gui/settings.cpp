#include "settings.h"

#include "attention_lab/scenario_io.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace attention_lab::gui {

std::filesystem::path config_dir() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "attention-lab";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".config" / "attention-lab";
  return std::filesystem::temp_directory_path() / "attention-lab";
}

void Settings::add_recent(const std::string& path) {
  std::error_code ec;
  const std::string abs = std::filesystem::absolute(path, ec).string();
  const std::string& p = ec ? path : abs;
  recent_files.erase(std::remove(recent_files.begin(), recent_files.end(), p), recent_files.end());
  recent_files.insert(recent_files.begin(), p);
  if (recent_files.size() > kMaxRecent) recent_files.resize(kMaxRecent);
}

void Settings::load() {
  std::ifstream in(config_dir() / "recent.txt");
  std::string line;
  recent_files.clear();
  while (std::getline(in, line) && recent_files.size() < kMaxRecent)
    if (!line.empty()) recent_files.push_back(line);
}

void Settings::save() const {
  std::error_code ec;
  std::filesystem::create_directories(config_dir(), ec);
  std::string text;
  for (const auto& f : recent_files) text += f + "\n";
  (void)write_file_atomically(config_dir() / "recent.txt", text);
}

}  // namespace attention_lab::gui
