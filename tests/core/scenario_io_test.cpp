// Scenario files: exact round trips, atomic saving, and every kind of bad
// input giving one error that names the field, never a crash.

#include "attention_lab/engine.h"
#include "attention_lab/limits.h"
#include "attention_lab/scenario_io.h"

#include "temp_dir.h"
#include "test_support.h"
#include "unit_support.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace attention_lab;
using attention_lab::test::read_text;
using attention_lab::test::scenarios_identical;
using attention_lab::test::TempDir;
using attention_lab::test::write_text;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Everything a scenario can hold, with awkward values.
Scenario everything() {
  attention_lab::test::RandomOptions o;
  o.T = 3, o.d_model = 4, o.heads = 2, o.d_k = 2, o.d_v = 3, o.bias = true, o.w_o = true, o.b_o = true;
  o.mask = MaskKind::Custom, o.d_out = 5;
  Scenario s = attention_lab::test::random_scenario(77, o);
  s.title = "quotes \" backslash \\ newline \n tab \t bell \x07 and ünïcödé →";
  s.description = "second line\nthird";
  s.tokens = {"a", "", "ç"};  // an empty label is shown as the index
  s.features = {"noun", "", "\"quoted\"", "plural →"};
  s.X(0, 0) = -0.0f;
  s.X(0, 1) = 1e-40f;  // subnormal
  s.X(0, 2) = 3.0e38f;
  s.X(0, 3) = 0.1f;
  s.scale = false;
  s.score_scale = 0.3f;  // kept while the scale is off
  s.temperature = 0.7f;
  s.qk_norm.scope = QkNormScope::Whole;
  s.qk_norm.eps = 1e-5f;
  s.q_norm = Matrix::Constant(1, 4, 1.25f);
  s.k_norm = Matrix::Constant(1, 4, 0.75f);
  s.seed = 18446744073709551615ull;
  s.pins[{StageId::input(StageKind::Q), 1, 3}] = 2.5f;
  s.pins[{StageId::input(StageKind::V), 2, 5}] = -1.0f;
  s.pins[{StageId::of_head(StageKind::Scores, 1), 0, 2}] = 1e30f;
  s.pins[{StageId::of_head(StageKind::Context, 0), 2, 2}] = 0.125f;
  s.pins[{StageId::input(StageKind::Output), 0, 4}] = -7.0f;
  // unknown keys, kept verbatim (in the order a load produces: sorted)
  s.unknown_fields = {{"author", "\"someone\""}, {"z_future", "{\"list\":[1,2,{\"x\":null}],\"n\":1.5}"}};
  return s;
}

// The book preset as a JSON value, for building bad files from a good one.
json book_json() { return json::parse(scenario_to_json(attention_lab::test::preset("book"))); }

std::string parse_error(const std::string& text) {
  LoadResult r;
  EXPECT_NO_THROW(r = parse_scenario(text));
  EXPECT_FALSE(r.scenario.has_value()) << text.substr(0, 200);
  EXPECT_FALSE(r.error.empty());
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << "one line: " << r.error;
  return r.error;
}

std::string parse_error(const json& j) { return parse_error(j.dump()); }
std::string parse_error(const char* text) { return parse_error(std::string(text)); }

json rows(int r, int c, double v = 0.5) { return json(std::vector<std::vector<double>>(static_cast<std::size_t>(r), std::vector<double>(static_cast<std::size_t>(c), v))); }

// A minimal valid file: X r x d, weights d x cols.
json minimal(int T, int d_model, int heads, int width) {
  return json{{"X", rows(T, d_model)}, {"W_q", rows(d_model, width)}, {"W_k", rows(d_model, width)},
              {"W_v", rows(d_model, width)}, {"heads", heads}};
}

}  // namespace

// [SECTION] Round trips

TEST(ScenarioIo, EverythingRoundTripsExactlyThroughText) {
  const Scenario s = everything();
  ASSERT_EQ(validate(s), "");
  const LoadResult r = parse_scenario(scenario_to_json(s));
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_TRUE(scenarios_identical(*r.scenario, s));
  // and saving again gives the same text
  EXPECT_EQ(scenario_to_json(*r.scenario), scenario_to_json(s));
}

TEST(ScenarioIo, SaveThenLoadGivesAnIdenticalScenario) {
  TempDir dir;
  const Scenario s = everything();
  ASSERT_EQ(save_scenario(s, dir / "s.json"), "");
  const LoadResult r = load_scenario(dir / "s.json");
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_TRUE(scenarios_identical(*r.scenario, s));
}

TEST(ScenarioIo, EveryPresetAndRandomScenarioRoundTrips) {
  std::vector<Scenario> all;
  for (const auto& p : presets()) all.push_back(*make_preset(p.name));
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    attention_lab::test::RandomOptions o;
    o.heads = static_cast<int>(seed % 3) + 1;
    o.bias = seed % 2 == 0;
    o.w_o = seed % 3 == 0;
    o.b_o = seed > 3;
    o.mask = static_cast<MaskKind>(seed % 4);
    all.push_back(attention_lab::test::random_scenario(seed, o));
  }
  for (const Scenario& s : all) {
    const LoadResult r = parse_scenario(scenario_to_json(s));
    ASSERT_TRUE(r.scenario) << s.title << ": " << r.error;
    EXPECT_TRUE(scenarios_identical(*r.scenario, s)) << s.title;
  }
}

