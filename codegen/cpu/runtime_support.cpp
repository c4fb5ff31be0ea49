/// \file
/// The runtime functions generated CPU code calls.

#include "codegen/cpu/runtime_support.h"

#include "codegen/cpu/openblas.h"
#include "codegen/cpu/sgemm.h"
#include "codegen/cpu/strided_copy.h"
#include "core/runtime/tensor.h"
#include "ir/float16.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace weir::codegen::cpu {
namespace {

/// Clears `size` bytes, on every thread of the pool when the block is large
/// (one thread cannot saturate the memory bandwidth).
void zeroFill(RunContext *rt, void *p, std::size_t size) {
  constexpr std::size_t kChunk = std::size_t(1) << 20;
  if (size < 2 * kChunk || !rt->pool || rt->pool->threads() == 1) {
    std::memset(p, 0, size);
    return;
  }
  struct Job {
    std::byte *base;
    std::size_t size;
  } job{static_cast<std::byte *>(p), size};
  auto chunks = static_cast<std::int64_t>((size + kChunk - 1) / kChunk);
  rt->pool->parallelFor(
      chunks,
      [](void *context, std::int64_t begin, std::int64_t end) {
        auto *j = static_cast<Job *>(context);
        std::size_t from = static_cast<std::size_t>(begin) * kChunk;
        std::size_t to =
            std::min(j->size, static_cast<std::size_t>(end) * kChunk);
        std::memset(j->base + from, 0, to - from);
      },
      &job);
}

extern "C" {

void weir_out_of_bounds(RunContext *rt, const char *what, std::int64_t dim,
                        std::int64_t index, std::int64_t extent);

/// Whether a `rows` x `cols` matrix `ld` elements per row apart fits in the
/// `room` elements from its first to its buffer's end (the interpreter's
/// rule). Reports the first that does not and returns false.
bool fits(RunContext *rt, const char *label, const char *name,
          std::int64_t rows, std::int64_t cols, std::int64_t ld,
          std::int64_t room) {
  if (rows <= 0 || cols <= 0)
    return true; // touches nothing
  __int128 last = static_cast<__int128>(rows - 1) * ld + cols - 1;
  if (ld >= cols && last < room)
    return true;
  std::string what = "gemm '" + std::string(label) + "': the " +
                     std::to_string(rows) + "x" + std::to_string(cols) +
                     " matrix " + name + " (leading dimension " +
                     std::to_string(ld) + ")";
  if (ld < cols)
    what += ", whose rows overlap,";
  weir_out_of_bounds(rt, what.c_str(), 0,
                     static_cast<std::int64_t>(
                         last > INT64_MAX ? INT64_MAX : last),
                     room);
  return false;
}

/// Row-major sgemm (ir/primitives.h): Weir's micro-kernel, or OpenBLAS
/// run on the program's own pool (openblasOnPool). Each matrix must fit in
/// the room its buffer has (loop_ir.h, "sgemm"); when one does not, the
/// call does nothing and the run fails.
void weir_sgemm(RunContext *rt, const char *label, std::int64_t transA,
                std::int64_t transB, std::int64_t m, std::int64_t n,
                std::int64_t k, double alpha, const float *a, std::int64_t lda,
                const float *b, std::int64_t ldb, double beta, float *c,
                std::int64_t ldc, std::int64_t roomA, std::int64_t roomB,
                std::int64_t roomC) {
  if (m <= 0 || n <= 0)
    return;
  if (!fits(rt, label, "A", transA ? k : m, transA ? m : k, lda, roomA) ||
      !fits(rt, label, "B", transB ? n : k, transB ? k : n, ldb, roomB) ||
      !fits(rt, label, "C", m, n, ldc, roomC))
    return;
  GemmArgs g{transA != 0,
             transB != 0,
             m,
             n,
             k,
             static_cast<float>(alpha),
             a,
             lda,
             b,
             ldb,
             static_cast<float>(beta),
             c,
             ldc};
  if (rt->weirGemm)
    sgemm(*rt->pool, g.transA, g.transB, m, n, k, g.alpha, a, lda, b, ldb,
          g.beta, c, ldc);
  else
    openblasOnPool(*rt->pool, g);
}

/// 64-byte aligned, zero-filled when `zero` (lowering clears every buffer
/// but those the program writes whole before reading); null (and the run's
/// error set) when out of memory. Blocks come from the executable's cache
/// when it has one of the size: fresh pages cost a page fault each, which
/// on a virtual machine costs more than the work done on them.
void *weir_alloc(RunContext *rt, std::int64_t bytes, std::int64_t zero) {
  std::size_t size = (static_cast<std::size_t>(bytes) + 63) / 64 * 64;
  if (size == 0)
    size = 64;
  void *p = rt->blocks ? rt->blocks->take(size) : nullptr;
  if (!p)
    p = std::aligned_alloc(64, size);
  if (!p) {
    std::atomic_ref<std::int32_t>(rt->error).store(kErrorOutOfMemory);
    return nullptr;
  }
  if (zero)
    zeroFill(rt, p, size);
  return p;
}

void weir_free(RunContext *rt, void *p, std::int64_t bytes) {
  std::size_t size = (static_cast<std::size_t>(bytes) + 63) / 64 * 64;
  if (size == 0)
    size = 64;
  if (rt->blocks)
    rt->blocks->give(p, size);
  else
    std::free(p);
}

std::int64_t weir_profile_enter(RunContext *) {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}

void weir_profile_exit(RunContext *rt, std::int64_t id, std::int64_t start) {
  std::int64_t now =
      std::chrono::steady_clock::now().time_since_epoch().count();
  if (rt->profile)
    rt->profile[id] += std::chrono::duration<double>(
                           std::chrono::steady_clock::duration(now - start))
                           .count();
}

void weir_error(RunContext *rt, std::int32_t code) {
  std::atomic_ref<std::int32_t>(rt->error).store(code);
}

/// A bounds guard failed (loop_ir.h, BoundsGuard): the access was not
/// made; the first failure of the run is the one reported.
void weir_out_of_bounds(RunContext *rt, const char *what, std::int64_t dim,
                        std::int64_t index, std::int64_t extent) {
  if (std::atomic_ref<std::int32_t>(rt->failureClaimed).exchange(1) != 0)
    return;
  rt->failure = std::string(what) + " is out of bounds in dimension " +
                std::to_string(dim) + ": index " + std::to_string(index) +
                " outside [0, " + std::to_string(extent) + ")";
  weir_error(rt, kErrorOutOfBounds);
}

/// A copy nest (copy_nest.h): see stridedCopy.
void weir_copy(void *dst, const void *src, std::int64_t elementBytes,
               std::int64_t rank, const std::int64_t *dims) {
  stridedCopy(dst, src, elementBytes, rank, dims);
}

void weir_parallel_for(RunContext *rt, std::int64_t count,
                       runtime::ThreadPool::Body body, void *env) {
  rt->pool->parallelFor(count, body, env);
}

/// f16/bf16: values are held in float between operations and rounded to
/// their own precision by casts (from a double, once) and stores.
float weir_round_f16(double v) { return ir::halfToFloat(ir::doubleToHalf(v)); }
float weir_round_bf16(double v) {
  return ir::bfloat16ToFloat(ir::doubleToBfloat16(v));
}
std::uint16_t weir_f16_bits(double v) { return ir::doubleToHalf(v); }
std::uint16_t weir_bf16_bits(double v) { return ir::doubleToBfloat16(v); }
float weir_f16_value(std::uint16_t bits) { return ir::halfToFloat(bits); }
float weir_bf16_value(std::uint16_t bits) { return ir::bfloat16ToFloat(bits); }

} // extern "C"

const RuntimeSymbol kSymbols[] = {
    {"weir_alloc", reinterpret_cast<void *>(&weir_alloc)},
    {"weir_free", reinterpret_cast<void *>(&weir_free)},
    {"weir_profile_enter", reinterpret_cast<void *>(&weir_profile_enter)},
    {"weir_profile_exit", reinterpret_cast<void *>(&weir_profile_exit)},
    {"weir_error", reinterpret_cast<void *>(&weir_error)},
    {"weir_out_of_bounds", reinterpret_cast<void *>(&weir_out_of_bounds)},
    {"weir_parallel_for", reinterpret_cast<void *>(&weir_parallel_for)},
    {"weir_sgemm", reinterpret_cast<void *>(&weir_sgemm)},
    {"weir_copy", reinterpret_cast<void *>(&weir_copy)},
    {"weir_round_f16", reinterpret_cast<void *>(&weir_round_f16)},
    {"weir_round_bf16", reinterpret_cast<void *>(&weir_round_bf16)},
    {"weir_f16_bits", reinterpret_cast<void *>(&weir_f16_bits)},
    {"weir_bf16_bits", reinterpret_cast<void *>(&weir_bf16_bits)},
    {"weir_f16_value", reinterpret_cast<void *>(&weir_f16_value)},
    {"weir_bf16_value", reinterpret_cast<void *>(&weir_bf16_value)},
    {nullptr, nullptr},
};

} // namespace

const RuntimeSymbol *runtimeSymbols() { return kSymbols; }

void *allocateTransient(RunContext *rt, std::int64_t bytes, bool zero) {
  return weir_alloc(rt, bytes, zero ? 1 : 0);
}

void releaseTransient(RunContext *rt, void *p, std::int64_t bytes) {
  weir_free(rt, p, bytes);
}

void *BlockCache::take(std::size_t size) {
  std::lock_guard lock(mutex_);
  auto it = free_.find(size);
  if (it == free_.end())
    return nullptr;
  void *p = it->second;
  free_.erase(it);
  return p;
}

void BlockCache::give(void *p, std::size_t size) {
  std::lock_guard lock(mutex_);
  free_.emplace(size, p);
}

BlockCache::~BlockCache() {
  for (const auto &[size, p] : free_)
    std::free(p);
}

} // namespace weir::codegen::cpu
