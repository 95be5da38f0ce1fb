#include "model_args.h"

#include "cli.h"

#include "attention_lab/json_text.h"
#include "attention_lab/scenario_io.h"
#include "attention_lab/transformer_forward.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

namespace attention_lab::cli {

using json_text::quote;

int fail(std::ostream& err, const std::string& msg) {
  err << "attention-lab-cli: " << msg << '\n';
  return kExitBadInput;
}

std::string parse(const std::vector<std::string>& args, const std::vector<std::string>& valued,
                  const std::vector<std::string>& flags, ModelArgs& out) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--output") a = "-o";
    if (std::find(valued.begin(), valued.end(), a) != valued.end()) {
      if (i + 1 >= args.size()) return a + ": expected a value after it";
      out.values[a] = args[++i];
    } else if (std::find(flags.begin(), flags.end(), a) != flags.end()) {
      out.flags[a] = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return "unknown option '" + a + "'";
    } else {
      out.positional.push_back(a);
    }
  }
  return {};
}

std::string shortest(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

std::string shortest(float v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

bool parse_int(const std::string& text, int lo, int hi, int& out) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) return false;
  out = v;
  return true;
}

Opened open_model(const std::string& path, ModelParts parts) {
  Opened o;
  LoadedModel m = load_model(path, {}, parts);
  if (!m.model) {
    o.error = m.error;
    return o;
  }
  o.model = m.model;
  const auto folder = std::filesystem::is_directory(path) ? std::filesystem::path(path)
                                                          : std::filesystem::path(path).parent_path();
  o.tokenizer = Tokenizer::load(folder.empty() ? "." : folder, o.model->config.vocab, o.error);
  return o;
}

Encoded input_ids(const ModelArgs& a, const Opened& o) {
  const bool text = a.values.count("--text") != 0, ids = a.values.count("--ids") != 0;
  Encoded e;
  if (text == ids) {
    e.error = "expected --text TEXT or --ids I,J,… (one of them)";
    return e;
  }
  e = text ? o.tokenizer->encode(a.values.at("--text")) : o.tokenizer->parse_ids(a.values.at("--ids"));
  if (e.error.empty()) {
    if (std::string problem = check_ids(o.model->config, e.ids); !problem.empty()) {
      e.ids.clear();
      e.error = problem;
    }
  }
  if (!e.error.empty()) e.error = (text ? "--text: " : "--ids: ") + e.error;
  return e;
}

void write_ints(std::ostream& out, const std::vector<int>& v) {
  out << '[';
  for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  out << ']';
}

void write_tokens(std::ostream& out, const Tokenizer& t, const std::vector<int>& ids) {
  out << '[';
  for (std::size_t i = 0; i < ids.size(); ++i) out << (i ? ", " : "") << quote(t.token_text(ids[i]));
  out << ']';
}

int emit_text(const std::string& text, const ModelArgs& a, std::ostream& out, std::ostream& err) {
  const auto it = a.values.find("-o");
  if (it == a.values.end() || it->second == "-") {
    out << text;
    return kExitOk;
  }
  if (auto e = write_file_atomically(it->second, text); !e.empty()) {
    err << "attention-lab-cli: " << e << '\n';
    return kExitFailure;
  }
  return kExitOk;
}

int read_model_options(const std::string& cmd, const std::vector<std::string>& args, const std::vector<std::string>& valued,
                       const std::vector<std::string>& flags, ModelArgs& a, std::ostream& err) {
  if (auto e = parse(args, valued, flags, a); !e.empty()) return fail(err, cmd + ": " + e + " (see --help)");
  if (!a.positional.empty()) return fail(err, cmd + ": unexpected argument '" + a.positional[0] + "' (see --help)");
  if (a.flags.count("--json") && a.flags.count("--csv")) return fail(err, cmd + ": --json and --csv: expected one of them");
  if (!a.values.count("--model")) return fail(err, cmd + ": expected --model MODEL (see --help)");
  return kExitOk;
}

int prepare(const std::string& cmd, const ModelArgs& a, Opened& o, Encoded& ids, std::ostream& err) {
  if (!a.positional.empty()) return fail(err, cmd + ": unexpected argument '" + a.positional[0] + "' (see --help)");
  const auto model = a.values.find("--model");
  if (model == a.values.end()) return fail(err, cmd + ": expected --model MODEL (see --help)");
  o = open_model(model->second);
  if (!o.error.empty()) return fail(err, o.error);
  ids = input_ids(a, o);
  if (!ids.error.empty()) return fail(err, cmd + ": " + ids.error);
  return kExitOk;
}

int read_layer(const std::string& cmd, const ModelArgs& a, const ModelConfig& c, int& layer, std::ostream& err) {
  layer = 0;
  const auto it = a.values.find("--layer");
  if (it != a.values.end() && !parse_int(it->second, 0, c.layers - 1, layer))
    return fail(err, cmd + ": --layer: expected 0 to " + std::to_string(c.layers - 1) + ", found '" + it->second + "'");
  return kExitOk;
}

}  // namespace attention_lab::cli
