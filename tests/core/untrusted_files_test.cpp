// Files from strangers stay contained (issue 13, item 5): a lesson reads
// scenario files only from its own folder, error messages quote a file only in
// short escaped excerpts, and sizes are checked against the memory available
// before anything is allocated.

#include "attention_lab/document.h"
#include "attention_lab/excerpt.h"
#include "attention_lab/lesson.h"
#include "attention_lab/limits.h"
#include "attention_lab/presets.h"
#include "attention_lab/scenario_io.h"

#include "cli.h"
#include "scoped_env.h"
#include "temp_dir.h"
#include "test_support.h"
#include "unit_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <sstream>

using namespace attention_lab;
using attention_lab::test::ScopedEnv;
using attention_lab::test::TempDir;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json lesson_with_scenario(const std::string& path) {
  return json{{"format", "attention-lab/lesson@1"},
              {"title", "t"},
              {"scenario", path},
              {"steps", json::array({json{{"title", "s"}, {"text", "x"}}})}};
}

// One line, short, and nothing a terminal would act on.
::testing::AssertionResult is_a_short_clean_line(const std::string& message) {
  if (message.empty()) return ::testing::AssertionFailure() << "empty";
  if (message.size() > kMaxErrorMessageBytes + 8)
    return ::testing::AssertionFailure() << message.size() << " bytes: " << message.substr(0, 200);
  for (const char ch : message)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
      return ::testing::AssertionFailure() << "a control character in: " << excerpt(message, 300);
  return ::testing::AssertionSuccess();
}

constexpr std::size_t kTenMegabytes = 10u << 20;

}  // namespace

// [SECTION] A lesson's scenario path stays inside the lesson's folder

TEST(UntrustedLesson, AScenarioPathOutOfTheFolderIsRefusedNamingThePathAndTheFolder) {
  TempDir dir;
  fs::create_directories(dir / "lessons");
  ASSERT_EQ(save_scenario(test::preset("book"), dir / "secret.json"), "");
  const LoadedLesson l = parse_lesson(lesson_with_scenario("../secret.json").dump(), dir / "lessons");
  ASSERT_FALSE(l.lesson.has_value());
  const std::string folder = fs::weakly_canonical(dir / "lessons").string();
  EXPECT_EQ(l.error, "scenario \"../secret.json\": expected a file inside the lesson's folder " + folder +
                         ", found a path that leads to " + fs::weakly_canonical(dir / "secret.json").string());
}

TEST(UntrustedLesson, AnAbsolutePathOutOfTheFolderIsRefused) {
  TempDir dir;
  const LoadedLesson l = parse_lesson(lesson_with_scenario("/etc/passwd").dump(), dir.path());
  ASSERT_FALSE(l.lesson.has_value());
  EXPECT_NE(l.error.find("expected a file inside the lesson's folder"), std::string::npos) << l.error;
  EXPECT_NE(l.error.find("found a path that leads to /etc/passwd"), std::string::npos) << l.error;
}

TEST(UntrustedLesson, ALinkInsideTheFolderPointingOutOfItIsRefused) {
  TempDir dir;
  fs::create_directories(dir / "lessons");
  ASSERT_EQ(save_scenario(test::preset("book"), dir / "secret.json"), "");
  fs::create_symlink(dir / "secret.json", dir / "lessons" / "innocent.json");
  const LoadedLesson l = parse_lesson(lesson_with_scenario("innocent.json").dump(), dir / "lessons");
  ASSERT_FALSE(l.lesson.has_value());
  EXPECT_NE(l.error.find("found a path that leads to " + fs::weakly_canonical(dir / "secret.json").string()),
            std::string::npos)
      << l.error;
}

TEST(UntrustedLesson, TheFolderItselfIsNotAScenarioFile) {
  TempDir dir;
  const LoadedLesson l = parse_lesson(lesson_with_scenario(".").dump(), dir.path());
  ASSERT_FALSE(l.lesson.has_value());
  EXPECT_NE(l.error.find("expected a file inside the lesson's folder"), std::string::npos) << l.error;
}

TEST(UntrustedLesson, PathsThatStayInsideTheFolderAreUsed) {
  TempDir dir;
  fs::create_directories(dir / "lessons" / "scenes");
  ASSERT_EQ(save_scenario(test::preset("book"), dir / "lessons" / "scenes" / "book.json"), "");
  for (const char* path : {"scenes/book.json", "scenes/../scenes/./book.json", "./scenes/book.json"}) {
    const LoadedLesson l = parse_lesson(lesson_with_scenario(path).dump(), dir / "lessons");
    ASSERT_TRUE(l.lesson.has_value()) << path << ": " << l.error;
    EXPECT_TRUE(test::scenarios_identical(l.lesson->scenario, test::preset("book"))) << path;
  }
}

