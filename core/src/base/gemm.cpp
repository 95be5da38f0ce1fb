#include "attention_lab/gemm.h"

#include "base/packed_gemm.h"
#include "base/parallel.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace attention_lab {

namespace {

// cblas_sgemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

struct OpenBlas {
  Sgemm sgemm = nullptr;
  std::string path;
  // Whether a call from inside an OpenMP parallel region runs on the calling
  // thread alone: true for the OpenMP and the single-threaded builds; the
  // pthreads build would start its own threads from every caller at once.
  bool nests = false;
};

const OpenBlas& openblas() {
  static const OpenBlas lib = [] {
    OpenBlas o;
    // The plain name first (the system's choice among Debian's variants), then each variant's own folder.
    for (const char* name : {"libopenblas.so.0", "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0",
                             "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"}) {
      void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (!handle) continue;
      if (auto* f = reinterpret_cast<Sgemm>(dlsym(handle, "cblas_sgemm"))) {
        o.sgemm = f;
        o.path = name;
        // openblas_get_parallel(): 0 sequential, 1 pthreads, 2 OpenMP.
        if (auto* parallel = reinterpret_cast<int (*)()>(dlsym(handle, "openblas_get_parallel")))
          o.nests = parallel() != 1;
        break;  // (kept loaded for the life of the process)
      }
      dlclose(handle);
    }
    return o;
  }();
  return lib;
}

// The packed kernel's variant for this CPU, looked for once.
struct PackedIsa {
  const char* name = "";  // "" when the CPU has neither AVX-512F nor AVX2 + FMA
  long (*buffer_floats)(const packed::Product& p, int threads) = nullptr;
  void (*run)(const packed::Product&, float*, int) = nullptr;
  long (*packed_floats)(int k, int n) = nullptr;
  void (*pack)(const float* b, int ldb, int k, int n, float* packed) = nullptr;
  void (*run_prepacked)(const packed::Product&, const float* packed, int packed_k) = nullptr;
  bool f16c = false;  // widens float16 while packing (the CPU has F16C)
};

const PackedIsa& packed_isa() {
  static const PackedIsa isa = [] {
    PackedIsa i;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
      i = {"AVX-512",          packed::buffer_floats_avx512, packed::run_avx512,
           packed::packed_floats_avx512, packed::pack_avx512,        packed::run_prepacked_avx512};
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      i = {"AVX2",           packed::buffer_floats_avx2, packed::run_avx2,
           packed::packed_floats_avx2, packed::pack_avx2,        packed::run_prepacked_avx2};
    }
    // (from CPUID: Clang's __builtin_cpu_supports does not know "f16c")
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    i.f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
    return i;
  }();
  return isa;
}

GemmBackend initial_backend() {
  if (const char* v = std::getenv("ATTENTION_LAB_GEMM")) {
    if (std::strcmp(v, "eigen") == 0) return GemmBackend::Eigen;
    if (std::strcmp(v, "openblas") == 0 && openblas_available()) return GemmBackend::OpenBlas;
    if (std::strcmp(v, "packed") == 0 && packed_available()) return GemmBackend::Packed;
  }
  if (packed_available()) return GemmBackend::Packed;
  return openblas_available() ? GemmBackend::OpenBlas : GemmBackend::Eigen;
}

std::atomic<int>& chosen() {
  static std::atomic<int> backend{static_cast<int>(initial_backend())};
  return backend;
}

// A product of a few rows is a matrix-vector product per row, bound by
// reading B once from memory: OpenBLAS's sgemm ran one row of x·lm_headᵀ
// (50257 × 768) in 12 ms here, on one thread, where Eigen's vector product
// split across the threads by columns of C takes 4.7 ms (the predictions of
// a model's selected row, a pin in its last layer).
constexpr int kMaxVectorRows = 2;
constexpr long kMinVectorProduct = 1L << 16;  // below this, threads cost more than they save
constexpr int kVectorChunks = 16;             // column ranges, so a busy thread's share is small
bool takes_vector_products(int m, int n, int k) {
  return m <= kMaxVectorRows && static_cast<long>(n) * k >= kMinVectorProduct;
}

void vector_products(int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed,
                     float* c, int ldc, bool accumulate) {
  using Row = Eigen::Map<const RowVector>;
  using ConstBlock = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
#pragma omp parallel for schedule(dynamic)
  for (int chunk = 0; chunk < kVectorChunks; ++chunk) {
    const int first = static_cast<int>(static_cast<long>(n) * chunk / kVectorChunks);
    const int count = static_cast<int>(static_cast<long>(n) * (chunk + 1) / kVectorChunks) - first;
    if (count <= 0) continue;
    for (int i = 0; i < m; ++i) {
      const Row x(a + static_cast<std::ptrdiff_t>(i) * lda, k);
      Eigen::Map<RowVector> y(c + static_cast<std::ptrdiff_t>(i) * ldc + first, count);
      if (b_transposed) {  // rows first … first+count of B, each dotted with x
        const ConstBlock rows(b + static_cast<std::ptrdiff_t>(first) * ldb, count, k, Eigen::OuterStride<>(ldb));
        if (accumulate) y.noalias() += (rows * x.transpose()).transpose();
        else y.noalias() = (rows * x.transpose()).transpose();
      } else {  // columns first … first+count of B, a combination of its rows
        const ConstBlock cols(b + first, k, count, Eigen::OuterStride<>(ldb));
        if (accumulate) y.noalias() += x * cols;
        else y.noalias() = x * cols;
      }
    }
  }
}

