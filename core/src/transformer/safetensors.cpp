#include "attention_lab/safetensors.h"

#include "attention_lab/excerpt.h"
#include "io/json_document.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attention_lab {

namespace {

using json = nlohmann::json;

struct DTypeName {
  const char* name;
  DType dtype;
  std::size_t bytes;
};

constexpr DTypeName kDTypes[] = {
    {"F64", DType::F64, 8}, {"F32", DType::F32, 4}, {"F16", DType::F16, 2}, {"BF16", DType::BF16, 2},
    {"I64", DType::I64, 8}, {"I32", DType::I32, 4}, {"I16", DType::I16, 2}, {"I8", DType::I8, 1},
    {"U8", DType::U8, 1},   {"BOOL", DType::Bool, 1},
};

// Real tensors have at most a handful of dimensions; this bounds the work a
// hostile header can ask for.
constexpr std::size_t kMaxRank = 8;

std::string known_dtypes() {
  std::string out;
  for (const auto& d : kDTypes) out += (out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

struct HeaderError {
  std::string message;
};

[[noreturn]] void fail(std::string message) { throw HeaderError{std::move(message)}; }

std::uint64_t read_u64(const json& v, const std::string& where) {
  if (!v.is_number_unsigned()) {
    if (v.is_number_integer()) fail(where + ": expected a non-negative integer, found " + v.dump());
    fail(where + ": expected a non-negative integer, found " + excerpt(v.dump(), 40));
  }
  return v.get<std::uint64_t>();
}

TensorInfo read_tensor(const std::string& name, const json& entry) {
  const std::string where = "tensor '" + excerpt(name, 80) + "'";
  if (!entry.is_object()) fail(where + ": expected an object with dtype, shape and data_offsets");
  for (const auto& [key, value] : entry.items()) {
    (void)value;
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      fail(where + ": unknown key '" + excerpt(key, 40) + "' (expected dtype, shape, data_offsets)");
  }
  TensorInfo t;
  t.name = name;
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) fail(where + ": expected a \"dtype\" string");
  const auto* known = std::find_if(std::begin(kDTypes), std::end(kDTypes),
                                   [&](const DTypeName& d) { return *dtype == d.name; });
  if (known == std::end(kDTypes))
    fail(where + ": unknown dtype '" + excerpt(dtype->get<std::string>(), 20) + "' (expected one of " +
         known_dtypes() + ")");
  t.dtype = known->dtype;

  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) fail(where + ": expected a \"shape\" list");
  if (shape->size() > kMaxRank)
    fail(where + ": expected at most " + std::to_string(kMaxRank) + " dimensions, found " +
         std::to_string(shape->size()));
  std::uint64_t numel = 1;
  bool overflow = false;
  for (std::size_t i = 0; i < shape->size(); ++i) {
    const std::uint64_t n = read_u64((*shape)[i], where + ": shape[" + std::to_string(i) + "]");
    if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) overflow = true;
    t.shape.push_back(static_cast<std::int64_t>(std::min<std::uint64_t>(n, INT64_MAX)));
    if (n != 0 && numel > std::numeric_limits<std::uint64_t>::max() / n) overflow = true;
    else numel *= n;
  }

  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2)
    fail(where + ": expected \"data_offsets\": [begin, end]");
  t.begin = read_u64((*offsets)[0], where + ": data_offsets[0]");
  t.end = read_u64((*offsets)[1], where + ": data_offsets[1]");
  if (t.end < t.begin)
    fail(where + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
         "): expected begin ≤ end");
  const std::uint64_t bytes = t.end - t.begin;
  if (overflow || numel > std::numeric_limits<std::uint64_t>::max() / known->bytes ||
      numel * known->bytes != bytes) {
    fail(where + ": shape " + t.shape_text() + " of " + known->name + " needs " +
         (overflow || numel > std::numeric_limits<std::uint64_t>::max() / known->bytes
              ? std::string("more bytes than a file can hold")
              : std::to_string(numel * known->bytes) + " bytes") +
         ", found data_offsets spanning " + std::to_string(bytes));
  }
  return t;
}

}  // namespace

const char* to_string(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d.name;
  return "?";
}

std::size_t dtype_bytes(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d.bytes;
  return 1;
}

