#pragma once
/// \file
/// The C functions generated code calls: allocation, parallel loops,
/// error reporting and f16/bf16 rounding. They are bound into every JIT by
/// address (see jit.cpp), so the names exist only between the two.

#include "core/runtime/thread_pool.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace weir::codegen::cpu {

/// Transient buffers kept between runs of one executable, by size.
class BlockCache {
public:
  BlockCache() = default;
  BlockCache(const BlockCache &) = delete;
  BlockCache &operator=(const BlockCache &) = delete;
  ~BlockCache();
  /// A cached block of exactly `size` bytes, or null.
  void *take(std::size_t size);
  void give(void *p, std::size_t size);

private:
  std::mutex mutex_;
  std::multimap<std::size_t, void *> free_;
};

/// One run's context, passed to the generated entry function.
struct RunContext {
  runtime::ThreadPool *pool = nullptr;
  BlockCache *blocks = nullptr; ///< null: allocate and free every time
  /// Nonzero once an error happened (set from any thread).
  std::int32_t error = 0;
  /// Seconds per profiled region (when compiled with profiling).
  double *profile = nullptr;
  /// Gemm primitives run on Weir's micro-kernel (codegen/cpu/sgemm.h)
  /// rather than OpenBLAS.
  bool weirGemm = false;
  /// The first access a bounds guard stopped (kErrorOutOfBounds), as a
  /// message; `failureClaimed` (set atomically) says one was written.
  std::int32_t failureClaimed = 0;
  std::string failure;
};

/// Error codes the generated code reports.
inline constexpr std::int32_t kErrorIntegerDivisionByZero = 1;
inline constexpr std::int32_t kErrorOutOfMemory = 2;
inline constexpr std::int32_t kErrorOutOfBounds = 3;

/// What generated code calls to allocate a transient (64-byte aligned,
/// cleared when `zero`, from rt->blocks when it has a block of the size)
/// and to give it back. Null, with rt->error set, when out of memory. The
/// driver (pieces.h) allocates the top-level transients with them.
void *allocateTransient(RunContext *rt, std::int64_t bytes, bool zero);
void releaseTransient(RunContext *rt, void *p, std::int64_t bytes);

/// Name and address of each runtime function, for binding into a JIT.
struct RuntimeSymbol {
  const char *name;
  void *address;
};
/// The runtime functions (a null-terminated list).
const RuntimeSymbol *runtimeSymbols();

} // namespace weir::codegen::cpu
