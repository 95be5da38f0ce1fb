#pragma once
// Reading safetensors files (Hugging Face's weight format): an 8-byte
// little-endian header length N, N bytes of JSON naming every tensor's dtype,
// shape and byte range, then the raw row-major little-endian data.
//
// The file is memory-mapped and checked completely when opened — header size,
// every dtype, shape and byte range (inside the data, sized to match the
// shape, not overlapping another) — so nothing downstream reads outside it.
// F32 data is used in place; F16, BF16 and F64 are converted on request.

#include "attention_lab/stored_floats.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attention_lab {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };

const char* to_string(DType dtype);
std::size_t dtype_bytes(DType dtype);
bool is_float(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // byte range in the data section, [begin, end)
  std::uint64_t end = 0;

  std::int64_t numel() const;
  std::string shape_text() const;  // "[3, 48]"
};

// Headers over this are refused (the reference implementation's limit).
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100ull << 20;

class SafetensorsFile {
 public:
  // Maps and checks the file; on failure returns null and sets `error` to a
  // message naming the file and, where one is at fault, the tensor.
  static std::shared_ptr<const SafetensorsFile> open(const std::filesystem::path& path, std::string& error);
  // The same checks over bytes in memory (fuzzing, tests); `name` stands in
  // for the path in messages. The bytes are copied.
  static std::shared_ptr<const SafetensorsFile> parse(std::string_view bytes, const std::string& name,
                                                      std::string& error);

  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& name() const { return name_; }
  // Every tensor, in the order of their data.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find(std::string_view tensor) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::uint64_t file_bytes() const { return size_; }

  // The tensor's raw bytes (inside the mapping, valid while this lives).
  std::span<const std::byte> bytes(const TensorInfo& tensor) const;
  // F32 data in place, or null when the tensor is not F32 or not 4-byte aligned.
  const float* f32_in_place(const TensorInfo& tensor) const;
  // F32, F16 or BF16 data in place, in its own type; null data for another
  // dtype or data not aligned to its element.
  StoredFloats stored_in_place(const TensorInfo& tensor) const;
  // Every value widened or narrowed to float / double; integer dtypes convert
  // exactly where they can. Fails (returns false, sets `error`) for Bool.
  bool read_floats(const TensorInfo& tensor, std::vector<float>& out, std::string& error) const;
  bool read_doubles(const TensorInfo& tensor, std::vector<double>& out, std::string& error) const;

 private:
  SafetensorsFile() = default;
  static std::shared_ptr<const SafetensorsFile> check(std::shared_ptr<SafetensorsFile> file, std::string& error);

  std::string name_;
  const std::byte* base_ = nullptr;  // start of the file
  std::uint64_t size_ = 0;
  std::uint64_t data_start_ = 0;     // 8 + header length
  void* mapping_ = nullptr;          // munmap on destruction when set
  std::vector<std::byte> owned_;     // parse(): the copied bytes
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace attention_lab
