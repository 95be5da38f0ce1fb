#pragma once
// The big matrix products (a model's projections, MLP and lm_head; the
// attention engine's Q, K, V and output projections) on one of three
// backends, chosen by measurement (docs/performance.md, "Matrix products"):
//  - packed: the project's own register-tiled kernel (base/packed_gemm*.cpp)
//    for CPUs with AVX-512F or AVX2 + FMA; on this project's machine 3–11 %
//    faster than OpenBLAS at a GPT-2 layer's shapes — the default where the
//    CPU has it;
//  - OpenBLAS's cblas_sgemm when the library is installed (loaded at run
//    time, so it stays optional); 1.2–1.5× faster than Eigen 3.4 here;
//  - Eigen's own, always there.

#include "attention_lab/matrix.h"
#include "attention_lab/stored_floats.h"

#include <cstddef>
#include <string>
#include <vector>

namespace attention_lab {

enum class GemmBackend { Eigen, OpenBlas, Packed };
const char* to_string(GemmBackend backend);
// Those this process can use, the default first.
std::vector<GemmBackend> available_gemm_backends();

// Whether the packed kernel runs on this CPU, and which variant: "AVX-512",
// "AVX2", or "" (none).
bool packed_available();
const char* packed_isa_name();

// The OpenBLAS library found (libopenblas.so.0, e.g. Debian's
// libopenblas0-openmp), or "" when there is none. Looked for once.
const std::string& openblas_library();
bool openblas_available();

// The backend in use: ATTENTION_LAB_GEMM=eigen|openblas|packed when set (and
// available), else packed, OpenBLAS, Eigen — the first this process has.
GemmBackend gemm_backend();
// Chooses one (benchmarks and tests); returns false, leaving Eigen, when the
// one asked for is not available.
bool set_gemm_backend(GemmBackend backend);

// y = x·B, B a rows × cols block of row-major floats `stride` apart, used as
// stored or transposed (then y = x·Bᵀ). y is resized.
void gemm(const Matrix& x, const float* b, int b_rows, int b_cols, int stride, bool transposed, Matrix& y);
// y += x·B (or x·Bᵀ); y must already be x.rows() × the product's columns.
void gemm_accumulate(const Matrix& x, const float* b, int b_rows, int b_cols, int stride, bool transposed, Matrix& y);
// The same with B's values as stored: float32, or float16 / bfloat16 (a
// model's weights where the file mapping put them), widened inside the
// product a panel at a time, never whole: on the packed backend as each
// panel of B is packed; on the others (and for one or two rows of x) in
// blocks of columns of y, each widened and multiplied by one thread. The
// sums are those of the same B widened first.
void gemm(const Matrix& x, StoredFloats b, int b_rows, int b_cols, int stride, bool transposed, Matrix& y);
void gemm_accumulate(const Matrix& x, StoredFloats b, int b_rows, int b_cols, int stride, bool transposed, Matrix& y);

// C = A·B (or A·Bᵀ) on row-major blocks: A is m × k with rows `lda` floats
// apart, B is k × n (transposed: n × k) with rows `ldb` apart, C is m × n
// with rows `ldc` apart and is overwritten. Blocks of bigger matrices work
// as they are (a head's columns of X·W_q). One or two rows of A take
// Eigen's matrix-vector product on every backend, split across the threads
// by columns of C (memory-bound: sgemm ran them on one thread, 2.6× slower).
// Called from inside an OpenMP parallel region (one product per thread, as
// attention's blocks are), it runs on the calling thread: the packed kernel,
// OpenBLAS when its build does that (the OpenMP or sequential one), else Eigen.
// With `accumulate`, C += A·B instead: a bias or a residual already in C is
// added by the product itself (OpenBLAS then skips its pass that zeroes C).
void gemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed, float* c, int ldc,
          bool accumulate = false);

// A right-hand factor B (k × n, rows `ldb` apart) for several products
// C (+)= A·B' with B' its first k' ≤ k rows, each as gemm() computes it, in
// the same bits (a head's values, read by each block of rows of its
// weights). On the packed backend B is packed once by prepare, not by each
// product: a W_q edit copied its head's values 16 times. B must stay as it
// is between prepare and the last product.
class GemmRhs {
 public:
  void prepare(const float* b, int k, int n, int ldb);
  // C (m × n, rows `ldc` apart) = A (m × k, rows `lda` apart) · B's first k rows; += with `accumulate`.
  void multiply(int m, int k, const float* a, int lda, float* c, int ldc, bool accumulate = false) const;
  std::size_t bytes() const { return panels_.capacity() * sizeof(float); }

 private:
  const float* b_ = nullptr;
  int k_ = 0, n_ = 0, ldb_ = 0;
  bool packed_ = false;
  std::vector<float> panels_;  // kept between prepares: a new buffer would page-fault each time
};

}  // namespace attention_lab
