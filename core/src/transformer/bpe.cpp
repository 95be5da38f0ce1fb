#include "transformer/bpe.h"

#include "attention_lab/excerpt.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>

namespace attention_lab::bpe {

namespace {

std::string utf8(char32_t c) {
  std::string s;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
  return s;
}

// GPT-2's bytes_to_unicode(): bytes '!'..'~', '¡'..'¬' and '®'..'ÿ' stand
// for themselves; the others, in order, for U+0100, U+0101, …
struct ByteTable {
  std::array<char32_t, 256> code{};
  std::array<std::string, 256> text;
  std::array<int, 0x200> byte_of{};  // every character above is below U+0144
  ByteTable() {
    auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
    char32_t n = 0;
    for (std::size_t b = 0; b < 256; ++b)
      code[b] = printable(static_cast<int>(b)) ? static_cast<char32_t>(b) : 256 + n++;
    byte_of.fill(-1);
    for (std::size_t b = 0; b < 256; ++b) {
      text[b] = utf8(code[b]);
      byte_of[code[b]] = static_cast<int>(b);
    }
  }
};

const ByteTable& table() {
  static const ByteTable t;
  return t;
}

std::string in_quotes(std::string_view s, std::size_t max = 40) { return "'" + excerpt(s, max) + "'"; }

// Splits a merges line at runs of spaces and tabs.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::string type_of(const nlohmann::json& j) {
  if (j.is_object() && j.contains("type") && j["type"].is_string()) return j["type"].get<std::string>();
  return {};
}

const nlohmann::json* member(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

bool read_bool(const nlohmann::json& j, const char* key, bool fallback, const std::string& where, bool& out,
               std::string& error) {
  const nlohmann::json* v = member(j, key);
  if (!v) {
    out = fallback;
    return true;
  }
  if (!v->is_boolean()) {
    error = where + "." + key + ": expected true or false, found " + excerpt(v->dump(), 20);
    return false;
  }
  out = v->get<bool>();
  return true;
}

// The pre-tokenizer of a tokenizer.json, as steps. Byte-level BPE needs a
// ByteLevel pre-tokenizer; Split regexes may come before it (Llama 3, Qwen2).
bool read_pre_tokenizer(const nlohmann::json& p, const std::string& where, std::vector<PreTokenizerStep>& steps,
                        bool& byte_level, std::string& error) {
  const std::string type = type_of(p);
  if (type == "Sequence") {
    const nlohmann::json* list = member(p, "pretokenizers");
    if (!list || !list->is_array()) {
      error = where + ".pretokenizers: expected a list of pre-tokenizers";
      return false;
    }
    for (std::size_t i = 0; i < list->size(); ++i)
      if (!read_pre_tokenizer((*list)[i], where + ".pretokenizers[" + std::to_string(i) + "]", steps, byte_level, error))
        return false;
    return true;
  }
  if (byte_level) {
    error = where + ": a pre-tokenizer after ByteLevel is not supported (it would cut the byte-level characters)";
    return false;
  }
  PreTokenizerStep step;
  if (type == "ByteLevel") {
    bool use_regex = true;
    if (!read_bool(p, "add_prefix_space", false, where, step.add_prefix_space, error) ||
        !read_bool(p, "use_regex", true, where, use_regex, error))
      return false;
    if (use_regex) {
      step.regex = Regex::compile(kGpt2Pattern, false, error);
      if (!step.regex) return false;
    }
    step.kind = PreTokenizerStep::Kind::ByteLevel;
    byte_level = true;
  } else if (type == "Split") {
    const nlohmann::json* pattern = member(p, "pattern");
    bool literal = false;
    const nlohmann::json* text = nullptr;
    if (pattern && pattern->is_object() && member(*pattern, "Regex") && (*pattern)["Regex"].is_string()) {
      text = &(*pattern)["Regex"];
    } else if (pattern && pattern->is_object() && member(*pattern, "String") && (*pattern)["String"].is_string()) {
      text = &(*pattern)["String"];
      literal = true;
    } else {
      error = where + ".pattern: expected {\"Regex\": \"…\"} or {\"String\": \"…\"}";
      return false;
    }
    const nlohmann::json* behavior = member(p, "behavior");
    if (behavior && (!behavior->is_string() || behavior->get<std::string>() != "Isolated")) {
      error = where + ".behavior: " + excerpt(behavior->dump(), 30) + " is not supported: expected \"Isolated\"";
      return false;
    }
    bool invert = false;
    if (!read_bool(p, "invert", false, where, invert, error)) return false;
    if (invert) {
      error = where + ".invert: true is not supported: expected false";
      return false;
    }
    std::string why;
    step.regex = Regex::compile(text->get<std::string>(), literal, why);
    if (!step.regex) {
      error = where + ".pattern." + (literal ? "String" : "Regex") + ": PCRE2 cannot compile " +
              in_quotes(text->get<std::string>(), 60) + " " + why;
      return false;
    }
    step.kind = PreTokenizerStep::Kind::Split;
  } else {
    error = where + ": " + (type.empty() ? std::string("a pre-tokenizer with no type") : "type '" + excerpt(type, 30) + "'") +
            " is not supported: expected ByteLevel, or a Sequence of Split regexes then ByteLevel";
    return false;
  }
  steps.push_back(std::move(step));
  return true;
}

}  // namespace

const std::array<std::string, 256>& byte_chars() { return table().text; }

int char_byte(char32_t c) { return c < table().byte_of.size() ? table().byte_of[c] : -1; }

std::string to_byte_chars(std::string_view bytes) {
  const auto& t = table().text;
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char b : bytes) out += t[static_cast<unsigned char>(b)];
  return out;
}

