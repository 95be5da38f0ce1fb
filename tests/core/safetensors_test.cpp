// The safetensors reader (core/src/transformer/safetensors.cpp) on files a
// stranger could send: every malformed header is refused with a message
// naming the file (and the tensor at fault), never a crash or a read outside
// the bytes; valid files convert F16 / BF16 / integers exactly.

#include "attention_lab/excerpt.h"
#include "attention_lab/safetensors.h"

#include "temp_dir.h"
#include "model_fixture_paths.h"
#include "unit_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace attention_lab;
using attention_lab::test::TempDir;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using attention_lab::test::kFixtures;
constexpr const char* kName = "x.safetensors";

using attention_lab::test::u64_le;

// A file: the 8-byte little-endian header length, the header (padded with
// spaces to a multiple of 8, as writers do, so the data starts 8-aligned),
// then the data.
std::string st_file(const std::string& header, const std::string& data = {}) {
  std::string h = header;
  while (h.size() % 8 != 0) h += ' ';
  return u64_le(h.size()) + h + data;
}
std::string st_json(const json& header, const std::string& data = {}) { return st_file(header.dump(), data); }

json entry(const char* dtype, json shape, std::uint64_t begin, std::uint64_t end) {
  return json{{"dtype", dtype}, {"shape", std::move(shape)}, {"data_offsets", {begin, end}}};
}

template <typename T>
std::string raw(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::shared_ptr<const SafetensorsFile> parse(const std::string& bytes, std::string& error) {
  return SafetensorsFile::parse(bytes, kName, error);
}

// Refused, with a message that names the file, is one short line and holds every part given.
::testing::AssertionResult refused(const std::string& bytes, std::initializer_list<const char*> parts) {
  std::string error;
  const auto file = parse(bytes, error);
  if (file) return ::testing::AssertionFailure() << "accepted";
  if (error.rfind(std::string(kName) + ": ", 0) != 0)
    return ::testing::AssertionFailure() << "the message does not start with the file name: " << error;
  if (error.size() > kMaxErrorMessageBytes + 8) return ::testing::AssertionFailure() << "long message: " << error;
  for (const char ch : error)
    if (static_cast<unsigned char>(ch) < 0x20) return ::testing::AssertionFailure() << "control character: " << error;
  for (const char* part : parts)
    if (error.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "no \"" << part << "\" in: " << error;
  return ::testing::AssertionSuccess() << error;
}

std::shared_ptr<const SafetensorsFile> accepted(const std::string& bytes) {
  std::string error;
  auto file = parse(bytes, error);
  EXPECT_TRUE(file) << error;
  EXPECT_EQ(error, "");
  return file;
}

bool same_bits(float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); }

}  // namespace

// [SECTION] The frame: header length and size

TEST(SafetensorsFrame, FewerThanEightBytesIsRefused) {
  EXPECT_TRUE(refused("", {"expected at least 8 bytes", "found 0"}));
  EXPECT_TRUE(refused("abc", {"expected at least 8 bytes", "found 3"}));
  EXPECT_TRUE(refused(std::string(7, '\0'), {"found 7"}));
}

TEST(SafetensorsFrame, AHeaderLengthPastTheEndIsRefusedAsTruncated) {
  const std::string good = st_json(json{{"w", entry("F32", {2}, 0, 8)}}, raw<float>({1, 2}));
  // The header itself cut short.
  EXPECT_TRUE(refused(good.substr(0, 20), {"header length", "runs past the end of the file (20 bytes; truncated?)"}));
  EXPECT_TRUE(refused(u64_le(1), {"header length 1 runs past the end", "(8 bytes"}));
}

TEST(SafetensorsFrame, AnAbsurdHeaderLengthIsRefusedBeforeAnythingIsRead) {
  EXPECT_TRUE(refused(u64_le(kMaxSafetensorsHeaderBytes + 1) + "{}",
                      {"header length 104857601", "expected at most 104857600 bytes", "is this a safetensors file?"}));
  EXPECT_TRUE(refused(u64_le(std::numeric_limits<std::uint64_t>::max()) + "{}",
                      {"header length 18446744073709551615", "expected at most"}));
  // Text that is not safetensors at all: "PK\3\4…" (a zip) reads as a huge length.
  EXPECT_TRUE(refused(std::string("PK\x03\x04\x14\x00\x00\x00rest", 12), {"expected at most"}));
}