TEST(ScenarioIo, SavedFilesAreStrictJson) {
  const json j = json::parse(scenario_to_json(everything()));  // throws if not
  EXPECT_EQ(j["heads"], 2);
  EXPECT_EQ(j["mask"].size(), 3u);
  EXPECT_EQ(j["attention_lab"]["pins"].size(), 5u);
  EXPECT_EQ(j["z_future"]["n"], 1.5);
}

TEST(ScenarioIo, OptionalKeysTakeTheirDefaults) {
  const LoadResult r = parse_scenario(minimal(2, 3, 1, 2).dump());
  ASSERT_TRUE(r.scenario) << r.error;
  const Scenario& s = *r.scenario;
  EXPECT_EQ(s.mask_kind, MaskKind::None);
  EXPECT_TRUE(s.scale);
  EXPECT_EQ(s.temperature, 1.0f);
  EXPECT_FALSE(s.use_bias || s.use_w_o || s.use_output_bias);
  EXPECT_TRUE(s.tokens.empty());
  EXPECT_TRUE(s.pins.empty());
}

TEST(ScenarioIo, AMissingBiasNextToGivenOnesIsZero) {
  json j = minimal(2, 3, 1, 2);
  j["b_k"] = {1.0, 2.0};
  const LoadResult r = parse_scenario(j.dump());
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_TRUE(r.scenario->use_bias);
  EXPECT_EQ(r.scenario->b_q.get(), Matrix::Zero(1, 2));
  EXPECT_EQ(r.scenario->b_k.get(), attention_lab::test::rows_of({{1, 2}}));
}

TEST(ScenarioIo, CausalAndNoneMasksAreWords) {
  json j = minimal(2, 3, 1, 2);
  j["mask"] = "causal";
  EXPECT_EQ(parse_scenario(j.dump()).scenario->mask_kind, MaskKind::Causal);
  j["mask"] = "none";
  EXPECT_EQ(parse_scenario(j.dump()).scenario->mask_kind, MaskKind::None);
}

// [SECTION] Saving atomically

TEST(ScenarioIo, SavingReplacesTheFileAndLeavesNoTemporaryFile) {
  TempDir dir;
  write_text(dir / "s.json", "old contents");
  ASSERT_EQ(save_scenario(attention_lab::test::preset("book"), dir / "s.json"), "");
  EXPECT_EQ(read_text(dir / "s.json"), scenario_to_json(attention_lab::test::preset("book")));
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"s.json"});
}

TEST(ScenarioIo, SavedFilesGetTheUsualPermissions) {
  TempDir dir;
  const mode_t old = ::umask(022);
  ASSERT_EQ(save_scenario(attention_lab::test::preset("book"), dir / "s.json"), "");
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "s.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(ScenarioIo, SavingIntoAMissingDirectoryReturnsAnError) {
  TempDir dir;
  const fs::path target = dir / "no/such/dir/s.json";
  const std::string err = save_scenario(attention_lab::test::preset("book"), target);
  EXPECT_NE(err, "");
  EXPECT_NE(err.find(target.string()), std::string::npos) << err;
  EXPECT_NE(err.find("cannot create a temporary file"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(target));
}

TEST(ScenarioIo, SavingOverADirectoryFailsAndLeavesNoTemporaryFile) {
  TempDir dir;
  fs::create_directories(dir / "taken" / "child");
  const std::string err = save_scenario(attention_lab::test::preset("book"), dir / "taken");
  EXPECT_NE(err.find("cannot replace"), std::string::npos) << err;
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"taken"});
  EXPECT_TRUE(fs::is_directory(dir / "taken" / "child"));
}

// A write that fails half way (here: the file size limit) must leave the old
// file as it was. Works for root too, unlike a read-only directory.
TEST(ScenarioIo, TheOldFileSurvivesAFailedWrite) {
  TempDir dir;
  const fs::path target = dir / "s.json";
  write_text(target, "previous contents");
  std::string big = scenario_to_json(attention_lab::test::preset("multi-head"));
  ASSERT_GT(big.size(), 4096u);

  struct sigaction ignore {}, old_action {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGXFSZ, &ignore, &old_action);
  rlimit old_limit{};
  ::getrlimit(RLIMIT_FSIZE, &old_limit);
  rlimit small = old_limit;
  small.rlim_cur = 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string err = write_file_atomically(target, big);
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::sigaction(SIGXFSZ, &old_action, nullptr);

  EXPECT_NE(err.find("cannot write"), std::string::npos) << err;
  EXPECT_EQ(read_text(target), "previous contents");
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"s.json"});
}

TEST(ScenarioIo, TheOldFileSurvivesWhenTheDirectoryIsReadOnly) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  TempDir dir;
  const fs::path target = dir / "s.json";
  write_text(target, "previous contents");
  fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
  const std::string err = save_scenario(attention_lab::test::preset("book"), target);
  fs::permissions(dir.path(), fs::perms::owner_all);
  EXPECT_NE(err, "");
  EXPECT_EQ(read_text(target), "previous contents");
}

// [SECTION] Loading files

TEST(ScenarioIo, LoadingAMissingFileNamesIt) {
  TempDir dir;
  const LoadResult r = load_scenario(dir / "nope.json");
  EXPECT_FALSE(r.scenario);
  EXPECT_EQ(r.error.rfind((dir / "nope.json").string() + ": cannot read", 0), 0u) << r.error;
}

