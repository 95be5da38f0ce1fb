#pragma once
// What the interpretability commands share: reading a token or a prompt from
// the options, and writing numbers as JSON, CSV and aligned text.

#include "model_args.h"

#include "attention_lab/prompt_batch.h"
#include "attention_lab/tokenizer.h"

#include <Eigen/Core>

#include <ostream>
#include <string>
#include <vector>

namespace attention_lab::cli {

// One token named by --NAME TEXT (which must tokenize to exactly one token)
// or --NAME-id N. `given` is false when neither was.
struct TokenChoice {
  int id = -1;
  bool given = false;
  std::string error;
};
TokenChoice token_option(const ModelArgs& a, const Opened& o, const std::string& name);

// The ids of --NAME TEXT or --NAME-ids I,J,… (one of them), checked against the model.
Encoded prompt_option(const ModelArgs& a, const Opened& o, const std::string& name);

// Writes a matrix of doubles as nested JSON arrays (NaN as null).
void write_rows(std::ostream& s, const Eigen::MatrixXd& m);

// A CSV field: quoted, with quotes doubled.
std::string csv(const std::string& text);

// The characters of UTF-8 text (a token label's "␣" is one).
std::size_t shown_width(const std::string& text);

// `text` right-aligned in `width` characters.
std::string pad(const std::string& text, std::size_t width);

// The prompts of --prompts FILE (read_prompts' rules); a status other than
// kExitOk after saying why not.
int prompts_option(const std::string& cmd, const ModelArgs& a, const Opened& o, PromptLayout layout,
                   std::vector<Prompt>& out, std::ostream& err);

// The ids of --text, --ids or --prompts (exactly one), as prompts; a status
// other than kExitOk after saying why not.
int inputs_option(const std::string& cmd, const ModelArgs& a, const Opened& o, PromptLayout layout,
                  std::vector<Prompt>& out, std::ostream& err);

}  // namespace attention_lab::cli
