#pragma once
// A folder's tokenizer.model (SentencePiece's own file, as older Llama,
// Mistral and Gemma folders carry without a tokenizer.json), read and run by
// Debian's libsentencepiece: the ids transformers' slow tokenizer gives, with
// the BOS (and EOS) its tokenizer_config.json asks for. Not a public header.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace attention_lab {

class SentencePieceModel {
 public:
  // Reads `model_path` (and, when there is one, its folder's
  // tokenizer_config.json for add_bos_token / add_eos_token; the slow
  // tokenizers' default is BOS only). Ids at or past `vocab_size` are refused.
  static std::unique_ptr<SentencePieceModel> load(const std::filesystem::path& model_path, int vocab_size, std::string& error);
  // From the file's bytes (tests, the fuzz target).
  static std::unique_ptr<SentencePieceModel> from_bytes(const std::string& bytes, const std::string& name, int vocab_size,
                                                        bool add_bos, bool add_eos, std::string& error);

  bool encode(const std::string& text, std::vector<int>& ids, std::string& error) const;
  std::string decode(const std::vector<int>& ids) const;
  // The piece of `id` ("▁the", "<0x0A>", "<s>"), "" when none.
  std::string piece(int id) const;

  ~SentencePieceModel();
  SentencePieceModel(const SentencePieceModel&) = delete;
  SentencePieceModel& operator=(const SentencePieceModel&) = delete;

 private:
  SentencePieceModel();
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  bool add_bos_ = true, add_eos_ = false;
};

}  // namespace attention_lab