TEST(ScenarioIo, LoadingADirectoryIsAnError) {
  TempDir dir;
  const LoadResult r = load_scenario(dir.path());
  EXPECT_FALSE(r.scenario);
  EXPECT_NE(r.error, "");
}

TEST(ScenarioIo, FilesAboveTheSizeLimitAreRefusedBeforeReading) {
  TempDir dir;
  const fs::path big = dir / "big.json";
  write_text(big, "");
  fs::resize_file(big, kMaxScenarioFileBytes + (1u << 20));  // sparse: nothing is written
  const LoadResult r = load_scenario(big);
  EXPECT_FALSE(r.scenario);
  EXPECT_NE(r.error.find("expected at most 512 MiB, found 513 MiB"), std::string::npos) << r.error;
}

TEST(ScenarioIo, AnEmptyFileIsASyntaxError) {
  TempDir dir;
  write_text(dir / "empty.json", "");
  const LoadResult r = load_scenario(dir / "empty.json");
  EXPECT_EQ(r.error.rfind("invalid JSON: ", 0), 0u) << r.error;
}

// [SECTION] Bad input: structure

TEST(ScenarioBadInput, SyntaxErrorsSayInvalidJson) {
  for (const char* text : {"{", "{\"X\": [[1, 2], [3]]", "nul", "{\"X\": [1,]}", "{'X': 1}", "{\"a\": 1} x"})
    EXPECT_EQ(parse_error(text).rfind("invalid JSON: ", 0), 0u) << text;
}

TEST(ScenarioBadInput, TheTopLevelMustBeAnObject) {
  EXPECT_EQ(parse_error("[1, 2]"), "scenario: expected a JSON object { … }, found a list of 2");
  EXPECT_EQ(parse_error("42"), "scenario: expected a JSON object { … }, found 42");
  EXPECT_EQ(parse_error("\"text\""), "scenario: expected a JSON object { … }, found string \"text\"");
  EXPECT_EQ(parse_error("null"), "scenario: expected a JSON object { … }, found null");
}

TEST(ScenarioBadInput, EachRequiredKeyMustBePresent) {
  for (const char* key : {"X", "W_q", "W_k", "W_v", "heads"}) {
    json j = book_json();
    j.erase(key);
    EXPECT_EQ(parse_error(j), std::string(key) + ": missing (required keys: X, W_q, W_k, W_v, heads)");
  }
}

TEST(ScenarioBadInput, ALessonWithoutItsFormatSaysItLooksLikeALesson) {
  const json lesson = json::parse(R"({"title": "Mine", "preset": "fat-cat", "steps": [{"title": "a", "text": "b"}]})");
  EXPECT_EQ(parse_error(lesson), "steps: expected a scenario (\"X\", \"W_q\", …), found what looks like a lesson (\"steps\" "
                                 "and no \"X\"): a lesson file starts with \"format\": \"attention-lab/lesson@1\", which "
                                 "this one lacks");
}

TEST(ScenarioBadInput, RaggedRowsNameTheRow) {
  json j = book_json();
  j["X"][3] = {0.1, 0.2};
  EXPECT_EQ(parse_error(j), "X[3]: expected 3 numbers (like row 0), found 2 (ragged rows)");
  j = book_json();
  j["W_v"][1] = 5;
  EXPECT_EQ(parse_error(j), "W_v[1]: expected a row (a list of numbers), found 5");
  j = book_json();
  j["W_q"][0] = json::array();
  EXPECT_EQ(parse_error(j), "W_q[0]: expected at least 1 number, found an empty row");
}

TEST(ScenarioBadInput, WrongShapesStateExpectedAndFound) {
  // d_model 8, two heads of d_k 4, but W_k has 6 columns
  json j = minimal(2, 8, 2, 8);
  j["W_k"] = rows(8, 6);
  EXPECT_EQ(parse_error(j), "W_k: expected 8 rows (d_model) x 8 columns (heads*d_k, like W_q), found 8 x 6");
  j = book_json();
  j["W_q"] = rows(2, 2);
  EXPECT_EQ(parse_error(j), "W_q: expected 3 rows (d_model, the columns of X) x heads*d_k columns, found 2 x 2");
  j = book_json();
  j["W_v"] = rows(4, 2);
  EXPECT_EQ(parse_error(j), "W_v: expected 3 rows (d_model, the columns of X) x heads*d_v columns, found 4 x 2");
  j = book_json();
  j["W_o"] = rows(3, 3);
  EXPECT_EQ(parse_error(j), "W_o: expected 2 rows (heads*d_v, the heads' contexts side by side), found 3 x 3");
}

