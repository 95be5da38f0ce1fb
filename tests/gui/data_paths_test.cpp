// Where the app finds its lessons and fonts: an install tree at any prefix
// (and moved afterwards), the build tree, the source tree.

#include "logic/data_paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace attention_lab::gui;
namespace fs = std::filesystem;

namespace {

// A fresh folder per test, removed afterwards.
class DataPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / ("attention-lab-DataPaths-" + std::string(info->name()) + "-" +
                                         std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // <prefix>/bin/attention-lab and, when `with_data`, <prefix>/share/attention-lab/lessons/.
  fs::path make_install(const std::string& prefix, bool with_data) const {
    const fs::path p = root_ / prefix;
    fs::create_directories(p / "bin");
    touch(p / "bin" / "attention-lab");
    if (with_data) fs::create_directories(p / "share" / "attention-lab" / "lessons");
    return p;
  }
  fs::path make_source_tree() const {
    const fs::path assets = root_ / "src" / "assets";
    fs::create_directories(assets / "lessons");
    return assets;
  }
  static void touch(const fs::path& p) { std::ofstream(p) << "x"; }

  static DataPathInputs inputs(const fs::path& exe, const fs::path& source_assets = {}) {
    DataPathInputs in;
    in.executable = exe;
    in.bin_to_data = "../share/attention-lab";
    in.source_assets = source_assets;
    return in;
  }

  fs::path root_;
};

TEST_F(DataPaths, AnInstallTreeIsFoundNextToItsExecutable) {
  const fs::path prefix = make_install("opt/attention", true);
  const auto in = inputs(prefix / "bin" / "attention-lab", make_source_tree());
  EXPECT_EQ(find_data_dir(in), prefix / "share" / "attention-lab");
  EXPECT_EQ(find_lessons_dir(in), prefix / "share" / "attention-lab" / "lessons");
}

TEST_F(DataPaths, AnInstallTreeMovedElsewhereStillFindsItsData) {
  const fs::path before = make_install("first", true);
  const fs::path after = root_ / "somewhere" / "else";
  fs::create_directories(after.parent_path());
  fs::rename(before, after);
  const auto in = inputs(after / "bin" / "attention-lab");
  EXPECT_EQ(find_lessons_dir(in), after / "share" / "attention-lab" / "lessons");
}

TEST_F(DataPaths, ABuildTreeThatIsNotInstalledUsesTheSourceTree) {
  const fs::path build = make_install("build/release", false);
  const fs::path assets = make_source_tree();
  const auto in = inputs(build / "bin" / "attention-lab", assets);
  EXPECT_EQ(find_data_dir(in), assets);
  EXPECT_EQ(find_lessons_dir(in), assets / "lessons");
}

TEST_F(DataPaths, AnEmptyShareFolderDoesNotHideTheSourceTree) {
  const fs::path build = make_install("build/release", false);
  fs::create_directories(build / "share" / "attention-lab");  // left over, with no lessons
  const fs::path assets = make_source_tree();
  EXPECT_EQ(find_data_dir(inputs(build / "bin" / "attention-lab", assets)), assets);
}

TEST_F(DataPaths, WithNeitherTreeTheInstallPathIsNamedForErrors) {
  const fs::path prefix = make_install("broken", false);
  // A package has no source tree to fall back on.
  EXPECT_EQ(find_lessons_dir(inputs(prefix / "bin" / "attention-lab")),
            prefix / "share" / "attention-lab" / "lessons");
}

TEST_F(DataPaths, TheEnvironmentOverridesTheLessonsFolderOnly) {
  const fs::path prefix = make_install("usr", true);
  auto in = inputs(prefix / "bin" / "attention-lab");
  in.lessons_override = (root_ / "my-lessons").string();
  EXPECT_EQ(find_lessons_dir(in), root_ / "my-lessons");
  EXPECT_EQ(find_data_dir(in), prefix / "share" / "attention-lab");
}

TEST_F(DataPaths, AFontInTheDataFolderComesBeforeTheSystemOne) {
  const fs::path prefix = make_install("usr", true);
  const fs::path system = root_ / "system-fonts";
  fs::create_directories(system);
  touch(system / "DejaVuSans.ttf");
  auto in = inputs(prefix / "bin" / "attention-lab");
  in.system_font_dirs = {root_ / "no-such-folder", system};
  EXPECT_EQ(find_font(in, "DejaVuSans.ttf"), system / "DejaVuSans.ttf");

  fs::create_directories(prefix / "share" / "attention-lab" / "fonts");
  touch(prefix / "share" / "attention-lab" / "fonts" / "DejaVuSans.ttf");
  EXPECT_EQ(find_font(in, "DejaVuSans.ttf"), prefix / "share" / "attention-lab" / "fonts" / "DejaVuSans.ttf");
  EXPECT_TRUE(find_font(in, "NoSuchFont.ttf").empty());
}

TEST_F(DataPaths, TheIconComesFromTheHicolorThemeOrTheSourceTree) {
  const fs::path prefix = make_install("usr", true);
  const fs::path assets = make_source_tree();
  fs::create_directories(assets / "icons");
  touch(assets / "icons" / "attention-lab-48.png");
  const fs::path build = make_install("build", false);
  EXPECT_EQ(find_icon(inputs(build / "bin" / "attention-lab", assets), 48), assets / "icons" / "attention-lab-48.png");
  EXPECT_TRUE(find_icon(inputs(prefix / "bin" / "attention-lab", assets), 48).empty());  // the install has none yet

  const fs::path hicolor = prefix / "share" / "icons" / "hicolor" / "48x48" / "apps";
  fs::create_directories(hicolor);
  touch(hicolor / "attention-lab.png");
  EXPECT_EQ(find_icon(inputs(prefix / "bin" / "attention-lab", assets), 48), hicolor / "attention-lab.png");
}

TEST(DataPathsOfThisProcess, TheTestBinaryInTheBuildTreeFindsTheRealLessons) {
  const DataPathInputs in = this_process_data_inputs();
  EXPECT_EQ(in.executable, fs::read_symlink("/proc/self/exe"));
  EXPECT_EQ(in.bin_to_data, "../share/attention-lab");
  EXPECT_TRUE(fs::is_regular_file(lessons_dir() / "attention-from-scratch.json")) << lessons_dir();
  EXPECT_TRUE(fs::is_regular_file(lessons_dir() / "order.txt")) << lessons_dir();
  for (int size : {16, 22, 24, 32, 48, 64, 128, 256}) EXPECT_FALSE(icon_path(size).empty()) << size;
}

}  // namespace