void packed_product(const packed::Product& p) {
  const PackedIsa& isa = packed_isa();
  const int threads =
      omp_in_parallel() || !parallel::worth_threads(2.0 * p.m * p.n * p.k) ? 1 : std::max(1, omp_get_max_threads());
  // The panels of B, kept by the calling thread between products (≤ 256 KB
  // a thread).
  thread_local std::vector<float> buffer;
  const auto need = static_cast<std::size_t>(isa.buffer_floats(p, threads));
  if (buffer.size() < need) buffer.resize(need);
  isa.run(p, buffer.data(), threads);
}

}  // namespace

const char* to_string(GemmBackend backend) {
  switch (backend) {
    case GemmBackend::Eigen: return "Eigen";
    case GemmBackend::OpenBlas: return "OpenBLAS";
    case GemmBackend::Packed: return "packed";
  }
  return "?";
}

std::vector<GemmBackend> available_gemm_backends() {
  std::vector<GemmBackend> out;
  if (packed_available()) out.push_back(GemmBackend::Packed);
  if (openblas_available()) out.push_back(GemmBackend::OpenBlas);
  out.push_back(GemmBackend::Eigen);
  return out;
}

const std::string& openblas_library() { return openblas().path; }
bool openblas_available() { return openblas().sgemm != nullptr; }
bool packed_available() { return packed_isa().run != nullptr; }
const char* packed_isa_name() { return packed_isa().name; }

GemmBackend gemm_backend() { return static_cast<GemmBackend>(chosen().load()); }

bool set_gemm_backend(GemmBackend backend) {
  if ((backend == GemmBackend::OpenBlas && !openblas_available()) || (backend == GemmBackend::Packed && !packed_available())) {
    chosen() = static_cast<int>(GemmBackend::Eigen);
    return false;
  }
  chosen() = static_cast<int>(backend);
  return true;
}

void gemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed, float* c, int ldc,
          bool accumulate) {
  if (m <= 0 || n <= 0) return;
  using Block = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
  using ConstBlock = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
  Block C(c, m, n, Eigen::OuterStride<>(ldc));
  if (k <= 0) {
    if (!accumulate) C.setZero();
    return;
  }
  if (takes_vector_products(m, n, k)) {
    vector_products(m, n, k, a, lda, b, ldb, b_transposed, c, ldc, accumulate);
    return;
  }
  const GemmBackend backend = gemm_backend();
  if (backend == GemmBackend::Packed) {
    packed_product({m, n, k, a, lda, b, ldb, b_transposed, c, ldc, accumulate});
    return;
  }
  if (backend == GemmBackend::OpenBlas && (openblas().nests || !omp_in_parallel())) {
    openblas().sgemm(kRowMajor, kNoTrans, b_transposed ? kTrans : kNoTrans, m, n, k, 1.0f, a, lda, b, ldb,
                     accumulate ? 1.0f : 0.0f, c, ldc);
    return;
  }
  const ConstBlock A(a, m, k, Eigen::OuterStride<>(lda));
  if (b_transposed) {
    const auto B = ConstBlock(b, n, k, Eigen::OuterStride<>(ldb)).transpose();
    if (accumulate) C.noalias() += A * B;
    else C.noalias() = A * B;
  } else {
    const ConstBlock B(b, k, n, Eigen::OuterStride<>(ldb));
    if (accumulate) C.noalias() += A * B;
    else C.noalias() = A * B;
  }
}