TEST(SafetensorsFrame, AnEmptyHeaderObjectIsAValidFileWithNoTensors) {
  const auto file = accepted(st_file("{}"));
  ASSERT_TRUE(file);
  EXPECT_TRUE(file->tensors().empty());
  EXPECT_TRUE(file->metadata().empty());
  EXPECT_EQ(file->find("w"), nullptr);
  EXPECT_EQ(file->file_bytes(), 16u);
  EXPECT_EQ(file->name(), kName);
  // Unpadded and with trailing data nobody names: still fine.
  EXPECT_TRUE(accepted(u64_le(2) + "{}" + "garbage"));
}

// [SECTION] The header JSON

TEST(SafetensorsHeader, AHeaderThatIsNotJsonIsRefused) {
  EXPECT_TRUE(refused(st_file("{not json"), {"x.safetensors: header: invalid JSON"}));
  EXPECT_TRUE(refused(st_file(std::string("{\"w\":\xff}")), {"header: invalid JSON"}));
  EXPECT_TRUE(refused(u64_le(0), {"header: invalid JSON"}));  // zero-length header
}

TEST(SafetensorsHeader, AHeaderThatIsNotAnObjectIsRefused) {
  EXPECT_TRUE(refused(st_file("[1, 2]"), {"header: expected a JSON object of tensors"}));
  EXPECT_TRUE(refused(st_file("\"w\""), {"header: expected a JSON object of tensors"}));
  EXPECT_TRUE(refused(st_file("null"), {"header: expected a JSON object of tensors"}));
}

TEST(SafetensorsHeader, ANestingTooDeepIsRefused) {
  std::string deep = "{\"__metadata__\":" + std::string(5000, '[') + std::string(5000, ']') + "}";
  EXPECT_TRUE(refused(st_file(deep), {"nested at most 256 deep"}));
}

TEST(SafetensorsHeader, ATensorEntryThatIsNotAnObjectIsRefusedNamingIt) {
  EXPECT_TRUE(refused(st_json(json{{"w.weight", 3}}), {"tensor 'w.weight': expected an object with dtype"}));
  EXPECT_TRUE(refused(st_json(json{{"w.weight", json::array()}}), {"tensor 'w.weight': expected an object"}));
}

TEST(SafetensorsHeader, AnUnknownKeyInATensorEntryIsRefusedNamingTensorAndKey) {
  json e = entry("F32", {1}, 0, 4);
  e["strides"] = {1};
  EXPECT_TRUE(refused(st_json(json{{"w", e}}, raw<float>({1})),
                      {"tensor 'w': unknown key 'strides' (expected dtype, shape, data_offsets)"}));
}

TEST(SafetensorsHeader, AMissingFieldIsRefusedNamingTheTensor) {
  EXPECT_TRUE(refused(st_json(json{{"w", json{{"shape", {1}}, {"data_offsets", {0, 4}}}}}, raw<float>({1})),
                      {"tensor 'w': expected a \"dtype\" string"}));
  EXPECT_TRUE(refused(st_json(json{{"w", json{{"dtype", "F32"}, {"data_offsets", {0, 4}}}}}, raw<float>({1})),
                      {"tensor 'w': expected a \"shape\" list"}));
  EXPECT_TRUE(refused(st_json(json{{"w", json{{"dtype", "F32"}, {"shape", {1}}}}}, raw<float>({1})),
                      {"tensor 'w': expected \"data_offsets\": [begin, end]"}));
  EXPECT_TRUE(refused(st_json(json{{"w", json{{"dtype", 32}, {"shape", {1}}, {"data_offsets", {0, 4}}}}}, raw<float>({1})),
                      {"tensor 'w': expected a \"dtype\" string"}));
}

TEST(SafetensorsHeader, AnUnknownDtypeIsRefusedListingTheKnownOnes) {
  for (const char* dtype : {"F8_E4M3", "F8_E5M2", "U16", "C64", "f32", ""}) {
    EXPECT_TRUE(refused(st_json(json{{"w", entry(dtype, {1}, 0, 1)}}, "\x01"),
                        {"tensor 'w': unknown dtype '", "(expected one of F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)"}))
        << dtype;
  }
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F8_E4M3", {1}, 0, 1)}}, "\x01"), {"unknown dtype 'F8_E4M3'"}));
}

