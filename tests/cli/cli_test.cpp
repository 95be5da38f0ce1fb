// The CLI in-process: exit codes, one-line errors that name the field, files
// written with -o, and traces that are strict JSON.

#include "cli.h"
#include "cli_run.h"
#include "attention_lab/lesson.h"
#include "attention_lab/limits.h"
#include "attention_lab/engine.h"
#include "attention_lab/presets.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/version.h"

#include "core/temp_dir.h"
#include "core/unit_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

using namespace attention_lab;
using attention_lab::test::read_text;
using attention_lab::test::TempDir;
using attention_lab::test::write_text;
using nlohmann::json;

namespace {

using test::CliResult;
CliResult run(const std::vector<std::string>& args) { return test::run_cli(args); }

// stderr holds exactly one line (the error) and it mentions `needle`.
::testing::AssertionResult one_line_error(const CliResult& r, const std::string& needle) {
  if (r.err.empty() || r.err.back() != '\n' || r.err.find('\n') != r.err.size() - 1)
    return ::testing::AssertionFailure() << "not one line: '" << r.err << "'";
  if (r.err.rfind("attention-lab-cli: ", 0) != 0) return ::testing::AssertionFailure() << "no prefix: " << r.err;
  if (r.err.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "'" << r.err << "' does not mention '" << needle << "'";
  return ::testing::AssertionSuccess();
}

// Writes a preset (optionally changed) as a scenario file.
std::string scenario_file(const TempDir& dir, const std::string& name, const Scenario& s) {
  const auto path = (dir / name).string();
  EXPECT_EQ(save_scenario(s, path), "");
  return path;
}

}  // namespace

// [SECTION] Help and usage

TEST(Cli, HelpPrintsUsageAndSucceeds) {
  for (const char* flag : {"--help", "-h", "help"}) {
    const CliResult r = run({flag});
    EXPECT_EQ(r.code, cli::kExitOk);
    EXPECT_NE(r.out.find("usage:"), std::string::npos);
    EXPECT_EQ(r.err, "");
  }
}

TEST(Cli, VersionPrintsTheVersion) {
  const CliResult r = run({"--version"});
  EXPECT_EQ(r.code, cli::kExitOk);
  EXPECT_EQ(r.out, std::string("attention-lab-cli ") + version() + "\n");
}

TEST(Cli, NoCommandIsABadArgument) {
  const CliResult r = run({});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(r, "expected a command"));
  EXPECT_EQ(r.out, "");
}

TEST(Cli, UnknownCommandsAndOptionsAreBadArguments) {
  CliResult r = run({"frobnicate"});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(r, "unknown command 'frobnicate'"));
  r = run({"trace", "--bogus"});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(r, "trace: unknown option '--bogus'"));
  r = run({"preset", "book", "-o"});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(r, "-o: expected a file name after it"));
}

// [SECTION] presets / preset

TEST(Cli, PresetsListsEveryPreset) {
  const CliResult r = run({"presets"});
  EXPECT_EQ(r.code, cli::kExitOk);
  for (const auto& p : presets()) EXPECT_NE(r.out.find(p.name + "\t"), std::string::npos) << p.name;
  // The sized family, with an example that really is a preset.
  EXPECT_NE(r.out.find("random-T-D-H\t"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("random-64-32-4"), std::string::npos);
  EXPECT_TRUE(make_preset("random-64-32-4"));
  EXPECT_NE(run({"--help"}).out.find("random-64-32-4"), std::string::npos);
  const CliResult extra = run({"presets", "more"});
  EXPECT_EQ(extra.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(extra, "presets: takes no arguments"));
}

TEST(Cli, PresetWritesTheScenarioToStdout) {
  const CliResult r = run({"preset", "book"});
  EXPECT_EQ(r.code, cli::kExitOk);
  EXPECT_EQ(r.err, "");
  const LoadResult loaded = parse_scenario(r.out);
  ASSERT_TRUE(loaded.scenario) << loaded.error;
  EXPECT_TRUE(attention_lab::test::scenarios_identical(*loaded.scenario, *make_preset("book")));
}

TEST(Cli, PresetWithOutputWritesTheFile) {
  TempDir dir;
  const auto path = (dir / "book.json").string();
  const CliResult r = run({"preset", "book", "-o", path});
  EXPECT_EQ(r.code, cli::kExitOk);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(read_text(path), scenario_to_json(*make_preset("book")));
  const CliResult dash = run({"preset", "book", "--output", "-"});
  EXPECT_EQ(dash.out, scenario_to_json(*make_preset("book")));
}

TEST(Cli, UnknownPresetListsTheNames) {
  const CliResult r = run({"preset", "nope"});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(
      r, "preset: expected one of fat-cat, book, naive, multi-head, gqa, rope, translate, alibi, window, sinks or random-T-D-H (e.g. random-64-32-4), found 'nope'"));
  EXPECT_EQ(run({"preset"}).code, cli::kExitBadInput);
  EXPECT_EQ(run({"preset", "book", "naive"}).code, cli::kExitBadInput);
}

