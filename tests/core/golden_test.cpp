// Golden tests: every stage the engine computes, checked against a float64
// reference (tests/golden/generate_golden.py, itself cross-checked against
// torch.nn.MultiheadAttention where that applies). Each fixture is a pair
//   tests/golden/fixtures/<name>.scenario.json   the input, as the app loads it
//   tests/golden/fixtures/<name>.expected.json   every stage, in the trace format
// and becomes its own test, e.g.
//   Golden/EngineMatchesFloat64Reference.OnEveryStageOf/preset_fat_cat
//   Golden/CliTraceMatchesFloat64Reference.OnEveryStageOf/preset_fat_cat
// The first computes in-process with Engine::recompute_all; the second runs the
// real attention-lab-cli `trace` and parses its file, which checks the trace
// writer end to end. Neither needs PyTorch: regenerate the fixtures with the
// script when the math deliberately changes.
//
// Tolerance, per cell: |engine − reference| ≤ 1e-4·|reference| + 1e-6·max|stage|,
// where max|stage| is the largest finite magnitude of that stage in the reference.
// The engine works in float32 (epsilon 6e-8); a few rounding steps through short
// sums leave relative errors around 1e-7 to 1e-6, so 1e-4 is loose enough never to
// flake and tight enough to catch any wrong formula (a wrong scale, a missed
// bias, a transposed block all change values by percent, not by 1e-4). The
// absolute term covers entries that are near zero by cancellation: their error
// is relative to the size of the terms summed, i.e. to the stage's scale, not to
// the tiny result. Infinities (the −inf of masked cells) must match exactly, NaN
// must be NaN, and a finite reference value must get a finite engine value.

#include "attention_lab/engine.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_registry.h"
#include "attention_lab/trace_io.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace attention_lab;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr double kRelTolerance = 1e-4;    // × |reference|
constexpr double kScaleTolerance = 1e-6;  // × max|stage|

const fs::path& fixture_dir() {
  static const fs::path dir = fs::path(ATTENTION_LAB_TEST_DATA_DIR) / "golden" / "fixtures";
  return dir;
}

constexpr std::string_view kScenarioSuffix = ".scenario.json";
constexpr std::string_view kExpectedSuffix = ".expected.json";

// Every <name> with a <name>.scenario.json, sorted. Empty when the folder is missing
// (GoldenFixtures.AreThereAndPaired then fails and says so).
std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(fixture_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (file.size() > kScenarioSuffix.size() && file.ends_with(kScenarioSuffix))
      names.push_back(file.substr(0, file.size() - kScenarioSuffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

fs::path scenario_path(const std::string& name) { return fixture_dir() / (name + std::string(kScenarioSuffix)); }
fs::path expected_path(const std::string& name) { return fixture_dir() / (name + std::string(kExpectedSuffix)); }

json read_json(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open");
  return json::parse(in);
}

// A trace number: a JSON number, or "inf", "-inf", "nan" for the non-finite ones.
double trace_number(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  throw std::runtime_error("expected a number or \"inf\", \"-inf\", \"nan\", found " + v.dump());
}

Eigen::MatrixXd trace_matrix(const json& rows) {
  if (!rows.is_array() || rows.empty() || !rows[0].is_array())
    throw std::runtime_error("expected a list of rows, found " + rows.dump().substr(0, 80));
  Eigen::MatrixXd m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows[0].size()));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != rows[0].size()) throw std::runtime_error("ragged rows");
    for (std::size_t c = 0; c < rows[r].size(); ++c)
      m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = trace_number(rows[r][c]);
  }
  return m;
}