TEST(SafetensorsHeader, ABadShapeIsRefusedNamingTheTensorAndTheDimension) {
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F32", {2, -1}, 0, 8)}}, raw<float>({1, 2})),
                      {"tensor 'w': shape[1]: expected a non-negative integer, found -1"}));
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F32", {1.5}, 0, 4)}}, raw<float>({1})),
                      {"tensor 'w': shape[0]: expected a non-negative integer, found 1.5"}));
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F32", {"2"}, 0, 8)}}, raw<float>({1, 2})),
                      {"tensor 'w': shape[0]: expected a non-negative integer, found \"2\""}));
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F32", json{{"n", 1}}, 0, 4)}}, raw<float>({1})),
                      {"tensor 'w': expected a \"shape\" list"}));
  EXPECT_TRUE(refused(st_json(json{{"w", entry("U8", {1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, 1)}}, "\x01"),
                      {"tensor 'w': expected at most 8 dimensions, found 9"}));
  // Eight is fine.
  EXPECT_TRUE(accepted(st_json(json{{"w", entry("U8", {1, 1, 1, 1, 1, 1, 1, 1}, 0, 1)}}, "\x01")));
}

TEST(SafetensorsHeader, AnElementCountThatOverflowsIsRefused) {
  const std::uint64_t big = 1ull << 40;
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F32", {big, big}, 0, 0)}}),
                      {"tensor 'w': shape [1099511627776, 1099511627776] of F32 needs more bytes than a file can hold"}));
  // Fits in 64 bits as a count, not as bytes.
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F64", {1ull << 62}, 0, 0)}}), {"needs more bytes than a file can hold"}));
  // A dimension beyond int64.
  EXPECT_TRUE(refused(st_json(json{{"w", entry("U8", {std::numeric_limits<std::uint64_t>::max()}, 0, 0)}}),
                      {"tensor 'w'", "more bytes than a file can hold"}));
}

TEST(SafetensorsHeader, HugeDimensionsBesideAZeroMakeAnEmptyTensor) {
  // 3 · 2^62 fits an unsigned count but not int64: numel() must still say 0, not overflow.
  const auto file = accepted(st_json(json{{"w", entry("U8", {3, 1ull << 62, 0}, 0, 0)}}));
  ASSERT_TRUE(file);
  ASSERT_EQ(file->tensors().size(), 1u);
  EXPECT_EQ(file->tensors()[0].numel(), 0);
  EXPECT_EQ(file->bytes(file->tensors()[0]).size(), 0u);
}

// [SECTION] data_offsets

TEST(SafetensorsOffsets, WrongArityIsRefused) {
  const std::string data = raw<float>({1, 2});
  EXPECT_TRUE(refused(st_json(json{{"w", json{{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0}}}}}, data),
                      {"tensor 'w': expected \"data_offsets\": [begin, end]"}));
  EXPECT_TRUE(refused(st_json(json{{"w", json{{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 4, 8}}}}}, data),
                      {"tensor 'w': expected \"data_offsets\": [begin, end]"}));
  EXPECT_TRUE(refused(st_json(json{{"w", json{{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", 8}}}}, data),
                      {"tensor 'w': expected \"data_offsets\": [begin, end]"}));
  EXPECT_TRUE(refused(st_json(json{{"w", json{{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {-8, 0}}}}}, data),
                      {"tensor 'w': data_offsets[0]: expected a non-negative integer, found -8"}));
  EXPECT_TRUE(refused(st_json(json{{"w", json{{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8.0}}}}}, data),
                      {"tensor 'w': data_offsets[1]: expected a non-negative integer"}));
}

TEST(SafetensorsOffsets, EndBeforeBeginIsRefused) {
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F32", {0}, 8, 4)}}, raw<float>({1, 2, 3})),
                      {"tensor 'w': data_offsets [8, 4): expected begin ≤ end"}));
}

TEST(SafetensorsOffsets, AnEndPastTheDataIsRefusedAsTruncated) {
  EXPECT_TRUE(refused(st_json(json{{"a", entry("F32", {2}, 0, 8)}, {"w", entry("F32", {4}, 8, 24)}}, raw<float>({1, 2, 3})),
                      {"tensor 'w': data_offsets [8, 24) end past the data (12 bytes; truncated?)"}));
  // Offsets near 2^64 do not wrap around.
  const std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  EXPECT_TRUE(refused(st_json(json{{"w", entry("U8", {2}, top - 2, top)}}, "abcd"),
                      {"tensor 'w': data_offsets [18446744073709551613, 18446744073709551615) end past the data"}));
  // A zero-size tensor beyond the data is out of it too.
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F32", {0}, 100, 100)}}, "abcd"), {"tensor 'w'", "end past the data (4 bytes"}));
}

TEST(SafetensorsOffsets, ASpanNotMatchingTheShapeIsRefused) {
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F32", {2}, 0, 4)}}, raw<float>({1, 2})),
                      {"tensor 'w': shape [2] of F32 needs 8 bytes, found data_offsets spanning 4"}));
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F16", {2, 3}, 0, 16)}}, std::string(16, '\0')),
                      {"tensor 'w': shape [2, 3] of F16 needs 12 bytes, found data_offsets spanning 16"}));
  EXPECT_TRUE(refused(st_json(json{{"w", entry("F32", json::array(), 0, 0)}}), {"shape [] of F32 needs 4 bytes"}));
}

