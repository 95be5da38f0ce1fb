#include "train_command.h"

#include "cli.h"
#include "model_args.h"

#include "attention_lab/tiny_training.h"

#include <chrono>
#include <stdexcept>

namespace attention_lab::cli {

int cmd_train(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {"-o", "--steps"}, {}, a); !e.empty()) return fail(err, "train: " + e);
  if (a.positional.size() != 1) return fail(err, "train: expected one run description, RUN.json (see --help)");
  std::string error;
  TinyTrainConfig config = read_tiny_train_config(a.positional[0], error);
  if (!error.empty()) return fail(err, "train: " + error);
  if (a.values.count("--steps") && !parse_int(a.values["--steps"], 0, 10'000'000, config.steps))
    return fail(err, "train: --steps: expected a whole number from 0 to 10000000, found '" + a.values["--steps"] + "'");

  TinyTrainingRun run(config);
  const auto start = std::chrono::steady_clock::now();
  int status = kExitOk;
  for (int i = 1; i <= config.steps; ++i) {
    double loss = 0.0;
    try {
      loss = run.step();
    } catch (const std::runtime_error& e) {
      err << "attention-lab-cli: train: " << e.what() << '\n';
      status = kExitFailure;  // the model as it was before the step is still saved
      break;
    }
    if (i % config.log_every == 0 || i == config.steps) {
      TinyTrainLog log = run.measure(loss);
      log.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      out << to_json_line(log, config.task) << '\n' << std::flush;
    }
  }
  if (a.values.count("-o")) {
    if (const std::string e = save_tiny_gpt(run.model(), a.values["-o"], config.corpus ? &config.corpus->alphabet : nullptr); !e.empty()) {
      err << "attention-lab-cli: train: " << e << '\n';
      return kExitFailure;
    }
  }
  return status;
}

}  // namespace attention_lab::cli