TEST(UntrustedLesson, AHugePathIsQuotedShort) {
  TempDir dir;
  const LoadedLesson l = parse_lesson(lesson_with_scenario(std::string(100000, 'a') + ".json").dump(), dir.path());
  ASSERT_FALSE(l.lesson.has_value());
  EXPECT_TRUE(is_a_short_clean_line(l.error));
}

// [SECTION] Error messages quote files in short, escaped excerpts

TEST(Excerpt, ShortPrintableTextIsKeptAsIs) {
  EXPECT_EQ(excerpt("hello, wörld →"), "hello, wörld →");
}

TEST(Excerpt, ControlCharactersAndBadUtf8AreEscaped) {
  EXPECT_EQ(excerpt(std::string("a\nb\tc\x1b[31m\x7f", 11)), "a\\nb\\tc\\u001b[31m\\u007f");
  EXPECT_EQ(excerpt(std::string("nul\0end", 7)), "nul\\u0000end");
  EXPECT_EQ(excerpt("\xff\xfe ok \xc3"), "\\xff\\xfe ok \\xc3");
  EXPECT_EQ(excerpt("\xc2\x9b"), "\\u009b");  // a C1 control (CSI) in UTF-8
}

TEST(Excerpt, LongTextIsCutAtACharacterBoundaryWithAnEllipsis) {
  EXPECT_EQ(excerpt(std::string(100, 'x'), 10), std::string(10, 'x') + "…");
  EXPECT_EQ(excerpt("ééééé", 5), "éé…");  // 2 bytes each: a third would pass 5 bytes
  EXPECT_EQ(excerpt_tail(std::string(100, 'x') + "END", 5), "…xxEND");
}

TEST(Excerpt, AParserErrorKeepsTheTailOfWhatItReadLast) {
  const std::string what = "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error while "
                           "parsing value - invalid literal; last read: '" + std::string(5000, 'x') + "<U+0000>zz'";
  const std::string m = json_error_message(what);
  EXPECT_EQ(m.rfind("parse error at line 1, column 9: syntax error", 0), 0u) << m;
  EXPECT_NE(m.find("last read: '…"), std::string::npos) << m;
  EXPECT_NE(m.find("<U+0000>zz'"), std::string::npos) << m;
  EXPECT_LT(m.size(), 400u);
}

TEST(UntrustedErrors, ATenMegabyteLineWithABadTokenGivesAShortError) {
  // A bad control character at the end of a 10 MB string, a huge number, a
  // huge bad literal, an unterminated string with a terminal escape.
  // (1 MB for the last three: the sanitizer build parses slowly.)
  constexpr std::size_t kOneMegabyte = 1u << 20;
  const std::vector<std::string> files = {
      "{\"X\": \"" + std::string(kTenMegabytes, 'a') + "\x01\"}",
      "{\"X\": [[" + std::string(kOneMegabyte, '1') + "]]}",
      "{\"X\": " + std::string(kOneMegabyte, 't') + "}",
      "{\"title\": \"" + std::string(kOneMegabyte, 'a') + "\x1b[2J",
  };
  for (const auto& text : files) {
    const LoadResult r = parse_scenario(text);
    ASSERT_FALSE(r.scenario.has_value());
    EXPECT_TRUE(is_a_short_clean_line(r.error));
    const LoadedLesson l = parse_lesson(text, ".");
    ASSERT_FALSE(l.lesson.has_value());
    EXPECT_TRUE(is_a_short_clean_line(l.error));
  }
}

TEST(UntrustedErrors, HugeKeysAndValuesAreQuotedShort) {
  const std::string huge(kTenMegabytes, 'k');
  json scenario = json::parse(scenario_to_json(test::preset("fat-cat")));
  scenario["heads"] = huge + "\n\x1b";
  EXPECT_TRUE(is_a_short_clean_line(parse_scenario(scenario.dump()).error));

  json lesson = lesson_with_scenario("x.json");
  lesson.erase("scenario");
  lesson["preset"] = "fat-cat";
  lesson[huge + "\x07"] = 1;  // an unknown key is named in the error
  const LoadedLesson l = parse_lesson(lesson.dump(), ".");
  ASSERT_FALSE(l.lesson.has_value());
  EXPECT_TRUE(is_a_short_clean_line(l.error));
  EXPECT_NE(l.error.find("unknown key"), std::string::npos) << l.error.substr(0, 200);
}

TEST(UntrustedErrors, TheCliPrintsOneShortLineForAHugeBadFile) {
  TempDir dir;
  test::write_text(dir / "huge.json", "{\"X\": [[1, " + std::string(kTenMegabytes, '9') + "x]]}");
  std::ostringstream out, err;
  EXPECT_EQ(cli::run({"validate", (dir / "huge.json").string()}, out, err), cli::kExitBadInput);
  const std::string message = err.str();
  EXPECT_LT(message.size(), 1000u) << message.substr(0, 300);
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
}

