#pragma once
// Reading NumPy's .npy files (numpy.save): the magic "\x93NUMPY", a version
// (1.0, 2.0 or 3.0), a little-endian header length (2 bytes in 1.0, 4 in 2.0
// and 3.0), a header that is a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// padded with spaces and a newline, then the raw data.
//
// The header is read by a small strict parser (no eval): exactly the keys
// descr, fortran_order and shape, each once; only little-endian float32,
// float64 and float16 ('<f4', '<f8', '<f2'); the data exactly as long as the
// shape says. Internal to core (weight_import.cpp, tests).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attention_lab::io {

// Headers over this are refused (numpy writes a few hundred bytes; its own
// reader refuses more than 10000 without allow_pickle-like overrides).
inline constexpr std::size_t kMaxNpyHeaderBytes = 64 * 1024;

enum class NpyType { F16, F32, F64 };

struct NpyArray {
  std::string descr;  // as written: "<f4"
  NpyType type = NpyType::F32;
  std::size_t item_bytes = 4;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
  std::string_view data;  // the values' bytes, inside the parsed input
  std::string error;      // set when the file is refused; names the file, the expected and the found

  std::string shape_text() const;  // "(3, 4)"
  // Element (r, c) of a 2-D array, widened to double (the storage order is handled).
  double at(std::int64_t row, std::int64_t col) const;
};

// Parses the header of `bytes` and checks the data's length; `name` stands
// for the file in messages. The result points into `bytes`, which must
// outlive it. Any rank is parsed; callers check the rank they need.
NpyArray parse_npy(std::string_view bytes, const std::string& name);

}  // namespace attention_lab::io
