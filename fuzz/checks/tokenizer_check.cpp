#include "checks/tokenizer_check.h"

#include "attention_lab/prompt_batch.h"
#include "attention_lab/tokenizer.h"
#include "attention_lab/transformer_forward.h"

#include <memory>
#include <vector>

namespace attention_lab::fuzz {

namespace {

// Every byte's character (GPT-2's bytes_to_unicode) and a few merges, so any
// text encodes.
std::shared_ptr<const Tokenizer> built_in() {
  static const std::shared_ptr<const Tokenizer> t = [] {
    std::string vocab = "{";
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      const int c = printable ? b : 256 + n++;
      std::string s;
      if (c < 0x80) s = (c == '"' || c == '\\') ? std::string("\\") + static_cast<char>(c) : std::string(1, static_cast<char>(c));
      else s = {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
      vocab += (b ? ",\"" : "\"") + s + "\":" + std::to_string(b);
    }
    const char* merges = "#version: 0.2\nĠ t\nh e\nĠt he\ni n\nĠ a\ne r\no n\nĠ s\nĠ w\nĠ ĠĠ\nĠ Ġ\nĠĠ Ġ\n";
    const char* made[] = {"Ġt", "he", "Ġthe", "in", "Ġa", "er", "on", "Ġs", "Ġw", "ĠĠ", "ĠĠĠ"};
    int id = 256;
    for (const char* m : made) vocab += ",\"" + std::string(m) + "\":" + std::to_string(id++);
    vocab += "}";
    std::string error;
    auto tok = Tokenizer::from_vocab_and_merges(vocab, merges, kTokenizerFuzzVocabSize, error);
    if (!tok) std::abort();  // the built-in files are wrong
    return tok;
  }();
  return t;
}

std::string one_line(const std::string& what, const std::string& error) {
  if (error.empty()) return what + " refused without a message";
  if (error.find('\n') != std::string::npos) return what + " refused with a message of several lines: " + error;
  return "";
}

}  // namespace

std::string check_sentencepiece_input(std::string_view bytes) {
  std::string error;
  const auto t = Tokenizer::from_sentencepiece_model(std::string(bytes), kTokenizerFuzzVocabSize, true, false, error);
  if (!t) return one_line("tokenizer.model", error);
  const Encoded e = t->encode("The quick  brown fox, Straße 東京 🙂\tend");
  if (!e.error.empty()) return one_line("text", e.error);
  for (const int id : e.ids)
    if (id < 0 || id >= kTokenizerFuzzVocabSize) return "id " + std::to_string(id) + " outside the vocabulary";
  (void)t->decode(e.ids);
  for (const int id : e.ids) (void)t->label(id);
  return "";
}

std::string check_tokenizer_input(std::string_view bytes) {
  std::vector<std::string_view> parts;  // the files, then the text
  const std::size_t first = bytes.find('\0');
  const std::size_t second = first == std::string_view::npos ? first : bytes.find('\0', first + 1);
  if (first == std::string_view::npos) {
    parts = {bytes};
  } else if (second == std::string_view::npos) {
    parts = {bytes.substr(0, first), bytes.substr(first + 1)};
  } else {
    parts = {bytes.substr(0, first), bytes.substr(first + 1, second - first - 1), bytes.substr(second + 1)};
  }
  std::shared_ptr<const Tokenizer> t;
  std::string error;
  bool round_trip = true;
  if (parts.size() == 3) {
    t = Tokenizer::from_vocab_and_merges(std::string(parts[0]), parts[1], kTokenizerFuzzVocabSize, error);
  } else if (parts.size() == 2) {
    t = Tokenizer::from_tokenizer_json(std::string(parts[0]), kTokenizerFuzzVocabSize, error);
    round_trip = false;
  } else {
    t = built_in();
  }
  if (!t) return one_line("the files were", error);
  if (t->kind() != "byte-level BPE" && t->kind() != "SentencePiece-style BPE") return "loaded as " + t->kind();
  const std::string text(parts.back());
  const Encoded e = t->encode(text);
  if (e.ids.empty()) return text.empty() ? "" : one_line("the text was", e.error);
  if (!e.error.empty()) return "ids with an error message: " + e.error;
  for (const int id : e.ids) {
    if (id < 0 || id >= t->vocab_size()) return "id " + std::to_string(id) + " out of the vocabulary";
    (void)t->label(id);
  }
  if (t->encode(text).ids != e.ids) return "the second encoding (from the cache) differs";
  const std::string back = t->decode(e.ids);
  if (round_trip && back != text) return "decode(encode(text)) is not the text";
  return "";
}

std::string check_prompts_input(std::string_view bytes) {
  ModelConfig c;
  c.vocab = kTokenizerFuzzVocabSize;
  c.max_positions = 64;  // long lines are refused by their length
  for (const PromptLayout layout : {PromptLayout::Single, PromptLayout::OneLength, PromptLayout::Pairs}) {
    std::vector<Prompt> prompts;
    const std::string error = read_prompts(bytes, "prompts.txt", *built_in(), c, layout, prompts, 50);
    if (!error.empty()) {
      if (std::string e = one_line("prompts.txt", error); !e.empty()) return e;
      if (error.find("prompts.txt") == std::string::npos) return "a message without the file's name: " + error;
      continue;
    }
    if (prompts.empty() || prompts.size() > 50) return std::to_string(prompts.size()) + " prompts read";
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const Prompt& p = prompts[i];
      if (i && p.line <= prompts[i - 1].line) return "lines out of order";
      if (!check_ids(c, p.ids).empty() || p.ids.empty()) return "line " + std::to_string(p.line) + ": ids the model refuses";
      if (layout == PromptLayout::Pairs && p.corrupted_ids.size() != p.ids.size()) return "a pair of two lengths";
      if (layout != PromptLayout::Pairs && !p.corrupted_ids.empty()) return "a corrupted prompt outside pairs";
      if (layout == PromptLayout::OneLength && p.ids.size() != prompts[0].ids.size()) return "a batch of two lengths";
    }
  }
  return "";
}

}  // namespace attention_lab::fuzz
