#pragma once
// What the commands that work on a checkpoint share: their options, opening
// the model and its tokenizer, reading the input ids, writing numbers and
// token lists, and writing the output to stdout or -o atomically.

#include "attention_lab/tokenizer.h"
#include "attention_lab/transformer_model.h"

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace attention_lab::cli {

struct ModelArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;  // --model, --text, --ids, --layer, --n, -o
  std::map<std::string, bool> flags;          // --json, --all-logits
};

// Writes "attention-lab-cli: msg" to err; returns kExitBadInput.
int fail(std::ostream& err, const std::string& msg);

// Parses options; those in `valued` take a value, those in `flags` do not.
// Returns an error message or "".
std::string parse(const std::vector<std::string>& args, const std::vector<std::string>& valued,
                  const std::vector<std::string>& flags, ModelArgs& out);

// A model command's options, as parse reads them, refused under the
// command's name when one is unknown, an argument is not an option, both
// --json and --csv are given, or --model is missing. kExitOk, or a status
// after saying why not.
int read_model_options(const std::string& cmd, const std::vector<std::string>& args, const std::vector<std::string>& valued,
                       const std::vector<std::string>& flags, ModelArgs& a, std::ostream& err);

// A number in its shortest round-trip form ("10000", "1e-05"); a float as a
// float ("0.22", not 0.2199999988…).
std::string shortest(double v);
std::string shortest(float v);

// An integer in [lo, hi] spelled exactly; false otherwise.
bool parse_int(const std::string& text, int lo, int hi, int& out);

struct Opened {
  std::shared_ptr<const TransformerModel> model;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::string error;
};
Opened open_model(const std::string& path, ModelParts parts = ModelParts::Everything);

// The ids from --text or --ids (exactly one of them), checked against the model.
Encoded input_ids(const ModelArgs& a, const Opened& o);

void write_ints(std::ostream& out, const std::vector<int>& v);
void write_tokens(std::ostream& out, const Tokenizer& t, const std::vector<int>& ids);

// `text` to stdout, or to -o FILE atomically.
int emit_text(const std::string& text, const ModelArgs& a, std::ostream& out, std::ostream& err);

// Opens --model and reads the input ids; returns a non-zero status on failure.
int prepare(const std::string& cmd, const ModelArgs& a, Opened& o, Encoded& ids, std::ostream& err);

// --layer L, default 0.
int read_layer(const std::string& cmd, const ModelArgs& a, const ModelConfig& c, int& layer, std::ostream& err);

}  // namespace attention_lab::cli
