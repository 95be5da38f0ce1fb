#include "attention_lab/gemm.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace attention_lab {

namespace {

// cblas_sgemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

struct OpenBlas {
  Sgemm sgemm = nullptr;
  std::string path;
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
        break;  // (kept loaded for the life of the process)
      }
      dlclose(handle);
    }
    return o;
  }();
  return lib;
}

GemmBackend initial_backend() {
  if (const char* v = std::getenv("ATTENTION_LAB_GEMM")) {
    if (std::strcmp(v, "eigen") == 0) return GemmBackend::Eigen;
    if (std::strcmp(v, "openblas") == 0 && openblas_available()) return GemmBackend::OpenBlas;
  }
  return openblas_available() ? GemmBackend::OpenBlas : GemmBackend::Eigen;
}

std::atomic<int>& chosen() {
  static std::atomic<int> backend{static_cast<int>(initial_backend())};
  return backend;
}

}  // namespace

const char* to_string(GemmBackend backend) { return backend == GemmBackend::OpenBlas ? "OpenBLAS" : "Eigen"; }

const std::string& openblas_library() { return openblas().path; }
bool openblas_available() { return openblas().sgemm != nullptr; }

GemmBackend gemm_backend() { return static_cast<GemmBackend>(chosen().load()); }

bool set_gemm_backend(GemmBackend backend) {
  if (backend == GemmBackend::OpenBlas && !openblas_available()) {
    chosen() = static_cast<int>(GemmBackend::Eigen);
    return false;
  }
  chosen() = static_cast<int>(backend);
  return true;
}

void gemm(const Matrix& x, const float* b, int b_rows, int b_cols, int stride, bool transposed, Matrix& y) {
  const int m = static_cast<int>(x.rows());
  const int k = static_cast<int>(x.cols());
  const int n = transposed ? b_rows : b_cols;
  y.resize(m, n);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    y.setZero();
    return;
  }
  if (gemm_backend() == GemmBackend::OpenBlas) {
    openblas().sgemm(kRowMajor, kNoTrans, transposed ? kTrans : kNoTrans, m, n, k, 1.0f, x.data(), k, b, stride, 0.0f,
                     y.data(), n);
    return;
  }
  const Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> B(b, b_rows, b_cols, Eigen::OuterStride<>(stride));
  if (transposed) y.noalias() = x * B.transpose();
  else y.noalias() = x * B;
}

}  // namespace attention_lab
