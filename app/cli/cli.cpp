#include "cli.h"

#include "bench.h"
#include "fit_command.h"
#include "train_command.h"
#include "interp_commands.h"
#include "model_commands.h"
#include "slide_check.h"

#include "attention_lab/engine.h"
#include "attention_lab/lesson.h"
#include "attention_lab/presets.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/trace_io.h"
#include "attention_lab/version.h"

#include <fstream>
#include <set>
#include <sstream>

namespace attention_lab::cli {

namespace {

constexpr const char* kUsage = R"(attention-lab-cli — compute and inspect every stage of self-attention

usage:
  attention-lab-cli trace SCENARIO.json [--grad] [-o TRACE.json]
                                                          every stage as JSON (stdout by default); --grad adds
                                                          the scenario's "loss" and the gradient of every stage
  attention-lab-cli fit SCENARIO.json [--steps N] [--optimizer sgd|momentum|adam|adamw] [--lr X]
        [--weight-decay X] [--momentum X] [--train W_q,W_k,W_v] [-o TRAINED.json]
                                                          train the scenario's matrices on its "loss": one
                                                          JSON line per step (loss, gradient norms, update
                                                          ratios); the trained scenario to -o
  attention-lab-cli train RUN.json [--steps N] [-o MODEL_DIR]
                                                          train a tiny GPT from scratch on copy, reverse,
                                                          sort or induction (RUN.json: docs/formats.md):
                                                          one JSON line per logged step; the model saved as
                                                          a GPT-2 folder that --model opens
  attention-lab-cli validate FILE.json                    check a scenario or a lesson file (every step's
                                                          scenario, and each step as a slide at 1280x720:
                                                          numbers too small to print, a quiz whose inputs
                                                          are not printed or whose answer is), print its
                                                          sizes and any warnings (--no-slides: no slides)
  attention-lab-cli preset NAME [-o FILE]                 write a built-in scenario as JSON; NAME may be
                                                          random-T-D-H, e.g. random-64-32-4 (seeded, causal)
  attention-lab-cli presets                               list the built-in scenarios
  attention-lab-cli bench [--T N] [--d D] [--heads H] [--mask causal|none] [--threads K] [--json]
                                                          time the full forward, single-cell edits
                                                          and a GEMM reference (bench --help)
  attention-lab-cli bench --model MODEL [--T N] [--layer L] [--json]
                                                          a checkpoint: load, forward, edits in layer L
                                                          with predictions, peak memory (bench --help)
  attention-lab-cli bench --model MODEL --interp [--T N] [--detect-T N] [--json]
                                                          patching sweeps and head detectors, each
                                                          against its plain peer

models (a Hugging Face folder: config.json + model.safetensors or its shards; GPT-2, minGPT/nanoGPT,
Llama, Mistral, Qwen2, Qwen3, OLMo-2, Granite, Gemma 2 and 3, GPT-NeoX/Pythia, Phi-3, StarCoder2,
SmolLM, SmolLM3):
  attention-lab-cli model-info MODEL [--json]             architecture, layers, heads, K/V heads, sizes,
                                                          dtype, parameters, bytes
  attention-lab-cli tokenize MODEL TEXT                   {"ids": […], "tokens": […]}
  attention-lab-cli trace --model MODEL (--text TEXT | --ids I,J,…) [--layer L] [--all-logits] [--grad] [-o OUT]
                                                          layer L's attention as a trace (every stage),
                                                          plus "model": ids, tokens, every layer's input
                                                          and output, logits (the last row only when the
                                                          vocabulary is over 4096, unless --all-logits);
                                                          --grad adds the model's next-token "loss" and the
                                                          gradient of every stage of layer L (GPT-2 layout)
  attention-lab-cli generate --model MODEL (--text TEXT | --ids I,J,…) --n N [--json]
                                                          greedy: append the N most likely next tokens
  attention-lab-cli extract --model MODEL (--text TEXT | --ids I,J,…) [--layer L] -o SCENARIO.json
                                                          layer L's attention as a scenario file (X is
                                                          the layer's normed input)
  attention-lab-cli detect-heads --model MODEL (--text TEXT | --ids I,J,… | --prompts FILE |
      --repeat N) [--seed S] [--json | --csv]             each head's previous-token, duplicate-token
                                                          and induction score (TransformerLens's
                                                          detect_head); --repeat: N seeded random
                                                          tokens, then the same N again; --prompts:
                                                          one a line, their mean and each one's
  attention-lab-cli logit-lens --model MODEL (--text TEXT | --ids I,J,…) [--row R] [--k K]
      [--track TEXT | --track-id N] [--json | --csv]      the k most likely next tokens after each
                                                          layer: the residual stream through the final
                                                          norm and the unembedding (default: the last
                                                          row, k = 5); --track: one token's p and rank
  attention-lab-cli ablate --model MODEL (--text TEXT | --ids I,J,…) --ablate SPEC[,SPEC…]
      [--k K] [--json | --csv]                            the last row's predictions with heads
                                                          (L3H1), attention (L3.attn) or MLPs
                                                          (L3.mlp) ablated; @P: position P only;
                                                          :mean: their mean over the positions
  attention-lab-cli patch --model MODEL ((--clean TEXT | --clean-ids I,…) (--corrupted TEXT |
      --corrupted-ids I,…) | --prompts FILE) [--answer TEXT | --answer-id N]
      [--wrong TEXT | --wrong-id N] [--metric logit_diff|prob] [--kind KIND[,KIND…]|all]
      [--json | --csv]                                    activation patching, clean into corrupted:
                                                          KIND resid_pre (default), attn_out, mlp_out
                                                          (layer × position), z, q, k, v, pattern
                                                          (layer × head), z_by_position; 0 =
                                                          corrupted, 1 = clean; answers default to
                                                          each prompt's predicted next token;
                                                          --prompts: clean<TAB>corrupted[<TAB>answer
                                                          <TAB>wrong] a line, the mean over pairs
  attention-lab-cli attribute --model MODEL (--text TEXT | --ids I,J,… | --prompts FILE)
      [--row R] [--token TEXT | --token-id N] [--minus TEXT | --minus-id N] [--json | --csv]
                                                          direct logit attribution: each head's,
                                                          attention bias's and MLP's share of the
                                                          token's logit (default: the predicted one);
                                                          --prompts: the mean over their last rows
  attention-lab-cli cache --model MODEL (--text TEXT | --ids I,J,… | --prompts FILE)
      --hooks NAME[,NAME…] (-o OUT.safetensors | --npy DIR)
                                                          activations by TransformerLens hook name
                                                          (globs: blocks.*.attn.hook_pattern) as
                                                          float32 safetensors or .npy; --prompts:
                                                          one a line, of one length (a batch);
                                                          cache --model MODEL --list names them
  Without a BPE tokenizer, TEXT is vocabulary strings or token ids separated by spaces.