// [SECTION] Sizes are checked before anything is allocated

TEST(UntrustedSizes, EstimatesOfAbsurdSizesSaturateInsteadOfWrapping) {
  Dims d{1'000'000'000, 768, 12, 64, 64, 768};
  EXPECT_EQ(limits::estimated_bytes(d), std::numeric_limits<std::uint64_t>::max());
  d.heads = 1;
  EXPECT_GT(limits::estimated_bytes(d), std::uint64_t{1} << 62);
  EXPECT_EQ(limits::format_bytes(std::uint64_t{3} << 40), "3.0 TiB");
}

TEST(UntrustedSizes, ASizeThatDoesNotFitIsRefusedWithTheBytesItNeeds) {
  const Dims d{4096, 768, 32, 128, 128, 768};
  const std::uint64_t need = limits::estimated_bytes(d);
  EXPECT_EQ(limits::memory_problem(d, need), "");
  const std::string m = limits::memory_problem(d, need - 1);
  EXPECT_EQ(m, "T=4096, d_model=768, 32 heads, d_k=128, d_v=128: expected a size that fits in memory, found one "
               "that needs about " + limits::format_bytes(need) + " (" + std::to_string(need) + " bytes) with " +
               limits::format_bytes(need - 1) + " available");
}

TEST(UntrustedSizes, TheEnvironmentCanLowerTheBudget) {
  const ScopedEnv env("ATTENTION_LAB_MEMORY_LIMIT_MIB", "3");
  EXPECT_EQ(limits::memory_budget(), 3u << 20);
}

TEST(UntrustedSizes, AScenarioFileThatWouldNotFitIsRefusedBeforeComputing) {
  const ScopedEnv env("ATTENTION_LAB_MEMORY_LIMIT_MIB", "1");
  json j = json::parse(scenario_to_json(test::preset("book")));
  j["X"] = json::array();
  for (int r = 0; r < 400; ++r) j["X"].push_back({0.5, 0.25, 1});  // T=400: two 400×400 stages are 1.2 MiB
  j.erase("tokens");
  const LoadResult r = parse_scenario(j.dump());
  ASSERT_FALSE(r.scenario.has_value());
  EXPECT_EQ(r.error.rfind("T=400, d_model=3, 1 head, d_k=2, d_v=2: expected a size that fits in memory, found one "
                          "that needs about ", 0),
            0u)
      << r.error;
}

TEST(UntrustedSizes, ALessonAskingForMoreThanFitsIsRefusedAtThatStep) {
  const ScopedEnv env("ATTENTION_LAB_MEMORY_LIMIT_MIB", "64");
  json j = lesson_with_scenario("x");
  j.erase("scenario");
  j["preset"] = "fat-cat";
  j["steps"][0]["apply"] = json::array({json{{"T", 4096}}});
  const LoadedLesson l = parse_lesson(j.dump(), ".");
  ASSERT_FALSE(l.lesson.has_value());
  EXPECT_EQ(l.error.rfind("steps[0].apply[0].T: T=4096, d_model=4, 1 head", 0), 0u) << l.error;
  EXPECT_NE(l.error.find("expected a size that fits in memory, found one that needs about 256 MiB"), std::string::npos)
      << l.error;
}

TEST(UntrustedSizes, AResizeThatWouldNotFitChangesNothing) {
  const ScopedEnv env("ATTENTION_LAB_MEMORY_LIMIT_MIB", "16");
  Document doc(test::preset("fat-cat"));
  const std::string err = doc.apply(SetDimension{Dimension::T, 4096});
  EXPECT_EQ(err.rfind("T: T=4096", 0), 0u) << err;
  EXPECT_EQ(doc.scenario().T(), 7);
}

TEST(UntrustedSizes, AHugeRandomPresetIsRefusedWithoutAllocating) {
  // random-1000000000-768-12 would be 3 TB of X alone: make_preset must not try.
  EXPECT_FALSE(make_preset("random-1000000000-768-12").has_value());
  const std::string m = preset_problem("random-1000000000-768-12");
  EXPECT_EQ(m.rfind("random-1000000000-768-12: T: expected 1 to 4096, found 1000000000 (size limit; that size would "
                    "need about ", 0),
            0u)
      << m;
  EXPECT_NE(preset_problem("random-64-4096-1").find("d_model: expected 1 to 2048"), std::string::npos);
  EXPECT_NE(preset_problem("random-64-64-100").find("heads: expected 1 to 32"), std::string::npos);
  EXPECT_EQ(preset_problem("random-64-32-4"), "");
  EXPECT_EQ(preset_problem("fat-cat"), "");
  std::ostringstream out, err;
  EXPECT_EQ(cli::run({"preset", "random-1000000000-768-12"}, out, err), cli::kExitBadInput);
  EXPECT_NE(err.str().find("T: expected 1 to 4096, found 1000000000"), std::string::npos) << err.str();
}
