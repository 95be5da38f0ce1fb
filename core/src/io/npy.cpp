#include "io/npy.h"

#include "attention_lab/excerpt.h"
#include "attention_lab/safetensors.h"

#include <cstring>
#include <limits>

namespace attention_lab::io {

namespace {

struct NpyError {
  std::string message;
};

[[noreturn]] void fail_npy(std::string message) { throw NpyError{std::move(message)}; }

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::string in_quotes(std::string_view text) { return "'" + excerpt(text, 40) + "'"; }

// The Python dict literal of the header, read by hand: strings in single or
// double quotes (no escapes), True / False, and tuples of whole numbers.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string where) : text_(text), where_(std::move(where)) {}

  void parse(NpyArray& out) {
    bool seen_descr = false, seen_order = false, seen_shape = false;
    skip_space();
    expect('{', "the header to start with '{' (a Python dict)");
    skip_space();
    while (peek() != '}') {
      const std::string key = string_literal("a key in quotes");
      skip_space();
      expect(':', "':' after '" + key + "'");
      skip_space();
      if (key == "descr") {
        if (seen_descr) fail_npy(where_ + ": 'descr' given twice (expected each key once)");
        seen_descr = true;
        if (peek() != '\'' && peek() != '"')
          fail_npy(where_ + ": 'descr': expected a dtype string such as '<f4', found " + found_here() +
               " (structured arrays are not weights)");
        out.descr = string_literal("a dtype string");
      } else if (key == "fortran_order") {
        if (seen_order) fail_npy(where_ + ": 'fortran_order' given twice (expected each key once)");
        seen_order = true;
        out.fortran_order = boolean();
      } else if (key == "shape") {
        if (seen_shape) fail_npy(where_ + ": 'shape' given twice (expected each key once)");
        seen_shape = true;
        out.shape = tuple();
      } else {
        fail_npy(where_ + ": unknown key " + in_quotes(key) + " (expected 'descr', 'fortran_order' and 'shape')");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != '}') {
        fail_npy(where_ + ": expected ',' or '}' after the value of '" + key + "', found " + found_here());
      }
    }
    ++pos_;  // '}'
    skip_space();
    if (pos_ != text_.size())
      fail_npy(where_ + ": expected only spaces and a newline after the header's '}', found " + found_here());
    for (auto [seen, key] : {std::pair{seen_descr, "descr"}, std::pair{seen_order, "fortran_order"},
                             std::pair{seen_shape, "shape"}})
      if (!seen) fail_npy(where_ + ": expected the key '" + key + "' in the header");
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  std::string found_here() const {
    if (pos_ >= text_.size()) return "the end of the header";
    return in_quotes(text_.substr(pos_, 20));
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }

  void expect(char ch, const std::string& what) {
    if (peek() != ch || pos_ >= text_.size()) fail_npy(where_ + ": expected " + what + ", found " + found_here());
    ++pos_;
  }

  std::string string_literal(const std::string& what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail_npy(where_ + ": expected " + what + ", found " + found_here());
    const std::size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      const auto ch = static_cast<unsigned char>(text_[pos_]);
      if (ch == '\\' || ch < 0x20 || ch >= 0x7f)
        fail_npy(where_ + ": expected a plain string in the header (no escapes or control characters), found " +
             in_quotes(text_.substr(start - 1, pos_ - start + 2)));
      ++pos_;
    }
    if (pos_ >= text_.size()) fail_npy(where_ + ": a string in the header is not closed: " + in_quotes(text_.substr(start - 1)));
    ++pos_;
    return std::string(text_.substr(start, pos_ - 1 - start));
  }

