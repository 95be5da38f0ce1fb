#pragma once
// A teacher's letters for the symbols the app shows. Raschka's book writes ω
// for the attention scores, α for the weights and z for the context vectors;
// a class reading it needs the same letters on the slide. A scenario (or a
// lesson, for all its steps) maps our base symbols to its own: {"S": "ω",
// "A": "α", "C": "z"} shows S₀ as ω₀, S′₀ as ω′₀ and "C₀ = A₀·V₀" as
// "z₀ = α₀·V₀". Only symbols and formulas are renamed, never prose.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attention_lab {

using SymbolNames = std::map<std::string, std::string>;  // our base symbol → the teacher's

// The base symbols that may be renamed: X, Q, K, V, S, Ŝ, A, C, O, M, B
// (S covers S and S′; the masked scores Ŝ are their own entry).
const std::vector<std::string>& renamable_symbols();

// "" when `names` can be used, else why not, starting with `where`
// ("symbols.W: expected one of X, Q, …, found \"W\"").
std::string check_symbol_names(const SymbolNames& names, const std::string& where);

// `text` (a symbol or a formula) with every renamed base symbol replaced
// where it stands as a symbol: not inside a word ("Softmax", "W_q") or a
// quoted token ("'A'") — the character before it is no ASCII letter, digit,
// '_' or quote, the one after it no ASCII letter, '_' or quote (a subscript,
// a prime, "[", a space or the end).
std::string rename_symbols(std::string_view text, const SymbolNames& names);

}  // namespace attention_lab