bool is_float(DType dtype) {
  return dtype == DType::F64 || dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

std::int64_t TensorInfo::numel() const {
  // A file's tensors were checked when read: the count fits its byte range,
  // unless a dimension is 0, beside which the others may be as large as they
  // like (their product alone may not fit an int64).
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  std::int64_t n = 1;
  for (const auto d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<std::int64_t>::max();
  return n;
}

std::string TensorInfo::shape_text() const {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_ != nullptr) munmap(mapping_, size_);
}

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path, std::string& error) {
  auto file = std::shared_ptr<SafetensorsFile>(new SafetensorsFile());
  file->name_ = path.string();
  // O_NONBLOCK: a named pipe must be refused below, not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = file->name_ + ": cannot open: " + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = file->name_ + ": expected a regular file";
    ::close(fd);
    return nullptr;
  }
  file->size_ = static_cast<std::uint64_t>(st.st_size);
  if (file->size_ < 8) {
    ::close(fd);
    error = file->name_ + ": expected at least 8 bytes (the header length), found " + std::to_string(file->size_);
    return nullptr;
  }
  void* map = mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED) {
    error = file->name_ + ": cannot map: " + std::strerror(errno);
    return nullptr;
  }
  file->mapping_ = map;
  file->base_ = static_cast<const std::byte*>(map);
  return check(std::move(file), error);
}

std::shared_ptr<const SafetensorsFile> SafetensorsFile::parse(std::string_view bytes, const std::string& name,
                                                              std::string& error) {
  auto file = std::shared_ptr<SafetensorsFile>(new SafetensorsFile());
  file->name_ = name;
  file->owned_.resize(bytes.size());
  if (!bytes.empty()) std::memcpy(file->owned_.data(), bytes.data(), bytes.size());
  file->base_ = file->owned_.data();
  file->size_ = bytes.size();
  if (file->size_ < 8) {
    error = name + ": expected at least 8 bytes (the header length), found " + std::to_string(file->size_);
    return nullptr;
  }
  return check(std::move(file), error);
}