namespace {

// The columns of C a thread widens B for and multiplies at a time when the
// product cannot widen as it packs: 256 columns of a 2048-deep B are 1 MB of
// floats, in L2 beside the rows of A.
constexpr int kWidenColumns = 256;

// C (+)= A·B for a 16-bit B, one block of columns of C after the other (in
// parallel when worth it): each block's part of B widened into the thread's
// own buffer, then multiplied on that thread as gemm() multiplies floats.
void widened_blocks(int m, int n, int k, const float* a, int lda, StoredFloats b, int ldb, bool b_transposed, float* c,
                    int ldc, bool accumulate) {
  const int blocks = (n + kWidenColumns - 1) / kWidenColumns;
  const bool threads = !omp_in_parallel() && parallel::worth_threads(2.0 * m * n * k);
#pragma omp parallel for schedule(dynamic) if (threads)
  for (int block = 0; block < blocks; ++block) {
    const int j0 = block * kWidenColumns, cols = std::min(kWidenColumns, n - j0);
    thread_local std::vector<float> widened;
    widened.resize(static_cast<std::size_t>(cols) * static_cast<std::size_t>(k));
    if (b_transposed) {  // rows j0 … of the stored n × k
      for (int j = 0; j < cols; ++j)
        b.widen(static_cast<std::ptrdiff_t>(j0 + j) * ldb, k, widened.data() + static_cast<std::ptrdiff_t>(j) * k);
    } else {  // columns j0 … of the stored k × n
      for (int p = 0; p < k; ++p)
        b.widen(static_cast<std::ptrdiff_t>(p) * ldb + j0, cols, widened.data() + static_cast<std::ptrdiff_t>(p) * cols);
    }
    gemm(m, cols, k, a, lda, widened.data(), b_transposed ? k : cols, b_transposed, c + j0, ldc, accumulate);
  }
}

void stored_product(int m, int n, int k, const float* a, int lda, StoredFloats b, int ldb, bool b_transposed, float* c,
                    int ldc, bool accumulate) {
  if (const float* f = b.f32()) {
    gemm(m, n, k, a, lda, f, ldb, b_transposed, c, ldc, accumulate);
    return;
  }
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate)
      for (int i = 0; i < m; ++i) std::fill_n(c + static_cast<std::ptrdiff_t>(i) * ldc, n, 0.0f);
    return;
  }
  const bool packs = gemm_backend() == GemmBackend::Packed && !takes_vector_products(m, n, k) &&
                     (b.type == StoredType::BF16 || packed_isa().f16c);
  if (!packs) {
    widened_blocks(m, n, k, a, lda, b, ldb, b_transposed, c, ldc, accumulate);
    return;
  }
  packed::Product p{m, n, k, a, lda, nullptr, ldb, b_transposed, c, ldc, accumulate};
  p.b16 = b.bits16();
  p.b16_is_bf16 = b.type == StoredType::BF16;
  packed_product(p);
}

}  // namespace

void gemm(const Matrix& x, StoredFloats b, int b_rows, int b_cols, int stride, bool transposed, Matrix& y) {
  const int m = static_cast<int>(x.rows());
  const int k = static_cast<int>(x.cols());
  const int n = transposed ? b_rows : b_cols;
  y.resize(m, n);
  stored_product(m, n, k, x.data(), std::max(k, 1), b, stride, transposed, y.data(), std::max(n, 1), false);
}

void gemm_accumulate(const Matrix& x, StoredFloats b, int b_rows, int b_cols, int stride, bool transposed, Matrix& y) {
  const int m = static_cast<int>(x.rows());
  const int k = static_cast<int>(x.cols());
  const int n = transposed ? b_rows : b_cols;
  if (y.rows() != m || y.cols() != n)
    throw std::invalid_argument("gemm_accumulate: expected y of " + std::to_string(m) + " x " + std::to_string(n) +
                                ", found " + std::to_string(y.rows()) + " x " + std::to_string(y.cols()));
  stored_product(m, n, k, x.data(), std::max(k, 1), b, stride, transposed, y.data(), std::max(n, 1), true);
}

void gemm(const Matrix& x, const float* b, int b_rows, int b_cols, int stride, bool transposed, Matrix& y) {
  gemm(x, StoredFloats{b, StoredType::F32}, b_rows, b_cols, stride, transposed, y);
}

void gemm_accumulate(const Matrix& x, const float* b, int b_rows, int b_cols, int stride, bool transposed, Matrix& y) {
  gemm_accumulate(x, StoredFloats{b, StoredType::F32}, b_rows, b_cols, stride, transposed, y);
}

void GemmRhs::prepare(const float* b, int k, int n, int ldb) {
  b_ = b;
  k_ = k;
  n_ = n;
  ldb_ = ldb;
  packed_ = gemm_backend() == GemmBackend::Packed && k > 0 && n > 0;
  if (!packed_) return;
  const PackedIsa& isa = packed_isa();
  const auto need = static_cast<std::size_t>(isa.packed_floats(k, n));
  if (panels_.size() < need) panels_.resize(need);
  isa.pack(b, ldb, k, n, panels_.data());
}

void GemmRhs::multiply(int m, int k, const float* a, int lda, float* c, int ldc, bool accumulate) const {
  // (one or two rows take gemm's matrix-vector product, as gemm gives them)
  if (!packed_ || m <= 0 || k <= 0 || k > k_ || takes_vector_products(m, n_, k)) {
    gemm(m, n_, k, a, lda, b_, ldb_, false, c, ldc, accumulate);
    return;
  }
  packed_isa().run_prepacked({m, n_, k, a, lda, nullptr, 0, false, c, ldc, accumulate}, panels_.data(), k_);
}

}  // namespace attention_lab