TEST(ScenarioBadInput, KvHeadsMustDivideHeadsAndShapeKAndV) {
  json j = minimal(2, 8, 4, 8);  // four heads of d_k 2
  j["kv_heads"] = 3;
  EXPECT_EQ(parse_error(j), "kv_heads: expected a number that divides heads (4), found 3");
  j["kv_heads"] = 0;
  EXPECT_EQ(parse_error(j), "kv_heads: expected a whole number from 1 to 32, found 0");
  j["kv_heads"] = "two";
  EXPECT_NE(parse_error(j).find("kv_heads: expected a whole number"), std::string::npos) << parse_error(j);
  j["kv_heads"] = 2;  // W_k and W_v must now be 2·d_k = 4 wide
  EXPECT_EQ(parse_error(j), "W_k: expected 8 rows (d_model) x 4 columns (kv_heads*d_k, d_k from W_q), found 8 x 8");
  j["W_k"] = rows(8, 4);
  j["W_v"] = rows(8, 5);
  EXPECT_EQ(parse_error(j), "W_v: expected a column count divisible by kv_heads (2), found 5 columns");
  j["W_v"] = rows(8, 4);
  j["W_o"] = rows(4, 3);  // the contexts are heads·d_v = 4·2 = 8 wide
  EXPECT_EQ(parse_error(j), "W_o: expected 8 rows (heads*d_v, the heads' contexts side by side), found 4 x 3");
  j.erase("W_o");
  j["b_k"] = json::array({0, 0});
  EXPECT_EQ(parse_error(j), "b_k: expected 4 numbers (kv_heads*d_k), found 2");
  j.erase("b_k");
  ASSERT_TRUE(parse_scenario(j.dump()).scenario) << parse_scenario(j.dump()).error;
  const Scenario s = *parse_scenario(j.dump()).scenario;
  EXPECT_EQ(s.dims().kv_heads, 2);
  EXPECT_EQ(s.dims().d_v, 2);
}

TEST(ScenarioBadInput, RopeNeedsAnEvenDkAndAKnownPairing) {
  json j = minimal(2, 6, 2, 6);  // two heads of d_k 3
  j["rope"] = json::object();
  EXPECT_EQ(parse_error(j), "rope: expected an even d_k (RoPE turns pairs of dimensions), found d_k = 3");
  j = minimal(2, 8, 2, 8);
  j["rope"] = true;
  EXPECT_NE(parse_error(j).find("rope: expected {\"theta\": 10000"), std::string::npos) << parse_error(j);
  j["rope"] = {{"theta", 0.5}};
  EXPECT_EQ(parse_error(j), "rope.theta: expected a number greater than 1, found 0.5");
  j["rope"] = {{"pairs", "adjacent"}};
  EXPECT_EQ(parse_error(j),
            "rope.pairs: expected \"half\" (HF Llama's rotate_half) or \"interleaved\" (GPT-J), found \"adjacent\"");
  j["rope"] = {{"theta", 500000}, {"scaling", 8}};
  EXPECT_EQ(parse_error(j), "rope.scaling: expected {\"type\": \"linear\" or \"llama3\", \"factor\": …}, found 8");
  j["rope"] = {{"theta", 500000}, {"pairs", "interleaved"}};
  ASSERT_TRUE(parse_scenario(j.dump()).scenario) << parse_scenario(j.dump()).error;
  const Scenario s = *parse_scenario(j.dump()).scenario;
  EXPECT_TRUE(s.rope.on);
  EXPECT_EQ(s.rope.theta, 500000.0f);
  EXPECT_EQ(s.rope.pairs, RopePairs::Interleaved);
  // saved and read back the same
  const Scenario back = *parse_scenario(scenario_to_json(s)).scenario;
  EXPECT_EQ(back.rope, s.rope);
}

TEST(ScenarioBadInput, RopeScalingIsReadWholeOrRefusedByName) {
  json j = minimal(2, 8, 2, 8);
  const json llama3 = {{"type", "llama3"}, {"factor", 8}, {"low_freq_factor", 1}, {"high_freq_factor", 4},
                       {"original_max_position_embeddings", 64}};
  j["rope"] = {{"theta", 500000}, {"scaling", llama3}};
  const LoadResult loaded = parse_scenario(j.dump());
  ASSERT_TRUE(loaded.scenario) << loaded.error;
  const Rope& rope = loaded.scenario->rope;
  EXPECT_EQ(rope.scaling, RopeScaling::Llama3);
  EXPECT_EQ(rope.factor, 8.0f);
  EXPECT_EQ(rope.original_max_positions, 64);
  EXPECT_EQ(parse_scenario(scenario_to_json(*loaded.scenario)).scenario->rope, rope);  // saved and read back

  j["rope"]["scaling"] = {{"type", "yarn"}, {"factor", 8}};
  EXPECT_EQ(parse_error(j), "rope.scaling.type: expected \"linear\" or \"llama3\", found \"yarn\"");
  j["rope"]["scaling"] = {{"type", "linear"}, {"factor", 8}, {"low_freq_factor", 1}};
  EXPECT_EQ(parse_error(j), "rope.scaling.low_freq_factor: unknown key for linear scaling");
  j["rope"]["scaling"] = {{"type", "linear"}};
  EXPECT_EQ(parse_error(j), "rope.scaling: expected \"factor\" for linear scaling");
  j["rope"]["scaling"] = {{"type", "linear"}, {"factor", 0.5}};
  EXPECT_EQ(parse_error(j), "rope.scaling.factor: expected a finite number of at least 1, found 0.5");
  json bad = llama3;
  bad["high_freq_factor"] = 1;
  j["rope"]["scaling"] = bad;
  EXPECT_EQ(parse_error(j), "rope.scaling.high_freq_factor: expected a finite number greater than low_freq_factor 1, found 1");
}

