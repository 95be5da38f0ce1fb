#include "model_bench.h"

#include "bench.h"
#include "cli.h"

#include "attention_lab/document.h"
#include "attention_lab/edit.h"
#include "attention_lab/gemm.h"
#include "attention_lab/limits.h"
#include "attention_lab/model_session.h"
#include "attention_lab/tokenizer.h"
#include "attention_lab/transformer_forward.h"
#include "attention_lab/transformer_model.h"
#include "attention_lab/version.h"

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace attention_lab::cli {

// (named, not anonymous: a unity build puts the CLI's files in one translation unit)
namespace model_bench_parts {

using Clock = std::chrono::steady_clock;
using bench::fixed;
using bench::format_ms;
using bench::median;
using bench::sig;

constexpr int kMaxRuns = 150;  // edits stay far below Document::kMaxUndo
constexpr int kDefaultT = 256;
constexpr int kTopK = 10;                // the app's default
constexpr double kMinTotalMs = 100.0;    // tiny models get more runs, for steadier medians
constexpr int kMaxForwardRuns = 1000;
constexpr int kEditWarmup = 2;           // the first also computes the unedited baseline
constexpr std::uint64_t kIdSeed = 0x70c3e5ULL;

struct Options {
  std::string model;
  bool model_given = false;
  int T = kDefaultT;
  bool T_given = false;
  int layer = -1;  // -1: layers / 2
  int threads = 1;
  bool threads_given = false;
  int runs = 5;
  bool json = false;
  bool help = false;
};

int model_bench_error(std::ostream& err, std::string msg) {
  std::replace(msg.begin(), msg.end(), '\n', ' ');  // one line, whatever the core said
  err << "attention-lab-cli: bench: " << msg << " (see bench --help)\n";
  return kExitBadInput;
}

std::string parse_options(const std::vector<std::string>& args, Options& o) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> value;
    if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    if (flag == "--json" || flag == "--help" || flag == "-h") {
      if (value) return flag + ": takes no value, found '" + *value + "'";
      (flag == "--json" ? o.json : o.help) = true;
      continue;
    }
    if (flag == "--d" || flag == "--heads" || flag == "--kv-heads" || flag == "--rope" || flag == "--cross" ||
        flag == "--mask" || flag == "--gemm-size")
      return flag + ": not used with --model (the model's config sets the sizes)";
    const bool takes_value =
        flag == "--model" || flag == "--T" || flag == "--layer" || flag == "--threads" || flag == "--runs";
    if (!takes_value) {
      if (flag.size() > 1 && flag[0] == '-') return "unknown option '" + args[i] + "'";
      return "expected only options, found '" + args[i] + "'";
    }
    if (!value) {
      if (i + 1 >= args.size()) return flag + ": expected a value after it";
      value = args[++i];
    }
    std::string e;
    if (flag == "--model") {
      if (value->empty()) e = "--model: expected a model folder or .safetensors file, found ''";
      o.model = *value;
      o.model_given = true;
    } else if (flag == "--T") {
      e = bench::parse_int(flag, *value, 1, 1'000'000, o.T);
      o.T_given = true;
    } else if (flag == "--layer") {
      e = bench::parse_int(flag, *value, 0, 1'000'000, o.layer);
    } else if (flag == "--threads") {
      e = bench::parse_int(flag, *value, 1, 1024, o.threads);
      o.threads_given = true;
    } else if (flag == "--runs") {
      e = bench::parse_int(flag, *value, 1, kMaxRuns, o.runs);
    }
    if (!e.empty()) return e;
  }
  return {};
}

// Keeps the compiler from dropping results nobody reads.
volatile float g_sink = 0.0f;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

constexpr double kMiB = 1024.0 * 1024.0;

// The high-water mark of the resident set (VmHWM), file-mapped weights included.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream in(line.substr(6));
      double kib = 0.0;
      in >> kib;
      return kib / 1024.0;
    }
  }
  return 0.0;
}

double bytes_of(const Matrix& m) { return static_cast<double>(m.size()) * sizeof(float); }

// One kind of edit of the focused layer's attention.
enum class EditKind { W_q, X, WeightsPin, ScoresPin };

