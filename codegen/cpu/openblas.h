#pragma once
/// \file
/// OpenBLAS, loaded on first use rather than linked, so that Weir can choose
/// its kernels before the library initializes: OpenBLAS 0.3.21 (Debian 12)
/// takes AMD's AVX-512 CPUs for Haswell and runs its AVX2 kernels there, at
/// about 60% of the speed of its AVX-512 (SkylakeX/Cooperlake) ones. Unless
/// the user set OPENBLAS_CORETYPE, Weir sets it from the CPU's features. It
/// also shortens how long OpenBLAS's idle threads spin (unless
/// OPENBLAS_THREAD_TIMEOUT is set), so they do not take the cores from
/// Weir's own parallel loops between two calls.
///
/// Weir runs OpenBLAS single-threaded, on the threads of its own pool
/// (openblasOnPool): two pools on the same cores, each with threads that
/// watch for work before sleeping, would take the cores from each other.

#include "core/runtime/thread_pool.h"

#include <cstdint>

namespace weir::codegen::cpu {

struct OpenBlas {
  void (*sgemm)(int order, int transA, int transB, int m, int n, int k,
                float alpha, const float *a, int lda, const float *b, int ldb,
                float beta, float *c, int ldc) = nullptr;
  void (*setThreads)(int threads) = nullptr;
  int (*getThreads)() = nullptr;
  const char *(*coreName)() = nullptr;
};

/// One row-major sgemm: C = alpha·op(A)·op(B) + beta·C.
struct GemmArgs {
  bool transA = false, transB = false;
  std::int64_t m = 0, n = 0, k = 0;
  float alpha = 1;
  const float *a = nullptr;
  std::int64_t lda = 0;
  const float *b = nullptr;
  std::int64_t ldb = 0;
  float beta = 0;
  float *c = nullptr;
  std::int64_t ldc = 0;
};

/// Runs `g` on single-threaded OpenBLAS, split over the pool's threads:
/// by columns of C when it is wider than tall, by rows otherwise, in
/// slices aligned to 16 (one AVX-512 vector), so each thread packs only
/// its own slice of the larger operand. A product too small to repay the
/// hand-off runs on the calling thread. openBlas() must have loaded.
void openblasOnPool(runtime::ThreadPool &pool, const GemmArgs &g);

/// Loads the library once; throws weir::Error naming the file when it or a
/// function is missing.
const OpenBlas &openBlas();

} // namespace weir::codegen::cpu