// Llama 3's scaling as HF computes it (_compute_llama3_parameters), at the
// three bands: divided, kept, blended.
TEST(RopeScalingMath, Llama3DividesLowFrequenciesKeepsHighOnesAndBlendsBetween) {
  Rope r;
  r.on = true;
  r.theta = 500000.0f;
  r.scaling = RopeScaling::Llama3;
  r.factor = 32.0f;
  r.low_freq_factor = 1.0f;
  r.high_freq_factor = 4.0f;
  r.original_max_positions = 64;
  const int d_k = 16;
  for (int k = 0; k < d_k / 2; ++k) {
    const double inv_freq = 1.0 / std::pow(500000.0, 2.0 * k / d_k);
    const double wavelength = 2.0 * 3.14159265358979323846 / inv_freq;
    double expected = inv_freq;
    if (wavelength > 64.0) {
      expected = inv_freq / 32.0;
    } else if (wavelength >= 16.0) {
      const double smooth = (64.0 / wavelength - 1.0) / 3.0;
      expected = (1.0 - smooth) * inv_freq / 32.0 + smooth * inv_freq;
    }
    EXPECT_DOUBLE_EQ(rope_frequency(r, d_k, k), expected) << k;
    EXPECT_DOUBLE_EQ(rope_angle(r, d_k, k, 7), 7.0 * expected) << k;
  }
  // pair 0 (wavelength 6.3) is kept, pair 1 (32) blended, pair 2 (165) divided
  EXPECT_NE(rope_scaling_note(r, d_k, 0).find("kept"), std::string::npos) << rope_scaling_note(r, d_k, 0);
  EXPECT_NE(rope_scaling_note(r, d_k, 1).find("blended"), std::string::npos) << rope_scaling_note(r, d_k, 1);
  EXPECT_NE(rope_scaling_note(r, d_k, 2).find("divided by 32"), std::string::npos) << rope_scaling_note(r, d_k, 2);
  EXPECT_EQ(rope_frequency_formula(r, d_k, 0), "θ^(−0/16)");
  EXPECT_EQ(rope_frequency_formula(r, d_k, 2), "θ^(−4/16) ÷ 32");
  EXPECT_NE(rope_frequency_formula(r, d_k, 1).find("/32)·θ^(−2/16)"), std::string::npos) << rope_frequency_formula(r, d_k, 1);
  r.scaling = RopeScaling::None;
  EXPECT_EQ(rope_scaling_note(r, d_k, 2), "");
}

TEST(ScenarioBadInput, HeadsMustDivideTheColumns) {
  json j = book_json();
  j["heads"] = 3;  // W_q has 2 columns
  EXPECT_EQ(parse_error(j), "W_q: expected a column count divisible by heads (3), found 2 columns");
  j = minimal(2, 3, 2, 4);
  j["W_v"] = rows(3, 5);
  EXPECT_EQ(parse_error(j), "W_v: expected a column count divisible by heads (2), found 5 columns");
}

TEST(ScenarioBadInput, BiasesMustMatchTheirProjection) {
  json j = book_json();
  j["b_q"] = {1.0};
  EXPECT_EQ(parse_error(j), "b_q: expected 2 numbers (heads*d_k), found 1");
  j = book_json();
  j["b_v"] = "zero";
  EXPECT_EQ(parse_error(j), "b_v: expected a list of 2 numbers, found string \"zero\"");
  j = book_json();
  j["b_o"] = {1.0, 2.0, 3.0};
  EXPECT_EQ(parse_error(j), "b_o: expected 2 numbers (heads*d_v, no W_o), found 3");
  j = book_json();
  j["W_o"] = rows(2, 4);
  j["b_o"] = {1.0};
  EXPECT_EQ(parse_error(j), "b_o: expected 4 numbers (d_out, the columns of W_o), found 1");
}

// [SECTION] Bad input: values

TEST(ScenarioBadInput, NumbersOutsideFloatRangeAreRefused) {
  json j = book_json();
  j["X"][0][0] = 1e39;
  EXPECT_EQ(parse_error(j).rfind("X[0][0]: expected a finite float32 number, found 1e+39", 0), 0u);
  j = book_json();
  j["W_k"][2][1] = -1e39;
  EXPECT_EQ(parse_error(j).rfind("W_k[2][1]: expected a finite float32 number", 0), 0u);
  // 1e400 does not even fit a double: the JSON parser itself refuses it, quoting the number
  std::string text = book_json().dump();
  text.replace(text.find("\"temperature\":1"), 15, "\"temperature\":1e400");
  EXPECT_EQ(parse_error(text), "invalid JSON: number overflow parsing '1e400'");
}

TEST(ScenarioBadInput, NonNumbersAsValuesNameTheCell) {
  json j = book_json();
  j["X"][1][2] = "nan";
  EXPECT_EQ(parse_error(j), "X[1][2]: expected a number, found string \"nan\"");
  j = book_json();
  j["X"][0][0] = "Infinity";
  EXPECT_EQ(parse_error(j), "X[0][0]: expected a number, found string \"Infinity\"");
  j = book_json();
  j["W_v"][1][0] = true;
  EXPECT_EQ(parse_error(j), "W_v[1][0]: expected a number, found true");
  j = book_json();
  j["W_q"][0][1] = nullptr;
  EXPECT_EQ(parse_error(j), "W_q[0][1]: expected a number, found null");
  j = book_json();
  j["X"][0][0] = json::array({1});
  EXPECT_EQ(parse_error(j), "X[0][0]: expected a number, found a list of 1");
  // NaN and Infinity are not JSON at all
  std::string text = book_json().dump();
  text.replace(text.find("\"temperature\":1"), 15, "\"temperature\":NaN");
  EXPECT_EQ(parse_error(text).rfind("invalid JSON: ", 0), 0u);
}