Encoder::Encoder() {
  byte_ids_.fill(-1);
  fallback_ids_.fill(-1);
}
Encoder::~Encoder() = default;

bool Encoder::read_vocab(const nlohmann::json& vocab, const std::string& where, int vocab_size, std::string& error) {
  if (!vocab.is_object()) {
    error = where + ": expected an object of token strings to ids";
    return false;
  }
  for (const auto& [text, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() >= vocab_size) {
      error = where + ": token " + in_quotes(text) + ": expected an id from 0 to " + std::to_string(vocab_size - 1) +
              " (the model's vocab_size), found " + excerpt(id.dump(), 20);
      return false;
    }
    if (text.empty()) {
      error = where + ": id " + std::to_string(id.get<long long>()) + ": expected a token string, found \"\"";
      return false;
    }
    const auto i = static_cast<std::size_t>(id.get<long long>());
    if (i >= strings_.size()) strings_.resize(i + 1);
    if (!strings_[i].empty()) {
      error = where + ": id " + std::to_string(i) + " is given to both " + in_quotes(strings_[i]) + " and " + in_quotes(text);
      return false;
    }
    strings_[i] = text;
    ids_.emplace(text, static_cast<int>(i));
  }
  return true;
}

bool Encoder::add_merge(const std::string& a, const std::string& b, const std::string& where, std::string& error) {
  const auto ia = ids_.find(a), ib = ids_.find(b), iab = ids_.find(a + b);
  const std::string* missing = ia == ids_.end() ? &a : ib == ids_.end() ? &b : nullptr;
  if (missing || iab == ids_.end()) {
    error = where + ": " + in_quotes(a + " " + b, 60) + ": " + in_quotes(missing ? *missing : a + b) +
            " is not in the vocabulary";
    return false;
  }
  // A pair given twice takes its last rank, as encoder.py's dict does.
  const int rank = static_cast<int>(merges_.size());
  merges_.insert_or_assign((static_cast<std::uint64_t>(ia->second) << 32) | static_cast<std::uint32_t>(ib->second),
                           Merge{rank, iab->second});
  return true;
}

