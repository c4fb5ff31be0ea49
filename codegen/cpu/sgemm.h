#pragma once
/// \file
/// Weir's own single-precision GEMM: C = alpha·op(A)·op(B) + beta·C on
/// row-major matrices (the cblas_sgemm contract), blocked in the manner of
/// BLIS/GotoBLAS — B packed into 32-column panels per K block, A into
/// 8-row panels per M block, an 8×32 AVX-512 micro-kernel with 16
/// accumulators — and run on Weir's thread pool, so a program's parallel
/// loops and its GEMMs share one set of threads.
///
/// It needs AVX-512F; `sgemmKernelAvailable()` says whether this CPU has
/// it. The gemm primitive runs on it or on OpenBLAS (codegen/cpu/
/// openblas.h) as `GemmEngine` chooses. It is the start of the
/// tensorization tier's micro-kernels (fused epilogues need a kernel of
/// our own), not yet the default.

#include "core/runtime/thread_pool.h"

#include <cstdint>
#include <string_view>
#include <optional>

namespace weir::codegen::cpu {

/// Whether the CPU (and this build) can run the micro-kernel.
bool sgemmKernelAvailable();

/// The cblas_sgemm contract, row-major; beta = 0 never reads C. Runs its
/// blocks on `pool` (serially when called from inside a parallel loop).
void sgemm(runtime::ThreadPool &pool, bool transA, bool transB,
           std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float *a, std::int64_t lda, const float *b, std::int64_t ldb,
           float beta, float *c, std::int64_t ldc);

/// Which routine executes gemm primitives.
/// Auto is OpenBLAS (on Weir's pool) for now: on this project's 2-core Zen 4
/// machine the micro-kernel matches OpenBLAS on most single products
/// (weir_gemm_bench) but whole models run 4–10% faster on OpenBLAS, so it
/// is opt-in until it wins.
enum class GemmEngine : std::uint8_t {
  Auto,     ///< OpenBLAS (see above)
  Weir,     ///< the micro-kernel (an error where unavailable)
  OpenBlas, ///< OpenBLAS cblas_sgemm
};
std::optional<GemmEngine> parseGemmEngine(std::string_view name);
std::string_view gemmEngineName(GemmEngine e);

} // namespace weir::codegen::cpu