  attention-lab-cli --help | --version

exit status: 0 success, 2 bad arguments or bad scenario, 1 output could not be written
)";

struct Args {
  std::vector<std::string> positional;
  std::string output;  // -o
  bool no_slides = false;  // validate --no-slides
  bool grad = false;       // trace --grad
};

// Parses [positional…] [-o FILE]; returns an error message or "".
std::string parse_args(const std::vector<std::string>& args, std::size_t first, Args& parsed) {
  for (std::size_t i = first; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-o" || a == "--output") {
      if (i + 1 >= args.size()) return a + ": expected a file name after it";
      parsed.output = args[++i];
    } else if (a == "--no-slides") {
      parsed.no_slides = true;
    } else if (a == "--grad") {
      parsed.grad = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return "unknown option '" + a + "'";
    } else {
      parsed.positional.push_back(a);
    }
  }
  return {};
}

int usage_error(std::ostream& err, const std::string& msg) {
  err << "attention-lab-cli: " << msg << " (see --help)\n";
  return kExitBadInput;
}

// Writes `text` to `path` atomically, or to `out` when no path was given.
int emit(const std::string& text, const std::string& path, std::ostream& out, std::ostream& err) {
  if (path.empty() || path == "-") {
    out << text;
    return kExitOk;
  }
  if (auto e = write_file_atomically(path, text); !e.empty()) {
    err << "attention-lab-cli: " << e << '\n';
    return kExitFailure;
  }
  return kExitOk;
}

LoadResult load(const std::string& path) {
  LoadResult r = load_scenario(path);
  if (!r.error.empty() && r.error.rfind(path, 0) != 0) r.error = path + ": " + r.error;
  return r;
}