struct EditInfo {
  EditKind kind;
  const char* key;    // JSON key
  const char* label;  // table row
};

constexpr EditInfo kEdits[] = {
    {EditKind::W_q, "W_q", "edit a cell of W_q"},
    {EditKind::X, "X", "edit a cell of X"},
    {EditKind::WeightsPin, "weights_pin", "pin an attention weight"},
    {EditKind::ScoresPin, "scores_pin", "pin a score"},
};

// Times of one edit kind: the whole update, and its two parts.
struct EditTimes {
  std::vector<double> total;        // apply + the layer's output + predictions
  std::vector<double> engine;       // Document::apply + stage(Output)
  std::vector<double> predictions;  // ModelSession::predictions of the last row
};

// Applies fresh edits of `kind` (a cell not edited before while there are
// any) and times each with the predictions that follow it.
EditTimes time_edits(EditKind kind, Document& doc, const ModelSession& session, int runs, std::mt19937_64& rng) {
  const int T = doc.scenario().T();
  const int heads = doc.scenario().heads;
  std::set<std::tuple<int, int, int>> used;
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  auto next_edit = [&]() -> Edit {
    const Scenario& s = doc.scenario();  // as the last edit left it
    int h = 0, r = 0, c = 0;
    for (int attempt = 0; attempt < 64; ++attempt) {
      if (kind == EditKind::W_q) {
        r = pick(static_cast<int>(s.W_q.rows()));
        c = pick(static_cast<int>(s.W_q.cols()));
      } else if (kind == EditKind::X) {
        r = pick(T);
        c = pick(s.d_model());
      } else {
        // A key the query may see (causal, or within a sliding window).
        h = pick(heads);
        r = pick(T);
        const int lo = s.mask_kind == MaskKind::Window && s.window > 0 ? std::max(0, r - s.window + 1) : 0;
        c = lo + pick(r - lo + 1);
      }
      if (used.insert({h, r, c}).second) break;
    }
    switch (kind) {
      case EditKind::W_q: {
        const float now = s.W_q(r, c);
        return SetCell{StageId::input(StageKind::W_q), r, c, now + (0.05f + 0.1f * std::fabs(unit(rng)))};
      }
      case EditKind::X: {
        const float now = s.X(r, c);
        return SetCell{StageId::input(StageKind::X), r, c, now + (0.25f + 0.5f * std::fabs(unit(rng)))};
      }
      case EditKind::WeightsPin:
        return SetPin{PinKey{StageId::of_head(StageKind::Weights, h), r, c}, 0.5f + 0.5f * unit(rng)};
      case EditKind::ScoresPin:
        return SetPin{PinKey{StageId::of_head(StageKind::Scores, h), r, c}, 4.0f * unit(rng)};
    }
    return SetCell{};
  };
  EditTimes t;
  auto once = [&](bool record) {
    const Edit edit = next_edit();
    const auto start = Clock::now();
    const std::string error = doc.apply(edit);
    if (!error.empty()) throw std::runtime_error(describe(edit) + " failed: " + error);
    const Matrix out(doc.stage(StageId::input(StageKind::Output)));
    const double engine_ms = ms_since(start);
    const auto predicted = Clock::now();
    const std::vector<Prediction> top = session.predictions(out, session.T() - 1, kTopK);
    const double predictions_ms = ms_since(predicted);
    const double total_ms = ms_since(start);
    if (!top.empty()) g_sink = top.front().probability;
    if (record) {
      t.total.push_back(total_ms);
      t.engine.push_back(engine_ms);
      t.predictions.push_back(predictions_ms);
    }
    return total_ms;
  };
  for (int i = 0; i < kEditWarmup; ++i) once(false);
  double total = 0.0;
  while (static_cast<int>(t.total.size()) < runs || (total < kMinTotalMs && static_cast<int>(t.total.size()) < kMaxRuns))
    total += once(true);
  return t;
}

