/// \file
/// Loading OpenBLAS with the right kernels (see the header).

#include "codegen/cpu/openblas.h"

#include "ir/error.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>

namespace weir::codegen::cpu {
namespace {

/// The kernels OpenBLAS should use on this CPU, or null to let it detect.
const char *preferredCore() {
  __builtin_cpu_init();
  bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (!avx512)
    return nullptr;
  return __builtin_cpu_supports("avx512bf16") ? "Cooperlake" : "SkylakeX";
}

OpenBlas load() {
  if (!std::getenv("OPENBLAS_CORETYPE"))
    if (const char *core = preferredCore())
      setenv("OPENBLAS_CORETYPE", core, 0);
  if (!std::getenv("OPENBLAS_THREAD_TIMEOUT"))
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  const char *path = WEIR_OPENBLAS_PATH;
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    throw Error(std::string("cannot load OpenBLAS (") + path +
                "): " + dlerror());
  auto symbol = [&](const char *name) {
    void *p = dlsym(lib, name);
    if (!p)
      throw Error(std::string("OpenBLAS (") + path + ") has no '" + name + "'");
    return p;
  };
  OpenBlas b;
  b.sgemm = reinterpret_cast<decltype(b.sgemm)>(symbol("cblas_sgemm"));
  b.setThreads = reinterpret_cast<decltype(b.setThreads)>(
      symbol("openblas_set_num_threads"));
  b.getThreads = reinterpret_cast<decltype(b.getThreads)>(
      symbol("openblas_get_num_threads"));
  b.coreName =
      reinterpret_cast<decltype(b.coreName)>(symbol("openblas_get_corename"));
  return b;
}

constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

void call(const OpenBlas &blas, const GemmArgs &g) {
  blas.sgemm(kRowMajor, g.transA ? kTrans : kNoTrans,
             g.transB ? kTrans : kNoTrans, static_cast<int>(g.m),
             static_cast<int>(g.n), static_cast<int>(g.k), g.alpha, g.a,
             static_cast<int>(g.lda), g.b, static_cast<int>(g.ldb), g.beta, g.c,
             static_cast<int>(g.ldc));
}

/// Below this many multiply-adds a product runs on one thread (about 10
/// microseconds of work, the cost of handing a slice to another thread).
constexpr std::int64_t kSerialMacs = std::int64_t(1) << 18;
constexpr std::int64_t kAlign = 16;

struct Split {
  const GemmArgs *g;
  bool byColumns;
  std::int64_t slice; ///< columns or rows per part, a multiple of kAlign
};

void runPart(void *context, std::int64_t begin, std::int64_t end) {
  const Split &s = *static_cast<const Split *>(context);
  const OpenBlas &blas = openBlas();
  for (std::int64_t part = begin; part < end; ++part) {
    GemmArgs g = *s.g;
    std::int64_t total = s.byColumns ? g.n : g.m;
    std::int64_t from = part * s.slice;
    std::int64_t size = std::min(s.slice, total - from);
    if (size <= 0)
      continue;
    if (s.byColumns) {
      g.n = size;
      g.b += g.transB ? from * g.ldb : from;
      g.c += from;
    } else {
      g.m = size;
      g.a += g.transA ? from : from * g.lda;
      g.c += from * g.ldc;
    }
    call(blas, g);
  }
}

} // namespace

void openblasOnPool(runtime::ThreadPool &pool, const GemmArgs &g) {
  const OpenBlas &blas = openBlas();
  if (blas.getThreads() != 1)
    blas.setThreads(1);
  int threads = pool.threads();
  bool byColumns = g.n >= g.m;
  std::int64_t total = byColumns ? g.n : g.m;
  if (threads == 1 ||
      g.m * g.n * std::max<std::int64_t>(g.k, 1) < kSerialMacs ||
      total < 2 * kAlign) {
    call(blas, g);
    return;
  }
  std::int64_t slice = (total + threads - 1) / threads;
  slice = (slice + kAlign - 1) / kAlign * kAlign;
  Split s{&g, byColumns, slice};
  pool.parallelFor((total + slice - 1) / slice, &runPart, &s);
}

const OpenBlas &openBlas() {
  static std::once_flag once;
  static OpenBlas blas;
  std::call_once(once, [] { blas = load(); });
  return blas;
}

} // namespace weir::codegen::cpu