// The tolerance rule at the top of this file, for one stage.
::testing::AssertionResult stage_matches(const Eigen::MatrixXd& actual, const Eigen::MatrixXd& expected,
                                         const std::string& label) {
  if (actual.rows() != expected.rows() || actual.cols() != expected.cols())
    return ::testing::AssertionFailure() << label << ": shape " << actual.rows() << "x" << actual.cols()
                                         << ", expected " << expected.rows() << "x" << expected.cols();
  double scale = 0.0;
  for (Eigen::Index r = 0; r < expected.rows(); ++r)
    for (Eigen::Index c = 0; c < expected.cols(); ++c)
      if (std::isfinite(expected(r, c))) scale = std::max(scale, std::abs(expected(r, c)));
  int bad = 0;
  std::ostringstream first;
  for (Eigen::Index r = 0; r < expected.rows(); ++r)
    for (Eigen::Index c = 0; c < expected.cols(); ++c) {
      const double a = actual(r, c), b = expected(r, c);
      bool ok;
      if (std::isnan(b)) ok = std::isnan(a);
      else if (std::isinf(b)) ok = a == b;
      else ok = std::isfinite(a) && std::abs(a - b) <= kRelTolerance * std::abs(b) + kScaleTolerance * scale;
      if (!ok && bad++ == 0) {
        first.precision(17);
        first << label << " row " << r << ", col " << c << ": " << a << ", expected " << b << " (|diff| "
              << std::abs(a - b) << ", allowed " << kRelTolerance * std::abs(b) + kScaleTolerance * scale << ")";
      }
    }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << first.str() << "; " << bad << " of " << expected.size()
                                       << " cells out of tolerance";
}

// One stage of the computation under test: "X", "Q", "concat", "output", or a
// head's "Q", "K", "V", "scores", "scaled", "masked", "weights", "context" (head ≥ 0).
using StageSource = std::function<Eigen::MatrixXd(const std::string& name, int head)>;

// Every stage the trace writes, from the registry: the reference must hold
// each one the scenario uses (position_bias only with ALiBi) and nothing else.
std::vector<std::string> traced_names(bool in_head) {
  std::vector<std::string> out;
  for (const StageSpec& sp : all_stages())
    if (in_head ? sp.trace == Trace::InHead : sp.trace == Trace::Top || sp.trace == Trace::AfterHeads)
      out.push_back(sp.id_name);
  return out;
}

// Checks every stage of `expected` (a reference trace) against `actual`.
void expect_all_stages_match(const json& expected, const StageSource& actual) {
  std::size_t top_level = 0;
  for (const std::string& name : traced_names(false)) {
    if (!expected.contains(name)) continue;  // a stage this scenario does not use (Q_unrotated without RoPE)
    EXPECT_TRUE(stage_matches(actual(name.c_str(), -1), trace_matrix(expected.at(name)), name));
    ++top_level;
  }
  // everything else at the top is format, dims, heads and warnings
  EXPECT_EQ(top_level + 4, expected.size()) << "the reference holds a top-level stage the engine does not know";
  const json& heads = expected.at("heads");
  ASSERT_EQ(static_cast<int>(heads.size()), expected.at("dims").at("heads").get<int>());
  const auto known = traced_names(true);
  for (std::size_t h = 0; h < heads.size(); ++h) {
    int compared = 0;
    for (const std::string& name : known) {
      if (!heads[h].contains(name)) continue;  // a stage this scenario does not use
      const std::string label = name + "[" + std::to_string(h) + "]";
      EXPECT_TRUE(stage_matches(actual(name.c_str(), static_cast<int>(h)), trace_matrix(heads[h].at(name)), label));
      ++compared;
    }
    EXPECT_EQ(compared, static_cast<int>(heads[h].size())) << "head " << h << " holds a stage the engine does not know";
    EXPECT_GE(compared, 8) << "head " << h;
  }
}

std::string fixture_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace

TEST(GoldenFixtures, AreThereAndPaired) {
  const auto names = fixture_names();
  EXPECT_GE(names.size(), 10u) << "few or no fixtures in " << fixture_dir()
                               << "; run tests/golden/generate_golden.py";
  for (const auto& name : names)
    EXPECT_TRUE(fs::exists(expected_path(name))) << name << " has a scenario but no expected trace";
}

// [SECTION] The engine, in-process

class EngineMatchesFloat64Reference : public ::testing::TestWithParam<std::string> {};