int cmd_trace(const Args& a, std::ostream& out, std::ostream& err) {
  if (a.positional.size() != 1) return usage_error(err, "trace: expected one scenario file");
  LoadResult r = load(a.positional[0]);
  if (!r.scenario) {
    err << "attention-lab-cli: " << r.error << '\n';
    return kExitBadInput;
  }
  Engine engine;
  engine.recompute_all(*r.scenario);
  for (const auto& w : engine.warnings()) err << "warning: " << w.message << '\n';
  std::ostringstream text;
  if (!a.grad) {
    write_trace(text, engine, *r.scenario);
    return emit(text.str(), a.output, out, err);
  }
  // --grad: the loss the scenario names, and the gradient of every stage
  if (!r.scenario->loss) {
    err << "attention-lab-cli: " << a.positional[0]
        << ": trace --grad: the scenario has no \"loss\" (add one: {\"kind\": \"attend\", \"head\": 0, \"targets\": […]} "
           "or {\"kind\": \"mse\", \"target\": […]}, docs/formats.md)\n";
    return kExitBadInput;
  }
  if (const std::string problem = gradients_problem(*r.scenario, *r.scenario->loss); !problem.empty()) {
    err << "attention-lab-cli: " << a.positional[0] << ": trace --grad: " << problem << '\n';
    return kExitBadInput;
  }
  const Gradients grads = backward(engine, *r.scenario, *r.scenario->loss);
  write_trace(text, engine, *r.scenario, [&](std::ostream& o) { write_gradients(o, grads, *r.scenario); });
  return emit(text.str(), a.output, out, err);
}

// A scenario's sizes and the attention variants it uses, as one line:
// "T=4, T_k=5, d_model=5, d_kv=6, heads=8, kv_heads=2, …, mask window 3 (…), RoPE θ=10000 half, ALiBi, sinks".
std::string sizes(const Scenario& s) {
  const Dims d = s.dims();
  auto n = [](int v) { return std::to_string(v); };
  std::string out = "T=" + n(d.T);
  if (s.cross()) out += ", T_k=" + n(d.T_k);
  out += ", d_model=" + n(d.d_model);
  if (s.cross()) out += ", d_kv=" + n(d.d_kv);
  out += ", heads=" + n(d.heads);
  if (d.kv_heads != d.heads) out += ", kv_heads=" + n(d.kv_heads);
  out += ", d_k=" + n(d.d_k) + ", d_v=" + n(d.d_v) + ", d_out=" + n(d.d_out) + ", mask " + to_string(s.mask_kind);
  if (s.mask_kind == MaskKind::Window) {
    out += " " + n(s.window);
    if (s.window >= d.T_k) out += " (as wide as the keys: the same as causal)";
  }
  if (s.rope.on) {
    std::ostringstream theta;
    theta << s.rope.theta;
    out += ", RoPE θ=" + theta.str() + " " + to_string(s.rope.pairs);
  }
  if (s.alibi) out += ", ALiBi";
  if (s.use_sinks) out += ", sinks";
  return out;
}

// The engine's warnings for `s` (a row that may attend to nothing…), as trace prints them.
std::vector<std::string> warnings_of(const Scenario& s) {
  Engine engine;
  engine.recompute_all(s);
  std::vector<std::string> out;
  for (const auto& w : engine.warnings()) out.push_back(w.message);
  return out;
}

std::string count_of_warnings(std::size_t n) {
  if (n == 0) return "";
  return ", " + std::to_string(n) + (n == 1 ? " warning" : " warnings");
}

// A lesson: the loader checks every step's changes and references; then
// every step's scenario is computed, and each warning is printed once, at
// the first step that has it.
int validate_lesson_file(const std::string& path, bool slides_too, std::ostream& out, std::ostream& err) {
  LoadedLesson l = load_lesson(path);
  if (!l.lesson) {
    err << "attention-lab-cli: " << (l.error.rfind(path, 0) == 0 ? l.error : path + ": " + l.error) << '\n';
    return kExitBadInput;
  }
  const Lesson& lesson = *l.lesson;
  std::set<std::string> seen;
  std::size_t warned = 0;
  for (int i = 0; i < static_cast<int>(lesson.steps.size()); ++i) {
    for (const auto& w : warnings_of(scenario_at_step(lesson, i))) {
      if (!seen.insert(w).second) continue;
      err << "warning: step " << i + 1 << " ('" << lesson.steps[static_cast<std::size_t>(i)].title << "'): " << w << '\n';
      ++warned;
    }
  }
  // Then what would not work in a lecture hall: numbers too small to print,
  // a quiz whose inputs are not printed or whose answer is.
  SlideCheck slides;
  if (slides_too) slides = check_slides(path);
  for (const std::string& w : slides.warnings) {
    err << "warning: " << w << '\n';
    ++warned;
  }
  if (!slides.ran && !slides.note.empty()) err << "note: " << slides.note << '\n';
  out << path << ": ok (lesson '" << lesson.title << "', " << lesson.steps.size()
      << (lesson.steps.size() == 1 ? " step" : " steps") << "; scenario " << sizes(lesson.scenario)
      << (slides.ran ? "; slides checked at " + slides.size : std::string()) << ")" << count_of_warnings(warned) << "\n";
  return kExitOk;
}

