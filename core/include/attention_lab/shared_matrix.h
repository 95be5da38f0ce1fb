#pragma once
// A matrix that copies share until one of them writes (copy-on-write).
//
// A scenario is copied whole in many places: the undo entry of a resize, a
// toggle or a lesson page turn keeps the scenario before it; a change computed
// in the background works on a copy while the window shows the original;
// Compare keeps the scenario it was taken from. With its matrices shared, such
// a copy costs a few pointers, and only a matrix that is then written is
// duplicated: an undo entry holds what changed, not a second checkpoint.
//
// Reading goes through get() (or the implicit const Matrix&); writing through
// edit(), which first gives this copy a buffer of its own when another copy
// still shares it. The non-const element operator writes, so it copies a
// shared buffer too: read a scenario you hold as non-const through get().
// A view (MatrixView, a pointer from data()) of a shared buffer stays valid
// while some copy still holds it; after edit() this copy's buffer may be new.
//
// Thread safety is that of std::shared_ptr: copies on different threads may be
// read and written independently (a write never touches a buffer another copy
// holds), but one SharedMatrix must not be written while another thread reads it.

#include "attention_lab/matrix.h"

#include <memory>
#include <utility>

namespace attention_lab {

class SharedMatrix {
 public:
  SharedMatrix() = default;
  SharedMatrix(Matrix m) : p_(std::make_shared<Matrix>(std::move(m))) {}  // NOLINT: implicit, as a Matrix member was
  template <typename Derived>
  SharedMatrix(const Eigen::MatrixBase<Derived>& value) : p_(std::make_shared<Matrix>(value)) {}  // NOLINT
  SharedMatrix& operator=(Matrix m) {
    p_ = std::make_shared<Matrix>(std::move(m));
    return *this;
  }
  template <typename Derived>
  SharedMatrix& operator=(const Eigen::MatrixBase<Derived>& value) {
    p_ = std::make_shared<Matrix>(value);
    return *this;
  }

  // [SECTION] Reading
  const Matrix& get() const { return p_ ? *p_ : empty(); }
  operator const Matrix&() const { return get(); }  // NOLINT: reads like the Matrix it replaced
  Eigen::Index rows() const { return get().rows(); }
  Eigen::Index cols() const { return get().cols(); }
  Eigen::Index size() const { return get().size(); }
  float operator()(Eigen::Index r, Eigen::Index c) const { return get()(r, c); }
  const float* data() const { return get().data(); }
  auto row(Eigen::Index r) const { return get().row(r); }
  auto col(Eigen::Index c) const { return get().col(c); }
  auto block(Eigen::Index r, Eigen::Index c, Eigen::Index rows, Eigen::Index cols) const {
    return get().block(r, c, rows, cols);
  }
  auto middleCols(Eigen::Index c, Eigen::Index n) const { return get().middleCols(c, n); }
  auto middleRows(Eigen::Index r, Eigen::Index n) const { return get().middleRows(r, n); }
  auto leftCols(Eigen::Index n) const { return get().leftCols(n); }
  auto topRows(Eigen::Index n) const { return get().topRows(n); }
  auto transpose() const { return get().transpose(); }
  auto array() const { return get().array(); }

  // [SECTION] Writing: this copy's own buffer (copied first when shared)
  Matrix& edit() {
    if (!p_)
      p_ = std::make_shared<Matrix>();
    else if (p_.use_count() > 1)
      p_ = std::make_shared<Matrix>(*p_);
    return *p_;
  }
  float& operator()(Eigen::Index r, Eigen::Index c) { return edit()(r, c); }

  // [SECTION] Sharing
  // Whether both hold the same buffer (then they hold the same values).
  bool shares_buffer_with(const SharedMatrix& other) const { return p_ && p_ == other.p_; }
  // How many copies hold this buffer (0 for a matrix never set).
  long holders() const { return p_.use_count(); }
  // The buffer's identity (null for a matrix never set): copies holding one
  // buffer give the same, so memory held by many copies is counted once.
  const void* buffer() const { return p_.get(); }

 private:
  static const Matrix& empty() {
    static const Matrix none;
    return none;
  }
  std::shared_ptr<Matrix> p_;
};

}  // namespace attention_lab
