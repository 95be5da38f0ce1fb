#pragma once
// Text ↔ token ids for a model folder, one of three kinds:
//   byte-level BPE      tokenizer.json (Hugging Face: model.type "BPE" with a
//                       ByteLevel pre-tokenizer, as GPT-2, Llama 3, Qwen2), or
//                       vocab.json + merges.txt (GPT-2's own files): text is
//                       cut by the pre-tokenizer's regex and merged exactly as
//                       GPT-2's encoder.py / Hugging Face's tokenizers do;
//                       added tokens (<|endoftext|>) are matched in the text
//   vocabulary strings  vocab.json alone: its strings typed separated by spaces
//                       (../shared/models/gpt-nano-sort, 3 tokens, no merges)
//   token ids           no vocabulary: bare ids
// Not done for BPE: a normalizer other than NFC (refused; NFC, Qwen2's, is
// not applied: text is taken as typed), the post-processor (no BOS is added),
// the single_word flag of added tokens.

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attention_lab {

class SentencePieceModel;

namespace bpe {
class Encoder;
}

struct Encoded {
  std::vector<int> ids;
  std::string error;  // names the word that could not be read
};

class Tokenizer {
 public:
  // Reads `folder`'s tokenizer.json when there is one, else its
  // tokenizer.model (SentencePiece, with libsentencepiece), else its
  // vocab.json and merges.txt, else its vocab.json alone, else nothing (ids only).
  // `vocab_size` is the model's, so ids past it are refused. Errors name the
  // file and the line or entry.
  static std::shared_ptr<const Tokenizer> load(const std::filesystem::path& folder, int vocab_size, std::string& error);
  // A byte-level BPE from the files' text (tests, the fuzz target); errors
  // name "vocab.json", "merges.txt" or "tokenizer.json".
  static std::shared_ptr<const Tokenizer> from_vocab_and_merges(const std::string& vocab_json, std::string_view merges_txt,
                                                                int vocab_size, std::string& error);
  static std::shared_ptr<const Tokenizer> from_tokenizer_json(const std::string& tokenizer_json, int vocab_size,
                                                              std::string& error);

  // A SentencePiece tokenizer.model's bytes (tests, the fuzz target), with the
  // slow tokenizers' BOS (and EOS) added when asked.
  static std::shared_ptr<const Tokenizer> from_sentencepiece_model(const std::string& bytes, int vocab_size, bool add_bos,
                                                                   bool add_eos, std::string& error);

  // "byte-level BPE", "SentencePiece-style BPE", "SentencePiece model",
  // "vocabulary strings" or "token ids".
  std::string kind() const;
  // A BPE: any text is split into tokens (not only vocabulary strings or ids).
  bool splits_text() const { return bpe_ != nullptr || spm_ != nullptr; }
  // BPE: the text's tokens (text that is not UTF-8 is refused, naming the
  // offset of its first bad byte). Otherwise: words separated by white
  // space, each a vocabulary string or a token id.
  Encoded encode(const std::string& text) const;
  // Comma- or space-separated ids ("3,14,15").
  Encoded parse_ids(const std::string& text) const;
  // The vocabulary string of `id` (its number when there is none).
  std::string token_text(int id) const;
  // What the app and traces show: token_text with GPT-2's byte-level marks
  // made visible (Ġ → ␣ for a space, Ċ and <0x0A> → ↵ for a newline);
  // SentencePiece's ▁ is already a visible space.
  std::string label(int id) const;
  // The labels of a sequence's rows and columns: label() of each, and where
  // any label repeats, every one led by its position ("3:␣cat"), so a row of
  // "0 0 0" (a sorting model's input) or the two ␣AM of "I AM THAT I AM"
  // are told apart wherever they are shown.
  std::vector<std::string> labels(std::span<const int> ids) const;
  // The one token `text` stands for (an answer token, a token to attribute):
  // "" and `id` set, or why not — "' Mary' is 2 tokens ('␣M', 'ary'):
  // expected one", or the encoder's own error.
  std::string single_token(const std::string& text, int& id) const;
  // The text of a sequence. BPE: the exact bytes the tokens stand for (an id
  // with no token gives U+FFFD). Otherwise the tokens' strings joined by spaces.
  std::string decode(const std::vector<int>& ids) const;
  int vocab_size() const { return vocab_size_; }
  bool has_vocabulary() const { return !strings_.empty() || bpe_ != nullptr || spm_ != nullptr; }

 private:
  int vocab_size_ = 0;
  std::shared_ptr<const bpe::Encoder> bpe_;  // a BPE; null for the other kinds
  std::shared_ptr<const SentencePieceModel> spm_;  // a tokenizer.model; null for the other kinds
  std::vector<std::string> strings_;  // id → string; empty: ids only
  std::unordered_map<std::string, int> ids_;
};

}  // namespace attention_lab