bool Encoder::add_token(const nlohmann::json& entry, const std::string& where, int vocab_size, std::string& error) {
  const nlohmann::json* id = member(entry, "id");
  const nlohmann::json* content = member(entry, "content");
  if (!id || !id->is_number_integer()) {
    error = where + ".id: expected a token id";
    return false;
  }
  if (!content || !content->is_string() || content->get<std::string>().empty()) {
    error = where + ".content: expected the token's text";
    return false;
  }
  const std::string text = content->get<std::string>();
  const long long i = id->get<long long>();
  if (i < 0 || i >= vocab_size) {
    error = where + ": token " + in_quotes(text) + ": expected an id from 0 to " + std::to_string(vocab_size - 1) +
            " (the model's vocab_size), found " + std::to_string(i);
    return false;
  }
  const auto u = static_cast<std::size_t>(i);
  if (u >= strings_.size()) strings_.resize(u + 1);
  if (!strings_[u].empty() && strings_[u] != text) {
    error = where + ": id " + std::to_string(u) + " is given to both " + in_quotes(strings_[u]) + " and " + in_quotes(text);
    return false;
  }
  strings_[u] = text;
  AddedToken t{text, static_cast<int>(u), false, false};
  if (!read_bool(entry, "lstrip", false, where, t.lstrip, error) || !read_bool(entry, "rstrip", false, where, t.rstrip, error))
    return false;
  added_.push_back(std::move(t));
  return true;
}

void Encoder::finish() {
  for (std::size_t b = 0; b < 256; ++b) {
    const auto it = ids_.find(byte_chars()[b]);
    byte_ids_[b] = it == ids_.end() ? -1 : it->second;
  }
  if (metaspace_)
    for (std::size_t id = 0; id < strings_.size(); ++id)
      if (const int b = fallback_byte(strings_[id]); b >= 0) fallback_ids_[static_cast<std::size_t>(b)] = static_cast<int>(id);
  // Longest first, so the longest token matching at a place wins.
  std::stable_sort(added_.begin(), added_.end(),
                   [](const AddedToken& x, const AddedToken& y) { return x.content.size() > y.content.size(); });
  is_added_.assign(strings_.size(), false);
  for (std::size_t k = 0; k < added_.size(); ++k) {
    is_added_[static_cast<std::size_t>(added_[k].id)] = true;
    added_by_first_byte_[static_cast<unsigned char>(added_[k].content[0])].push_back(k);
  }
}

std::unique_ptr<Encoder> Encoder::from_vocab_and_merges(const nlohmann::json& vocab, const std::string& vocab_name,
                                                        std::string_view merges, const std::string& merges_name,
                                                        int vocab_size, std::string& error) {
  std::unique_ptr<Encoder> e(new Encoder());
  if (!e->read_vocab(vocab, vocab_name, vocab_size, error)) return nullptr;
  std::size_t line_number = 0;
  for (std::size_t at = 0; at < merges.size();) {
    std::size_t end = merges.find('\n', at);
    if (end == std::string_view::npos) end = merges.size();
    std::string_view line = merges.substr(at, end - at);
    at = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with("#version")) continue;
    const auto parts = fields(line);
    if (parts.empty()) continue;
    const std::string where = merges_name + ": line " + std::to_string(line_number);
    if (parts.size() != 2) {
      error = where + ": expected two tokens separated by a space, found " + std::to_string(parts.size()) + ": " +
              in_quotes(line, 60);
      return nullptr;
    }
    if (!e->add_merge(std::string(parts[0]), std::string(parts[1]), where, error)) return nullptr;
  }
  e->steps_.push_back({PreTokenizerStep::Kind::ByteLevel, Regex::compile(kGpt2Pattern, false, error), false});
  if (!e->steps_.back().regex) return nullptr;
  e->finish();
  return e;
}