struct Results {
  double load_first_ms = 0.0, load_ms = 0.0;
  double forward_first_ms = 0.0;
  std::vector<double> forward;        // on the backend in use (gemm_backend())
  std::vector<double> products;       // the forward's weight products alone (products_limit)
  double products_gflop = 0.0;
  std::map<GemmBackend, std::vector<double>> forward_on;  // on each other backend this process has
  double session_ms = 0.0;   // ModelSession::start: the unedited forward, every layer kept, the overview
  double document_ms = 0.0;  // the focused layer's scenario, then the engine's first full compute
  std::vector<EditTimes> edits;  // kEdits order, in the focused layer
  EditTimes pin_last;            // weights pins in the last layer
  double weights_mib = 0.0, session_mib = 0.0, document_mib = 0.0;
  double peak_rss_mib = 0.0;
  double load_average = 0.0, preempted_per_s = 0.0;
  double activations_mib() const { return session_mib + document_mib; }
  double vs_products() const { return products.empty() ? 0.0 : median(forward) / median(products); }
  double rss_ratio() const { return peak_rss_mib / (weights_mib + activations_mib()); }
  bool busy() const { return preempted_per_s > 100.0; }  // as in the plain bench
};

// The GEMM-bound limit of a forward: its weight products alone, at their
// shapes (every layer's projections and MLP on T rows, lm_head on the one row
// run_model predicts), on float32 operands through gemm() with nothing else
// between them — what the forward would take if everything but its matrix
// products were free. One layer's products are timed (every layer has the
// same shapes) and counted `layers` times; their weights are new random
// floats, as big as the model's, so they come from memory as the model's do.
struct ProductShape {
  int rows, in, out;
  bool out_in;
  int count;  // times in a forward
};

std::vector<ProductShape> forward_products(const TransformerModel& m, int T) {
  const TransformerLayer& L = m.layers.front();
  std::vector<ProductShape> shapes;
  const auto add = [&](const Linear& w) {
    if (w.values) shapes.push_back({T, w.in(), w.out(), w.out_in, m.config.layers});
  };
  if (L.qkv.values) {
    add(L.qkv);
  } else {
    add(L.q);
    add(L.k);
    add(L.v);
  }
  for (const Linear* w : {&L.o, &L.gate, &L.up, &L.down}) add(*w);
  shapes.push_back({1, m.lm_head.in(), m.lm_head.out(), m.lm_head.out_in, 1});
  return shapes;
}

std::vector<double> time_products(const std::vector<ProductShape>& shapes, int runs, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<std::vector<float>> weights;
  std::vector<Matrix> inputs;
  for (const ProductShape& p : shapes) {
    weights.emplace_back(static_cast<std::size_t>(p.in) * static_cast<std::size_t>(p.out));
    for (float& v : weights.back()) v = normal(rng);
    inputs.emplace_back(p.rows, p.in);
    for (Eigen::Index i = 0; i < inputs.back().size(); ++i) inputs.back().data()[i] = normal(rng);
  }
  Matrix y;
  return bench::repeat(
      [&] {
        double ms = 0.0;
        for (std::size_t i = 0; i < shapes.size(); ++i) {
          const ProductShape& p = shapes[i];
          const auto start = Clock::now();
          gemm(inputs[i], weights[i].data(), p.out_in ? p.out : p.in, p.out_in ? p.in : p.out, p.out_in ? p.in : p.out,
               p.out_in, y);
          ms += ms_since(start) * p.count;
          g_sink = y(0, 0);
        }
        return ms;
      },
      1, runs, kMaxForwardRuns, kMinTotalMs);
}

double products_gflop(const std::vector<ProductShape>& shapes) {
  double flop = 0.0;
  for (const ProductShape& p : shapes) flop += 2.0 * p.rows * p.in * p.out * p.count;
  return flop / 1e9;
}

// What the session keeps: every layer's input and the pooled overview.
double session_bytes(const ModelSession& s) {
  const ModelConfig& c = s.model().config;
  double bytes = static_cast<double>(c.layers + 1) * s.T() * c.d_model * sizeof(float);
  for (const Matrix& w : s.overview().weights) bytes += bytes_of(w);
  return bytes;
}