TEST(ScenarioBadInput, EmptyAndNegativeSizesAreRefused) {
  json j = book_json();
  j["X"] = json::array();
  EXPECT_EQ(parse_error(j), "X: expected at least 1 row, found 0");
  j = book_json();
  j["X"] = json::array({json::array()});
  EXPECT_EQ(parse_error(j), "X[0]: expected at least 1 number, found an empty row");
  j = book_json();
  j["W_q"] = json::array();
  EXPECT_EQ(parse_error(j), "W_q: expected at least 1 row, found 0");
  j = book_json();
  j["X"] = json::object();
  EXPECT_EQ(parse_error(j), "X: expected a list of rows, found an object");
  for (const auto& [value, shown] : std::vector<std::pair<json, std::string>>{
           {0, "0"}, {-1, "-1"}, {2.5, "2.5"}, {limits::kMaxHeads + 1, std::to_string(limits::kMaxHeads + 1)}, {1e300, "1e+300"}}) {
    j = book_json();
    j["heads"] = value;
    EXPECT_EQ(parse_error(j), "heads: expected a whole number from 1 to " + std::to_string(limits::kMaxHeads) + ", found " + shown);
  }
  j = book_json();
  j["heads"] = "2";
  EXPECT_EQ(parse_error(j), "heads: expected a whole number from 1 to " + std::to_string(limits::kMaxHeads) + ", found string \"2\"");
  j = book_json();
  j["heads"] = false;
  EXPECT_EQ(parse_error(j), "heads: expected a whole number from 1 to " + std::to_string(limits::kMaxHeads) + ", found false");
}

TEST(ScenarioBadInput, SizesAboveTheLimitsAreRefused) {
  using namespace limits;
  EXPECT_EQ(parse_error(minimal(kMaxTokens + 1, 1, 1, 1)), "X: expected at most " + std::to_string(kMaxTokens) + " rows (T size limit), found " + std::to_string(kMaxTokens + 1));
  EXPECT_EQ(parse_error(minimal(1, kMaxModelDim + 1, 1, 1)),
            "X: expected at most " + std::to_string(kMaxModelDim) + " columns (d_model size limit), found " + std::to_string(kMaxModelDim + 1));
  EXPECT_EQ(parse_error(minimal(1, 1, 1, kMaxProjectionWidth + 1)),
            "W_q: expected at most " + std::to_string(kMaxProjectionWidth) + " columns (heads*d_k size limit), found " + std::to_string(kMaxProjectionWidth + 1));
  EXPECT_EQ(parse_error(minimal(1, 1, 1, kMaxHeadDim * 2)),
            "d_k, d_v: expected at most " + std::to_string(kMaxHeadDim) + " (size limit), found " + std::to_string(2 * kMaxHeadDim) + ", " + std::to_string(2 * kMaxHeadDim));
  json j = minimal(1, 1, 2, 2 * kMaxHeadDim);  // two heads of 1024: fine
  j["W_v"] = rows(1, 2);
  EXPECT_TRUE(parse_scenario(j.dump()).scenario.has_value());
  j = minimal(2, 2, 1, 2);
  j["W_o"] = rows(2, kMaxModelDim + 1);
  EXPECT_EQ(parse_error(j), "W_o: expected at most " + std::to_string(kMaxModelDim) + " columns (d_out size limit), found " + std::to_string(kMaxModelDim + 1));
}

TEST(ScenarioBadInput, BadMasksNameTheCellOrTheShape) {
  json j = book_json();
  j["mask"] = rows(6, 6, 1);
  j["mask"][0][1] = 2;
  EXPECT_EQ(parse_error(j), "mask[0][1]: expected 0 or 1, found 2");
  j["mask"][0][1] = 0.5;
  EXPECT_EQ(parse_error(j), "mask[0][1]: expected 0 or 1, found 0.5");
  j["mask"][0][1] = true;
  EXPECT_EQ(parse_error(j), "mask[0][1]: expected a number, found true");
  j = book_json();
  j["mask"] = rows(2, 2, 1);
  EXPECT_EQ(parse_error(j), "mask: expected 6 rows x 6 columns (T x T), found 2 x 2");
  j = book_json();
  j["mask"] = "diagonal";
  EXPECT_EQ(parse_error(j), "mask: expected \"none\", \"causal\", {\"window\": W} or a T x T list of rows of 0/1, found string \"diagonal\"");
  j = book_json();
  j["mask"] = 1;
  EXPECT_EQ(parse_error(j), "mask: expected a list of rows, found 1");
  j = book_json();
  j["mask"] = {{"window", 0}};
  EXPECT_EQ(parse_error(j), "mask.window: expected a whole number from 1 to 4096, found 0");
  j["mask"] = {{"window", 2.5}};
  EXPECT_EQ(parse_error(j).substr(0, 12), "mask.window:");
  j["mask"] = {{"window", "3"}};
  EXPECT_EQ(parse_error(j).substr(0, 12), "mask.window:");
  j["mask"] = {{"width", 3}};
  EXPECT_EQ(parse_error(j), "mask: expected {\"window\": W} (the keys each query sees, itself included), found the key \"width\"");
  j["mask"] = {{"window", 3}, {"extra", 1}};
  EXPECT_EQ(parse_error(j), "mask: expected {\"window\": W} (the keys each query sees, itself included), found the key \"extra\"");
  j["mask"] = json::object();
  EXPECT_EQ(parse_error(j),
            "mask: expected {\"window\": W} (the keys each query sees, itself included), found an object without \"window\"");
}

