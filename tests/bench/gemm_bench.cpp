// GEMM benchmark (not part of the pass/fail suite): Weir's micro-kernel SGEMM
// against OpenBLAS cblas_sgemm, in the same run, at 1 and 2 threads, on
// square sizes and on the shapes of ResNet-50's convolutions (M = output
// channels, N = output pixels, K = input channels × kernel area). At 2
// threads also OpenBLAS single-threaded on slices over Weir's pool (what
// compiled programs run, codegen/cpu/openblas.h). Prints median GFLOP/s
// and the ratios to OpenBLAS's own threading.
//
//   build/release/tests/weir_gemm_bench

#include "codegen/cpu/openblas.h"
#include "codegen/cpu/sgemm.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace weir::codegen::cpu;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F> double seconds(F &&f) {
  std::vector<double> runs;
  f(); // warm-up
  auto start = std::chrono::steady_clock::now();
  while (runs.size() < 5 ||
         (runs.size() < 200 &&
          std::chrono::steady_clock::now() - start < std::chrono::milliseconds(400))) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    runs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(runs);
}

} // namespace

int main() {
  if (!sgemmKernelAvailable()) {
    std::printf("this CPU has no AVX-512F: nothing to compare\n");
    return 0;
  }
  const OpenBlas &blas = openBlas();
  struct Shape {
    const char *name;
    int m, n, k;
  };
  const Shape shapes[] = {
      {"square 512", 512, 512, 512},    {"square 1024", 1024, 1024, 1024},
      {"conv1 7x7/2", 64, 12544, 147},  {"layer1 1x1", 64, 3136, 64},
      {"layer1 3x3", 64, 3136, 576},    {"layer1 1x1 up", 256, 3136, 64},
      {"layer2 3x3", 128, 784, 1152},   {"layer3 3x3", 256, 196, 2304},
      {"layer4 3x3", 512, 49, 4608},    {"layer4 1x1 up", 2048, 49, 512},
      {"fc", 1, 1000, 2048},            {"bert qkv", 128, 768, 768},
      {"bert ffn", 128, 3072, 768}};
  std::printf("%-16s %5s %6s %5s | %9s %9s %6s | %9s %9s %6s %9s %6s   (GFLOP/s)\n",
              "shape", "M", "N", "K", "weir 1t", "blas 1t", "ratio", "weir 2t", "blas 2t",
              "ratio", "pool 2t", "ratio");
  for (const Shape &s : shapes) {
    std::vector<float> a(std::size_t(s.m) * s.k, 0.5f), b(std::size_t(s.k) * s.n, 0.25f),
        c(std::size_t(s.m) * s.n);
    double flop = 2.0 * s.m * s.n * s.k;
    double g[2][2], onPool = 0;
    for (int t = 1; t <= 2; ++t) {
      weir::runtime::ThreadPool pool(t);
      blas.setThreads(t);
      g[t - 1][0] = flop / seconds([&] {
        sgemm(pool, false, false, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n, 0.0f,
              c.data(), s.n);
      }) / 1e9;
      g[t - 1][1] = flop / seconds([&] {
        blas.sgemm(101, 111, 111, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n, 0.0f,
                   c.data(), s.n);
      }) / 1e9;
      if (t == 2)
        onPool = flop / seconds([&] {
          openblasOnPool(pool, {false, false, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(),
                                s.n, 0.0f, c.data(), s.n});
        }) / 1e9;
    }
    std::printf("%-16s %5d %6d %5d | %9.1f %9.1f %6.2f | %9.1f %9.1f %6.2f %9.1f %6.2f\n",
                s.name, s.m, s.n, s.k, g[0][0], g[0][1], g[0][0] / g[0][1], g[1][0], g[1][1],
                g[1][0] / g[1][1], onPool, onPool / g[1][1]);
  }
  return 0;
}