TEST(Cli, AnUnwritableOutputExitsWithOne) {
  TempDir dir;
  const auto path = (dir / "missing/dir/out.json").string();
  const CliResult r = run({"preset", "book", "-o", path});
  EXPECT_EQ(r.code, cli::kExitFailure);
  EXPECT_TRUE(one_line_error(r, path));
}

// [SECTION] validate

TEST(Cli, ValidatePrintsTheSizes) {
  TempDir dir;
  const auto path = scenario_file(dir, "mh.json", *make_preset("multi-head"));
  const CliResult r = run({"validate", path});
  EXPECT_EQ(r.code, cli::kExitOk);
  EXPECT_EQ(r.out, path + ": ok (T=8, d_model=16, heads=4, d_k=4, d_v=4, d_out=16, mask causal)\n");
  EXPECT_EQ(r.err, "");
}

TEST(Cli, ValidateNamesTheBadField) {
  TempDir dir;
  write_text(dir / "bad.json", R"({"X": [[1, 2]], "W_q": [[1], [1]], "W_k": [[1], [1]], "W_v": [[1], [1]], "heads": 0})");
  const auto path = (dir / "bad.json").string();
  const CliResult r = run({"validate", path});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(r, path + ": heads: expected a whole number from 1 to " + std::to_string(limits::kMaxHeads) + ", found 0"));
  EXPECT_EQ(r.out, "");
}

TEST(Cli, ValidateReportsSyntaxErrorsAndMissingFilesOnOneLine) {
  TempDir dir;
  write_text(dir / "broken.json", "{\"X\": [[1, 2],\n [3]");
  CliResult r = run({"validate", (dir / "broken.json").string()});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(r, "invalid JSON"));
  r = run({"validate", (dir / "absent.json").string()});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(r, "absent.json: cannot read"));
  r = run({"validate"});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(r, "validate: expected one scenario or lesson file"));
}

TEST(Cli, ValidateWarnsLikeTraceOfARowThatMayAttendToNothing) {
  TempDir dir;
  Scenario s = *make_preset("book");
  s.mask_kind = MaskKind::Custom;
  s.custom_mask = Matrix::Ones(6, 6);
  s.custom_mask.edit().row(2).setZero();  // token 2 may attend to nothing
  const auto path = scenario_file(dir, "empty-row.json", s);
  const CliResult trace = run({"trace", path});
  ASSERT_EQ(trace.code, cli::kExitOk);
  ASSERT_NE(trace.err, "") << "trace should warn";
  const CliResult r = run({"validate", path});
  EXPECT_EQ(r.code, cli::kExitOk);
  EXPECT_EQ(r.err, trace.err);  // the same warnings, word for word
  EXPECT_EQ(r.out, path + ": ok (T=6, d_model=3, heads=1, d_k=2, d_v=2, d_out=2, mask custom), 1 warning\n");
}

// A lesson file next to its scenario, as a teacher writes one.
std::string lesson_file(const TempDir& dir, const std::string& steps) {
  EXPECT_EQ(save_scenario(*make_preset("book"), (dir / "book.json").string()), "");
  const auto path = (dir / "lesson.json").string();
  write_text(dir / "lesson.json", R"({"format": "attention-lab/lesson@1", "title": "Masks", "scenario": "book.json",
    "steps": )" + steps + "}");
  return path;
}

