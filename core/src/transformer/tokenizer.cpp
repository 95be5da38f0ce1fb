#include "attention_lab/tokenizer.h"

#include "transformer/sentencepiece_model.h"

#include "attention_lab/excerpt.h"
#include "io/json_document.h"
#include "transformer/bpe.h"

#include <algorithm>
#include <charconv>

namespace attention_lab {

namespace {

constexpr std::uintmax_t kMaxVocabularyBytes = 64ull << 20;
constexpr std::uintmax_t kMaxMergesBytes = 64ull << 20;
constexpr std::uintmax_t kMaxTokenizerJsonBytes = 64ull << 20;  // Qwen2's is 7 MB, Llama 3's 9 MB

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::vector<std::string> split_words(const std::string& text, bool commas) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : text) {
    if (is_space(c) || (commas && c == ',')) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// A decimal id, or -1.
long long parse_id(const std::string& word) {
  long long v = -1;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc() || end != word.data() + word.size() || v < 0) return -1;
  return v;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

// A JSON document's root, or null with `error` naming `name`.
bool parse_json(const std::string& text, const std::string& name, nlohmann::json& root, std::string& error) {
  io::JsonDocument doc = io::parse_json_document(text, name);
  if (!doc.error.empty()) {
    error = name + ": " + doc.error;
    return false;
  }
  root = std::move(doc.root);
  return true;
}

}  // namespace

std::shared_ptr<const Tokenizer> Tokenizer::from_vocab_and_merges(const std::string& vocab_json, std::string_view merges_txt,
                                                                  int vocab_size, std::string& error) {
  nlohmann::json vocab;
  if (!parse_json(vocab_json, "vocab.json", vocab, error)) return nullptr;
  auto encoder = bpe::Encoder::from_vocab_and_merges(vocab, "vocab.json", merges_txt, "merges.txt", vocab_size, error);
  if (!encoder) return nullptr;
  auto t = std::make_shared<Tokenizer>();
  t->vocab_size_ = vocab_size;
  t->bpe_ = std::move(encoder);
  return t;
}

std::shared_ptr<const Tokenizer> Tokenizer::from_tokenizer_json(const std::string& tokenizer_json, int vocab_size,
                                                                std::string& error) {
  nlohmann::json root;
  if (!parse_json(tokenizer_json, "tokenizer.json", root, error)) return nullptr;
  auto encoder = bpe::Encoder::from_tokenizer_json(root, "tokenizer.json", vocab_size, error);
  if (!encoder) return nullptr;
  auto t = std::make_shared<Tokenizer>();
  t->vocab_size_ = vocab_size;
  t->bpe_ = std::move(encoder);
  return t;
}

std::shared_ptr<const Tokenizer> Tokenizer::from_sentencepiece_model(const std::string& bytes, int vocab_size, bool add_bos,
                                                                     bool add_eos, std::string& error) {
  auto model = SentencePieceModel::from_bytes(bytes, "tokenizer.model", vocab_size, add_bos, add_eos, error);
  if (!model) return nullptr;
  auto t = std::make_shared<Tokenizer>();
  t->vocab_size_ = vocab_size;
  t->spm_ = std::move(model);
  return t;
}

std::shared_ptr<const Tokenizer> Tokenizer::load(const std::filesystem::path& folder, int vocab_size, std::string& error) {
  auto t = std::make_shared<Tokenizer>();
  t->vocab_size_ = vocab_size;
  std::error_code ec;
  const auto vocab_path = folder / "vocab.json";
  const auto merges_path = folder / "merges.txt";
  const auto tokenizer_path = folder / "tokenizer.json";
  if (std::filesystem::exists(tokenizer_path, ec)) {  // Hugging Face's fast tokenizer, preferred as they prefer it
    io::TextFile file = io::read_text_file(tokenizer_path, kMaxTokenizerJsonBytes);
    nlohmann::json root;
    if (!file.error.empty()) error = file.error;
    if (!file.error.empty() || !parse_json(file.text, tokenizer_path.string(), root, error)) return nullptr;
    file = {};
    t->bpe_ = bpe::Encoder::from_tokenizer_json(root, tokenizer_path.string(), vocab_size, error);
    return t->bpe_ ? t : nullptr;
  }
  if (const auto model_path = folder / "tokenizer.model"; std::filesystem::exists(model_path, ec)) {
    t->spm_ = SentencePieceModel::load(model_path, vocab_size, error);  // SentencePiece's own file
    return t->spm_ ? t : nullptr;
  }
  if (std::filesystem::exists(merges_path, ec)) {
    if (!std::filesystem::exists(vocab_path, ec)) {
      error = merges_path.string() + ": expected vocab.json next to it (the tokens the merges make)";
      return nullptr;
    }
    io::TextFile vocab_file = io::read_text_file(vocab_path, kMaxVocabularyBytes);
    if (!vocab_file.error.empty()) {
      error = vocab_file.error;
      return nullptr;
    }
    nlohmann::json vocab;
    if (!parse_json(vocab_file.text, vocab_path.string(), vocab, error)) return nullptr;
    vocab_file = {};
    const io::TextFile merges_file = io::read_text_file(merges_path, kMaxMergesBytes);
    if (!merges_file.error.empty()) {
      error = merges_file.error;
      return nullptr;
    }
    t->bpe_ = bpe::Encoder::from_vocab_and_merges(vocab, vocab_path.string(), merges_file.text, merges_path.string(),
                                                  vocab_size, error);
    return t->bpe_ ? t : nullptr;
  }
  if (!std::filesystem::exists(vocab_path, ec)) return t;  // ids only
  io::TextFile file = io::read_text_file(vocab_path, kMaxVocabularyBytes);
  if (!file.error.empty()) {
    error = file.error;
    return nullptr;
  }
  io::JsonDocument doc = io::parse_json_document(file.text, vocab_path.string());
  if (!doc.error.empty()) {
    error = vocab_path.string() + ": " + doc.error;
    return nullptr;
  }
  if (!doc.root.is_object()) {
    error = vocab_path.string() + ": expected an object of token strings to ids";
    return nullptr;
  }
  t->strings_.assign(static_cast<std::size_t>(vocab_size), std::string());
  for (const auto& [text, id] : doc.root.items()) {
    if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() >= vocab_size) {
      error = vocab_path.string() + ": token '" + excerpt(text, 40) + "': expected an id from 0 to " +
              std::to_string(vocab_size - 1) + " (the model's vocab_size), found " + excerpt(id.dump(), 20);
      return nullptr;
    }
    const auto i = static_cast<std::size_t>(id.get<long long>());
    if (!t->strings_[i].empty()) {
      error = vocab_path.string() + ": id " + std::to_string(i) + " is given to both '" + excerpt(t->strings_[i], 40) +
              "' and '" + excerpt(text, 40) + "'";
      return nullptr;
    }
    t->strings_[i] = text;
    t->ids_.emplace(text, static_cast<int>(i));
  }
  // A vocabulary of whole words is looked up word by word; one of subword
  // pieces marked with BPE's space ("Ġthe", SentencePiece's "▁the") needs the
  // merges to split text, and word lookup would give other ids without a word.
  for (const auto& piece : t->strings_) {
    if (piece.rfind("\xC4\xA0", 0) == 0 || piece.rfind("\xE2\x96\x81", 0) == 0) {
      error = vocab_path.string() + ": token '" + excerpt(piece, 40) +
              "' is a subword piece (byte-level BPE or SentencePiece): expected merges.txt next to it, or a "
              "tokenizer.json, to split text as the model was trained";
      return nullptr;
    }
  }
  return t;
}

