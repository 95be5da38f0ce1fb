#pragma once
// Training a tiny GPT (tiny_gpt.h) from scratch on a task: what
// `attention-lab-cli train` runs. A run is described by one JSON file (every
// key optional, every unknown key refused), is deterministic under its seed,
// logs the loss and, on the induction task, what shows an induction head
// forming; it saves as a Hugging Face GPT-2 folder that model mode opens.

#include "attention_lab/tiny_gpt.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace attention_lab {

// copy, reverse, sort: `length` tokens from a vocabulary of `vocab`, then the
// same tokens copied, reversed or sorted (minGPT's sort demo; the loss is on
// the answer only). induction: 2·length tokens, random until a period p drawn
// from length/2…length and repeating from there (token t = token t − p): the
// repeat is predictable only by finding the earlier copy of the current
// token and reading what followed it (an induction head). The period varies
// so that no head can find the copy by position alone: with a fixed one a
// first-layer head learns "look length − 1 back" instead. text: windows of
// `length` characters of a text file, each position predicting the next
// character (a character-level language model, as minGPT's char demo).
enum class TrainTask { Copy, Reverse, Sort, Induction, Text };
const char* to_string(TrainTask task);

// A text file as characters: its alphabet (each character a UTF-8 string,
// sorted by code point) and the text as indices into it.
struct TextCorpus {
  std::filesystem::path file;
  std::vector<std::string> alphabet;
  std::vector<int> ids;
};

// Reads a UTF-8 text file of at most 16 MiB and 4096 distinct characters,
// with at least `length` + 1 characters; null and `error` set (naming the
// file, and the byte where its UTF-8 breaks) otherwise.
std::shared_ptr<const TextCorpus> load_text_corpus(const std::filesystem::path& file, int length, std::string& error);

struct TinyTrainConfig {
  TrainTask task = TrainTask::Induction;
  int length = 32;  // tokens of the question (copy, reverse, sort) or of the random part (induction)
  // layers, heads, d_model, d_ff, vocab, context (the context follows from the task)
  TinyGptShape shape{2, 4, 64, 256, 64, 64};
  int batch = 32;
  int steps = 2000;
  AdamWSettings optimizer{1e-3, 0.9, 0.98, 1e-8, 0.01};
  std::uint64_t seed = 1;
  int log_every = 50;  // steps between logged lines (and the last step)
  // The text task's characters (its vocabulary is their alphabet); null for the others.
  std::shared_ptr<const TextCorpus> corpus;
};

// The sequence length the task makes: 2·length − 1 (copy, reverse, sort:
// the last answer token is never read), 2·length (induction) or length (text).
int task_context(TrainTask task, int length);

// Reads a run's JSON: "task", "length", "vocab", "layers", "heads",
// "d_model", "d_ff", "batch", "steps", "learning_rate", "beta1", "beta2",
// "eps", "weight_decay", "seed", "log_every", and for the text task
// "text_file" (relative to `base_dir`; its alphabet is the vocabulary, so
// "vocab" is refused there). `error` names the key, the expected and the
// found; "" when read.
TinyTrainConfig parse_tiny_train_config(const std::string& json_text, const std::string& where, std::string& error,
                                        const std::filesystem::path& base_dir = {});
// The same, from a file (at most 1 MiB); a text_file is relative to its folder.
TinyTrainConfig read_tiny_train_config(const std::filesystem::path& path, std::string& error);

// `rows` sequences of the task, drawn from `state` (advanced).
TokenBatch task_batch(const TinyTrainConfig& config, int rows, std::uint64_t& state);

// What a logged step reports. The halves and the head scores are measured on
// a fixed batch of the task (the same every time), after the step.
struct TinyTrainLog {
  int step = 0;
  double loss = 0.0;            // of the step's training batch, before its update
  double eval_loss = 0.0;       // of the fixed batch
  // Induction only: loss predicting the random tokens (after the first;
  // chance: ln vocab) and the repeated ones (after the first of the repeat,
  // which nothing announces; an induction head drives it to 0).
  double random_loss = 0.0;
  double repeat_loss = 0.0;
  // Per layer, per head, from the repeated tokens: the mean weight on the
  // token after the earlier copy of the current one (induction, t − p + 1),
  // and on the token before (previous token, t − 1).
  std::vector<std::vector<double>> induction_score;
  std::vector<std::vector<double>> previous_token_score;
  double seconds = 0.0;  // since the run began
};

class TinyTrainingRun {
 public:
  explicit TinyTrainingRun(TinyTrainConfig config);

  // One step: a batch, the loss and its gradients, AdamW. Throws
  // std::runtime_error naming the step and the parameter when a gradient is
  // not finite (nothing is updated then).
  double step();
  // The metrics on the fixed batch, now.
  TinyTrainLog measure(double training_loss) const;

  int steps_done() const { return optimizer_.steps(); }
  const TinyTrainConfig& config() const { return config_; }
  const TinyGpt& model() const { return model_; }
  TinyGpt& model() { return model_; }

 private:
  TinyTrainConfig config_;
  TinyGpt model_;
  AdamW optimizer_;
  std::uint64_t data_state_;
  TokenBatch eval_batch_;
};

// One JSON line of a log ({"step": …, "loss": …, …}).
std::string to_json_line(const TinyTrainLog& log, TrainTask task);

// Writes `model` as a Hugging Face GPT-2 folder: config.json,
// model.safetensors (F32, Conv1D [in, out], the head tied to wte) and
// vocab.json (token i is the word "i", or with `alphabet` its character).
// Creates the folder; "" or an error.
std::string save_tiny_gpt(const TinyGpt& model, const std::filesystem::path& folder,
                          const std::vector<std::string>* alphabet = nullptr);

}  // namespace attention_lab
