// Training a tiny GPT on a task: the run's JSON, the task batches, the
// metrics, `attention-lab-cli train`, and the saved folder reopened in model mode.

#include "attention_lab/tiny_training.h"
#include "attention_lab/tokenizer.h"
#include "attention_lab/transformer_forward.h"
#include "attention_lab/transformer_model.h"

#include "cli/cli_run.h"
#include "temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

using namespace attention_lab;

namespace {

TinyTrainConfig parsed(const std::string& text, std::string& error) { return parse_tiny_train_config(text, "run.json", error); }

std::string problem(const std::string& text) {
  std::string error;
  parsed(text, error);
  return error;
}

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

}  // namespace

TEST(TinyTrainConfig, ReadsEverySettingAndDerivesTheContext) {
  std::string error;
  const TinyTrainConfig c = parsed(R"({"task": "reverse", "length": 5, "vocab": 7, "layers": 3, "heads": 2, "d_model": 16,
      "d_ff": 40, "batch": 8, "steps": 12, "learning_rate": 0.002, "beta1": 0.8, "beta2": 0.9, "eps": 1e-6,
      "weight_decay": 0.1, "seed": 9, "log_every": 4})", error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(c.task, TrainTask::Reverse);
  EXPECT_EQ(c.shape.context, 9);  // 5 + 5 − 1
  EXPECT_EQ(c.shape.vocab, 7);
  EXPECT_EQ(c.shape.layers, 3);
  EXPECT_EQ(c.shape.d_ff, 40);
  EXPECT_EQ(c.batch, 8);
  EXPECT_EQ(c.steps, 12);
  EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.002);
  EXPECT_DOUBLE_EQ(c.optimizer.beta2, 0.9);
  EXPECT_DOUBLE_EQ(c.optimizer.weight_decay, 0.1);
  EXPECT_EQ(c.seed, 9u);
  EXPECT_EQ(c.log_every, 4);
  // Defaults: sort is minGPT's demo, d_ff is 4·d_model; induction's context is twice the length.
  const TinyTrainConfig sort = parsed(R"({"task": "sort", "d_model": 24})", error);
  EXPECT_EQ(sort.shape.vocab, 3);
  EXPECT_EQ(sort.length, 6);
  EXPECT_EQ(sort.shape.d_ff, 96);
  EXPECT_EQ(parsed("{}", error).shape.context, 64);
}

TEST(TinyTrainConfig, RefusesWhatItDoesNotReadByName) {
  EXPECT_EQ(problem(R"({"task": "translate"})"), "run.json: \"task\": expected copy, reverse, sort, induction or text, found \"translate\"");
  EXPECT_EQ(problem(R"({"lr": 0.1})"),
            "run.json: \"lr\": not a setting of a training run (task, length, vocab, layers, heads, d_model, d_ff, batch, "
            "steps, learning_rate, beta1, beta2, eps, weight_decay, seed, log_every, text_file)");
  EXPECT_EQ(problem(R"({"heads": 3})"), "run.json: heads: expected a number that divides d_model (64), found 3");
  EXPECT_EQ(problem(R"({"learning_rate": 0})"), "run.json: \"learning_rate\": expected a number above 0 and below 10, found 0");
  EXPECT_EQ(problem(R"({"batch": 2.5})"), "run.json: \"batch\": expected a whole number from 1 to 4096, found 2.5");
  EXPECT_EQ(problem(R"({"length": 1})"), "run.json: \"length\": expected a whole number from 2 to 1024, found 1");
  EXPECT_EQ(problem("[1]"), "run.json: expected an object of settings ({\"task\": \"induction\", …})");
  EXPECT_NE(problem("{"), "");
}