TEST(Cli, ValidateChecksALessonFileAndEveryStepsScenario) {
  TempDir dir;
  const auto path = lesson_file(dir, R"([{"title": "One", "text": "a"}, {"title": "Two", "text": "b",
    "apply": [{"mask": "causal"}]}])");
  // (The slides, laid out by the desktop app, are cli_smoke.sh's: real binaries.)
  const CliResult r = run({"validate", "--no-slides", path});
  EXPECT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, path + ": ok (lesson 'Masks', 2 steps; scenario T=6, d_model=3, heads=1, d_k=2, d_v=2, d_out=2, mask none)\n");
}

TEST(Cli, ValidateNamesTheBadStepOfALesson) {
  TempDir dir;
  const auto path = lesson_file(dir, R"([{"title": "One", "text": "a"}, {"title": "Two", "text": "b",
    "show": ["weights[3]"]}])");
  const CliResult r = run({"validate", path});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(r, path + ": "));
  EXPECT_TRUE(one_line_error(r, "weights[3]"));
  EXPECT_EQ(r.out, "");
}

TEST(Cli, ValidateWarnsOnceAtTheFirstStepOfALessonWhereARowAttendsToNothing) {
  TempDir dir;
  const auto path = lesson_file(dir, R"([{"title": "Fine", "text": "a"},
    {"title": "Empty row", "text": "b", "apply": [{"mask": [[1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0],
      [1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]]}]},
    {"title": "Still", "text": "c"}])");
  const CliResult r = run({"validate", "--no-slides", path});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_NE(r.out.find(", 1 warning"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.rfind("warning: step 2 ('Empty row'): ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Cli, EveryBuiltInLessonValidates) {
  // Every .json file of the folder, not only those lesson_files recognises:
  // a built-in lesson that no longer reads as one must fail here.
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(ATTENTION_LAB_TEST_DATA_DIR) / "../assets/lessons"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  ASSERT_GE(files.size(), 4u) << "the four built-in lessons";
  for (const auto& file : files) {
    const CliResult r = run({"validate", "--no-slides", file.string()});
    EXPECT_EQ(r.code, cli::kExitOk) << file << ": " << r.err;
    EXPECT_NE(r.out.find(": ok (lesson '"), std::string::npos) << r.out;
  }
}

TEST(Cli, AStringWithANewlineStillGivesAOneLineError) {
  TempDir dir;
  write_text(dir / "nl.json", R"({"X": [[1]], "W_q": [[1]], "W_k": [[1]], "W_v": [[1]], "heads": "1\n2"})");
  const CliResult r = run({"validate", (dir / "nl.json").string()});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(r, "heads:"));
}

// [SECTION] trace

TEST(Cli, TraceIsStrictJsonWithEveryStage) {
  TempDir dir;
  const Scenario s = *make_preset("multi-head");
  const auto path = scenario_file(dir, "mh.json", s);
  const CliResult r = run({"trace", path});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  json t;
  ASSERT_NO_THROW(t = json::parse(r.out));
  EXPECT_EQ(t["format"], "attention-lab/trace@1");
  EXPECT_EQ(t["dims"], (json{{"T", 8}, {"d_model", 16}, {"heads", 4}, {"d_k", 4}, {"d_v", 4}, {"d_out", 16}}));
  ASSERT_EQ(t["heads"].size(), 4u);
  for (const char* key : {"Q", "K", "V", "scores", "scaled", "masked", "weights", "context"})
    EXPECT_TRUE(t["heads"][3].contains(key)) << key;
  EXPECT_EQ(t["output"].size(), 8u);
  EXPECT_EQ(t["output"][0].size(), 16u);
  // the numbers are the engine's, to float precision
  Engine e;
  e.recompute_all(s);
  const auto w = e.stage(StageId::of_head(StageKind::Weights, 2));
  EXPECT_EQ(static_cast<float>(t["heads"][2]["weights"][7][3].get<double>()), w(7, 3));
  const auto out = e.stage(StageId::input(StageKind::Output));
  EXPECT_EQ(static_cast<float>(t["output"][5][11].get<double>()), out(5, 11));
}

TEST(Cli, MaskedCellsOfACausalTraceAreMinusInfStrings) {
  TempDir dir;
  const auto path = scenario_file(dir, "fc.json", *make_preset("fat-cat"));
  const CliResult r = run({"trace", path});
  ASSERT_EQ(r.code, cli::kExitOk);
  const json t = json::parse(r.out);
  const json& masked = t["heads"][0]["masked"];
  ASSERT_EQ(masked.size(), 7u);
  for (std::size_t row = 0; row < 7; ++row)
    for (std::size_t col = 0; col < 7; ++col) {
      if (col > row)
        EXPECT_EQ(masked[row][col], "-inf") << row << ", " << col;
      else
        EXPECT_TRUE(masked[row][col].is_number()) << row << ", " << col;
    }
  EXPECT_EQ(t["heads"][0]["weights"][0][6], 0);  // a number, not a string
}

TEST(Cli, TraceWithOutputWritesTheFile) {
  TempDir dir;
  const auto path = scenario_file(dir, "book.json", *make_preset("book"));
  const auto trace = (dir / "trace.json").string();
  const CliResult r = run({"trace", path, "-o", trace});
  EXPECT_EQ(r.code, cli::kExitOk);
  EXPECT_EQ(r.out, "");
  const json t = json::parse(read_text(trace));
  // the book's context for 'journey'
  EXPECT_NEAR(t["heads"][0]["context"][1][0].get<double>(), 0.3061, 1e-4);
  EXPECT_NEAR(t["heads"][0]["context"][1][1].get<double>(), 0.8210, 1e-4);
}

TEST(Cli, TraceReportsWarningsButSucceeds) {
  TempDir dir;
  Scenario s = *make_preset("book");
  s.mask_kind = MaskKind::Custom;
  s.custom_mask = Matrix::Ones(6, 6);
  s.custom_mask.edit().row(1).setZero();
  const auto path = scenario_file(dir, "m.json", s);
  const CliResult r = run({"trace", path});
  EXPECT_EQ(r.code, cli::kExitOk);
  EXPECT_EQ(r.err.rfind("warning: head 0, row 1 ('journey')", 0), 0u) << r.err;
  const json t = json::parse(r.out);
  ASSERT_EQ(t["warnings"].size(), 1u);
  EXPECT_EQ(t["heads"][0]["weights"][1], json::array({0, 0, 0, 0, 0, 0}));
}

TEST(Cli, TraceOfABadFileFailsWithTheField) {
  TempDir dir;
  write_text(dir / "bad.json",
             R"({"X": [[1, 2], [3, 4]], "W_q": [[1], [1]], "W_k": [[1], [1]], "W_v": [[1], [1]], "heads": 1, "mask": [[1, 2], [1, 1]]})");
  const CliResult r = run({"trace", (dir / "bad.json").string()});
  EXPECT_EQ(r.code, cli::kExitBadInput);
  EXPECT_TRUE(one_line_error(r, "mask[0][1]: expected 0 or 1, found 2"));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run({"trace"}).code, cli::kExitBadInput);
  EXPECT_EQ(run({"trace", "a.json", "b.json"}).code, cli::kExitBadInput);
}

TEST(Cli, ATraceOfPinnedHugeScoresIsStillStrictJson) {
  TempDir dir;
  Scenario s = *make_preset("book");
  s.pins[{StageId::of_head(StageKind::Scores, 0), 0, 0}] = 1e30f;
  s.pins[{StageId::of_head(StageKind::Scores, 0), 0, 1}] = -1e30f;
  const auto path = scenario_file(dir, "p.json", s);
  const CliResult r = run({"trace", path});
  ASSERT_EQ(r.code, cli::kExitOk);
  const json t = json::parse(r.out);
  EXPECT_EQ(static_cast<float>(t["heads"][0]["scores"][0][0].get<double>()), 1e30f);
  EXPECT_EQ(t["heads"][0]["weights"][0][0].get<double>(), 1.0);
}
