#include "io/json_document.h"

#include "attention_lab/excerpt.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace attention_lab::io {

namespace {

// How deeply lists and objects nest in `text`, which has already parsed.
std::size_t nesting_depth(const std::string& text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char ch : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

TextFile read_text_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  TextFile result;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    result.error = path.string() + ": cannot read: " + ec.message();
    return result;
  }
  if (size > max_bytes) {
    result.error = path.string() + ": expected at most " + std::to_string(max_bytes >> 20) + " MiB, found " +
                   std::to_string(size >> 20) + " MiB";
    return result;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    result.error = path.string() + ": cannot open: " + std::strerror(errno);
    return result;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  result.text = std::move(buffer).str();
  return result;
}

JsonDocument parse_json_document(const std::string& text, const std::string& what) {
  JsonDocument result;
  try {
    result.root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number like 1e400
    // The parser quotes what it read last, which may be a whole 10 MB line: keep a short, escaped tail.
    result.error = "invalid JSON: " + json_error_message(e.what());
    return result;
  }
  if (const std::size_t depth = nesting_depth(text); depth > kMaxJsonNesting) {
    result.root = nullptr;
    result.error = what + ": expected lists and objects nested at most " + std::to_string(kMaxJsonNesting) +
                   " deep, found " + std::to_string(depth);
  }
  return result;
}

SymbolNames read_symbol_names(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) fail_field(where + ": expected an object such as {\"S\": \"ω\"}, found " + std::string(j.type_name()));
  SymbolNames names;
  for (const auto& [from, to] : j.items()) {
    if (!to.is_string()) fail_field(where + "." + from + ": expected a string, found " + std::string(to.type_name()));
    names[from] = to.get<std::string>();
  }
  if (auto e = check_symbol_names(names, where); !e.empty()) fail_field(e);
  return names;
}

int read_index_base(const nlohmann::json& j, const std::string& where) {
  if (j.is_number_integer() && (j.get<long long>() == 0 || j.get<long long>() == 1)) return static_cast<int>(j.get<long long>());
  fail_field(where + ": expected 0 (rows, columns and heads shown from 0, as in code) or 1 (from 1, as in most textbooks), found " +
             j.dump());
}

}  // namespace attention_lab::io