  bool boolean() {
    for (auto [word, value] : {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail_npy(where_ + ": 'fortran_order': expected True or False, found " + found_here());
  }

  std::vector<std::int64_t> tuple() {
    expect('(', "a tuple such as (3, 4) for 'shape'");
    std::vector<std::int64_t> dims;
    skip_space();
    while (peek() != ')') {
      if (dims.size() >= 32) fail_npy(where_ + ": 'shape': expected at most 32 dimensions");
      if (peek() < '0' || peek() > '9')
        fail_npy(where_ + ": 'shape': expected a non-negative whole number, found " + found_here());
      std::int64_t value = 0;
      const std::size_t start = pos_;
      while (peek() >= '0' && peek() <= '9') {
        // 2^53 is far past any array a file can hold; the data size check says so.
        if (value > (std::int64_t{1} << 53)) {
          std::size_t end = pos_;
          while (end < text_.size() && text_[end] >= '0' && text_[end] <= '9') ++end;
          fail_npy(where_ + ": 'shape': dimension " + in_quotes(text_.substr(start, end - start)) + " is too large");
        }
        value = value * 10 + (peek() - '0');
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2's long literal, as old numpy wrote it
      dims.push_back(value);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != ')') {
        fail_npy(where_ + ": 'shape': expected ',' or ')', found " + found_here());
      }
    }
    ++pos_;
    return dims;
  }

  std::string_view text_;
  std::string where_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string NpyArray::shape_text() const {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) out += ",";
  return out + ")";
}

double NpyArray::at(std::int64_t row, std::int64_t col) const {
  const std::int64_t rows = shape.size() == 2 ? shape[0] : 1;
  const std::int64_t cols = shape.size() == 2 ? shape[1] : (shape.empty() ? 1 : shape[0]);
  const std::int64_t index = fortran_order ? col * rows + row : row * cols + col;
  const char* p = data.data() + static_cast<std::size_t>(index) * item_bytes;
  switch (type) {
    case NpyType::F16: return static_cast<double>(half_to_float(load<std::uint16_t>(p)));
    case NpyType::F32: return static_cast<double>(load<float>(p));
    case NpyType::F64: return load<double>(p);
  }
  return 0.0;
}

NpyArray parse_npy(std::string_view bytes, const std::string& name) {
  NpyArray out;
  try {
    static constexpr std::string_view kMagic("\x93NUMPY", 6);
    if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic)
      fail_npy(name + ": expected a .npy file (starting with \\x93NUMPY), found '" + excerpt(bytes.substr(0, 8), 40) + "'" +
           (bytes.size() < kMagic.size() ? " (" + std::to_string(bytes.size()) + " bytes)" : std::string()));
    if (bytes.size() < 10) fail_npy(name + ": expected a .npy header after the magic, found the end of the file");
    const int major = static_cast<unsigned char>(bytes[6]), minor = static_cast<unsigned char>(bytes[7]);
    if (!((major == 1 || major == 2 || major == 3) && minor == 0))
      fail_npy(name + ": expected .npy format version 1.0, 2.0 or 3.0, found " + std::to_string(major) + "." +
           std::to_string(minor));
    std::size_t header_start = 10;
    std::uint64_t header_bytes = 0;
    if (major == 1) {
      header_bytes = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned>(static_cast<unsigned char>(bytes[9])) << 8);
    } else {
      if (bytes.size() < 12) fail_npy(name + ": expected a 4-byte header length (format " + std::to_string(major) + ".0), found the end of the file");
      header_start = 12;
      for (int i = 11; i >= 8; --i) header_bytes = (header_bytes << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    }
    if (header_bytes > kMaxNpyHeaderBytes)
      fail_npy(name + ": expected a header of at most " + std::to_string(kMaxNpyHeaderBytes) + " bytes, found " +
           std::to_string(header_bytes));
    if (header_bytes > bytes.size() - header_start)
      fail_npy(name + ": the header length (" + std::to_string(header_bytes) + " bytes) goes past the end of the file (" +
           std::to_string(bytes.size() - header_start) + " bytes after it)");
    const std::string_view header = bytes.substr(header_start, static_cast<std::size_t>(header_bytes));
    HeaderParser(header, name).parse(out);

    if (out.descr == "<f4") out.type = NpyType::F32, out.item_bytes = 4;
    else if (out.descr == "<f8") out.type = NpyType::F64, out.item_bytes = 8;
    else if (out.descr == "<f2") out.type = NpyType::F16, out.item_bytes = 2;
    else
      fail_npy(name + ": 'descr': expected '<f4', '<f8' or '<f2' (little-endian float32, float64 or float16), found " +
           in_quotes(out.descr) +
           (!out.descr.empty() && out.descr[0] == '>' ? " (big-endian: save with .astype('<f4'))" : ""));

    const std::uint64_t data_bytes = bytes.size() - header_start - header_bytes;
    // Count the elements with saturation: a shape's product may not fit 64 bits.
    std::uint64_t count = 1;
    bool overflow = false;
    for (const auto d : out.shape) {
      const auto u = static_cast<std::uint64_t>(d);
      if (u != 0 && count > std::numeric_limits<std::uint64_t>::max() / u / out.item_bytes) overflow = true;
      count = overflow ? count : count * u;
    }
    bool empty = false;
    for (const auto d : out.shape) empty = empty || d == 0;
    if (empty) count = 0, overflow = false;
    if (overflow || count * out.item_bytes != data_bytes)
      fail_npy(name + ": shape " + out.shape_text() + " of " + out.descr + " needs " +
           (overflow ? std::string("more than 2^64") : std::to_string(count * out.item_bytes)) + " bytes of data, found " +
           std::to_string(data_bytes));
    out.data = bytes.substr(static_cast<std::size_t>(header_start + header_bytes));
  } catch (const NpyError& e) {
    out = NpyArray();
    out.error = cap_message(e.message);
  }
  return out;
}

}  // namespace attention_lab::io