TEST(SafetensorsOffsets, OverlappingTensorsAreRefusedNamingBoth) {
  EXPECT_TRUE(refused(st_json(json{{"first", entry("F32", {2}, 0, 8)}, {"second", entry("F32", {2}, 4, 12)}},
                              raw<float>({1, 2, 3})),
                      {"tensors 'first' and 'second': data_offsets overlap ([0, 8) and [4, 12))"}));
  // Same range twice.
  EXPECT_TRUE(refused(st_json(json{{"a", entry("F32", {2}, 0, 8)}, {"b", entry("F32", {2}, 0, 8)}}, raw<float>({1, 2})),
                      {"tensors '", "'a'", "'b'", "data_offsets overlap ([0, 8) and [0, 8))"}));
  // One inside another.
  EXPECT_TRUE(refused(st_json(json{{"outer", entry("F32", {4}, 0, 16)}, {"inner", entry("F32", {1}, 4, 8)}},
                              raw<float>({1, 2, 3, 4})),
                      {"tensors 'outer' and 'inner': data_offsets overlap"}));
}

TEST(SafetensorsOffsets, AnOverlapIsFoundWhenAZeroSizeTensorSitsBetween) {
  // Sorted by begin: big [0, 16), empty [4, 4), late [8, 12): the empty tensor
  // must not hide that late lies inside big.
  EXPECT_TRUE(refused(st_json(json{{"big", entry("F32", {4}, 0, 16)},
                                   {"empty", entry("F32", {0}, 4, 4)},
                                   {"late", entry("F32", {1}, 8, 12)}},
                              raw<float>({1, 2, 3, 4})),
                      {"tensors 'big' and 'late': data_offsets overlap ([0, 16) and [8, 12))"}));
  // A long tensor followed by a short one inside it, then one after both.
  EXPECT_TRUE(refused(st_json(json{{"long", entry("U8", {10}, 0, 10)},
                                   {"short", entry("U8", {1}, 1, 2)},
                                   {"after", entry("U8", {1}, 10, 11)}},
                              std::string(11, 'x')),
                      {"tensors 'long' and 'short'"}));
}

TEST(SafetensorsOffsets, ZeroSizeTensorsAreValidAnywhereInTheData) {
  const auto file = accepted(st_json(json{{"w", entry("F32", {2}, 0, 8)},
                                          {"empty_inside", entry("F32", {0}, 4, 4)},
                                          {"empty_rows", entry("F16", {0, 5}, 8, 8)},
                                          {"empty_start", entry("I64", {3, 0}, 0, 0)}},
                                     raw<float>({1.5f, -2})));
  ASSERT_TRUE(file);
  ASSERT_EQ(file->tensors().size(), 4u);
  for (const char* name : {"empty_inside", "empty_rows", "empty_start"}) {
    const TensorInfo* t = file->find(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->numel(), 0) << name;
    EXPECT_EQ(file->bytes(*t).size(), 0u) << name;
    std::vector<float> f{9};
    std::string error;
    EXPECT_TRUE(file->read_floats(*t, f, error)) << error;
    EXPECT_TRUE(f.empty()) << name;
  }
  // And a file holding only an empty tensor and no data.
  EXPECT_TRUE(accepted(st_json(json{{"e", entry("BF16", {0}, 0, 0)}})));
}

TEST(SafetensorsOffsets, TensorsComeInTheOrderOfTheirData) {
  const auto file = accepted(st_json(json{{"a", entry("F32", {1}, 8, 12)}, {"b", entry("F32", {1}, 0, 4)},
                                          {"c", entry("F32", {1}, 4, 8)}},
                                     raw<float>({1, 2, 3})));
  ASSERT_TRUE(file);
  ASSERT_EQ(file->tensors().size(), 3u);
  EXPECT_EQ(file->tensors()[0].name, "b");
  EXPECT_EQ(file->tensors()[1].name, "c");
  EXPECT_EQ(file->tensors()[2].name, "a");
  EXPECT_EQ(file->find("a")->begin, 8u);
  // Gaps between tensors are allowed (alignment padding).
  EXPECT_TRUE(accepted(st_json(json{{"a", entry("U8", {1}, 0, 1)}, {"b", entry("F32", {1}, 4, 8)}}, std::string(8, '\0'))));
}

// [SECTION] __metadata__