TEST_P(EngineMatchesFloat64Reference, OnEveryStageOf) {
  const std::string name = GetParam();
  const LoadResult loaded = load_scenario(scenario_path(name));
  ASSERT_TRUE(loaded.scenario) << loaded.error;
  const Scenario& scenario = *loaded.scenario;
  const json expected = read_json(expected_path(name));
  ASSERT_EQ(expected.at("format").get<std::string>(), kTraceFormat);

  Engine engine;
  engine.recompute_all(scenario);

  const Dims& d = engine.dims();
  const json& ed = expected.at("dims");
  EXPECT_EQ(d.T, ed.at("T").get<int>());
  EXPECT_EQ(d.d_model, ed.at("d_model").get<int>());
  EXPECT_EQ(d.heads, ed.at("heads").get<int>());
  EXPECT_EQ(d.d_k, ed.at("d_k").get<int>());
  EXPECT_EQ(d.d_v, ed.at("d_v").get<int>());
  EXPECT_EQ(d.d_out, ed.at("d_out").get<int>());
  ASSERT_EQ(d.heads, static_cast<int>(expected.at("heads").size()));

  expect_all_stages_match(expected, [&](const std::string& stage, int head) -> Eigen::MatrixXd {
    // The trace's names are the registry's ids: "Q" top level, "Q[1]" in a head.
    const auto parsed = parse_stage_id(head < 0 ? stage : stage + "[" + std::to_string(head) + "]");
    if (!parsed) ADD_FAILURE() << "the reference names an unknown stage: " << stage;
    const StageId id = parsed.value_or(StageId::input(StageKind::X));
    return engine.stage(id).cast<double>();
  });

  // The same rows the reference found fully masked, with the same words.
  std::vector<std::string> warnings;
  for (const auto& w : engine.warnings()) warnings.push_back(w.message);
  EXPECT_EQ(warnings, expected.at("warnings").get<std::vector<std::string>>());
}

INSTANTIATE_TEST_SUITE_P(Golden, EngineMatchesFloat64Reference, ::testing::ValuesIn(fixture_names()),
                         fixture_test_name);

// [SECTION] The CLI binary, end to end through the trace writer

class CliTraceMatchesFloat64Reference : public ::testing::TestWithParam<std::string> {};

TEST_P(CliTraceMatchesFloat64Reference, OnEveryStageOf) {
  const std::string name = GetParam();
  const std::string stem = "attention-lab-golden-" + std::to_string(::getpid()) + "-" + name;
  const fs::path trace_file = fs::temp_directory_path() / (stem + ".trace.json");
  const fs::path stderr_file = fs::temp_directory_path() / (stem + ".stderr.txt");
  const std::string command = shell_quote(ATTENTION_LAB_CLI_PATH) + " trace " +
                              shell_quote(scenario_path(name).string()) + " -o " + shell_quote(trace_file.string()) +
                              " 2> " + shell_quote(stderr_file.string());
  const int status = std::system(command.c_str());
  std::string stderr_text;
  {
    std::ifstream in(stderr_file);
    std::ostringstream s;
    s << in.rdbuf();
    stderr_text = s.str();
  }
  fs::remove(stderr_file);
  ASSERT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << command << "\nfailed (status " << status << "):\n" << stderr_text;

  json actual;
  try {
    actual = read_json(trace_file);
  } catch (const std::exception& e) {
    fs::remove(trace_file);
    FAIL() << "the CLI's trace is not valid JSON: " << e.what();
  }
  fs::remove(trace_file);
  const json expected = read_json(expected_path(name));

  EXPECT_EQ(actual.at("format"), expected.at("format"));
  EXPECT_EQ(actual.at("dims"), expected.at("dims"));
  ASSERT_EQ(actual.at("heads").size(), expected.at("heads").size());
  expect_all_stages_match(expected, [&](const std::string& stage, int head) {
    const json& m = head < 0 ? actual.at(stage) : actual.at("heads").at(static_cast<std::size_t>(head)).at(stage);
    return trace_matrix(m);
  });
  EXPECT_EQ(actual.at("warnings"), expected.at("warnings"));
}

INSTANTIATE_TEST_SUITE_P(Golden, CliTraceMatchesFloat64Reference, ::testing::ValuesIn(fixture_names()),
                         fixture_test_name);