// What the focused layer's document keeps: its inputs and the engine's stages.
double document_bytes(const Document& doc) {
  const Scenario& s = doc.scenario();
  double bytes = static_cast<double>(doc.engine().bytes_kept());
  for (const SharedMatrix* m : {&s.X, &s.X_kv, &s.W_q, &s.W_k, &s.W_v, &s.W_o, &s.b_q, &s.b_k, &s.b_v, &s.b_o, &s.custom_mask})
    bytes += bytes_of(*m);
  return bytes;
}

class Progress {
 public:
  explicit Progress(std::ostream& err) : err_(err) {}
  void begin(const std::string& what) { err_ << "bench: [" << ++phase_ << "/" << phases() << "] " << what << " ..." << std::flush; }
  void end(double ms, std::size_t runs = 1) {
    err_ << " " << format_ms(ms) << " ms";
    if (runs > 1) err_ << " (median of " << runs << ")";
    err_ << std::endl;
  }
  // Two opens, the forward on each backend, the products alone, the
  // session, the document, each edit, the pin in the last layer.
  static int phases() {
    return 2 + static_cast<int>(available_gemm_backends().size()) + 3 + static_cast<int>(std::size(kEdits)) + 1;
  }

 private:
  std::ostream& err_;
  int phase_ = 0;
};

std::string busy_warning(const Results& r) {
  return "warning: other work shared the CPUs (this process was preempted " + fixed(r.preempted_per_s, 0) +
         " times a second; the load average was " + fixed(r.load_average, 1) + "), so the times are too high";
}

struct Setup {
  const Options& o;
  int threads = 1;
  int layer = 0;
  int last_layer = 0;
  const TransformerModel* model = nullptr;
};

void print_json(std::ostream& out, const Setup& su, const Results& r) {
  const ModelConfig& c = su.model->config;
  const double fwd = median(r.forward);
  nlohmann::ordered_json j;
  j["model"] = su.model->source.string();
  j["layout"] = su.model->layout;
  j["dtype"] = to_string(su.model->dtype);
  j["layers"] = c.layers;
  j["heads"] = c.heads;
  j["kv_heads"] = c.kv_heads;
  j["d_model"] = c.d_model;
  j["vocab"] = c.vocab;
  j["parameters"] = su.model->parameters;
  j["T"] = su.o.T;
  j["layer"] = su.layer;
  j["last_layer"] = su.last_layer;
  j["threads"] = su.threads;
  j["load_first_ms"] = sig(r.load_first_ms);
  j["load_ms"] = sig(r.load_ms);
  j["file_mb"] = sig(static_cast<double>(su.model->weight_bytes) / kMiB);
  j["forward_first_ms"] = sig(r.forward_first_ms);
  j["forward_ms"] = sig(fwd);
  j["products_ms"] = sig(median(r.products));
  j["products_gflop"] = sig(r.products_gflop);
  j["forward_vs_products"] = sig(r.vs_products());
  // The matrix-product backends, side by side (docs/performance.md, "Matrix products").
  const GemmBackend used = gemm_backend();
  j["gemm_backend"] = to_string(used);
  nlohmann::ordered_json by_backend;
  for (const GemmBackend backend : {GemmBackend::Packed, GemmBackend::OpenBlas, GemmBackend::Eigen}) {
    const auto it = r.forward_on.find(backend);
    by_backend[to_string(backend)] = backend == used ? nlohmann::ordered_json(sig(fwd))
                                     : it == r.forward_on.end() ? nlohmann::ordered_json()  // not in this process
                                                                 : nlohmann::ordered_json(sig(median(it->second)));
  }
  j["packed_isa"] = packed_isa_name();
  j["forward_ms_by_backend"] = by_backend;
  j["openblas"] = openblas_library();
  j["session_start_ms"] = sig(r.session_ms);
  j["document_ms"] = sig(r.document_ms);
  nlohmann::ordered_json ms, ratio, engine, predictions, runs;
  runs["forward"] = r.forward.size();
  for (std::size_t i = 0; i < std::size(kEdits); ++i) {
    const EditTimes& t = r.edits[i];
    ms[kEdits[i].key] = sig(median(t.total));
    ratio[kEdits[i].key] = sig(median(t.total) / fwd);
    engine[kEdits[i].key] = sig(median(t.engine));
    predictions[kEdits[i].key] = sig(median(t.predictions));
    runs[kEdits[i].key] = t.total.size();
  }
  runs["pin_last_layer"] = r.pin_last.total.size();
  j["edit_ms"] = ms;
  j["edit_ratio"] = ratio;
  j["edit_engine_ms"] = engine;
  j["edit_predictions_ms"] = predictions;
  j["pin_last_layer_ms"] = sig(median(r.pin_last.total));
  j["pin_last_layer_ratio"] = sig(median(r.pin_last.total) / fwd);
  j["pin_last_layer_engine_ms"] = sig(median(r.pin_last.engine));
  j["pin_last_layer_predictions_ms"] = sig(median(r.pin_last.predictions));
  j["runs"] = runs;
  j["peak_rss_mb"] = sig(r.peak_rss_mib);
  j["weights_mb"] = sig(r.weights_mib);
  j["activations_mb"] = sig(r.activations_mib());
  j["session_mb"] = sig(r.session_mib);
  j["document_mb"] = sig(r.document_mib);
  j["peak_rss_ratio"] = sig(r.rss_ratio());
  j["top_k"] = kTopK;
  j["load_average"] = sig(r.load_average, 3);
  j["preempted_per_s"] = sig(r.preempted_per_s, 3);
  j["openmp"] = bench::have_openmp();
  j["simd"] = bench::simd_in_use();
  j["version"] = version();
  out << j.dump(2) << '\n';
}