TEST(SafetensorsMetadata, MetadataMustBeAnObjectOfStrings) {
  EXPECT_TRUE(refused(st_json(json{{"__metadata__", "pt"}}), {"x.safetensors: __metadata__: expected an object of strings"}));
  EXPECT_TRUE(refused(st_json(json{{"__metadata__", json::array({"pt"})}}), {"__metadata__: expected an object of strings"}));
  EXPECT_TRUE(refused(st_json(json{{"__metadata__", json{{"format", "pt"}, {"step", 1000}}}}),
                      {"__metadata__ 'step': expected a string"}));
  EXPECT_TRUE(refused(st_json(json{{"__metadata__", json{{"nested", json{{"a", "b"}}}}}}),
                      {"__metadata__ 'nested': expected a string"}));
}

TEST(SafetensorsMetadata, MetadataIsReadAndIsNotATensor) {
  const auto file = accepted(st_json(json{{"__metadata__", json{{"format", "pt"}, {"note", "é \u0001"}}},
                                          {"w", entry("F32", {1}, 0, 4)}},
                                     raw<float>({7})));
  ASSERT_TRUE(file);
  EXPECT_EQ(file->metadata().size(), 2u);
  EXPECT_EQ(file->metadata().at("format"), "pt");
  EXPECT_EQ(file->metadata().at("note"), "é \u0001");
  EXPECT_EQ(file->tensors().size(), 1u);
  EXPECT_EQ(file->find("__metadata__"), nullptr);
}

// [SECTION] Messages

TEST(SafetensorsMessages, AHugeTensorNameIsQuotedShortAndTheMessageIsCapped) {
  const std::string name = std::string(100000, 'n') + "\x1b[2J";
  std::string error;
  EXPECT_FALSE(parse(st_json(json{{name, entry("F8_E4M3", {1}, 0, 1)}}, "\x01"), error));
  EXPECT_LE(error.size(), kMaxErrorMessageBytes + 8);
  EXPECT_EQ(error.rfind("x.safetensors: tensor 'nnnn", 0), 0u) << error;
  EXPECT_NE(error.find("unknown dtype"), std::string::npos) << error;
  for (const char ch : error) EXPECT_GE(static_cast<unsigned char>(ch), 0x20);
  // Two long names in an overlap message: still capped.
  EXPECT_TRUE(refused(st_json(json{{std::string(5000, 'a'), entry("U8", {2}, 0, 2)}, {std::string(5000, 'b'), entry("U8", {2}, 1, 3)}},
                              "xyz"),
                      {"tensors 'aaaa", "' and 'bbbb"}));
}

// [SECTION] Values

TEST(SafetensorsValues, HalfConvertsExactlyIncludingSubnormalsInfinitiesNaNAndNegativeZero) {
  struct Case {
    std::uint16_t half;
    std::uint32_t float_bits;
  };
  const Case cases[] = {
      {0x0000, 0x00000000},  // +0
      {0x8000, 0x80000000},  // −0
      {0x3c00, 0x3f800000},  // 1
      {0xc000, 0xc0000000},  // −2
      {0x3555, 0x3eaaa000},  // 0.333251953125
      {0x7bff, 0x477fe000},  // 65504, the largest half
      {0x0400, 0x38800000},  // 2^-14, the smallest normal
      {0x03ff, 0x387fc000},  // the largest subnormal: 1023 · 2^-24
      {0x0001, 0x33800000},  // the smallest subnormal: 2^-24
      {0x8001, 0xb3800000},  // −2^-24
      {0x0200, 0x38000000},  // 2^-15
      {0x7c00, 0x7f800000},  // +∞
      {0xfc00, 0xff800000},  // −∞
      {0x7e00, 0x7fc00000},  // quiet NaN
      {0x7c01, 0x7f802000},  // signalling NaN, payload kept
      {0xfe00, 0xffc00000},  // −NaN
  };
  std::vector<std::uint16_t> halves;
  for (const auto& c : cases) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(half_to_float(c.half)), c.float_bits) << std::hex << c.half;
    halves.push_back(c.half);
  }
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x03ff), 1023.0f * std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));

  // The same through a file, as floats and as doubles.
  const auto n = static_cast<std::uint64_t>(halves.size());
  const auto file = accepted(st_json(json{{"h", entry("F16", {n}, 0, 2 * n)}}, raw(halves)));
  ASSERT_TRUE(file);
  std::vector<float> f;
  std::vector<double> d;
  std::string error;
  ASSERT_TRUE(file->read_floats(*file->find("h"), f, error)) << error;
  ASSERT_TRUE(file->read_doubles(*file->find("h"), d, error)) << error;
  ASSERT_EQ(f.size(), halves.size());
  ASSERT_EQ(d.size(), halves.size());
  for (std::size_t i = 0; i < halves.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(f[i]), cases[i].float_bits) << i;
    if (std::isnan(f[i])) EXPECT_TRUE(std::isnan(d[i])) << i;
    else EXPECT_TRUE(d[i] == static_cast<double>(f[i]) && std::signbit(d[i]) == std::signbit(f[i])) << i;
  }
  EXPECT_EQ(file->f32_in_place(*file->find("h")), nullptr);
}

