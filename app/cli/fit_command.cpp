#include "fit_command.h"

#include "cli.h"
#include "model_args.h"

#include "attention_lab/scenario_io.h"
#include "attention_lab/stage_registry.h"
#include "attention_lab/training.h"

#include <cstdlib>
#include <sstream>

namespace attention_lab::cli {

namespace {

// A number spelled whole ("0.01", "1e-3"); false otherwise.
bool parse_real(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

void write_per_matrix(std::ostream& o, const char* key, const std::map<StageKind, double>& values) {
  o << ", \"" << key << "\": {";
  bool first = true;
  for (const auto& [kind, v] : values) o << (first ? "" : ", ") << '"' << kind_name(kind) << "\": " << shortest(v), first = false;
  o << '}';
}

}  // namespace

int cmd_fit(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ModelArgs a;
  if (auto e = parse(args, {"--steps", "--optimizer", "--lr", "--weight-decay", "--momentum", "--train", "-o"}, {}, a); !e.empty())
    return fail(err, "fit: " + e);
  if (a.positional.size() != 1) return fail(err, "fit: expected one scenario file (see --help)");
  const std::string& path = a.positional[0];
  LoadResult r = load_scenario(path);
  if (!r.scenario) return fail(err, path + ": " + r.error);
  Scenario s = *r.scenario;
  if (!s.loss)
    return fail(err, path + ": fit: the scenario has no \"loss\" (add one: {\"kind\": \"attend\", \"head\": 0, \"targets\": […]} "
                            "or {\"kind\": \"mse\", \"target\": […]}, docs/formats.md)");
  TrainSettings settings;
  int steps = 100;
  if (a.values.count("--steps") && !parse_int(a.values["--steps"], 1, 1000000, steps))
    return fail(err, "fit: --steps: expected a whole number from 1 to 1000000, found '" + a.values["--steps"] + "'");
  if (a.values.count("--optimizer")) {
    const auto kind = parse_optimizer(a.values["--optimizer"]);
    if (!kind) return fail(err, "fit: --optimizer: expected sgd, momentum, adam or adamw, found '" + a.values["--optimizer"] + "'");
    settings.optimizer = *kind;
  }
  for (const auto& [flag, target] : {std::pair<const char*, double*>{"--lr", &settings.learning_rate},
                                     {"--weight-decay", &settings.weight_decay}, {"--momentum", &settings.momentum}})
    if (a.values.count(flag) && !parse_real(a.values[flag], *target))
      return fail(err, std::string("fit: ") + flag + ": expected a number, found '" + a.values[flag] + "'");
  if (a.values.count("--train")) {
    settings.trained.clear();
    std::stringstream list(a.values["--train"]);
    for (std::string name; std::getline(list, name, ',');) {
      const auto id = parse_stage_id(name);
      if (!id || !is_input(id->kind))
        return fail(err, "fit: --train: expected matrices of the scenario such as W_q,W_k,W_v, found '" + name + "'");
      settings.trained.push_back(id->kind);
    }
  }
  if (const std::string p = training_problem(s, settings); !p.empty()) return fail(err, "fit: " + p);
  if (const std::string p = gradients_problem(s, *s.loss); !p.empty()) return fail(err, path + ": fit: " + p);

  Trainer trainer(settings);
  int status = kExitOk;
  for (int i = 0; i < steps; ++i) {
    Engine engine;
    engine.recompute_all(s);
    const TrainStep step = trainer.step(engine, s, *s.loss);
    if (!step.error.empty()) {
      err << "attention-lab-cli: fit: " << step.error << '\n';
      status = kExitFailure;  // the last finite scenario is still written
      break;
    }
    out << "{\"step\": " << step.step << ", \"loss\": " << shortest(step.loss);
    write_per_matrix(out, "grad_norm", step.grad_norm);
    write_per_matrix(out, "update_ratio", step.update_ratio);
    out << "}\n";
    for (const auto& [kind, m] : step.updated) s.*(spec(kind).member) = SharedMatrix(m);
  }
  if (a.values.count("-o")) {
    if (const std::string e = write_file_atomically(a.values["-o"], scenario_to_json(s)); !e.empty()) {
      err << "attention-lab-cli: " << e << '\n';
      return kExitFailure;
    }
  }
  return status;
}

}  // namespace attention_lab::cli