std::unique_ptr<Encoder> Encoder::from_tokenizer_json(const nlohmann::json& root, const std::string& name,
                                                      int vocab_size, std::string& error) {
  if (!root.is_object()) {
    error = name + ": expected an object (a Hugging Face tokenizer.json)";
    return nullptr;
  }
  const nlohmann::json* model = member(root, "model");
  if (!model || !model->is_object()) {
    error = name + ": model: expected an object (the tokenizer's model)";
    return nullptr;
  }
  const nlohmann::json* type = member(*model, "type");
  if (type ? !type->is_string() || type->get<std::string>() != "BPE" : !member(*model, "merges")) {
    error = name + ": model.type " + (type ? excerpt(type->dump(), 30) : std::string("(none)")) +
            " is not supported: expected \"BPE\" (byte-level BPE, as GPT-2, Llama 3 and Qwen2 use)";
    return nullptr;
  }
  if (const nlohmann::json* dropout = member(*model, "dropout");
      dropout && !(dropout->is_number() && dropout->get<double>() == 0.0)) {
    error = name + ": model.dropout: expected null (BPE dropout is for training), found " + excerpt(dropout->dump(), 20);
    return nullptr;
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const nlohmann::json* v = member(*model, key);
    if (v && !(v->is_string() && v->get<std::string>().empty())) {
      error = name + ": model." + key + ": expected null (byte-level BPE has none), found " + excerpt(v->dump(), 20);
      return nullptr;
    }
  }
  std::unique_ptr<Encoder> e(new Encoder());
  if (!read_bool(*model, "ignore_merges", false, name + ": model", e->ignore_merges_, error) ||
      !read_bool(*model, "byte_fallback", false, name + ": model", e->byte_fallback_, error) ||
      !read_bool(*model, "fuse_unk", false, name + ": model", e->fuse_unk_, error))
    return nullptr;
  if (writes_metaspace(root)) {
    Metaspace m;
    if (!read_metaspace(root, name, m, error)) return nullptr;
    e->metaspace_ = m;
  } else if (e->byte_fallback_) {
    error = name + ": model.byte_fallback: true is not supported for a byte-level BPE (every byte has a token there); "
                   "expected false";
    return nullptr;
  }
  const nlohmann::json* vocab = member(*model, "vocab");
  if (!vocab) {
    error = name + ": model.vocab: expected an object of token strings to ids";
    return nullptr;
  }
  if (!e->read_vocab(*vocab, name + ": model.vocab", vocab_size, error)) return nullptr;

  const nlohmann::json* merges = member(*model, "merges");
  if (!merges || !merges->is_array()) {
    error = name + ": model.merges: expected a list of merges (\"a b\" or [\"a\", \"b\"])";
    return nullptr;
  }
  for (std::size_t i = 0; i < merges->size(); ++i) {
    const nlohmann::json& m = (*merges)[i];
    const std::string where = name + ": model.merges[" + std::to_string(i) + "]";
    std::string a, b;
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const std::size_t space = s.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 == s.size() || s.find(' ', space + 1) != std::string::npos) {
        error = where + ": expected two tokens separated by one space, found " + in_quotes(s, 60);
        return nullptr;
      }
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      a = m[0].get<std::string>();
      b = m[1].get<std::string>();
    } else {
      error = where + ": expected \"a b\" or [\"a\", \"b\"], found " + excerpt(m.dump(), 40);
      return nullptr;
    }
    if (!e->add_merge(a, b, where, error)) return nullptr;
  }

  if (const nlohmann::json* added = member(root, "added_tokens")) {
    if (!added->is_array()) {
      error = name + ": added_tokens: expected a list of tokens";
      return nullptr;
    }
    for (std::size_t i = 0; i < added->size(); ++i)
      if (!e->add_token((*added)[i], name + ": added_tokens[" + std::to_string(i) + "]", vocab_size, error))
        return nullptr;
  }

  if (const nlohmann::json* unk = member(*model, "unk_token"); unk && unk->is_string()) {
    if (const auto it = e->ids_.find(unk->get<std::string>()); it != e->ids_.end()) e->unk_id_ = it->second;
  }

  if (const nlohmann::json* post = member(root, "post_processor"))
    if (!e->read_post_processor(*post, name + ": post_processor", vocab_size, error)) return nullptr;

  if (e->metaspace_) {  // its normalizer, pre-tokenizer and decoder were read above
    // An added token marked "normalized" is matched in the normalized text (a
    // ▁ before it, its spaces as ▁): this reader matches the text as typed.
    if (e->metaspace_->has_normalizer() && member(root, "added_tokens")) {
      const nlohmann::json& added = root["added_tokens"];
      for (std::size_t i = 0; i < added.size(); ++i)
        if (const nlohmann::json* normalized = member(added[i], "normalized"); normalized && *normalized == true) {
          error = name + ": added_tokens[" + std::to_string(i) + "] " + in_quotes(added[i].value("content", std::string())) +
                  ": \"normalized\": true is not supported with a normalizer (it would be matched in the normalized "
                  "text); expected false";
          return nullptr;
        }
    }
    e->finish();
    return e;
  }
  // NFC (Qwen2) is taken as read: text typed in NFC, as nearly all text is,
  // is unchanged by it; the tokenizer does not normalize other text.
  if (const nlohmann::json* normalizer = member(root, "normalizer"); normalizer && type_of(*normalizer) != "NFC") {
    error = name + ": normalizer " + excerpt(normalizer->dump(), 40) +
            " is not supported: expected none (or NFC, as Qwen2's, not applied)";
    return nullptr;
  }
  const nlohmann::json* pre = member(root, "pre_tokenizer");
  if (!pre) {
    error = name + ": pre_tokenizer: expected ByteLevel (a byte-level BPE), found none";
    return nullptr;
  }
  bool byte_level = false;
  if (!read_pre_tokenizer(*pre, name + ": pre_tokenizer", e->steps_, byte_level, error)) return nullptr;
  if (!byte_level) {
    error = name + ": pre_tokenizer: expected a ByteLevel pre-tokenizer (a byte-level BPE), found none";
    return nullptr;
  }
  e->finish();
  return e;
}

