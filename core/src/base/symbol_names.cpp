#include "attention_lab/symbol_names.h"

#include <algorithm>

namespace attention_lab {
namespace {

// A symbol inside a word ("Softmax", "W_q") or a quoted token ("'A' → 'fat'") is not one.
bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '\'' || c == '"';
}

bool space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

const std::vector<std::string>& renamable_symbols() {
  static const std::vector<std::string> symbols = {"X", "Q", "K", "V", "S", "Ŝ", "A", "C", "O", "M", "B"};
  return symbols;
}

std::string check_symbol_names(const SymbolNames& names, const std::string& where) {
  const auto& allowed = renamable_symbols();
  for (const auto& [from, to] : names) {
    if (std::find(allowed.begin(), allowed.end(), from) == allowed.end()) {
      std::string list;
      for (const std::string& s : allowed) list += (list.empty() ? "" : ", ") + s;
      return where + "." + from + ": expected one of " + list + ", found \"" + from + "\"";
    }
    // A symbol on a slide: short and on one line ("ω", "z", "α'").
    if (to.empty() || to.size() > 12 || std::any_of(to.begin(), to.end(), [](char c) { return space(static_cast<unsigned char>(c)); }))
      return where + "." + from + ": expected a short symbol without spaces (\"ω\"), found \"" + to + "\"";
  }
  return {};
}

std::string rename_symbols(std::string_view text, const SymbolNames& names) {
  if (names.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  std::size_t i = 0;
  while (i < text.size()) {
    bool renamed = false;
    const bool after_word = i > 0 && (word_char(text[i - 1]) || (text[i - 1] >= '0' && text[i - 1] <= '9'));
    if (!after_word) {
      for (const auto& [from, to] : names) {
        if (text.compare(i, from.size(), from) != 0) continue;
        const std::size_t end = i + from.size();
        if (end < text.size() && word_char(text[end])) continue;
        out += to;
        i = end;
        renamed = true;
        break;
      }
    }
    if (!renamed) out += text[i++];
  }
  return out;
}

}  // namespace attention_lab
