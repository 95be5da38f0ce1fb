#include "interp_support.h"

#include "cli.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace attention_lab::cli {

TokenChoice token_option(const ModelArgs& a, const Opened& o, const std::string& name) {
  TokenChoice t;
  const auto text = a.values.find(name), id = a.values.find(name + "-id");
  if (text != a.values.end() && id != a.values.end()) {
    t.error = name + " and " + name + "-id: expected one of them";
    return t;
  }
  t.given = text != a.values.end() || id != a.values.end();
  if (id != a.values.end()) {
    if (!parse_int(id->second, 0, o.model->config.vocab - 1, t.id))
      t.error = name + "-id: expected 0 to " + std::to_string(o.model->config.vocab - 1) + ", found '" + id->second + "'";
  } else if (text != a.values.end()) {
    if (std::string e = o.tokenizer->single_token(text->second, t.id); !e.empty())
      t.error = name + " " + e + (e.find("expected one") != std::string::npos ? "; give " + name + "-id N for a token by its id" : "");
  }
  return t;
}

Encoded prompt_option(const ModelArgs& a, const Opened& o, const std::string& name) {
  const auto text = a.values.find(name), ids = a.values.find(name + "-ids");
  Encoded e;
  if ((text == a.values.end()) == (ids == a.values.end())) {
    e.error = "expected " + name + " TEXT or " + name + "-ids I,J,… (one of them)";
    return e;
  }
  e = text != a.values.end() ? o.tokenizer->encode(text->second) : o.tokenizer->parse_ids(ids->second);
  if (e.error.empty()) {
    if (std::string problem = check_ids(o.model->config, e.ids); !problem.empty()) {
      e.ids.clear();
      e.error = problem;
    }
  }
  if (!e.error.empty()) e.error = (text != a.values.end() ? name : name + "-ids") + ": " + e.error;
  return e;
}

void write_rows(std::ostream& s, const Eigen::MatrixXd& m) {
  s << '[';
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    s << (r ? ", " : "") << '[';
    for (Eigen::Index c = 0; c < m.cols(); ++c) s << (c ? ", " : "") << (std::isfinite(m(r, c)) ? shortest(m(r, c)) : "null");
    s << ']';
  }
  s << ']';
}

std::string csv(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::size_t shown_width(const std::string& text) {
  std::size_t shown = 0;
  for (const char c : text) shown += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return shown;
}

std::string pad(const std::string& text, std::size_t width) {
  const std::size_t shown = shown_width(text);
  return std::string(width > shown ? width - shown : 0, ' ') + text;
}

int prompts_option(const std::string& cmd, const ModelArgs& a, const Opened& o, PromptLayout layout,
                   std::vector<Prompt>& out, std::ostream& err) {
  const std::string& file = a.values.at("--prompts");
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(err, cmd + ": --prompts: cannot read '" + file + "'");
  std::ostringstream content;
  content << in.rdbuf();
  if (std::string e = read_prompts(content.str(), file, *o.tokenizer, o.model->config, layout, out); !e.empty())
    return fail(err, cmd + ": --prompts: " + e);
  return kExitOk;
}

int inputs_option(const std::string& cmd, const ModelArgs& a, const Opened& o, PromptLayout layout,
                  std::vector<Prompt>& out, std::ostream& err) {
  if (a.values.count("--text") + a.values.count("--ids") + a.values.count("--prompts") != 1)
    return fail(err, cmd + ": expected one of --text TEXT, --ids I,J,… or --prompts FILE");
  if (a.values.count("--prompts")) return prompts_option(cmd, a, o, layout, out, err);
  Encoded input = input_ids(a, o);
  if (!input.error.empty()) return fail(err, cmd + ": " + input.error);
  out.assign(1, Prompt{});
  out[0].ids = std::move(input.ids);
  return kExitOk;
}

}  // namespace attention_lab::cli
