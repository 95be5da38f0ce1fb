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
    if (is_prepend_metaspace(*part)) out.normalizer_prepend = true;
    else if (is_space_to_metaspace(*part)) out.normalizer_replace = replaces = true;
    else return refuse(error, where, *part, expected);
  }
  return true;
}

// Metaspace {replacement, prepend_scheme, split}; older files: add_prefix_space
// for the scheme. Missing keys take the tokenizers library's defaults
// (prepend_scheme always, split true).
bool read_pre_tokenizer(const json& p, const std::string& where, Metaspace& out, bool& replaces, std::string& error) {
  if (type_name(p) != "Metaspace") return refuse(error, where, p, "Metaspace (or none)");
  out.pre_tokenizer = true;
  out.prepend = Metaspace::Prepend::Always;
  out.split = true;
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
    } else if (key == "add_prefix_space") {
      if (!value.is_boolean()) return refuse(error, where + ".add_prefix_space", value, "true or false");
    } else if (key == "split") {
      if (!value.is_boolean()) return refuse(error, where + ".split", value, "true or false");
      out.split = value.get<bool>();
    } else {
      return refuse(error, where + "." + key, value, "replacement, prepend_scheme, split");
    }
  }
  // add_prefix_space is the older name of the scheme: false means never, and
  // contradicting an explicit scheme is refused, as the tokenizers library does.
  if (const auto legacy = p.find("add_prefix_space"); legacy != p.end()) {
    const bool add = legacy->get<bool>();
    if (!p.contains("prepend_scheme")) out.prepend = add ? Metaspace::Prepend::Always : Metaspace::Prepend::Never;
    else if (!add && out.prepend != Metaspace::Prepend::Never)
      return refuse(error, where + ".add_prefix_space", *legacy, "true, or prepend_scheme \"never\" (they contradict each other)");
  }
  replaces = true;
  return true;
}

// Replace(▁ → " "), ByteFallback, Fuse, Strip(" ", 1, 0), in that order
// (each but Replace optional); or a Metaspace decoder.
bool read_decoder(const json& d, const std::string& where, Metaspace& out, std::string& error) {
  const std::string expected =
      "a Sequence of Replace(\"▁\" → \" \"), ByteFallback, Fuse and Strip(\" \", 1, 0) in that order, or Metaspace";
  if (type_name(d) == "Metaspace") {
    Metaspace scheme;
    bool unused = false;
    if (!read_pre_tokenizer(d, where, scheme, unused, error)) return false;  // the same keys
    out.drop_first_token_spaces = scheme.prepend != Metaspace::Prepend::Never;
    return true;
  }
  const auto list = d.find("decoders");
  if (type_name(d) != "Sequence" || list == d.end() || !list->is_array()) return refuse(error, where, d, expected);
  int last = -1;  // the position in Replace, ByteFallback, Fuse, Strip of the part before
  for (const json& part : *list) {
    const std::string type = type_name(part);
    int position;
    if (type == "Replace" && literal_pattern(part) == kMetaspace && part.value("content", json()).is_string() &&
        part["content"].get<std::string>() == " ") {
      position = 0;
    } else if (type == "ByteFallback") {
      position = 1;
      out.decode_bytes = true;
    } else if (type == "Fuse") {
      position = 2;  // the tokens joined: what decode() does anyway
    } else if (type == "Strip" && part.value("content", json()) == " " && part.value("start", json()) == 1 &&
               part.value("stop", json()) == 0) {
      position = 3;
      out.strip_decoded_space = true;
    } else {
      return refuse(error, where, part, expected);
    }
    if (position <= last) return refuse(error, where, d, expected);
    last = position;
  }
  if (d["decoders"].empty() || type_name(d["decoders"][0]) != "Replace") return refuse(error, where, d, expected);
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

namespace {

std::string spaces_to_metaspace(std::string_view text) {
  std::string s;
  for (const char c : text) {
    if (c == ' ') s += kMetaspace;
    else s += c;
  }
  return s;
}

}  // namespace

std::vector<std::string> metaspace_pieces(const Metaspace& m, std::string_view text, bool at_start) {
  if (text.empty()) return {};
  std::string s(text);
  if (m.normalizer_prepend) s.insert(0, kMetaspace);  // HF's Prepend: unconditional
  if (m.normalizer_replace) s = spaces_to_metaspace(s);
  if (!m.pre_tokenizer) return {std::move(s)};
  s = spaces_to_metaspace(s);
  const bool prepend = m.prepend == Metaspace::Prepend::Always || (m.prepend == Metaspace::Prepend::First && at_start);
  if (prepend && !s.starts_with(kMetaspace)) s.insert(0, kMetaspace);
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

namespace attention_lab::bpe {

namespace {

// Whether `bytes` is UTF-8 (the decoder's check before it writes fallback bytes).
bool is_utf8(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > bytes.size()) return false;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(bytes[i + k]) & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}

}  // namespace

std::string metaspace_decode(const Metaspace& m, const std::vector<std::string_view>& tokens, const std::vector<bool>& added) {
  std::string out, bytes;
  const auto flush = [&] {  // HF's ByteFallback: a run of bytes that is not UTF-8 is one U+FFFD a byte
    if (is_utf8(bytes)) out += bytes;
    else
      for (std::size_t k = 0; k < bytes.size(); ++k) out += "\xEF\xBF\xBD";
    bytes.clear();
  };
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string_view token = tokens[i];
    if (const int b = fallback_byte(token); m.decode_bytes && b >= 0) {
      bytes += static_cast<char>(b);
      continue;
    }
    flush();
    if (added[i]) {
      out += token;
      continue;
    }
    for (std::size_t at = 0; at < token.size();) {
      if (token.compare(at, kMetaspace.size(), kMetaspace) == 0) {
        if (!(i == 0 && m.drop_first_token_spaces)) out += ' ';
        at += kMetaspace.size();
      } else {
        out += token[at++];
      }
    }
  }
  flush();
  if (m.strip_decoded_space && !out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

}  // namespace attention_lab::bpe