// ByteLevel changes only offsets (no id); TemplateProcessing's "single"
// template puts special tokens around the text ("pair" is for two texts,
// which this app never encodes); a Sequence applies each in turn. Any other
// post-processor (BERT's, RoBERTa's) is refused by name.
bool Encoder::read_post_processor(const nlohmann::json& p, const std::string& where, int vocab_size, std::string& error) {
  const std::string type = type_of(p);
  if (type == "ByteLevel") return true;
  if (type == "Sequence") {
    const nlohmann::json* list = member(p, "processors");
    if (!list || !list->is_array()) {
      error = where + ": Sequence: expected a list of \"processors\"";
      return false;
    }
    for (std::size_t i = 0; i < list->size(); ++i)
      if (!read_post_processor((*list)[i], where + ".processors[" + std::to_string(i) + "]", vocab_size, error)) return false;
    return true;
  }
  if (type != "TemplateProcessing") {
    error = where + ": " + excerpt(type.empty() ? p.dump() : type, 40) +
            " is not supported (expected TemplateProcessing, ByteLevel or a Sequence of them); the ids would differ from "
            "the model's tokenizer";
    return false;
  }
  const nlohmann::json* single = member(p, "single");
  const nlohmann::json* specials = member(p, "special_tokens");
  if (!single || !single->is_array()) {
    error = where + ": TemplateProcessing: expected a \"single\" template";
    return false;
  }
  bool seen_text = false;
  for (std::size_t i = 0; i < single->size(); ++i) {
    const nlohmann::json& item = (*single)[i];
    const std::string at = where + ".single[" + std::to_string(i) + "]";
    if (const nlohmann::json* seq = member(item, "Sequence")) {
      if (!seq->is_object() || seq->value("id", std::string()) != "A" || seen_text) {
        error = at + ": expected the text once, as {\"Sequence\": {\"id\": \"A\"}}, found " + excerpt(item.dump(), 60);
        return false;
      }
      seen_text = true;
      continue;
    }
    const nlohmann::json* special = member(item, "SpecialToken");
    const std::string name = special && special->is_object() ? special->value("id", std::string()) : "";
    const nlohmann::json* entry = specials && specials->is_object() && specials->contains(name) ? &(*specials)[name] : nullptr;
    const nlohmann::json* ids = entry ? member(*entry, "ids") : nullptr;
    if (name.empty() || !ids || !ids->is_array()) {
      error = at + ": expected a SpecialToken listed in special_tokens with its ids, found " + excerpt(item.dump(), 60);
      return false;
    }
    for (const nlohmann::json& id : *ids) {
      if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() >= vocab_size) {
        error = at + ": special token " + in_quotes(name) + ": expected ids from 0 to " + std::to_string(vocab_size - 1) +
                ", found " + excerpt(id.dump(), 20);
        return false;
      }
      (seen_text ? after_ids_ : before_ids_).push_back(static_cast<int>(id.get<long long>()));
    }
  }
  if (!seen_text) {
    error = where + ": TemplateProcessing: its \"single\" template has no {\"Sequence\": {\"id\": \"A\"}}: expected the text in it";
    return false;
  }
  return true;
}