TEST(TinyTraining, TaskBatchesSayWhatTheyAsk) {
  std::string error;
  TinyTrainConfig c = parsed(R"({"task": "sort", "length": 4, "vocab": 5})", error);
  std::uint64_t state = 3;
  TokenBatch b = task_batch(c, 6, state);
  ASSERT_EQ(b.length, 7);
  for (int r = 0; r < b.rows; ++r) {
    const int* ids = &b.ids[static_cast<std::size_t>(r * 7)];
    const int* targets = &b.targets[static_cast<std::size_t>(r * 7)];
    std::vector<int> question(ids, ids + 4), answer = question;
    std::sort(answer.begin(), answer.end());
    for (int t = 0; t < 3; ++t) EXPECT_EQ(targets[t], -1);  // no loss on the question
    for (int t = 3; t < 7; ++t) EXPECT_EQ(targets[t], answer[static_cast<std::size_t>(t - 3)]);
    for (int t = 4; t < 7; ++t) EXPECT_EQ(ids[t], answer[static_cast<std::size_t>(t - 4)]);
  }
  c = parsed(R"({"task": "induction", "length": 8, "vocab": 50})", error);
  b = task_batch(c, 20, state);
  ASSERT_EQ(b.period.size(), 20u);
  std::set<int> periods;
  for (int r = 0; r < b.rows; ++r) {
    const int p = b.period[static_cast<std::size_t>(r)];
    periods.insert(p);
    EXPECT_GE(p, 4);
    EXPECT_LE(p, 8);
    for (int t = p; t < 16; ++t) EXPECT_EQ(b.ids[static_cast<std::size_t>(r * 16 + t)], b.ids[static_cast<std::size_t>(r * 16 + t - p)]);
    for (int t = 0; t < 15; ++t) EXPECT_EQ(b.targets[static_cast<std::size_t>(r * 16 + t)], b.ids[static_cast<std::size_t>(r * 16 + t + 1)]);
  }
  EXPECT_GT(periods.size(), 2u) << "the period varies, so position alone cannot find the copy";
}

TEST(TinyTraining, LearnsToSortAndIsDeterministicUnderItsSeed) {
  std::string error;
  const TinyTrainConfig c = parsed(R"({"task": "sort", "layers": 2, "heads": 2, "d_model": 32, "steps": 300,
      "learning_rate": 0.003, "batch": 32, "seed": 5})", error);
  ASSERT_EQ(error, "");
  TinyTrainingRun a(c), b(c);
  double first = 0.0, last = 0.0;
  for (int i = 0; i < c.steps; ++i) {
    const double la = a.step(), lb = b.step();
    EXPECT_EQ(la, lb) << "step " << i + 1;
    if (i == 0) first = la;
  }
  last = a.measure(0.0).eval_loss;
  EXPECT_NEAR(first, std::log(3.0), 0.15) << "an untrained model guesses among three digits";
  EXPECT_LT(last, 0.25 * first) << "sorting six digits is learned";
}

TEST(TinyTraining, AnInductionRunLogsBothHalvesAndEveryHead) {
  std::string error;
  const TinyTrainConfig c = parsed(R"({"task": "induction", "length": 6, "vocab": 20, "layers": 2, "heads": 2, "d_model": 16,
      "batch": 4})", error);
  TinyTrainingRun run(c);
  const TinyTrainLog log = run.measure(run.step());
  EXPECT_EQ(log.step, 1);
  EXPECT_NEAR(log.random_loss, std::log(20.0), 0.3);  // chance, untrained
  EXPECT_NEAR(log.repeat_loss, std::log(20.0), 0.3);
  ASSERT_EQ(log.induction_score.size(), 2u);
  ASSERT_EQ(log.induction_score[1].size(), 2u);
  for (const auto& layer : log.previous_token_score)
    for (double s : layer) EXPECT_TRUE(s > 0.0 && s < 1.0);
  const nlohmann::json line = nlohmann::json::parse(to_json_line(log, c.task));
  for (const char* key : {"step", "loss", "eval_loss", "random_loss", "repeat_loss", "induction_score", "previous_token_score", "seconds"})
    EXPECT_TRUE(line.contains(key)) << key;
}