std::string Tokenizer::kind() const {
  if (bpe_) return bpe_->kind();
  if (spm_) return "SentencePiece model";
  return has_vocabulary() ? "vocabulary strings" : "token ids";
}

Encoded Tokenizer::encode(const std::string& text) const {
  Encoded out;
  if (bpe_ || spm_) {
    if (!(bpe_ ? bpe_->encode(text, out.ids, out.error) : spm_->encode(text, out.ids, out.error))) {
      out.ids.clear();
      out.error = cap_message(out.error);
    } else if (out.ids.empty()) {
      out.error = "expected at least one token, found none";
    }
    return out;
  }
  const std::vector<std::string> words = split_words(text, false);
  for (std::size_t w = 0; w < words.size(); ++w) {
    if (const auto it = ids_.find(words[w]); it != ids_.end()) {
      out.ids.push_back(it->second);
      continue;
    }
    const long long id = parse_id(words[w]);
    if (id < 0 || id >= vocab_size_) {
      out.ids.clear();
      out.error = "word " + std::to_string(w + 1) + " of " + std::to_string(words.size()) + " '" +
                  excerpt(words[w], 40) + "': expected " +
                  (has_vocabulary() ? "a vocabulary string or " : std::string()) + "a token id from 0 to " +
                  std::to_string(vocab_size_ - 1) + " (this model has no BPE tokenizer: words are separated by spaces)";
      return out;
    }
    out.ids.push_back(static_cast<int>(id));
  }
  if (out.ids.empty()) out.error = "expected at least one token, found none";
  return out;
}

