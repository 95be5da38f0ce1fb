#include "logic/data_paths.h"

#include <cstdlib>
#include <system_error>

namespace attention_lab::gui {

namespace fs = std::filesystem;

namespace {
bool is_dir(const fs::path& p) {
  std::error_code ec;
  return !p.empty() && fs::is_directory(p, ec);
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return !p.empty() && fs::is_regular_file(p, ec);
}

fs::path installed_data_dir(const DataPathInputs& in) {
  if (in.executable.empty()) return {};
  return (in.executable.parent_path() / in.bin_to_data).lexically_normal();
}
}  // namespace

fs::path find_data_dir(const DataPathInputs& in) {
  const fs::path installed = installed_data_dir(in);
  // lessons/ is what every complete data folder holds; an empty share/attention-lab
  // left by an old install must not hide the source tree of a build.
  if (is_dir(installed / "lessons")) return installed;
  if (is_dir(in.source_assets / "lessons")) return in.source_assets;
  return installed.empty() ? in.source_assets : installed;
}

fs::path find_lessons_dir(const DataPathInputs& in) {
  if (!in.lessons_override.empty()) return in.lessons_override;
  return find_data_dir(in) / "lessons";
}

fs::path find_font(const DataPathInputs& in, const std::string& file_name) {
  if (const fs::path own = find_data_dir(in) / "fonts" / file_name; is_file(own)) return own;
  for (const fs::path& dir : in.system_font_dirs)
    if (is_file(dir / file_name)) return dir / file_name;
  return {};
}

fs::path find_icon(const DataPathInputs& in, int size) {
  const fs::path data = find_data_dir(in);
  const std::string px = std::to_string(size);
  const fs::path installed = data.parent_path() / "icons" / "hicolor" / (px + "x" + px) / "apps" / "attention-lab.png";
  if (is_file(installed)) return installed;
  if (const fs::path source = data / "icons" / ("attention-lab-" + px + ".png"); is_file(source)) return source;
  return {};
}

DataPathInputs this_process_data_inputs() {
  DataPathInputs in;
  std::error_code ec;
  in.executable = fs::read_symlink("/proc/self/exe", ec);
  if (ec) in.executable.clear();
  in.bin_to_data = ATTENTION_LAB_BIN_TO_DATA;
#ifdef ATTENTION_LAB_SOURCE_ASSETS
  in.source_assets = ATTENTION_LAB_SOURCE_ASSETS;
#endif
  if (const char* env = std::getenv("ATTENTION_LAB_LESSONS"); env && *env) in.lessons_override = env;
  // Debian and Ubuntu (fonts-dejavu-core), Fedora, Arch, openSUSE.
  in.system_font_dirs = {"/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu-sans-fonts",
                         "/usr/share/fonts/TTF", "/usr/share/fonts/truetype"};
  return in;
}

fs::path data_dir() { return find_data_dir(this_process_data_inputs()); }
fs::path lessons_dir() { return find_lessons_dir(this_process_data_inputs()); }
fs::path font_path(const std::string& file_name) { return find_font(this_process_data_inputs(), file_name); }
fs::path icon_path(int size) { return find_icon(this_process_data_inputs(), size); }

}  // namespace attention_lab::gui