void print_table(std::ostream& out, const Setup& su, const Results& r) {
  const ModelConfig& c = su.model->config;
  const double fwd = median(r.forward);
  out << "attention-lab bench: " << su.model->source.string() << " (" << su.model->layout << ", "
      << to_string(su.model->dtype) << "): " << c.layers << " layers, " << c.heads << " heads, d_model " << c.d_model
      << ", vocab " << c.vocab << "; T=" << su.o.T << " seeded random ids, focused layer " << su.layer << "\n"
      << "Eigen " << EIGEN_WORLD_VERSION << '.' << EIGEN_MAJOR_VERSION << '.' << EIGEN_MINOR_VERSION << " ("
      << bench::simd_in_use() << "), " << (bench::have_openmp() ? "OpenMP" : "no OpenMP") << ", " << su.threads
      << (su.threads == 1 ? " thread" : " threads") << "; medians after warm-up\n\n";
  constexpr int kWhat = 46;
  auto row = [&](const std::string& what, std::size_t runs, double ms, const std::string& ratio) {
    out << "  " << std::left << std::setw(kWhat) << what << std::right << std::setw(6) << runs << std::setw(13)
        << format_ms(ms) << "   " << ratio << '\n';
  };
  auto times = [](double ratio) { return fixed(ratio, ratio >= 0.01 ? 3 : 5); };
  out << "  " << std::left << std::setw(kWhat) << "what" << std::right << std::setw(6) << "runs" << std::setw(13)
      << "median ms" << "   " << "x forward" << '\n';
  row("open the model (first)", 1, r.load_first_ms, "");
  row("open the model again (warm: load_ms)", 1, r.load_ms, "");
  row(std::string("full forward, last row's logits (") + to_string(gemm_backend()) + ")", r.forward.size(), fwd, "1");
  row("its weight products alone (" + fixed(r.products_gflop, 1) + " GFLOP)", r.products.size(), median(r.products),
      times(median(r.products) / fwd) + "  (the forward is " + fixed(r.vs_products(), 2) + " x its products)");
  for (const auto& [backend, samples] : r.forward_on) {
    const double other = median(samples);
    row(std::string("full forward on ") + to_string(backend) + "'s products", samples.size(), other, times(other / fwd));
  }
  row("start the session (forward, every layer kept)", 1, r.session_ms, times(r.session_ms / fwd));
  row("layer " + std::to_string(su.layer) + " as a document (engine, first)", 1, r.document_ms,
      times(r.document_ms / fwd));
  for (std::size_t i = 0; i < std::size(kEdits); ++i) {
    const double ms = median(r.edits[i].total);
    row("layer " + std::to_string(su.layer) + ": " + kEdits[i].label + ", predict", r.edits[i].total.size(), ms,
        times(ms / fwd) + "  (engine " + format_ms(median(r.edits[i].engine)) + " + predictions " +
            format_ms(median(r.edits[i].predictions)) + " ms)");
  }
  const double last = median(r.pin_last.total);
  row("layer " + std::to_string(su.last_layer) + ": pin an attention weight, predict", r.pin_last.total.size(), last,
      times(last / fwd) + "  (engine " + format_ms(median(r.pin_last.engine)) + " + predictions " +
          format_ms(median(r.pin_last.predictions)) + " ms)");
  out << "\nmemory: peak RSS " << fixed(r.peak_rss_mib, 1) << " MiB = " << fixed(r.rss_ratio(), 2)
      << " x (weights " << fixed(r.weights_mib, 1) << " MiB + activations " << fixed(r.activations_mib(), 1)
      << " MiB: the session " << fixed(r.session_mib, 1) << ", the focused layer's document " << fixed(r.document_mib, 1)
      << "); the files are " << fixed(static_cast<double>(su.model->weight_bytes) / kMiB, 1) << " MiB\n";
  out << "an edit's time is Document::apply + the layer's output + ModelSession::predictions of the last row (top "
      << kTopK << ")\n";
  if (r.busy()) out << busy_warning(r) << '\n';
}

