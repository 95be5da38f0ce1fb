// A training run of a tiny GPT on a task: its JSON description, the task's
// batches, the steps and the metrics a run logs.
#include "attention_lab/tiny_training.h"

#include "attention_lab/excerpt.h"
#include "io/json_document.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace attention_lab {
namespace {

std::uint64_t next_random(std::uint64_t& state) {  // splitmix64
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int random_token(std::uint64_t& state, int vocab) { return static_cast<int>(next_random(state) % static_cast<std::uint64_t>(vocab)); }

const std::vector<std::pair<TrainTask, const char*>>& task_names() {
  static const std::vector<std::pair<TrainTask, const char*>> names = {
      {TrainTask::Copy, "copy"}, {TrainTask::Reverse, "reverse"}, {TrainTask::Sort, "sort"}, {TrainTask::Induction, "induction"},
      {TrainTask::Text, "text"}};
  return names;
}

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// Reads one key of the run's JSON: a whole number in [lo, hi] or a positive real.
struct RunReader {
  const nlohmann::json& root;
  std::string where;
  std::set<std::string> read;

  const nlohmann::json* get(const char* key) {
    read.insert(key);
    const auto it = root.find(key);
    return it == root.end() || it->is_null() ? nullptr : &*it;
  }
  void integer(const char* key, int& out, long long lo, long long hi) {
    const nlohmann::json* v = get(key);
    if (!v) return;
    if (!v->is_number_integer() || v->get<long long>() < lo || v->get<long long>() > hi)
      io::fail_field(where + ": \"" + key + "\": expected a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", found " + excerpt(v->dump(), 40));
    out = static_cast<int>(v->get<long long>());
  }
  void real(const char* key, double& out, double lo, double hi, bool lo_open) {
    const nlohmann::json* v = get(key);
    if (!v) return;
    const bool ok = v->is_number() && std::isfinite(v->get<double>()) &&
                    (lo_open ? v->get<double>() > lo : v->get<double>() >= lo) && v->get<double>() < hi;
    if (!ok)
      io::fail_field(where + ": \"" + key + "\": expected a number " + (lo_open ? "above " : "from ") +
                     number_text(lo) + " and below " + number_text(hi) +
                     ", found " + excerpt(v->dump(), 40));
    out = v->get<double>();
  }
};

}  // namespace

const char* to_string(TrainTask task) {
  for (const auto& [t, name] : task_names())
    if (t == task) return name;
  return "?";
}

int task_context(TrainTask task, int length) {
  return task == TrainTask::Induction ? 2 * length : task == TrainTask::Text ? length : 2 * length - 1;
}

std::shared_ptr<const TextCorpus> load_text_corpus(const std::filesystem::path& file, int length, std::string& error) {
  constexpr std::uintmax_t kMaxBytes = 16u << 20;
  constexpr std::size_t kMaxAlphabet = 4096;
  const io::TextFile text = io::read_text_file(file, kMaxBytes);
  if (!text.error.empty()) {
    error = text.error;
    return nullptr;
  }
  // UTF-8 into characters, each kept as its bytes
  std::vector<std::string> chars;
  const std::string& t = text.text;
  for (std::size_t i = 0; i < t.size();) {
    const auto lead = static_cast<unsigned char>(t[i]);
    const std::size_t n = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    bool ok = n > 0 && i + n <= t.size();
    for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(t[i + k]) >> 6) == 0x2;
    if (!ok) {
      error = file.string() + ": expected UTF-8 text, found a byte that is not (0x" +
              [&] { char b[8]; std::snprintf(b, sizeof b, "%02X", lead); return std::string(b); }() + " at byte " +
              std::to_string(i) + ")";
      return nullptr;
    }
    chars.push_back(t.substr(i, n));
    i += n;
  }
  if (chars.size() < static_cast<std::size_t>(length) + 1) {
    error = file.string() + ": expected at least " + std::to_string(length + 1) + " characters (a window of \"length\" " +
            std::to_string(length) + " and the one after it), found " + std::to_string(chars.size());
    return nullptr;
  }
  auto corpus = std::make_shared<TextCorpus>();
  corpus->file = file;
  corpus->alphabet = chars;
  // (UTF-8's byte order is its code points' order)
  std::sort(corpus->alphabet.begin(), corpus->alphabet.end());
  corpus->alphabet.erase(std::unique(corpus->alphabet.begin(), corpus->alphabet.end()), corpus->alphabet.end());
  if (corpus->alphabet.size() > kMaxAlphabet) {
    error = file.string() + ": expected at most " + std::to_string(kMaxAlphabet) + " distinct characters, found " +
            std::to_string(corpus->alphabet.size());
    return nullptr;
  }
  if (corpus->alphabet.size() < 2) {
    error = file.string() + ": expected at least 2 distinct characters, found 1";
    return nullptr;
  }
  corpus->ids.reserve(chars.size());
  for (const std::string& c : chars)
    corpus->ids.push_back(static_cast<int>(std::lower_bound(corpus->alphabet.begin(), corpus->alphabet.end(), c) -
                                           corpus->alphabet.begin()));
  return corpus;
}

TinyTrainConfig parse_tiny_train_config(const std::string& json_text, const std::string& where, std::string& error,
                                        const std::filesystem::path& base_dir) {
  TinyTrainConfig c;
  error.clear();
  const io::JsonDocument doc = io::parse_json_document(json_text, "training run");
  if (!doc.error.empty()) {
    error = where + ": " + doc.error;
    return c;
  }
  if (!doc.root.is_object()) {
    error = where + ": expected an object of settings ({\"task\": \"induction\", …})";
    return c;
  }
  try {
    RunReader r{doc.root, where, {}};
    if (const nlohmann::json* t = r.get("task")) {
      const auto& names = task_names();
      const auto it = std::find_if(names.begin(), names.end(),
                                   [&](const auto& n) { return t->is_string() && t->get<std::string>() == n.second; });
      if (it == names.end())
        io::fail_field(where + ": \"task\": expected copy, reverse, sort, induction or text, found " + excerpt(t->dump(), 40));
      c.task = it->first;
    }
    if (c.task == TrainTask::Sort) c.shape.vocab = 3, c.length = 6;  // minGPT's demo, unless the file says otherwise
    if (c.task == TrainTask::Copy || c.task == TrainTask::Reverse) c.shape.vocab = 10, c.length = 6;
    if (c.task == TrainTask::Text) c.length = 64;
    r.integer("length", c.length, 2, 1024);
    if (c.task == TrainTask::Text) {
      // the file's characters are the vocabulary
      if (r.get("vocab")) io::fail_field(where + ": \"vocab\": the text task's vocabulary is its file's characters; leave \"vocab\" out");
      const nlohmann::json* f = r.get("text_file");
      if (!f || !f->is_string() || f->get<std::string>().empty())
        io::fail_field(where + ": \"text_file\": expected the path of a UTF-8 text file for the text task, found " +
                       (f ? excerpt(f->dump(), 40) : std::string("nothing")));
      std::filesystem::path file = f->get<std::string>();
      if (file.is_relative() && !base_dir.empty()) file = base_dir / file;
      std::string problem;
      c.corpus = load_text_corpus(file, c.length, problem);
      if (!c.corpus) io::fail_field(where + ": \"text_file\": " + problem);
      c.shape.vocab = static_cast<int>(c.corpus->alphabet.size());
    } else if (r.get("text_file")) {
      io::fail_field(where + ": \"text_file\": only the text task reads a file (this run's task is " + to_string(c.task) + ")");
    }
    r.integer("vocab", c.shape.vocab, 2, 65536);
    r.integer("layers", c.shape.layers, 1, 64);
    r.integer("heads", c.shape.heads, 1, 256);
    r.integer("d_model", c.shape.d_model, 1, 4096);
    c.shape.d_ff = 4 * c.shape.d_model;
    r.integer("d_ff", c.shape.d_ff, 1, 16384);
    r.integer("batch", c.batch, 1, 4096);
    r.integer("steps", c.steps, 0, 10'000'000);
    r.real("learning_rate", c.optimizer.learning_rate, 0.0, 10.0, true);
    r.real("beta1", c.optimizer.beta1, 0.0, 1.0, false);
    r.real("beta2", c.optimizer.beta2, 0.0, 1.0, false);
    r.real("eps", c.optimizer.eps, 0.0, 1.0, true);
    r.real("weight_decay", c.optimizer.weight_decay, 0.0, 1.0, false);
    int seed = static_cast<int>(c.seed);
    r.integer("seed", seed, 0, 2'147'483'647);
    c.seed = static_cast<std::uint64_t>(seed);
    r.integer("log_every", c.log_every, 1, 10'000'000);
    for (const auto& [key, value] : doc.root.items())
      if (!r.read.count(key))
        io::fail_field(where + ": \"" + excerpt(key, 40) +
                       "\": not a setting of a training run (task, length, vocab, layers, heads, d_model, d_ff, batch, "
                       "steps, learning_rate, beta1, beta2, eps, weight_decay, seed, log_every, text_file)");
    c.shape.context = task_context(c.task, c.length);
    if (const std::string p = tiny_gpt_shape_problem(c.shape); !p.empty()) io::fail_field(where + ": " + p);
  } catch (const io::FieldError& e) {
    error = e.message;
  }
  return c;
}

TinyTrainConfig read_tiny_train_config(const std::filesystem::path& path, std::string& error) {
  const io::TextFile file = io::read_text_file(path, 1 << 20);
  if (!file.error.empty()) {
    error = file.error;
    return {};
  }
  return parse_tiny_train_config(file.text, path.string(), error, path.parent_path());
}

TokenBatch task_batch(const TinyTrainConfig& c, int rows, std::uint64_t& state) {
  const int n = c.length, V = c.shape.vocab, T = task_context(c.task, n);
  TokenBatch b;
  b.rows = rows;
  b.length = T;
  b.ids.assign(static_cast<std::size_t>(rows * T), 0);
  b.targets.assign(static_cast<std::size_t>(rows * T), -1);
  if (c.task == TrainTask::Text) {
    // a window of n characters at a random place, each predicting the next
    const std::vector<int>& text = c.corpus->ids;
    const auto places = static_cast<std::uint64_t>(text.size() - static_cast<std::size_t>(n));
    for (int r = 0; r < rows; ++r) {
      const std::size_t at = static_cast<std::size_t>(next_random(state) % places);
      for (int t = 0; t < n; ++t) {
        b.ids[static_cast<std::size_t>(r * T + t)] = text[at + static_cast<std::size_t>(t)];
        b.targets[static_cast<std::size_t>(r * T + t)] = text[at + static_cast<std::size_t>(t) + 1];
      }
    }
    return b;
  }
  std::vector<int> seq(static_cast<std::size_t>(2 * n));
  const bool induction = c.task == TrainTask::Induction;
  if (induction) b.period.assign(static_cast<std::size_t>(rows), n);
  for (int r = 0; r < rows; ++r) {
    if (induction) {
      const int shortest = (n + 1) / 2;
      const int period = shortest + static_cast<int>(next_random(state) % static_cast<std::uint64_t>(n - shortest + 1));
      b.period[static_cast<std::size_t>(r)] = period;
      for (int t = 0; t < 2 * n; ++t)
        seq[static_cast<std::size_t>(t)] = t < period ? random_token(state, V) : seq[static_cast<std::size_t>(t - period)];
    } else {
      for (int i = 0; i < n; ++i) seq[static_cast<std::size_t>(i)] = random_token(state, V);
      auto question = seq.begin(), answer = seq.begin() + n;
      std::copy(question, answer, answer);
      if (c.task == TrainTask::Reverse) std::reverse(answer, seq.end());
      if (c.task == TrainTask::Sort) std::sort(answer, seq.end());
    }
    int* ids = &b.ids[static_cast<std::size_t>(r * T)];
    int* targets = &b.targets[static_cast<std::size_t>(r * T)];
    for (int t = 0; t < T; ++t) ids[t] = seq[static_cast<std::size_t>(t)];
    // Position t predicts token t + 1: every position on induction (the
    // random part is noise the model cannot learn, but measuring it is the
    // point), only the answer on the others.
    const int first = induction ? 0 : n - 1;
    for (int t = first; t + 1 < 2 * n; ++t) targets[t] = seq[static_cast<std::size_t>(t + 1)];
  }
  return b;
}

TinyTrainingRun::TinyTrainingRun(TinyTrainConfig config)
    : config_(config), model_(config.shape, config.seed), optimizer_(config.optimizer), data_state_(config.seed * 2 + 1) {
  std::uint64_t eval_state = config.seed * 2 + 0x5EEDull;
  eval_batch_ = task_batch(config_, std::max(config_.batch, 32), eval_state);
}

double TinyTrainingRun::step() {
  const TokenBatch batch = task_batch(config_, config_.batch, data_state_);
  const TinyGptPass pass = model_.run(batch, true);
  for (const TinyParam& p : model_.params())
    if (!p.grad.allFinite() || !std::isfinite(pass.loss))
      throw std::runtime_error("step " + std::to_string(optimizer_.steps() + 1) + ": " + p.name +
                               ": the gradient is not finite (loss " + std::to_string(pass.loss) +
                               "); the learning rate is the likely cause");
  optimizer_.step(model_.params());
  return pass.loss;
}

TinyTrainLog TinyTrainingRun::measure(double training_loss) const {
  TinyTrainLog log;
  log.step = optimizer_.steps();
  log.loss = training_loss;
  const bool induction = config_.task == TrainTask::Induction;
  const TinyGptPass pass = model_.evaluate(eval_batch_, induction);
  log.eval_loss = pass.loss;
  if (!induction) return log;
  const int T = 2 * config_.length, rows = eval_batch_.rows, H = config_.shape.heads;
  double random_sum = 0.0, repeat_sum = 0.0;
  long long random_count = 0, repeat_count = 0;
  for (int r = 0; r < rows; ++r) {
    const int p = eval_batch_.period[static_cast<std::size_t>(r)];
    for (int t = 0; t + 1 < T; ++t) {  // position t predicts token t + 1
      const double loss = static_cast<double>(pass.position_loss[static_cast<std::size_t>(r * T + t)]);
      if (t + 1 < p) random_sum += loss, ++random_count;
      else if (t + 1 > p) repeat_sum += loss, ++repeat_count;
    }
  }
  log.random_loss = random_sum / static_cast<double>(random_count);
  log.repeat_loss = repeat_sum / static_cast<double>(repeat_count);
  for (const std::vector<Matrix>& layer : pass.weights) {
    std::vector<double> induction_score(static_cast<std::size_t>(H)), previous(static_cast<std::size_t>(H));
    for (int h = 0; h < H; ++h) {
      double ind = 0.0, prev = 0.0;
      long long count = 0;
      for (int r = 0; r < rows; ++r) {
        const Matrix& a = layer[static_cast<std::size_t>(r * H + h)];
        const int p = eval_batch_.period[static_cast<std::size_t>(r)];
        for (int t = p; t < T; ++t, ++count) {  // token t repeats token t − p: an induction head reads t − p + 1
          ind += static_cast<double>(a(t, t - p + 1));
          prev += static_cast<double>(a(t, t - 1));
        }
      }
      induction_score[static_cast<std::size_t>(h)] = ind / static_cast<double>(count);
      previous[static_cast<std::size_t>(h)] = prev / static_cast<double>(count);
    }
    log.induction_score.push_back(std::move(induction_score));
    log.previous_token_score.push_back(std::move(previous));
  }
  return log;
}

std::string to_json_line(const TinyTrainLog& log, TrainTask task) {
  nlohmann::ordered_json j;
  j["step"] = log.step;
  j["loss"] = log.loss;
  j["eval_loss"] = log.eval_loss;
  if (task == TrainTask::Induction) {
    j["random_loss"] = log.random_loss;
    j["repeat_loss"] = log.repeat_loss;
    j["induction_score"] = log.induction_score;
    j["previous_token_score"] = log.previous_token_score;
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", log.seconds);
  j["seconds"] = std::stod(seconds);
  return j.dump();
}

}  // namespace attention_lab
