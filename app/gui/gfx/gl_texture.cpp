#include "gfx/gl_texture.h"

#include <utility>

namespace attention_lab::gfx {

FloatTexture::FloatTexture() { glGenTextures(1, &id_); }

FloatTexture::~FloatTexture() {
  if (id_) glDeleteTextures(1, &id_);
}

FloatTexture::FloatTexture(FloatTexture&& o) noexcept
    : id_(std::exchange(o.id_, 0)), version_(o.version_), rows_(o.rows_), cols_(o.cols_), uploads_(o.uploads_) {}

FloatTexture& FloatTexture::operator=(FloatTexture&& o) noexcept {
  if (this != &o) {
    if (id_) glDeleteTextures(1, &id_);
    id_ = std::exchange(o.id_, 0);
    version_ = o.version_;
    rows_ = o.rows_;
    cols_ = o.cols_;
    uploads_ = o.uploads_;
  }
  return *this;
}

bool FloatTexture::update(MatrixView m, std::uint64_t version) {
  if (version == version_ && m.rows() == rows_ && m.cols() == cols_) return false;
  GLint previous = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
  glBindTexture(GL_TEXTURE_2D, id_);
  // R32F is not filterable in GL 3.3: the shader fetches texels by index.
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  // Rows of a view may be strided (a head's column block): pass the stride.
  glPixelStorei(GL_UNPACK_ROW_LENGTH, static_cast<GLint>(m.outerStride()));
  const auto w = static_cast<GLsizei>(m.cols()), h = static_cast<GLsizei>(m.rows());
  if (m.rows() != rows_ || m.cols() != cols_)
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, w, h, 0, GL_RED, GL_FLOAT, m.data());
  else
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RED, GL_FLOAT, m.data());
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous));
  version_ = version;
  rows_ = m.rows();
  cols_ = m.cols();
  ++uploads_;
  return true;
}

}  // namespace attention_lab::gfx
