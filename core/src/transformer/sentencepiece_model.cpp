#include "transformer/sentencepiece_model.h"

#include "io/json_document.h"
#include "transformer/sentencepiece_charsmap.h"

#include <sentencepiece_processor.h>

#include <exception>
#include <fstream>
#include <iterator>
#include <sstream>

namespace attention_lab {

namespace {

constexpr std::uintmax_t kMaxModelBytes = 64u << 20;  // real ones are 0.5 to 5 MB

// The library's message on one line (it may quote a piece holding a newline), at most 200 bytes.
std::string one_line(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  if (text.size() > 200) text = text.substr(0, 200) + "…";
  return text;
}

}  // namespace

SentencePieceModel::SentencePieceModel() : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
SentencePieceModel::~SentencePieceModel() = default;

std::unique_ptr<SentencePieceModel> SentencePieceModel::from_bytes(const std::string& bytes, const std::string& name,
                                                                   int vocab_size, bool add_bos, bool add_eos,
                                                                   std::string& error) {
  // The library would trust these rules and read past them: checked first.
  if (auto problem = sentencepiece_charsmap_problem(bytes); !problem.empty()) {
    error = name + ": " + problem;
    return nullptr;
  }
  std::unique_ptr<SentencePieceModel> m(new SentencePieceModel());
  try {
    if (const auto status = m->sp_->LoadFromSerializedProto(bytes); !status.ok()) {
      error = name + ": not a SentencePiece model (" + one_line(status.ToString()) + ")";
      return nullptr;
    }
  } catch (const std::exception& e) {  // libsentencepiece throws on some malformed models (an empty piece)
    error = name + ": not a usable SentencePiece model (" + one_line(e.what()) + ")";
    return nullptr;
  }
  if (m->sp_->GetPieceSize() > vocab_size) {
    error = name + ": " + std::to_string(m->sp_->GetPieceSize()) + " pieces: expected at most " + std::to_string(vocab_size) +
            " (the model's vocabulary)";
    return nullptr;
  }
  if ((add_bos && m->sp_->bos_id() < 0) || (add_eos && m->sp_->eos_id() < 0)) {
    error = name + ": tokenizer_config.json asks for a " + std::string(add_bos && m->sp_->bos_id() < 0 ? "BOS" : "EOS") +
            " token the model does not have";
    return nullptr;
  }
  m->add_bos_ = add_bos;
  m->add_eos_ = add_eos;
  return m;
}

std::unique_ptr<SentencePieceModel> SentencePieceModel::load(const std::filesystem::path& model_path, int vocab_size,
                                                             std::string& error) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(model_path, ec);
  if (ec || size > kMaxModelBytes) {
    error = model_path.string() + (ec ? ": cannot be read" : ": " + std::to_string(size) + " bytes: expected at most 64 MiB");
    return nullptr;
  }
  std::ifstream in(model_path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The slow tokenizers' add_bos_token / add_eos_token (LlamaTokenizer, GemmaTokenizer: BOS only by default).
  bool add_bos = true, add_eos = false;
  const auto config_path = model_path.parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config_path, ec)) {
    std::ifstream cin(config_path);
    std::stringstream text;
    text << cin.rdbuf();
    const io::JsonDocument doc = io::parse_json_document(text.str(), config_path.string());
    if (!doc.error.empty()) {
      error = doc.error;
      return nullptr;
    }
    for (const auto& [key, flag] : {std::pair{"add_bos_token", &add_bos}, std::pair{"add_eos_token", &add_eos}}) {
      if (!doc.root.is_object() || !doc.root.contains(key) || doc.root[key].is_null()) continue;
      if (!doc.root[key].is_boolean()) {
        error = config_path.string() + ": \"" + key + "\": expected true or false";
        return nullptr;
      }
      *flag = doc.root[key].get<bool>();
    }
  }
  return from_bytes(bytes, model_path.string(), vocab_size, add_bos, add_eos, error);
}

bool SentencePieceModel::encode(const std::string& text, std::vector<int>& ids, std::string& error) const {
  ids.clear();
  try {
    if (const auto status = sp_->Encode(text, &ids); !status.ok()) {
      error = "tokenizer.model: " + one_line(status.ToString());
      return false;
    }
  } catch (const std::exception& e) {
    error = "tokenizer.model: " + one_line(e.what());
    return false;
  }
  if (add_bos_) ids.insert(ids.begin(), sp_->bos_id());
  if (add_eos_) ids.push_back(sp_->eos_id());
  return true;
}

std::string SentencePieceModel::decode(const std::vector<int>& ids) const {
  std::string text;
  try {
    if (!sp_->Decode(ids, &text).ok()) return "\xEF\xBF\xBD";  // U+FFFD: ids it has no piece for
  } catch (const std::exception&) {
    return "\xEF\xBF\xBD";
  }
  return text;
}

std::string SentencePieceModel::piece(int id) const {
  if (id < 0 || id >= sp_->GetPieceSize()) return {};
  return sp_->IdToPiece(id);
}

}  // namespace attention_lab