int cmd_validate(const Args& a, std::ostream& out, std::ostream& err) {
  if (a.positional.size() != 1) return usage_error(err, "validate: expected one scenario or lesson file");
  const std::string& path = a.positional[0];
  if (is_lesson_file(path)) return validate_lesson_file(path, !a.no_slides, out, err);
  LoadResult r = load(path);
  if (!r.scenario) {
    err << "attention-lab-cli: " << r.error << '\n';
    return kExitBadInput;
  }
  const auto warnings = warnings_of(*r.scenario);
  for (const auto& w : warnings) err << "warning: " << w << '\n';
  out << path << ": ok (" << sizes(*r.scenario) << ")" << count_of_warnings(warnings.size()) << "\n";
  return kExitOk;
}

int cmd_preset(const Args& a, std::ostream& out, std::ostream& err) {
  if (a.positional.size() != 1) return usage_error(err, "preset: expected a preset name (list them with 'presets')");
  const auto s = make_preset(a.positional[0]);
  if (!s) return usage_error(err, "preset: " + preset_problem(a.positional[0]));
  return emit(scenario_to_json(*s), a.output, out, err);
}

int cmd_presets(std::ostream& out) {
  for (const auto& p : presets()) out << p.name << "\t" << p.title << " — " << p.summary << '\n';
  // Not in the list above: a family of sizes rather than one scenario.
  out << "random-T-D-H\tA seeded random layer of T tokens, d_model D and H heads, causal — "
         "for example random-64-32-4 or random-1024-768-12\n";
  return kExitOk;
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) return usage_error(err, "expected a command");
  const std::string& cmd = args[0];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    out << kUsage;
    return kExitOk;
  }
  if (cmd == "--version") {
    out << "attention-lab-cli " << version() << '\n';
    return kExitOk;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "bench") return run_bench(rest, out, err);
  if (cmd == "model-info") return cmd_model_info(rest, out, err);
  if (cmd == "tokenize") return cmd_tokenize(rest, out, err);
  if (cmd == "generate") return cmd_generate(rest, out, err);
  if (cmd == "detect-heads") return cmd_detect_heads(rest, out, err);
  if (cmd == "logit-lens") return cmd_logit_lens(rest, out, err);
  if (cmd == "ablate") return cmd_ablate(rest, out, err);
  if (cmd == "patch") return cmd_patch(rest, out, err);
  if (cmd == "attribute") return cmd_attribute(rest, out, err);
  if (cmd == "cache") return cmd_cache(rest, out, err);
  if (cmd == "extract") return cmd_extract(rest, out, err);
  if (cmd == "trace" && names_a_model(rest)) return cmd_trace_model(rest, out, err);
  if (cmd == "fit") return cmd_fit(rest, out, err);
  if (cmd == "train") return cmd_train(rest, out, err);
  Args a;
  if (auto e = parse_args(args, 1, a); !e.empty()) return usage_error(err, cmd + ": " + e);
  if (a.no_slides && cmd != "validate") return usage_error(err, cmd + ": --no-slides is validate's (a lesson's slides)");
  if (a.grad && cmd != "trace") return usage_error(err, cmd + ": --grad is trace's (a scenario's gradients)");
  if (cmd == "trace") return cmd_trace(a, out, err);
  if (cmd == "validate") return cmd_validate(a, out, err);
  if (cmd == "preset") return cmd_preset(a, out, err);
  if (cmd == "presets") return a.positional.empty() ? cmd_presets(out) : usage_error(err, "presets: takes no arguments");
  return usage_error(err, "unknown command '" + cmd + "'");
}

}  // namespace attention_lab::cli