TEST(SafetensorsValues, EveryHalfRoundTripsThroughFloat) {
  // Every finite half converts to the float that converts back to it (checked
  // against the float's value: sign, exponent and mantissa by arithmetic).
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<std::uint16_t>(h));
    const std::uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    const float sign = (h & 0x8000) ? -1.0f : 1.0f;
    if (exponent == 0x1f) {
      EXPECT_TRUE(mantissa ? std::isnan(f) : std::isinf(f)) << h;
      continue;
    }
    const float want = exponent == 0 ? sign * std::ldexp(static_cast<float>(mantissa), -24)
                                     : sign * std::ldexp(1.0f + static_cast<float>(mantissa) / 1024.0f, static_cast<int>(exponent) - 15);
    ASSERT_TRUE(same_bits(f, want)) << std::hex << h << ": " << f << " vs " << want;
  }
}

TEST(SafetensorsValues, BFloat16ConvertsExactly) {
  struct Case {
    std::uint16_t bf16;
    std::uint32_t float_bits;
  };
  const Case cases[] = {
      {0x0000, 0x00000000}, {0x8000, 0x80000000}, {0x3f80, 0x3f800000}, {0xc000, 0xc0000000},
      {0x4049, 0x40490000},  // 3.140625
      {0x7f7f, 0x7f7f0000},  // the largest bfloat16
      {0x0080, 0x00800000},  // the smallest normal float
      {0x0001, 0x00010000},  // a subnormal
      {0x7f80, 0x7f800000}, {0xff80, 0xff800000}, {0x7fc0, 0x7fc00000}, {0xffc1, 0xffc10000},
  };
  std::vector<std::uint16_t> values;
  for (const auto& c : cases) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(bfloat16_to_float(c.bf16)), c.float_bits) << std::hex << c.bf16;
    values.push_back(c.bf16);
  }
  const auto n = static_cast<std::uint64_t>(values.size());
  const auto file = accepted(st_json(json{{"b", entry("BF16", {3, n / 3}, 0, 2 * n)}}, raw(values)));
  ASSERT_TRUE(file);
  std::vector<float> f;
  std::string error;
  ASSERT_TRUE(file->read_floats(*file->find("b"), f, error)) << error;
  ASSERT_EQ(f.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(std::bit_cast<std::uint32_t>(f[i]), cases[i].float_bits) << i;
}

TEST(SafetensorsValues, AlignedF32IsUsedInPlace) {
  const std::vector<float> values{1.5f, -0.0f, std::numeric_limits<float>::infinity(), 3e-42f};
  const std::string bytes = st_json(json{{"w", entry("F32", {2, 2}, 0, 16)}}, raw(values));
  const auto file = accepted(bytes);
  ASSERT_TRUE(file);
  const TensorInfo& t = *file->find("w");
  const float* in_place = file->f32_in_place(t);
  ASSERT_NE(in_place, nullptr);
  EXPECT_EQ(reinterpret_cast<const void*>(in_place), reinterpret_cast<const void*>(file->bytes(t).data()));
  std::vector<float> copy;
  std::string error;
  ASSERT_TRUE(file->read_floats(t, copy, error)) << error;
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_TRUE(same_bits(in_place[i], values[i])) << i;
    EXPECT_TRUE(same_bits(copy[i], values[i])) << i;
  }
  EXPECT_EQ(t.numel(), 4);
  EXPECT_EQ(t.shape_text(), "[2, 2]");
  EXPECT_EQ(t.dtype, DType::F32);
}

