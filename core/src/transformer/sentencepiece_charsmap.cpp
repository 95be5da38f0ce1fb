#include "transformer/sentencepiece_charsmap.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace attention_lab {

namespace {

// [SECTION] The protobuf wire format, as far as the charsmaps need it

struct Field {
  std::uint32_t number = 0;
  std::string_view bytes;  // a length-delimited field's payload; empty for the others
};

// Reads the fields of one message; nullopt (with `error`) when it is not well formed.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}

  bool done() const { return pos_ >= data_.size(); }

  std::optional<Field> next(std::string& error) {
    const auto key = varint();
    if (!key) return fail(error, "a field's key is cut short");
    Field f;
    f.number = static_cast<std::uint32_t>(*key >> 3);
    switch (*key & 7) {
      case 0:
        if (!varint()) return fail(error, "a number is cut short");
        return f;
      case 1: return skip(8, error) ? std::optional<Field>(f) : std::nullopt;
      case 5: return skip(4, error) ? std::optional<Field>(f) : std::nullopt;
      case 2: {
        const auto n = varint();
        if (!n || *n > data_.size() - pos_) return fail(error, "a field runs past the end of its message");
        f.bytes = data_.substr(pos_, static_cast<std::size_t>(*n));
        pos_ += static_cast<std::size_t>(*n);
        return f;
      }
      default: return fail(error, "a field of wire type " + std::to_string(*key & 7) + " (expected 0, 1, 2 or 5)");
    }
  }

 private:
  std::optional<std::uint64_t> varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64 && pos_ < data_.size(); shift += 7) {
      const auto b = static_cast<unsigned char>(data_[pos_++]);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    return std::nullopt;
  }
  bool skip(std::size_t n, std::string& error) {
    if (n > data_.size() - pos_) return fail(error, "a fixed-size number is cut short"), false;
    pos_ += n;
    return true;
  }
  std::nullopt_t fail(std::string& error, const std::string& what) const {
    error = what + " (byte " + std::to_string(pos_) + ")";
    return std::nullopt;
  }

  std::string_view data_;
  std::size_t pos_ = 0;
};

// [SECTION] darts-clone's double-array units (darts.h, DoubleArrayUnit)

bool has_leaf(std::uint32_t u) { return (u >> 8) & 1; }
std::uint32_t value(std::uint32_t u) { return u & ((1u << 31) - 1); }
std::uint32_t label(std::uint32_t u) { return u & ((1u << 31) | 0xFF); }
std::uint32_t offset(std::uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

}  // namespace

std::string charsmap_problem(std::string_view blob) {
  std::uint32_t trie_bytes = 0;
  if (blob.size() <= sizeof trie_bytes) return "shorter than its header (" + std::to_string(blob.size()) + " bytes)";
  std::memcpy(&trie_bytes, blob.data(), sizeof trie_bytes);  // little-endian, as this machine
  blob.remove_prefix(sizeof trie_bytes);
  if (trie_bytes > blob.size())
    return "a trie of " + std::to_string(trie_bytes) + " bytes in " + std::to_string(blob.size()) + " bytes";
  const std::size_t n = trie_bytes / 4;  // the library ignores a partial last unit
  if (n == 0) return "an empty trie";
  std::vector<std::uint32_t> units(n);
  std::memcpy(units.data(), blob.data(), n * 4);
  const std::string_view replacements = blob.substr(trie_bytes);

  // Every node a walk can reach: from one, darts-clone reads unit (node ^ c)
  // for any input byte c, so node | 0xFF must be inside the array.
  std::vector<char> seen(n, 0);
  std::vector<std::uint32_t> todo = {offset(units[0])};
  while (!todo.empty()) {
    const std::uint32_t node = todo.back();
    todo.pop_back();
    if ((static_cast<std::uint64_t>(node) | 0xFF) >= n)
      return "the trie reaches unit " + std::to_string(node | 0xFF) + " of " + std::to_string(n);
    if (seen[node]) continue;
    seen[node] = 1;
    for (std::uint32_t c = 0; c < 256; ++c) {
      const std::uint32_t u = units[node ^ c];
      if (label(u) != c) continue;  // the walk stops here for byte c
      const std::uint32_t child = (node ^ c) ^ offset(u);
      if (has_leaf(u)) {
        if (child >= n) return "a leaf at unit " + std::to_string(child) + " of " + std::to_string(n);
        const std::uint32_t at = value(units[child]);
        // The replacement is read as a C string from there.
        if (at >= replacements.size() || replacements.find('\0', at) == std::string_view::npos)
          return "a replacement at byte " + std::to_string(at) + " that does not end within the " +
                 std::to_string(replacements.size()) + " bytes of replacements";
      }
      todo.push_back(child);
    }
  }
  return {};
}

std::string sentencepiece_charsmap_problem(std::string_view model_bytes) {
  WireReader model(model_bytes);
  std::string error;
  while (!model.done()) {
    const auto field = model.next(error);
    if (!field) return "not a SentencePiece model (" + error + ")";
    // ModelProto: 3 normalizer_spec, 5 denormalizer_spec; in each, 2 is precompiled_charsmap.
    if (field->number != 3 && field->number != 5) continue;
    const std::string spec = field->number == 3 ? "normalizer_spec" : "denormalizer_spec";
    WireReader reader(field->bytes);
    while (!reader.done()) {
      const auto inner = reader.next(error);
      if (!inner) return "not a SentencePiece model (" + spec + ": " + error + ")";
      if (inner->number != 2 || inner->bytes.empty()) continue;
      if (auto problem = charsmap_problem(inner->bytes); !problem.empty())
        return spec + ".precompiled_charsmap (its normalization rules) is broken: " + problem;
    }
  }
  return {};
}

}  // namespace attention_lab
