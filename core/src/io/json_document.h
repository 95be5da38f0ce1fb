#pragma once
// Reading the JSON files users send each other (scenarios, lessons, model
// configs, tokenizers): a size-limited file read and a parse that refuses
// nesting deep enough to exhaust the stack. One place, so every parser gives
// the same errors for the same kind of bad file.

#include "attention_lab/symbol_names.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

namespace attention_lab::io {

struct TextFile {
  std::string text;
  std::string error;  // "PATH: cannot read: …", "PATH: expected at most N MiB, found M MiB"
};

// The whole file, or why not: missing, unreadable or over `max_bytes`
// (checked before anything is read).
TextFile read_text_file(const std::filesystem::path& path, std::uintmax_t max_bytes);

// Far more than any of our formats needs; far less than would exhaust the
// stack when a kept unknown value is written out again (dump() recurses).
inline constexpr std::size_t kMaxJsonNesting = 256;

struct JsonDocument {
  nlohmann::json root;
  std::string error;  // "invalid JSON: …" or "WHAT: expected lists and objects nested at most 256 deep, found N"
};

// Parses `text`; `what` names the document in the nesting error ("scenario").
JsonDocument parse_json_document(const std::string& text, const std::string& what);

// A field of a document is wrong ("W_q: expected …, found …"): thrown inside
// a parser, which turns it into its result's error.
struct FieldError {
  std::string message;
};
[[noreturn]] inline void fail_field(std::string message) { throw FieldError{std::move(message)}; }

// A scenario's or a lesson's "symbols": {"S": "ω", …} (symbol_names.h);
// fail_field names `where` and the key when it is wrong.
SymbolNames read_symbol_names(const nlohmann::json& j, const std::string& where);

// A scenario's or a lesson's "index_base": 0 or 1 (Scenario::index_base).
int read_index_base(const nlohmann::json& j, const std::string& where);

}  // namespace attention_lab::io