TEST(SafetensorsValues, UnalignedF32IsNotInPlaceButReads) {
  const std::vector<float> values{1.25f, -7.0f, 1e30f};
  const std::string data = std::string("\x05\x06", 2) + raw(values);
  const auto file = accepted(st_json(json{{"pad", entry("U8", {2}, 0, 2)}, {"w", entry("F32", {3}, 2, 14)}}, data));
  ASSERT_TRUE(file);
  const TensorInfo& t = *file->find("w");
  EXPECT_EQ(file->f32_in_place(t), nullptr);
  std::vector<float> f;
  std::vector<double> d;
  std::string error;
  ASSERT_TRUE(file->read_floats(t, f, error)) << error;
  ASSERT_TRUE(file->read_doubles(t, d, error)) << error;
  ASSERT_EQ(f.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(same_bits(f[i], values[i])) << i;
    EXPECT_EQ(d[i], static_cast<double>(values[i])) << i;
  }
  std::vector<float> pad;
  ASSERT_TRUE(file->read_floats(*file->find("pad"), pad, error));
  EXPECT_EQ(pad, (std::vector<float>{5, 6}));
}

TEST(SafetensorsValues, F64AndIntegersConvert) {
  const std::vector<double> f64{0.1, -1e300, 2.5};
  const std::vector<std::int64_t> i64{-3, (1ll << 53), 7};
  const std::vector<std::int32_t> i32{-2147483647 - 1, 5};
  const std::vector<std::int16_t> i16{-32768, 32767};
  const std::vector<std::int8_t> i8{-128, 127};
  const std::vector<std::uint8_t> u8{0, 255};
  std::string data = raw(f64) + raw(i64) + raw(i32) + raw(i16) + raw(i8) + raw(u8);
  const auto file = accepted(st_json(json{{"f64", entry("F64", {3}, 0, 24)}, {"i64", entry("I64", {3}, 24, 48)},
                                          {"i32", entry("I32", {2}, 48, 56)}, {"i16", entry("I16", {2}, 56, 60)},
                                          {"i8", entry("I8", {2}, 60, 62)}, {"u8", entry("U8", {2}, 62, 64)}},
                                     data));
  ASSERT_TRUE(file);
  std::vector<double> d;
  std::string error;
  ASSERT_TRUE(file->read_doubles(*file->find("f64"), d, error));
  EXPECT_EQ(d, f64);
  ASSERT_TRUE(file->read_doubles(*file->find("i64"), d, error));
  EXPECT_EQ(d, (std::vector<double>{-3, 9007199254740992.0, 7}));
  ASSERT_TRUE(file->read_doubles(*file->find("i32"), d, error));
  EXPECT_EQ(d, (std::vector<double>{-2147483648.0, 5}));
  ASSERT_TRUE(file->read_doubles(*file->find("i16"), d, error));
  EXPECT_EQ(d, (std::vector<double>{-32768, 32767}));
  ASSERT_TRUE(file->read_doubles(*file->find("i8"), d, error));
  EXPECT_EQ(d, (std::vector<double>{-128, 127}));
  ASSERT_TRUE(file->read_doubles(*file->find("u8"), d, error));
  EXPECT_EQ(d, (std::vector<double>{0, 255}));
  std::vector<float> f;
  ASSERT_TRUE(file->read_floats(*file->find("f64"), f, error));
  EXPECT_EQ(f[0], 0.1f);
  EXPECT_TRUE(std::isinf(f[1]) && f[1] < 0);  // −1e300 does not fit a float
  EXPECT_EQ(file->f32_in_place(*file->find("i32")), nullptr);
  EXPECT_STREQ(to_string(DType::BF16), "BF16");
  EXPECT_EQ(dtype_bytes(DType::I16), 2u);
  EXPECT_TRUE(is_float(DType::F16));
  EXPECT_FALSE(is_float(DType::I8));
}

TEST(SafetensorsValues, BoolDoesNotReadAsNumbersAndSaysWhich) {
  const auto file = accepted(st_json(json{{"attn.mask", entry("BOOL", {2, 2}, 0, 4)}}, std::string("\x01\x00\x00\x01", 4)));
  ASSERT_TRUE(file);
  const TensorInfo& t = *file->find("attn.mask");
  std::vector<float> f{1, 2};
  std::string error;
  EXPECT_FALSE(file->read_floats(t, f, error));
  EXPECT_EQ(error, "x.safetensors: tensor 'attn.mask': expected numbers, found BOOL");
  EXPECT_TRUE(f.empty());
  std::vector<double> d;
  error.clear();
  EXPECT_FALSE(file->read_doubles(t, d, error));
  EXPECT_NE(error.find("tensor 'attn.mask'"), std::string::npos);
  EXPECT_EQ(file->bytes(t).size(), 4u);
}

// [SECTION] open(): files on disk

