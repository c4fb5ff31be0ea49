/// \file
/// Loading OpenBLAS with the right kernels (see the header).

#include "codegen/cpu/openblas.h"

#include "ir/error.h"

#include <dlfcn.h>

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

} // namespace

const OpenBlas &openBlas() {
  static std::once_flag once;
  static OpenBlas blas;
  std::call_once(once, [] { blas = load(); });
  return blas;
}

} // namespace weir::codegen::cpu