TEST(TinyTraining, SavedFolderOpensInModelModeAndComputesTheSameLoss) {
  test::TempDir dir;
  std::string error;
  const TinyTrainConfig c = parsed(R"({"task": "copy", "length": 4, "vocab": 6, "layers": 2, "heads": 2, "d_model": 16,
      "steps": 5})", error);
  TinyTrainingRun run(c);
  for (int i = 0; i < 5; ++i) run.step();
  ASSERT_EQ(save_tiny_gpt(run.model(), dir / "model"), "");
  const LoadedModel loaded = load_model(dir / "model");
  ASSERT_TRUE(loaded.model) << loaded.error;
  EXPECT_EQ(loaded.model->config.layers, 2);
  EXPECT_EQ(loaded.model->config.vocab, 6);
  EXPECT_EQ(loaded.model->config.max_positions, 7);
  EXPECT_TRUE(loaded.model->lm_head_tied);
  std::string tokenizer_error;
  const auto tokenizer = Tokenizer::load(dir / "model", 6, tokenizer_error);
  ASSERT_TRUE(tokenizer) << tokenizer_error;

  // The loss of one sequence, by the tiny GPT and by model mode's forward pass.
  TokenBatch one;
  one.rows = 1;
  one.length = 7;
  one.ids = {3, 1, 4, 1, 3, 1, 4};
  one.targets = {1, 4, 1, 3, 1, 4, 1};
  const TinyGptPass pass = run.model().run(one, false);
  const ModelForward forward = run_model(*loaded.model, one.ids, 7);
  double loss = 0.0;
  for (int t = 0; t < 7; ++t) {
    const RowVector p = next_token_probabilities(forward.logits.row(t));
    loss -= std::log(static_cast<double>(p(one.targets[static_cast<std::size_t>(t)])));
  }
  EXPECT_NEAR(loss / 7.0, pass.loss, 1e-5);
}

// [SECTION] The text task: a character-level language model of a file

namespace {

// A text whose next character is often predictable, with two- and three-byte characters.
std::string sample_text() {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the fat cat sat on the mat. le café est très bon — ";
  return text;
}

}  // namespace

TEST(TinyTextTask, ReadsAFileAsCharactersAndRefusesWhatIsNotUtf8) {
  test::TempDir dir;
  write(dir / "text.txt", "aé b\nba");
  std::string error;
  const auto corpus = load_text_corpus(dir / "text.txt", 4, error);
  ASSERT_TRUE(corpus) << error;
  EXPECT_EQ(corpus->alphabet, (std::vector<std::string>{"\n", " ", "a", "b", "é"}));
  EXPECT_EQ(corpus->ids, (std::vector<int>{2, 4, 1, 3, 0, 3, 2}));
  write(dir / "latin1.txt", std::string("caf\xE9 au lait"));
  EXPECT_FALSE(load_text_corpus(dir / "latin1.txt", 4, error));
  EXPECT_NE(error.find("expected UTF-8 text, found a byte that is not (0xE9 at byte 3)"), std::string::npos) << error;
  EXPECT_FALSE(load_text_corpus(dir / "text.txt", 7, error));
  EXPECT_NE(error.find("expected at least 8 characters (a window of \"length\" 7 and the one after it), found 7"),
            std::string::npos) << error;
  write(dir / "one.txt", "aaaaaaaa");
  EXPECT_FALSE(load_text_corpus(dir / "one.txt", 4, error));
  EXPECT_NE(error.find("expected at least 2 distinct characters"), std::string::npos) << error;
  EXPECT_FALSE(load_text_corpus(dir / "missing.txt", 4, error));
  EXPECT_NE(error.find("missing.txt"), std::string::npos) << error;
}

TEST(TinyTextTask, TheRunFileNamesItsTextRelativeToItself) {
  test::TempDir dir;
  write(dir / "text.txt", sample_text());
  write(dir / "run.json", R"({"task": "text", "text_file": "text.txt", "length": 16, "d_model": 32})");
  std::string error;
  const TinyTrainConfig c = read_tiny_train_config(dir / "run.json", error);
  ASSERT_EQ(error, "");
  ASSERT_TRUE(c.corpus);
  EXPECT_EQ(c.shape.vocab, static_cast<int>(c.corpus->alphabet.size()));
  EXPECT_EQ(c.shape.context, 16);
  EXPECT_EQ(problem(R"({"task": "text"})"), "run.json: \"text_file\": expected the path of a UTF-8 text file for the text task, found nothing");
  EXPECT_EQ(problem(R"({"task": "text", "text_file": "x.txt", "vocab": 30})"),
            "run.json: \"vocab\": the text task's vocabulary is its file's characters; leave \"vocab\" out");
  EXPECT_EQ(problem(R"({"task": "copy", "text_file": "x.txt"})"),
            "run.json: \"text_file\": only the text task reads a file (this run's task is copy)");
  EXPECT_NE(problem(R"({"task": "text", "text_file": "/no/such/file.txt"})").find("run.json: \"text_file\": /no/such/file.txt"),
            std::string::npos);
}