TEST(SafetensorsOpen, AValidFileMapsAndReads) {
  TempDir dir;
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  test::write_text(dir / "m.safetensors",
                   st_json(json{{"__metadata__", json{{"format", "pt"}}}, {"w", entry("F32", {2, 3}, 0, 24)}}, raw(values)));
  std::string error;
  const auto file = SafetensorsFile::open(dir / "m.safetensors", error);
  ASSERT_TRUE(file) << error;
  EXPECT_EQ(file->name(), (dir / "m.safetensors").string());
  const float* p = file->f32_in_place(*file->find("w"));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::vector<float>(p, p + 6), values);
  EXPECT_EQ(file->metadata().at("format"), "pt");
}

TEST(SafetensorsOpen, BadFilesOnDiskAreRefusedNamingThePath) {
  TempDir dir;
  std::string error;
  const fs::path missing = dir / "missing.safetensors";
  EXPECT_FALSE(SafetensorsFile::open(missing, error));
  EXPECT_EQ(error.rfind(missing.string() + ": cannot open: ", 0), 0u) << error;

  EXPECT_FALSE(SafetensorsFile::open(dir.path(), error));
  EXPECT_EQ(error, dir.path().string() + ": expected a regular file");

  test::write_text(dir / "empty.safetensors", "");
  EXPECT_FALSE(SafetensorsFile::open(dir / "empty.safetensors", error));
  EXPECT_EQ(error, (dir / "empty.safetensors").string() + ": expected at least 8 bytes (the header length), found 0");

  test::write_text(dir / "short.safetensors", "abc");
  EXPECT_FALSE(SafetensorsFile::open(dir / "short.safetensors", error));
  EXPECT_NE(error.find("short.safetensors: expected at least 8 bytes"), std::string::npos) << error;

  test::write_text(dir / "json.safetensors", "{\"model_type\": \"gpt2\"}");
  EXPECT_FALSE(SafetensorsFile::open(dir / "json.safetensors", error));
  EXPECT_NE(error.find("json.safetensors: header length"), std::string::npos) << error;
  EXPECT_NE(error.find("is this a safetensors file?"), std::string::npos) << error;
}

TEST(SafetensorsOpen, ANamedPipeIsRefusedWithoutWaitingForAWriter) {
  TempDir dir;
  const fs::path fifo = dir / "pipe.safetensors";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string error;
  EXPECT_FALSE(SafetensorsFile::open(fifo, error));
  EXPECT_EQ(error, fifo.string() + ": expected a regular file");
}

TEST(SafetensorsOpen, ATruncatedFixtureIsRefusedAsTruncated) {
  TempDir dir;
  const std::string whole = test::read_text(kFixtures / "llama-gqa" / "model.safetensors");
  ASSERT_GT(whole.size(), 4000u);
  std::string error;
  ASSERT_TRUE(SafetensorsFile::open(kFixtures / "llama-gqa" / "model.safetensors", error)) << error;

  // Cut inside the header.
  test::write_text(dir / "a.safetensors", whole.substr(0, 100));
  EXPECT_FALSE(SafetensorsFile::open(dir / "a.safetensors", error));
  EXPECT_NE(error.find("a.safetensors: header length"), std::string::npos) << error;
  EXPECT_NE(error.find("truncated?"), std::string::npos) << error;

  // Cut in the data: the first tensor past the end is named.
  test::write_text(dir / "b.safetensors", whole.substr(0, whole.size() / 2));
  EXPECT_FALSE(SafetensorsFile::open(dir / "b.safetensors", error));
  EXPECT_NE(error.find("b.safetensors: tensor '"), std::string::npos) << error;
  EXPECT_NE(error.find("end past the data"), std::string::npos) << error;

  // One byte short.
  test::write_text(dir / "c.safetensors", whole.substr(0, whole.size() - 1));
  EXPECT_FALSE(SafetensorsFile::open(dir / "c.safetensors", error));
  EXPECT_NE(error.find("c.safetensors: tensor 'lm_head.weight'"), std::string::npos) << error;
}

TEST(SafetensorsOpen, EveryFixtureOpensAndEveryTensorReads) {
  std::size_t files = 0;
  for (const auto& model : fs::directory_iterator(kFixtures)) {
    for (const auto& f : fs::directory_iterator(model.path())) {
      if (f.path().extension() != ".safetensors") continue;
      std::string error;
      const auto file = SafetensorsFile::open(f.path(), error);
      ASSERT_TRUE(file) << error;
      ++files;
      for (const auto& t : file->tensors()) {
        std::vector<double> d;
        ASSERT_TRUE(file->read_doubles(t, d, error)) << error;
        EXPECT_EQ(static_cast<std::int64_t>(d.size()), t.numel()) << f.path() << " " << t.name;
      }
    }
  }
  EXPECT_GE(files, 15u);
}
