#pragma once
// Where the app finds its read-only data (built-in lessons, fonts, icons),
// wherever it runs from: an install tree (<prefix>/bin/attention-lab next to
// <prefix>/share/attention-lab, at any prefix, so the install is relocatable),
// an extracted .deb, the build tree or the source tree. Every lookup of a data
// file goes through here. No GL: unit-tested.

#include <filesystem>
#include <string>
#include <vector>

namespace attention_lab::gui {

// What the lookup starts from, so a test can give its own.
struct DataPathInputs {
  std::filesystem::path executable;       // this program's real path (/proc/self/exe)
  std::string bin_to_data;                // from the executable's folder to the data folder, "../share/attention-lab"
  std::filesystem::path source_assets;    // the source tree's assets/ (empty in a package: no build paths in it)
  std::string lessons_override;           // $ATTENTION_LAB_LESSONS (empty: not set)
  std::vector<std::filesystem::path> system_font_dirs;  // searched after the data folder's fonts/
};

// The data folder: the install tree's share/attention-lab when it holds
// lessons/, else the source tree's assets/. When neither exists, the
// install-tree path, so a message about a missing file names where it was expected.
std::filesystem::path find_data_dir(const DataPathInputs& in);

// The built-in lessons: $ATTENTION_LAB_LESSONS when set, else <data>/lessons.
std::filesystem::path find_lessons_dir(const DataPathInputs& in);

// A font file by name ("DejaVuSans.ttf"): <data>/fonts/ first (an install may
// carry its own), then each system font folder; empty when none has it.
std::filesystem::path find_font(const DataPathInputs& in, const std::string& file_name);

// The app's icon of `size` pixels (16, 32, 48, 64, 128, 256): the install
// tree's share/icons/hicolor/NxN/apps/attention-lab.png, or the source tree's
// assets/icons/attention-lab-N.png; empty when neither exists.
std::filesystem::path find_icon(const DataPathInputs& in, int size);

// The inputs of this process: /proc/self/exe, the install layout and source
// tree this binary was built with, the environment, the usual system font folders.
DataPathInputs this_process_data_inputs();

// Shorthands for this process.
std::filesystem::path data_dir();
std::filesystem::path lessons_dir();
std::filesystem::path font_path(const std::string& file_name);
std::filesystem::path icon_path(int size);

}  // namespace attention_lab::gui
