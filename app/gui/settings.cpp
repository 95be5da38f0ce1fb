#include "settings.h"

#include "attention_lab/scenario_io.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

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

Settings Settings::parse(const std::string& text) {
  Settings s;
  std::istringstream in(text);
  std::string line;
  const auto scale = [](const std::string& v, float fallback) {
    char* end = nullptr;
    const float f = std::strtof(v.c_str(), &end);
    if (end == v.c_str() || !std::isfinite(f)) return fallback;
    return std::clamp(f, kMinFontScale, kMaxFontScale);
  };
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "recent" && !value.empty() && s.recent_files.size() < kMaxRecent) s.recent_files.push_back(value);
    else if (key == "font_scale") s.font_scale = scale(value, s.font_scale);
    else if (key == "presenter_font_scale") s.presenter_font_scale = scale(value, s.presenter_font_scale);
  }
  return s;
}

std::string Settings::to_text() const {
  std::ostringstream out;
  out << "font_scale=" << font_scale << "\npresenter_font_scale=" << presenter_font_scale << "\n";
  for (const auto& f : recent_files) out << "recent=" << f << "\n";
  return out.str();
}

void Settings::load() {
  std::ifstream in(config_dir() / "settings.txt");
  std::ostringstream text;
  text << in.rdbuf();
  *this = parse(text.str());
}

void Settings::save() const {
  std::error_code ec;
  std::filesystem::create_directories(config_dir(), ec);
  (void)write_file_atomically(config_dir() / "settings.txt", to_text());
}

}  // namespace attention_lab::gui