TEST(ScenarioIo, ASlidingWindowSavesAndLoadsBack) {
  auto j = book_json();
  j["mask"] = {{"window", 3}};
  const LoadResult r = parse_scenario(j.dump());
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_EQ(r.scenario->mask_kind, MaskKind::Window);
  EXPECT_EQ(r.scenario->window, 3);
  EXPECT_NE(scenario_to_json(*r.scenario).find("\"mask\": {\"window\": 3}"), std::string::npos);
  const LoadResult back = parse_scenario(scenario_to_json(*r.scenario));
  ASSERT_TRUE(back.scenario) << back.error;
  EXPECT_TRUE(attention_lab::test::scenarios_identical(*back.scenario, *r.scenario));
}

TEST(ScenarioBadInput, TemperatureMustBePositive) {
  for (const auto& [value, shown] :
       std::vector<std::pair<json, std::string>>{{0, "0"}, {-1, "-1"}, {-0.5, "-0.5"}, {1e-50, "1e-50"}}) {
    json j = book_json();
    j["temperature"] = value;
    EXPECT_EQ(parse_error(j), "temperature: expected a number greater than 0, found " + shown);
  }
  json j = book_json();
  j["temperature"] = "hot";
  EXPECT_EQ(parse_error(j), "temperature: expected a number, found string \"hot\"");
}

TEST(ScenarioBadInput, OtherSettingsHaveTheirTypes) {
  json j = book_json();
  j["scale"] = "yes";
  EXPECT_EQ(parse_error(j), "scale: expected true or false, found string \"yes\"");
  j = book_json();
  j["scale_factor"] = -0.5;
  EXPECT_EQ(parse_error(j), "scale_factor: expected a number greater than 0 (what the scores are multiplied by instead of 1/√d_k), found -0.5");
  j = book_json();
  j["title"] = 5;
  EXPECT_EQ(parse_error(j), "title: expected a string, found 5");
  j = book_json();
  j["description"] = json::array();
  EXPECT_EQ(parse_error(j), "description: expected a string, found a list of 0");
  j = book_json();
  j["attention_lab"] = 3;
  EXPECT_EQ(parse_error(j), "attention_lab: expected an object, found 3");
  j = book_json();
  j["attention_lab"]["seed"] = -1;
  EXPECT_EQ(parse_error(j), "attention_lab.seed: expected a whole number ≥ 0, found -1");
  j["attention_lab"]["seed"] = 1.5;
  EXPECT_EQ(parse_error(j), "attention_lab.seed: expected a whole number ≥ 0, found 1.5");
}

TEST(ScenarioBadInput, TokensMustMatchTAndBeShortStrings) {
  json j = book_json();
  j["tokens"] = {"a", "b"};
  EXPECT_EQ(parse_error(j), "tokens: expected 6 labels (T, the rows of X), found 2");
  j["tokens"] = {"a", 5, "c", "d", "e", "f"};
  EXPECT_EQ(parse_error(j), "tokens[1]: expected a string, found 5");
  j["tokens"] = {"a", "b", "c", "d", "e", std::string(65, 'x')};
  EXPECT_EQ(parse_error(j), "tokens[5]: expected at most 64 bytes (UTF-8), found 65");
  j["tokens"] = "abc";
  EXPECT_EQ(parse_error(j), "tokens: expected a list of 6 strings, found string \"abc\"");
}

TEST(ScenarioBadInput, FeaturesMustMatchDModelAndBeShortStrings) {
  json j = book_json();  // d_model = 3
  j["features"] = {"a", "b"};
  EXPECT_EQ(parse_error(j), "features: expected 3 names (d_model, the columns of X), found 2");
  j["features"] = {"a", nullptr, "c"};
  EXPECT_EQ(parse_error(j), "features[1]: expected a string, found null");
  j["features"] = {"a", "b", std::string(65, 'x')};
  EXPECT_EQ(parse_error(j), "features[2]: expected at most 64 bytes (UTF-8), found 65");
  j["features"] = 3;
  EXPECT_EQ(parse_error(j), "features: expected a list of 3 strings, found 3");
}

TEST(ScenarioIo, FeatureNamesAreSavedOnlyWhenGiven) {
  Scenario s = attention_lab::test::preset("book");
  EXPECT_FALSE(json::parse(scenario_to_json(s)).contains("features"));
  s.features = {"size", "", "colour"};
  const json j = json::parse(scenario_to_json(s));
  EXPECT_EQ(j["features"], json({"size", "", "colour"}));
  const LoadResult back = parse_scenario(scenario_to_json(s));
  ASSERT_EQ(back.error, "");
  EXPECT_EQ(back.scenario->feature_label(0), "size");
  EXPECT_EQ(back.scenario->feature_label(1), "1");  // empty: the index
}