const std::string& Encoder::token(int id) const {
  static const std::string none;
  return id >= 0 && static_cast<std::size_t>(id) < strings_.size() ? strings_[static_cast<std::size_t>(id)] : none;
}

bool Encoder::encode(std::string_view text, std::vector<int>& ids, std::string& error) const {
  ids.clear();
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string_view::npos) {
    static const char* hex = "0123456789abcdef";
    const auto byte = static_cast<unsigned char>(text[bad]);
    error = "byte " + std::to_string(bad) + " (0x" + hex[byte >> 4] + hex[byte & 15] +
            ") is not valid UTF-8: expected text";
    return false;
  }
  std::deque<std::string> storage;
  std::vector<std::string_view> pieces;
  auto encode_text = [&](std::string_view part) {
    if (metaspace_) {
      for (const std::string& piece : metaspace_pieces(*metaspace_, part, part.data() == text.data()))
        if (!encode_piece(piece, ids, error)) return false;
      return true;
    }
    if (!pre_tokenize(steps_, part, storage, pieces, error)) return false;
    for (const std::string_view piece : pieces)
      if (!encode_piece(piece, ids, error)) return false;
    return true;
  };
  // Added tokens first: the leftmost match, the longest there.
  std::size_t last = 0;  // the end of what has been encoded
  for (std::size_t at = 0; at < text.size() && !added_.empty(); ++at) {
    const AddedToken* found = nullptr;
    for (const std::size_t k : added_by_first_byte_[static_cast<unsigned char>(text[at])]) {
      if (text.substr(at).starts_with(added_[k].content)) {
        found = &added_[k];
        break;
      }
    }
    if (!found) continue;
    std::size_t start = at, end = at + found->content.size();
    if (found->lstrip) {
      // Back over the white space before it (characters are at most 4 bytes).
      for (bool more = true; more && start > last;) {
        more = false;
        for (std::size_t len = 1; len <= 4 && len <= start - last; ++len) {
          if (white_space_length(text.substr(start - len)) == len) {
            start -= len;
            more = true;
            break;
          }
        }
      }
    }
    if (found->rstrip)
      while (const std::size_t len = white_space_length(text.substr(end))) end += len;
    if (!encode_text(text.substr(last, start - last))) return false;
    ids.push_back(found->id);
    last = end;
    at = end - 1;
  }
  if (!encode_text(text.substr(last))) return false;
  if (!before_ids_.empty()) ids.insert(ids.begin(), before_ids_.begin(), before_ids_.end());
  ids.insert(ids.end(), after_ids_.begin(), after_ids_.end());
  return true;
}