TEST(TinyTextTask, EachPositionPredictsTheNextCharacterAndTheLossFalls) {
  test::TempDir dir;
  write(dir / "text.txt", sample_text());
  write(dir / "run.json", R"({"task": "text", "text_file": "text.txt", "length": 24, "layers": 1, "heads": 2,
      "d_model": 32, "batch": 16, "steps": 150, "learning_rate": 0.01})");
  std::string error;
  const TinyTrainConfig c = read_tiny_train_config(dir / "run.json", error);
  ASSERT_EQ(error, "");
  std::uint64_t state = 7;
  const TokenBatch b = task_batch(c, 3, state);
  ASSERT_EQ(b.length, 24);
  for (int r = 0; r < 3; ++r)
    for (int t = 0; t + 1 < 24; ++t)  // a window of the text: each target is the next window character
      EXPECT_EQ(b.targets[static_cast<std::size_t>(r * 24 + t)], b.ids[static_cast<std::size_t>(r * 24 + t + 1)]);
  TinyTrainingRun run(c);
  const double first = run.step();
  for (int i = 1; i < c.steps; ++i) run.step();
  const double last = run.measure(0.0).eval_loss;
  EXPECT_NEAR(first, std::log(static_cast<double>(c.shape.vocab)), 0.3) << "untrained: a guess among the characters";
  EXPECT_LT(last, 0.5 * first) << "a text this repetitive is learned";
  // saved with its characters as the vocabulary, which model mode's tokenizer reads
  ASSERT_EQ(save_tiny_gpt(run.model(), dir / "model", &c.corpus->alphabet), "");
  const nlohmann::json vocab = nlohmann::json::parse(std::ifstream(dir / "model" / "vocab.json"));
  EXPECT_EQ(vocab["é"].get<int>(), static_cast<int>(std::find(c.corpus->alphabet.begin(), c.corpus->alphabet.end(), "é") -
                                                     c.corpus->alphabet.begin()));
  std::string tokenizer_error;
  const auto tokenizer = Tokenizer::load(dir / "model", c.shape.vocab, tokenizer_error);
  ASSERT_TRUE(tokenizer) << tokenizer_error;
  EXPECT_EQ(tokenizer->encode("c a f é").ids.size(), 4u);
}

TEST(TinyTrainingCli, TrainsLogsJsonLinesAndSaves) {
  test::TempDir dir;
  write(dir / "run.json", R"({"task": "induction", "length": 5, "vocab": 12, "layers": 1, "heads": 2, "d_model": 8,
      "batch": 2, "steps": 7, "log_every": 3})");
  const test::CliResult r = test::run_cli({"train", (dir / "run.json").string(), "-o", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<int> steps;
  for (std::string line; std::getline(lines, line);) steps.push_back(nlohmann::json::parse(line).at("step").get<int>());
  EXPECT_EQ(steps, (std::vector<int>{3, 6, 7}));
  for (const char* file : {"config.json", "model.safetensors", "vocab.json"})
    EXPECT_TRUE(std::filesystem::exists(dir / "out" / file)) << file;
  const test::CliResult info = test::run_cli({"model-info", (dir / "out").string()});
  EXPECT_EQ(info.code, 0) << info.err;
}

TEST(TinyTrainingCli, RefusesABadRunWithExit2AndTheFieldNamed) {
  test::TempDir dir;
  write(dir / "run.json", R"({"task": "induction", "vocab": 1})");
  test::CliResult r = test::run_cli({"train", (dir / "run.json").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("\"vocab\": expected a whole number from 2 to 65536, found 1"), std::string::npos) << r.err;
  r = test::run_cli({"train", (dir / "missing.json").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;
  write(dir / "ok.json", "{}");
  r = test::run_cli({"train", (dir / "ok.json").string(), "--steps", "-3"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--steps"), std::string::npos) << r.err;
}

TEST(TinyTrainingCli, ADivergingRunStopsNamingTheStepAndKeepsTheLastFiniteModel) {
  test::TempDir dir;
  write(dir / "run.json", R"({"task": "copy", "length": 3, "layers": 1, "heads": 1, "d_model": 8, "steps": 200,
      "learning_rate": 9.9, "batch": 4})");
  const test::CliResult r = test::run_cli({"train", (dir / "run.json").string(), "-o", (dir / "out").string()});
  if (r.code == 0) GTEST_SKIP() << "this learning rate did not diverge";
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("the gradient is not finite"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("learning rate"), std::string::npos) << r.err;
  const LoadedModel loaded = load_model(dir / "out");
  EXPECT_TRUE(loaded.model) << loaded.error;
}