// What the options lack or exceed once read, or "".
std::string options_problem(const Options& o) {
  if (!o.model_given) return "--model: expected a model folder or .safetensors file";
  if (o.T > limits::kMaxTokens)
    return "--T " + std::to_string(o.T) + " is above the size limit (T <= " + std::to_string(limits::kMaxTokens) + ")";
  return {};
}

}  // namespace model_bench_parts

bool wants_model_bench(const std::vector<std::string>& args) {
  using namespace model_bench_parts;
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& a) { return a == "--model" || a.rfind("--model=", 0) == 0; });
}

std::string model_bench_usage() {
  using namespace model_bench_parts;
  return R"(usage: attention-lab-cli bench --model MODEL [--T N] [--layer L] [--threads K] [--runs N] [--json]

Times a checkpoint (a Hugging Face folder or .safetensors file, as model-info
opens) on T seeded random token ids, float32:
  - load_ms: opening it (load_model, every tensor checked), the second of two
    opens (the first is load_first_ms),
  - products_ms: the forward's weight products alone at their shapes, float32
    operands through the same backend, nothing between them (the GEMM-bound
    limit), its GFLOP, and forward_vs_products = forward_ms / products_ms,
  - forward_ms: the full forward (run_model, the last row's logits) with the
    matrix-product backend in use (gemm_backend: the packed kernel when the CPU
    runs it, else OpenBLAS when installed, else Eigen;
    ATTENTION_LAB_GEMM=packed|openblas|eigen chooses), and
    forward_ms_by_backend: the same on each backend, in this run (null: not
    in this process),
  - edit_ms: in layer L, an edit of the layer's attention through its Document
    followed by the last row's top-10 next-token predictions (the layers after
    L rerun), as the app does after every edit: a cell of W_q, a cell of X, an
    attention-weight pin and a score pin; each also as a ratio to forward_ms,
  - pin_last_layer_ms: an attention-weight pin in the last layer, predicted,
  - peak_rss_mb (VmHWM, the mapped weights included) against weights_mb (the
    weight files as mapped: F16 and BF16 stay in their type) + activations_mb
    (what the session and the focused layer's document keep).
Each time is the median of at least --runs runs after warm-up (small models get
more runs). Progress goes to stderr.

  --model MODEL  the checkpoint
  --T N          tokens (default 256; at most the model's positions for GPT-2)
  --layer L      the focused layer (default: the middle one, layers / 2)
  --threads K    OpenMP and Eigen threads (default: all of this machine)
  --runs N       at least N timed runs per figure, 1 to )" +
         std::to_string(kMaxRuns) + R"( (default 5)
  --json         print one JSON object instead of the table
)";
}

