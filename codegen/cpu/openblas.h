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

namespace weir::codegen::cpu {

struct OpenBlas {
  void (*sgemm)(int order, int transA, int transB, int m, int n, int k,
                float alpha, const float *a, int lda, const float *b, int ldb,
                float beta, float *c, int ldc) = nullptr;
  void (*setThreads)(int threads) = nullptr;
  int (*getThreads)() = nullptr;
  const char *(*coreName)() = nullptr;
};

/// Loads the library once; throws weir::Error naming the file when it or a
/// function is missing.
const OpenBlas &openBlas();

} // namespace weir::codegen::cpu
