#pragma once
// A single-channel float texture holding one matrix, re-uploaded only when
// the matrix's version changes.

#include "attention_lab/matrix.h"

#include <glad/gl.h>

#include <cstdint>

namespace attention_lab::gfx {

class FloatTexture {
 public:
  FloatTexture();
  ~FloatTexture();
  FloatTexture(const FloatTexture&) = delete;
  FloatTexture& operator=(const FloatTexture&) = delete;
  FloatTexture(FloatTexture&& other) noexcept;
  FloatTexture& operator=(FloatTexture&& other) noexcept;

  // Uploads `m` unless `version` equals the last uploaded one. Returns true when it uploaded.
  bool update(MatrixView m, std::uint64_t version);
  GLuint id() const { return id_; }
  std::uint64_t version() const { return version_; }
  std::uint64_t uploads() const { return uploads_; }

 private:
  GLuint id_ = 0;
  std::uint64_t version_ = 0;
  Eigen::Index rows_ = -1, cols_ = -1;
  std::uint64_t uploads_ = 0;
};

}  // namespace attention_lab::gfx