namespace model_bench_parts {

// The full forward on the product backend in use, then on every other one, in this run.
void measure_forwards(const TransformerModel& model, const std::vector<int>& ids, const Options& o, Progress& progress,
                      Results& r) {
  progress.begin("full forward of " + std::to_string(o.T) + " tokens");
  auto t0 = Clock::now();
  g_sink = run_model(model, ids, 1).logits(0, 0);
  r.forward_first_ms = ms_since(t0);
  const auto time_forward = [&] {
    return bench::repeat(
        [&] {
          const auto start = Clock::now();
          const ModelForward f = run_model(model, ids, 1);
          const double ms = ms_since(start);
          g_sink = f.logits(0, 0);
          return ms;
        },
        0, o.runs, kMaxForwardRuns, kMinTotalMs);
  };
  r.forward = time_forward();
  progress.end(median(r.forward), r.forward.size());
  const GemmBackend used = gemm_backend();
  for (const GemmBackend other : available_gemm_backends()) {
    if (other == used) continue;
    progress.begin(std::string("full forward on ") + to_string(other) + "'s products");
    set_gemm_backend(other);
    g_sink = run_model(model, ids, 1).logits(0, 0);  // warm-up (OpenBLAS starts its threads)
    r.forward_on[other] = time_forward();
    set_gemm_backend(used);
    progress.end(median(r.forward_on[other]), r.forward_on[other].size());
  }
}

// The focused layer as the app opens it (a session, a document), each kind
// of edit followed by a prediction, and a pin in the last layer.
void measure_session(const std::shared_ptr<const TransformerModel>& model, const std::shared_ptr<const Tokenizer>& tokenizer,
                     const std::vector<int>& ids, const Setup& su, std::mt19937_64& rng, Progress& progress, Results& r) {
  const int runs = su.o.runs;
  std::string error;
  progress.begin("start the session, layer " + std::to_string(su.layer));
  const auto t0 = Clock::now();
  std::unique_ptr<ModelSession> session = ModelSession::start(model, tokenizer, ids, su.layer, nullptr, error);
  r.session_ms = ms_since(t0);
  if (!session) throw std::runtime_error(error);
  progress.end(r.session_ms);

  // The focused layer as the app opens it: a document, the unedited output.
  auto open_layer = [&](double& ms) {
    const auto start = Clock::now();
    LayerScenario layer = session->scenario();
    if (!layer.error.empty()) throw std::runtime_error(layer.error);
    auto doc = std::make_unique<Document>(std::move(layer.scenario));
    session->set_unedited_attention(Matrix(doc->stage(StageId::input(StageKind::Output))));
    ms = ms_since(start);
    return doc;
  };
  progress.begin("layer " + std::to_string(su.layer) + " as a document");
  std::unique_ptr<Document> doc = open_layer(r.document_ms);
  progress.end(r.document_ms);

  for (const EditInfo& e : kEdits) {
    progress.begin("layer " + std::to_string(su.layer) + ": " + e.label + ", then predict");
    r.edits.push_back(time_edits(e.kind, *doc, *session, runs, rng));
    progress.end(median(r.edits.back().total), r.edits.back().total.size());
  }
  r.session_mib = session_bytes(*session) / kMiB;
  r.document_mib = document_bytes(*doc) / kMiB;
  doc.reset();

  progress.begin("layer " + std::to_string(su.last_layer) + ": pin an attention weight, then predict");
  session->set_layer(su.last_layer);
  double last_open_ms = 0.0;
  doc = open_layer(last_open_ms);
  r.pin_last = time_edits(EditKind::WeightsPin, *doc, *session, runs, rng);
  progress.end(median(r.pin_last.total), r.pin_last.total.size());
  r.peak_rss_mib = peak_rss_mib();
}

}  // namespace model_bench_parts