void Encoder::merge_symbols(std::vector<int>& symbols) const {
  const std::size_t n = symbols.size();
  if (n < 2) return;
  auto find = [&](int a, int b) -> const Merge* {
    if (a < 0 || b < 0) return nullptr;
    const auto it = merges_.find((static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b));
    return it == merges_.end() ? nullptr : &it->second;
  };
  std::vector<int> next(n), prev(n);
  for (std::size_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? static_cast<int>(i + 1) : -1;
    prev[i] = static_cast<int>(i) - 1;
  }
  // (rank, left position) of every adjacent pair that has a merge; a min-heap.
  using Entry = std::pair<int, int>;
  std::vector<Entry> heap;
  auto push = [&](int left) {
    if (left < 0 || next[static_cast<std::size_t>(left)] < 0) return;
    const std::size_t l = static_cast<std::size_t>(left), r = static_cast<std::size_t>(next[l]);
    if (const Merge* m = find(symbols[l], symbols[r])) {
      heap.emplace_back(m->rank, left);
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
  };
  for (std::size_t i = 0; i + 1 < n; ++i) push(static_cast<int>(i));
  std::vector<bool> alive(n, true);
  std::vector<int> batch;
  // As encoder.py: take the pair of lowest rank, merge every place it occurs
  // from left to right, and again until no pair has a merge. Every place of
  // one rank is one pair (a rank is a line of the merges).
  while (!heap.empty()) {
    const int rank = heap.front().first;
    batch.clear();
    while (!heap.empty() && heap.front().first == rank) {
      batch.push_back(heap.front().second);
      std::pop_heap(heap.begin(), heap.end(), std::greater<>());
      heap.pop_back();
    }
    std::sort(batch.begin(), batch.end());
    for (const int left : batch) {
      const std::size_t l = static_cast<std::size_t>(left);
      if (!alive[l] || next[l] < 0) continue;
      const std::size_t r = static_cast<std::size_t>(next[l]);
      const Merge* m = find(symbols[l], symbols[r]);
      if (!m || m->rank != rank) continue;  // merged away since it was queued
      symbols[l] = m->result;
      alive[r] = false;
      next[l] = next[r];
      if (next[r] >= 0) prev[static_cast<std::size_t>(next[r])] = left;
      push(prev[l]);
      push(left);
    }
  }
  std::size_t out = 0;
  for (int i = 0; i >= 0; i = next[static_cast<std::size_t>(i)]) symbols[out++] = symbols[static_cast<std::size_t>(i)];
  symbols.resize(out);
}

bool Encoder::encode_piece(std::string_view piece, std::vector<int>& ids, std::string& error) const {
  const bool cacheable = piece.size() <= kMaxCachedPieceBytes;
  if (cacheable) {
    const std::lock_guard lock(cache_mutex_);
    if (const auto it = cache_.find(std::string(piece)); it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return true;
    }
  }
  std::vector<int> symbols;
  if (ignore_merges_) {
    if (const auto it = ids_.find(metaspace_ ? std::string(piece) : to_byte_chars(piece)); it != ids_.end())
      symbols.push_back(it->second);
  }
  if (symbols.empty() && metaspace_) {
    if (!character_symbols(piece, symbols, error)) return false;
    merge_symbols(symbols);
  }
  if (symbols.empty()) {
    symbols.reserve(piece.size());
    for (const char b : piece) symbols.push_back(byte_ids_[static_cast<unsigned char>(b)]);
    merge_symbols(symbols);
  }
  if (std::find(symbols.begin(), symbols.end(), -1) != symbols.end()) {
    if (unk_id_ < 0) {
      std::size_t at = 0;
      while (byte_ids_[static_cast<unsigned char>(piece[at])] >= 0) ++at;
      error = "the piece " + in_quotes(piece) + ": byte " + std::to_string(at) + " (" +
              byte_chars()[static_cast<unsigned char>(piece[at])] + ") has no token in the vocabulary";
      return false;
    }
    std::replace(symbols.begin(), symbols.end(), -1, unk_id_);
  }
  ids.insert(ids.end(), symbols.begin(), symbols.end());
  if (cacheable) {
    const std::lock_guard lock(cache_mutex_);
    if (cache_.size() >= kMaxCacheEntries) cache_.clear();
    cache_.emplace(std::string(piece), std::move(symbols));
  }
  return true;
}

bool Encoder::character_symbols(std::string_view piece, std::vector<int>& symbols, std::string& error) const {
  bool last_unknown = false;
  for (std::size_t at = 0; at < piece.size();) {
    const auto lead = static_cast<unsigned char>(piece[at]);
    const std::size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;  // the text is valid UTF-8
    const std::string_view character = piece.substr(at, len);
    at += len;
    if (const auto it = ids_.find(std::string(character)); it != ids_.end()) {
      symbols.push_back(it->second);
      last_unknown = false;
      continue;
    }
    bool every_byte = byte_fallback_;
    for (const char b : character) every_byte = every_byte && fallback_ids_[static_cast<unsigned char>(b)] >= 0;
    if (every_byte) {
      for (const char b : character) symbols.push_back(fallback_ids_[static_cast<unsigned char>(b)]);
      last_unknown = false;
      continue;
    }
    if (unk_id_ < 0) {
      error = "the character " + in_quotes(character) + " of " + in_quotes(piece) +
              " has no token in the vocabulary" + (byte_fallback_ ? " and no byte tokens <0x..> for its bytes" : "") +
              ", and the tokenizer has no unknown token";
      return false;
    }
    if (!(fuse_unk_ && last_unknown)) symbols.push_back(unk_id_);
    last_unknown = true;
  }
  return true;
}

std::string Encoder::kind() const { return metaspace_ ? "SentencePiece-style BPE" : "byte-level BPE"; }

std::string Encoder::decode(const std::vector<int>& ids) const {
  if (metaspace_) {
    std::vector<std::string_view> tokens;
    std::vector<bool> added;
    static const std::string replacement = "\xEF\xBF\xBD";  // U+FFFD: an id with no token
    for (const int id : ids) {
      const std::string& token = this->token(id);
      tokens.push_back(token.empty() ? std::string_view(replacement) : std::string_view(token));
      added.push_back(token.empty() || is_added_[static_cast<std::size_t>(id)]);
    }
    return metaspace_decode(*metaspace_, tokens, added);
  }
  std::string out;
  for (const int id : ids) {
    const std::string& token = this->token(id);
    if (token.empty()) {
      out += "\xEF\xBF\xBD";  // U+FFFD: an id with no token
      continue;
    }
    if (is_added_[static_cast<std::size_t>(id)]) {
      out += token;
      continue;
    }
    // Each character back to its byte; a token holding another character
    // (not a byte-level one) is its own UTF-8, as Hugging Face decodes it.
    std::string bytes;
    bool byte_level = true;
    for (std::size_t i = 0; i < token.size() && byte_level;) {
      const auto c0 = static_cast<unsigned char>(token[i]);
      char32_t c = c0;
      std::size_t len = 1;
      if (c0 >= 0xC0 && c0 < 0xE0 && i + 1 < token.size()) {
        c = ((c0 & 0x1Fu) << 6) | (static_cast<unsigned char>(token[i + 1]) & 0x3Fu);
        len = 2;
      } else if (c0 >= 0x80) {
        byte_level = false;  // every byte-level character is below U+0800
        break;
      }
      const int b = char_byte(c);
      if (b < 0) byte_level = false;
      else bytes += static_cast<char>(b);
      i += len;
    }
    out += byte_level ? bytes : token;
  }
  return out;
}

}  // namespace attention_lab::bpe