Encoded Tokenizer::parse_ids(const std::string& text) const {
  Encoded out;
  // "2,1,,0" is a slip of the finger, not three ids: every item between
  // commas must hold one (spaces alone separate ids too).
  if (text.find(',') != std::string::npos) {
    const auto items = static_cast<std::size_t>(std::count(text.begin(), text.end(), ',')) + 1;
    std::size_t start = 0;
    for (std::size_t item = 1; item <= items; ++item) {
      const std::size_t comma = std::min(text.find(',', start), text.size());
      if (split_words(text.substr(start, comma - start), false).empty()) {
        out.error = "item " + std::to_string(item) + " of " + std::to_string(items) +
                    " is empty: expected a token id between the commas";
        return out;
      }
      start = comma + 1;
    }
  }
  const std::vector<std::string> words = split_words(text, true);
  for (std::size_t w = 0; w < words.size(); ++w) {
    const long long id = parse_id(words[w]);
    if (id < 0 || id >= vocab_size_) {
      out.ids.clear();
      out.error = "id " + std::to_string(w + 1) + " of " + std::to_string(words.size()) + " '" +
                  excerpt(words[w], 40) + "': expected a token id from 0 to " + std::to_string(vocab_size_ - 1);
      return out;
    }
    out.ids.push_back(static_cast<int>(id));
  }
  if (out.ids.empty()) out.error = "expected at least one token id, found none";
  return out;
}

std::string Tokenizer::token_text(int id) const {
  if (bpe_ || spm_) {
    const std::string s = bpe_ ? bpe_->token(id) : spm_->piece(id);
    return s.empty() ? std::to_string(id) : s;
  }
  if (id >= 0 && static_cast<std::size_t>(id) < strings_.size() && !strings_[static_cast<std::size_t>(id)].empty())
    return strings_[static_cast<std::size_t>(id)];
  return std::to_string(id);
}

std::string Tokenizer::label(int id) const {
  std::string s = token_text(id);
  replace_all(s, "\xC4\xA0", "\xE2\x90\xA3");  // Ġ (U+0120, GPT-2's byte for a space) → ␣
  replace_all(s, "\xC4\x8A", "\xE2\x86\xB5");  // Ċ (U+010A, a newline) → ↵
  replace_all(s, "<0x0A>", "\xE2\x86\xB5");      // SentencePiece's fallback byte for a newline → ↵
  return s;
}

std::vector<std::string> Tokenizer::labels(std::span<const int> ids) const {
  std::vector<std::string> out;
  for (const int id : ids) out.push_back(label(id));
  std::vector<std::string> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) return out;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::to_string(i) + ":" + out[i];
  return out;
}

std::string Tokenizer::single_token(const std::string& text, int& id) const {
  const Encoded e = encode(text);
  if (!e.error.empty()) return e.error;
  if (e.ids.size() == 1) {
    id = e.ids[0];
    return {};
  }
  std::string pieces;
  for (const int i : e.ids) pieces += (pieces.empty() ? "'" : ", '") + label(i) + "'";
  return "'" + text + "' is " + std::to_string(e.ids.size()) + " tokens" + (pieces.empty() ? "" : " (" + pieces + ")") +
         ": expected one";
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  if (bpe_) return bpe_->decode(ids);
  if (spm_) return spm_->decode(ids);
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? " " : "") + token_text(ids[i]);
  return out;
}

}  // namespace attention_lab
