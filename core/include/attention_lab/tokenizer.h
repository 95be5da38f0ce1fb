#pragma once
// Text ↔ token ids for a model folder. Today: a vocabulary (vocab.json) whose
// strings are typed separated by spaces, or bare token ids when a folder has
// no vocabulary (../shared/models/gpt-nano-sort has a 3-token vocabulary and
// no merges). Byte-level BPE (merges.txt, tokenizer.json) comes next.

#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace attention_lab {

struct Encoded {
  std::vector<int> ids;
  std::string error;  // names the word that could not be read
};

class Tokenizer {
 public:
  // Reads vocab.json from `folder` when there is one; `vocab_size` is the
  // model's, so ids past it are refused. A folder with merges.txt or
  // tokenizer.json is a BPE tokenizer: refused (with the reason) until it is
  // supported. Errors name the file.
  static std::shared_ptr<const Tokenizer> load(const std::filesystem::path& folder, int vocab_size, std::string& error);

  // "vocabulary strings" or "token ids".
  std::string kind() const;
  // Words separated by white space, each a vocabulary string or a token id.
  Encoded encode(const std::string& text) const;
  // Comma- or space-separated ids ("3,14,15").
  Encoded parse_ids(const std::string& text) const;
  // The vocabulary string of `id` (its number when there is none).
  std::string token_text(int id) const;
  // What the app and traces show: token_text with GPT-2's byte-level marks
  // made visible (Ġ → ␣ for a space, Ċ → ↵ for a newline).
  std::string label(int id) const;
  // The text of a sequence: the tokens' strings joined (by spaces when they
  // are vocabulary words).
  std::string decode(const std::vector<int>& ids) const;
  int vocab_size() const { return vocab_size_; }
  bool has_vocabulary() const { return !strings_.empty(); }

 private:
  int vocab_size_ = 0;
  std::vector<std::string> strings_;  // id → string; empty: ids only
  std::unordered_map<std::string, int> ids_;
};

}  // namespace attention_lab