std::shared_ptr<const SafetensorsFile> SafetensorsFile::check(std::shared_ptr<SafetensorsFile> file,
                                                              std::string& error) {
  const std::string& name = file->name_;
  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | std::to_integer<std::uint64_t>(file->base_[i]);
  if (header_bytes > kMaxSafetensorsHeaderBytes) {
    error = name + ": header length " + std::to_string(header_bytes) + ": expected at most " +
            std::to_string(kMaxSafetensorsHeaderBytes) + " bytes (is this a safetensors file?)";
    return nullptr;
  }
  if (header_bytes > file->size_ - 8) {
    error = name + ": header length " + std::to_string(header_bytes) + " runs past the end of the file (" +
            std::to_string(file->size_) + " bytes; truncated?)";
    return nullptr;
  }
  file->data_start_ = 8 + header_bytes;
  const std::uint64_t data_bytes = file->size_ - file->data_start_;
  const std::string header(reinterpret_cast<const char*>(file->base_ + 8), header_bytes);
  io::JsonDocument doc = io::parse_json_document(header, "header");
  if (!doc.error.empty()) {  // "invalid JSON: …", or the nesting error, which starts with "header"
    error = cap_message(name + ": " + (doc.error.rfind("header", 0) == 0 ? "" : "header: ") + doc.error);
    return nullptr;
  }
  if (!doc.root.is_object()) {
    error = name + ": header: expected a JSON object of tensors";
    return nullptr;
  }
  try {
    for (const auto& [key, value] : doc.root.items()) {
      if (key == "__metadata__") {
        if (!value.is_object()) fail("__metadata__: expected an object of strings");
        for (const auto& [mk, mv] : value.items()) {
          if (!mv.is_string()) fail("__metadata__ '" + excerpt(mk, 40) + "': expected a string");
          file->metadata_[mk] = mv.get<std::string>();
        }
        continue;
      }
      TensorInfo t = read_tensor(key, value);
      if (t.end > data_bytes)
        fail("tensor '" + excerpt(key, 80) + "': data_offsets [" + std::to_string(t.begin) + ", " +
             std::to_string(t.end) + ") end past the data (" + std::to_string(data_bytes) + " bytes; truncated?)");
      file->tensors_.push_back(std::move(t));
    }
    std::sort(file->tensors_.begin(), file->tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    // Each non-empty tensor against the one before it that ends furthest (not
    // just the previous one: an empty tensor, allowed anywhere, must not hide
    // an overlap around it).
    const TensorInfo* prev = nullptr;
    for (const TensorInfo& cur : file->tensors_) {
      if (cur.begin == cur.end) continue;
      if (prev != nullptr && cur.begin < prev->end)
        fail("tensors '" + excerpt(prev->name, 60) + "' and '" + excerpt(cur.name, 60) + "': data_offsets overlap ([" +
             std::to_string(prev->begin) + ", " + std::to_string(prev->end) + ") and [" + std::to_string(cur.begin) +
             ", " + std::to_string(cur.end) + "))");
      prev = &cur;  // no overlap: cur ends at or after prev
    }
    for (std::size_t i = 0; i < file->tensors_.size(); ++i) file->index_.emplace(file->tensors_[i].name, i);
  } catch (const HeaderError& e) {
    error = cap_message(name + ": " + e.message);
    return nullptr;
  }
  return file;
}

const TensorInfo* SafetensorsFile::find(std::string_view tensor) const {
  const auto it = index_.find(tensor);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const std::byte> SafetensorsFile::bytes(const TensorInfo& tensor) const {
  return {base_ + data_start_ + tensor.begin, static_cast<std::size_t>(tensor.end - tensor.begin)};
}

const float* SafetensorsFile::f32_in_place(const TensorInfo& tensor) const {
  if (tensor.dtype != DType::F32) return nullptr;
  const auto raw = bytes(tensor);
  if (reinterpret_cast<std::uintptr_t>(raw.data()) % alignof(float) != 0) return nullptr;
  return reinterpret_cast<const float*>(raw.data());
}

StoredFloats SafetensorsFile::stored_in_place(const TensorInfo& tensor) const {
  StoredType type;
  switch (tensor.dtype) {
    case DType::F32: type = StoredType::F32; break;
    case DType::F16: type = StoredType::F16; break;
    case DType::BF16: type = StoredType::BF16; break;
    default: return {};
  }
  const auto raw = bytes(tensor);
  if (reinterpret_cast<std::uintptr_t>(raw.data()) % stored_bytes(type) != 0) return {nullptr, type};
  return {raw.data(), type};
}

namespace {

// Little-endian loads that do not care about alignment.
template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename Out>
bool convert(const SafetensorsFile& file, const TensorInfo& t, std::vector<Out>& out, std::string& error) {
  const auto raw = file.bytes(t);
  const std::size_t n = raw.size() / dtype_bytes(t.dtype);
  out.resize(n);
  const std::byte* p = raw.data();
  switch (t.dtype) {
    case DType::F64: for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(load<double>(p + 8 * i)); break;
    case DType::F32: for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(load<float>(p + 4 * i)); break;
    case DType::F16:
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(half_to_float(load<std::uint16_t>(p + 2 * i)));
      break;
    case DType::BF16:
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(bfloat16_to_float(load<std::uint16_t>(p + 2 * i)));
      break;
    case DType::I64: for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(load<std::int64_t>(p + 8 * i)); break;
    case DType::I32: for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(load<std::int32_t>(p + 4 * i)); break;
    case DType::I16: for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(load<std::int16_t>(p + 2 * i)); break;
    case DType::I8: for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(load<std::int8_t>(p + i)); break;
    case DType::U8: for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(load<std::uint8_t>(p + i)); break;
    case DType::Bool:
      out.clear();
      error = file.name() + ": tensor '" + excerpt(t.name, 80) + "': expected numbers, found BOOL";
      return false;
  }
  return true;
}

}  // namespace

bool SafetensorsFile::read_floats(const TensorInfo& tensor, std::vector<float>& out, std::string& error) const {
  return convert(*this, tensor, out, error);
}

bool SafetensorsFile::read_doubles(const TensorInfo& tensor, std::vector<double>& out, std::string& error) const {
  return convert(*this, tensor, out, error);
}

}  // namespace attention_lab