int run_model_bench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  using namespace model_bench_parts;
  Options o;
  o.threads = bench::hardware_threads();
  if (auto e = parse_options(args, o); !e.empty()) return model_bench_error(err, e);
  if (o.help) {
    out << model_bench_usage();
    return kExitOk;
  }
  if (auto e = options_problem(o); !e.empty()) return model_bench_error(err, e);

  const int threads = bench::have_openmp() ? o.threads : 1;
  if (!bench::have_openmp() && o.threads_given && o.threads > 1)
    err << "bench: built without OpenMP, so everything runs on 1 thread\n";
  bench::ThreadSetting thread_setting(threads);

  Results r;
  r.load_average = bench::load_average();
  const long switches_before = bench::involuntary_switches();
  const auto started = Clock::now();
  Progress progress(err);

  // Opened twice: the second open (the page cache warm, the first mapping
  // gone) is load_ms. The model's sizes are checked after the first.
  // Nothing goes to stderr before the arguments are known good: a bad one is one line.
  auto t0 = Clock::now();
  LoadedModel loaded = load_model(o.model);
  r.load_first_ms = ms_since(t0);
  if (!loaded.model) return model_bench_error(err, "--model: " + loaded.error);
  const ModelConfig config = loaded.model->config;

  std::mt19937_64 rng(kIdSeed);
  std::vector<int> ids(static_cast<std::size_t>(o.T));
  std::uniform_int_distribution<int> pick_id(0, config.vocab - 1);
  for (int& id : ids) id = pick_id(rng);
  if (std::string e = check_ids(config, ids); !e.empty())
    return model_bench_error(err, "--T " + std::to_string(o.T) + ": " + e);
  if (o.layer >= config.layers)
    return model_bench_error(err, "--layer " + std::to_string(o.layer) + ": expected 0 to " +
                                      std::to_string(config.layers - 1) + " (the model has " +
                                      std::to_string(config.layers) + " layers)");
  Setup su{o};
  su.threads = threads;
  su.layer = o.layer >= 0 ? o.layer : config.layers / 2;
  su.last_layer = config.layers - 1;
  // Layers the engine cannot hold as a scenario (the core's size limits) are
  // refused now, not after the forward runs. Every layer has the same sizes.
  if (LayerScenario probe = layer_scenario(*loaded.model, su.layer, Matrix::Zero(o.T, config.d_model), {});
      !probe.error.empty())
    return model_bench_error(err, "--model: " + probe.error);

  std::string error;
  const auto folder = std::filesystem::is_directory(o.model) ? std::filesystem::path(o.model)
                                                             : std::filesystem::path(o.model).parent_path();
  auto tokenizer = Tokenizer::load(folder.empty() ? "." : folder, config.vocab, error);
  if (!tokenizer) return model_bench_error(err, "--model: " + error);

  progress.begin("open " + o.model);
  progress.end(r.load_first_ms);
  try {
    loaded = {};
    progress.begin("open it again (warm)");
    t0 = Clock::now();
    loaded = load_model(o.model);
    r.load_ms = ms_since(t0);
    if (!loaded.model) throw std::runtime_error("the second open failed: " + loaded.error);
    progress.end(r.load_ms);
    const std::shared_ptr<const TransformerModel> model = loaded.model;
    su.model = model.get();
    // What the weights take in memory: the mapped files (F16 and BF16 stay
    // in their type) and any block the loader made.
    r.weights_mib = static_cast<double>(model->weight_bytes + model->owned_bytes) / kMiB;
    measure_forwards(*model, ids, o, progress, r);
    measure_session(model, tokenizer, ids, su, rng, progress, r);
    // Last: its float32 weights are not the model's memory.
    progress.begin("the forward's weight products alone");
    const std::vector<ProductShape> shapes = forward_products(*model, o.T);
    r.products_gflop = products_gflop(shapes);
    r.products = time_products(shapes, o.runs, rng);
    progress.end(median(r.products), r.products.size());
  } catch (const std::exception& e) {
    err << "\nattention-lab-cli: bench: " << e.what() << '\n';
    return kExitFailure;
  }
  r.preempted_per_s = static_cast<double>(bench::involuntary_switches() - switches_before) /
                      std::max(ms_since(started) / 1000.0, 1e-3);
  if (r.busy()) err << "bench: " << busy_warning(r) << '\n';

  if (o.json)
    print_json(out, su, r);
  else
    print_table(out, su, r);
  return kExitOk;
}

}  // namespace attention_lab::cli