TEST(ScenarioBadInput, BadPinsNameThePin) {
  auto with_pin = [](json pin) {
    json j = book_json();
    j["attention_lab"]["pins"] = json::array({{{"stage", "scores[0]"}, {"row", 0}, {"col", 0}, {"value", 1}}, pin});
    return j;
  };
  EXPECT_EQ(parse_error(with_pin({{"stage", "X"}, {"row", 0}, {"col", 0}, {"value", 1}})).rfind(
                "attention_lab.pins[1].stage: expected one of Q, K, V, scores[h]", 0),
            0u);
  EXPECT_EQ(parse_error(with_pin({{"stage", "Q[0]"}, {"row", 0}, {"col", 0}, {"value", 1}})).rfind(
                "attention_lab.pins[1].stage: expected one of", 0),
            0u);
  EXPECT_EQ(parse_error(with_pin({{"stage", "scores[1]"}, {"row", 0}, {"col", 0}, {"value", 1}})),
            "attention_lab.pins[1].stage: expected a head below 1, found \"scores[1]\"");
  EXPECT_EQ(parse_error(with_pin({{"stage", "weights[0]"}, {"row", 6}, {"col", 0}, {"value", 1}})),
            "attention_lab.pins[1].row: expected a whole number from 0 to 5, found 6");
  EXPECT_EQ(parse_error(with_pin({{"stage", "context[0]"}, {"row", 0}, {"col", 2}, {"value", 1}})),
            "attention_lab.pins[1].col: expected a whole number from 0 to 1, found 2");
  EXPECT_EQ(parse_error(with_pin({{"stage", "output"}, {"row", 0}, {"col", -1}, {"value", 1}})),
            "attention_lab.pins[1].col: expected a whole number from 0 to 1, found -1");
  EXPECT_EQ(parse_error(with_pin({{"stage", "output"}, {"row", 0}, {"col", 0}})),
            "attention_lab.pins[1]: expected the keys row, col and value");
  EXPECT_EQ(parse_error(with_pin({{"stage", "output"}, {"row", 0}, {"col", 0}, {"value", "big"}})),
            "attention_lab.pins[1].value: expected a number, found string \"big\"");
  EXPECT_EQ(parse_error(with_pin({{"stage", "output"}, {"row", 0}, {"col", 0}, {"value", 1e39}})).rfind(
                "attention_lab.pins[1].value: expected a finite float32 number", 0),
            0u);
  EXPECT_EQ(parse_error(with_pin(5)).rfind("attention_lab.pins[1]: expected {\"stage\"", 0), 0u);
  EXPECT_EQ(parse_error(with_pin({{"stage", 3}, {"row", 0}, {"col", 0}, {"value", 1}})).rfind(
                "attention_lab.pins[1]: expected {\"stage\"", 0),
            0u);
  json j = book_json();
  j["attention_lab"]["pins"] = json::object();
  EXPECT_EQ(parse_error(j), "attention_lab.pins: expected a list, found an object");
}

TEST(ScenarioBadInput, ErrorsAreOneLineEvenForStringsWithNewlines) {
  json j = book_json();
  j["heads"] = "two\nheads";
  const std::string err = parse_error(j);
  EXPECT_EQ(err.rfind("heads: expected a whole number from 1 to " + std::to_string(limits::kMaxHeads) + ", found string ", 0), 0u) << err;
  j["heads"] = std::string(19, 'x') + "é";  // cut at 20 bytes: in the middle of 'é'
  const std::string cut = parse_error(j);
  EXPECT_NO_THROW(json(cut).dump()) << "valid UTF-8, so a front end can show it: " << cut;
}

TEST(ScenarioBadInput, DeeplyNestedValuesDoNotCrash) {
  json j = book_json();
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string text = j.dump();
  text.insert(text.size() - 1, ",\"nested\":" + deep);
  LoadResult r;
  ASSERT_NO_THROW(r = parse_scenario(text));
  EXPECT_FALSE(r.scenario.has_value());
  EXPECT_NE(r.error.find("nested"), std::string::npos) << r.error;
  // a little nesting in an unknown key is kept
  text = j.dump();
  text.insert(text.size() - 1, ",\"nested\":[[[{\"a\":[1]}]]]");
  r = parse_scenario(text);
  ASSERT_TRUE(r.scenario) << r.error;
  EXPECT_EQ(r.scenario->unknown_fields.size(), 1u);
}

// [SECTION] Mutated files

// A few hundred random byte edits of a valid file: parse_scenario must return
// a scenario or an error every time, and any scenario it returns must be valid
// and computable.
TEST(ScenarioBadInput, RandomlyMutatedFilesNeverCrashTheParser) {
  Scenario base = everything();
  base.unknown_fields.clear();
  const std::string text = scenario_to_json(base);
  std::mt19937 rng(20240611);
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const std::string alphabet = "[]{},:\"0123456789-+.eE \n\\tfnrua";
  int loaded = 0;
  for (int i = 0; i < 600; ++i) {
    std::string m = text;
    const std::size_t edits = 1 + pick(4);
    for (std::size_t e = 0; e < edits && !m.empty(); ++e) {
      const std::size_t at = pick(m.size());
      switch (pick(6)) {
        case 0: m[at] = alphabet[pick(alphabet.size())]; break;
        case 1: m[at] = static_cast<char>(pick(256)); break;
        case 2: m.erase(at, 1 + pick(8)); break;
        case 3: m.insert(at, 1, alphabet[pick(alphabet.size())]); break;
        case 4: m.insert(at, m.substr(pick(m.size()), 1 + pick(20))); break;
        default: m.resize(at); break;  // truncated file
      }
    }
    LoadResult r;
    ASSERT_NO_THROW(r = parse_scenario(m)) << "mutation " << i;
    ASSERT_NE(r.scenario.has_value(), !r.error.empty()) << "mutation " << i;
    if (r.scenario) {
      ++loaded;
      ASSERT_EQ(validate(*r.scenario), "") << "mutation " << i;
      Engine e;
      e.recompute_all(*r.scenario);
      EXPECT_EQ(e.dims(), r.scenario->dims());
    } else {
      EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
    }
  }
  EXPECT_GT(loaded, 0) << "some mutations (inside numbers) keep the file valid";
}
