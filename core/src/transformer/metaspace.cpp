#include "transformer/metaspace.h"

#include "attention_lab/excerpt.h"

namespace attention_lab::bpe {

namespace {

using json = nlohmann::json;

std::string type_name(const json& j) {
  return j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : std::string();
}

// {"String": s} of a Replace pattern, or "" when it is anything else.
std::string literal_pattern(const json& replace) {
  const auto it = replace.find("pattern");
  if (it == replace.end() || !it->is_object() || !it->contains("String") || !(*it)["String"].is_string()) return {};
  return (*it)["String"].get<std::string>();
}

bool is_space_to_metaspace(const json& n) {
  return type_name(n) == "Replace" && literal_pattern(n) == " " && n.contains("content") && n["content"].is_string() &&
         n["content"].get<std::string>() == kMetaspace;
}

bool is_prepend_metaspace(const json& n) {
  return type_name(n) == "Prepend" && n.contains("prepend") && n["prepend"].is_string() &&
         n["prepend"].get<std::string>() == kMetaspace;
}

bool refuse(std::string& error, const std::string& where, const json& what, const std::string& expected) {
  error = where + " " + excerpt(what.dump(), 60) + " is not supported: expected " + expected;
  return false;
}

// Prepend(▁) and Replace(" " → ▁), alone or in a Sequence.
bool read_normalizer(const json& n, const std::string& where, Metaspace& out, bool& replaces, std::string& error) {
  const std::string expected = "Prepend(\"▁\") and Replace(\" \" → \"▁\"), alone or in a Sequence";
  std::vector<const json*> parts;
  if (type_name(n) == "Sequence") {
    const auto list = n.find("normalizers");
    if (list == n.end() || !list->is_array()) return refuse(error, where, n, expected);
    for (const json& part : *list) parts.push_back(&part);
  } else {
    parts.push_back(&n);
  }
  for (const json* part : parts) {
    if (is_prepend_metaspace(*part)) out.prepend = Metaspace::Prepend::Always;
    else if (is_space_to_metaspace(*part)) replaces = true;
    else return refuse(error, where, *part, expected);
  }
  return true;
}

bool read_pre_tokenizer(const json& p, const std::string& where, Metaspace& out, bool& replaces, std::string& error) {
  if (type_name(p) != "Metaspace") return refuse(error, where, p, "Metaspace (or none)");
  for (const auto& [key, value] : p.items()) {
    if (key == "type" || key == "str_rep") continue;  // str_rep: older files' copy of replacement
    if (key == "replacement") {
      if (!value.is_string() || value.get<std::string>() != kMetaspace) return refuse(error, where + ".replacement", value, "\"▁\"");
    } else if (key == "prepend_scheme") {
      const std::string scheme = value.is_string() ? value.get<std::string>() : "";
      if (scheme == "always") out.prepend = Metaspace::Prepend::Always;
      else if (scheme == "first") out.prepend = Metaspace::Prepend::First;
      else if (scheme == "never") out.prepend = Metaspace::Prepend::Never;
      else return refuse(error, where + ".prepend_scheme", value, "\"always\", \"first\" or \"never\"");
    } else if (key == "add_prefix_space") {  // older files: prepend_scheme's first form
      if (!value.is_boolean()) return refuse(error, where + ".add_prefix_space", value, "true or false");
      if (!p.contains("prepend_scheme")) out.prepend = value.get<bool>() ? Metaspace::Prepend::Always : Metaspace::Prepend::Never;
    } else if (key == "split") {
      if (!value.is_boolean()) return refuse(error, where + ".split", value, "true or false");
      out.split = value.get<bool>();
    } else {
      return refuse(error, where + "." + key, value, "replacement, prepend_scheme, split");
    }
  }
  replaces = true;
  return true;
}

// Replace(▁ → " "), ByteFallback, Fuse, Strip(" ", 1, 0) in a Sequence; or Metaspace.
bool read_decoder(const json& d, const std::string& where, Metaspace& out, std::string& error) {
  const std::string expected = "a Sequence of Replace(\"▁\" → \" \"), ByteFallback, Fuse and Strip(\" \", 1, 0), or Metaspace";
  if (type_name(d) == "Metaspace") {
    out.strip_decoded_space = out.prepend != Metaspace::Prepend::Never;
    return true;
  }
  const auto list = d.find("decoders");
  if (type_name(d) != "Sequence" || list == d.end() || !list->is_array()) return refuse(error, where, d, expected);
  bool turns_back = false;
  for (const json& part : *list) {
    const std::string type = type_name(part);
    if (type == "Replace" && literal_pattern(part) == kMetaspace && part.value("content", json()).is_string() &&
        part["content"].get<std::string>() == " ") {
      turns_back = true;
    } else if (type == "ByteFallback" || type == "Fuse") {
      // fallback bytes back to bytes, tokens joined: what decode() does for every id
    } else if (type == "Strip" && part.value("content", json()) == " " && part.value("start", json()) == 1 &&
               part.value("stop", json()) == 0) {
      out.strip_decoded_space = true;
    } else {
      return refuse(error, where, part, expected);
    }
  }
  if (!turns_back) return refuse(error, where, d, expected);
  return true;
}

}  // namespace

bool writes_metaspace(const json& root) {
  const auto mentions = [](const json* part) {
    return part != nullptr && !part->is_null() && part->dump().find(kMetaspace) != std::string::npos;
  };
  const auto normalizer = root.find("normalizer"), pre = root.find("pre_tokenizer");
  return (normalizer != root.end() && mentions(&*normalizer)) || (pre != root.end() && mentions(&*pre));
}

bool read_metaspace(const json& root, const std::string& name, Metaspace& out, std::string& error) {
  out = {};
  bool replaces = false;
  if (const auto n = root.find("normalizer"); n != root.end() && !n->is_null())
    if (!read_normalizer(*n, name + ": normalizer", out, replaces, error)) return false;
  if (const auto p = root.find("pre_tokenizer"); p != root.end() && !p->is_null())
    if (!read_pre_tokenizer(*p, name + ": pre_tokenizer", out, replaces, error)) return false;
  if (!replaces) {
    error = name + ": normalizer: expected spaces replaced by \"▁\" (Replace or Metaspace), found none";
    return false;
  }
  const auto d = root.find("decoder");
  if (d == root.end() || d->is_null()) {
    error = name + ": decoder: expected one that turns \"▁\" back into spaces, found none";
    return false;
  }
  return read_decoder(*d, name + ": decoder", out, error);
}

std::vector<std::string> metaspace_pieces(const Metaspace& m, std::string_view text, bool at_start) {
  std::string s;
  if (text.empty()) return {};
  if (m.prepend == Metaspace::Prepend::Always || (m.prepend == Metaspace::Prepend::First && at_start)) s += kMetaspace;
  for (const char c : text) {
    if (c == ' ') s += kMetaspace;
    else s += c;
  }
  if (!m.split) return {std::move(s)};
  // Each ▁ begins a piece (HF's MergedWithNext): "▁the▁cat" → "▁the", "▁cat".
  std::vector<std::string> pieces;
  std::size_t start = 0;
  for (std::size_t at = s.find(kMetaspace, 1); at != std::string::npos; at = s.find(kMetaspace, at + kMetaspace.size())) {
    if (at > start) pieces.push_back(s.substr(start, at - start));
    start = at;
  }
  pieces.push_back(s.substr(start));
  return pieces;
}

int fallback_byte(std::string_view token) {
  if (token.size() != 6 || !token.starts_with("<0x") || token.back() != '>') return -1;
  int value = 0;
  for (const char c : token.substr(3, 2)) {
    value *= 16;
    if (c >= '0' && c <= '9') value += c - '0';
    else if (c >= 'A' && c <= 'F') value += c - 'A' + 10;
    else return -1;
  }
  return value;
}

}  // namespace attention_lab::bpe
