// Weir's own SGEMM, and OpenBLAS split over Weir's pool, against a
// double-precision reference: every combination of transposes, alpha and
// beta (beta = 0 must ignore NaNs in C), edge tiles in M and N, K across
// block boundaries, leading dimensions larger than the rows, and 1, 2 and
// 3 threads (uneven splits).

#include "codegen/cpu/openblas.h"
#include "codegen/cpu/sgemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

namespace weir::codegen::cpu {
namespace {

struct Case {
  std::int64_t m, n, k;
};

/// One engine: runs the product on a pool.
using Engine = std::function<void(runtime::ThreadPool &, const GemmArgs &)>;

void weirKernel(runtime::ThreadPool &pool, const GemmArgs &g) {
  sgemm(pool, g.transA, g.transB, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b,
        g.ldb, g.beta, g.c, g.ldc);
}

void check(const Engine &engine, runtime::ThreadPool &pool, const Case &s,
           bool ta, bool tb, float alpha, float beta, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::int64_t lda = (ta ? s.m : s.k) + 3, ldb = (tb ? s.k : s.n) + 5,
               ldc = s.n + 7;
  std::vector<float> a((ta ? s.k : s.m) * lda), b((tb ? s.n : s.k) * ldb),
      c(s.m * ldc);
  for (float &x : a)
    x = dist(rng);
  for (float &x : b)
    x = dist(rng);
  for (float &x : c)
    x = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
  std::vector<float> c0 = c;
  engine(pool, {ta, tb, s.m, s.n, s.k, alpha, a.data(), lda, b.data(), ldb,
                beta, c.data(), ldc});
  for (std::int64_t i = 0; i < s.m; ++i) {
    for (std::int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (std::int64_t p = 0; p < s.k; ++p)
        sum += double(ta ? a[p * lda + i] : a[i * lda + p]) *
               double(tb ? b[j * ldb + p] : b[p * ldb + j]);
      double want = alpha * sum + (beta == 0.0f ? 0.0 : beta * c0[i * ldc + j]);
      ASSERT_NEAR(c[i * ldc + j], want, 1e-4 * (1 + std::sqrt(double(s.k))))
          << s.m << "x" << s.n << "x" << s.k << " ta=" << ta << " tb=" << tb
          << " at " << i << "," << j;
    }
    // Padding columns of C are never touched.
    for (std::int64_t j = s.n; j < ldc; ++j)
      ASSERT_TRUE(
          std::isnan(c[i * ldc + j]) == std::isnan(c0[i * ldc + j]) &&
          (std::isnan(c0[i * ldc + j]) || c[i * ldc + j] == c0[i * ldc + j]));
  }
}

void checkAll(const Engine &engine) {
  for (int threads : {1, 2, 3}) {
    runtime::ThreadPool pool(threads);
    unsigned seed = 1;
    for (Case s : {Case{1, 1, 1}, Case{8, 32, 7}, Case{9, 33, 17},
                   Case{7, 31, 300}, Case{130, 70, 257}, Case{64, 3136, 27},
                   Case{257, 5, 513}, Case{3, 3100, 12}, Case{100, 40, 100}})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (auto [alpha, beta] :
               {std::pair{1.0f, 0.0f}, std::pair{0.5f, 1.0f},
                std::pair{-2.0f, 0.25f}})
            check(engine, pool, s, ta, tb, alpha, beta, seed++);
  }
}

TEST(Sgemm, MatchesReferenceOnEdgesAndBlocks) {
  if (!sgemmKernelAvailable())
    GTEST_SKIP() << "this CPU has no AVX-512F; the OpenBLAS engine is used";
  checkAll(&weirKernel);
}

// OpenBLAS, single-threaded, on slices of C (by columns when C is wider,
// by rows otherwise; the larger cases are split, the smallest run whole).
TEST(Sgemm, OpenBlasOnThePoolMatchesReference) {
  checkAll(&openblasOnPool);
  EXPECT_EQ(openBlas().getThreads(), 1);
}

TEST(Sgemm, DegenerateSizes) {
  runtime::ThreadPool pool(2);
  std::vector<float> c = {1, 2, 3, 4};
  // k = 0: C = beta·C.
  sgemm(pool, false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.5f,
        c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1, 1.5f, 2}));
  sgemm(pool, false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.0f,
        c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0, 0, 0, 0}));
  // m = 0 or n = 0: nothing is touched.
  sgemm(pool, false, false, 0, 2, 3, 1.0f, nullptr, 3, nullptr, 2, 0.0f,
        nullptr, 2);
}

} // namespace
} // namespace weir::codegen::cpu

#include "codegen/cpu/compile.h"
#include "core/interp/interpreter.h"
#include "expansion/single_op.h"
#include "transforms/operators/expansion.h"

namespace weir::codegen::cpu {
namespace {

// The engine choice reaches the gemm primitive: a MatMul and a Gemm with
// bias run on each engine and agree with the interpreter.
TEST(Sgemm, EnginesRunTheGemmPrimitive) {
  using namespace expansion_testing;
  ir::Program matmul =
      single("MatMul", {}, {{"A", "a", {37, 300}}, {"B", "b", {300, 45}}},
             {{"Y", "y", {37, 45}}});
  ir::Program gemm =
      single("Gemm", {{"transB", std::int64_t(1)}, {"beta", 0.5}},
             {{"A", "a", {9, 70}}, {"B", "b", {33, 70}}, {"C", "c", {33}}},
             {{"Y", "y", {9, 33}}});
  for (ir::Program p : {matmul, gemm}) {
    operators::expandAll(p);
    interp::TensorMap in;
    unsigned seed = 5;
    for (const std::string &name : p.inputs) {
      std::vector<std::int64_t> shape;
      for (const ir::Expr &d : p.container(name).shape)
        shape.push_back(*d.asConstant());
      in[name] = random(shape, seed++);
    }
    interp::TensorMap want = interp::interpret(p, in);
    for (GemmEngine e : {GemmEngine::OpenBlas, GemmEngine::Weir}) {
      if (e == GemmEngine::Weir && !sgemmKernelAvailable())
        continue;
      CompileOptions o;
      o.gemm = e;
      Executable exe = compile(p, o);
      EXPECT_EQ(exe.gemmEngine(), e);
      interp::TensorMap got = exe.run(in);
      const runtime::Tensor &y = got.at("y"), &w = want.at("y");
      for (std::int64_t i = 0; i < w.elementCount(); ++i)
        ASSERT_NEAR(y.getAsDouble(i), w.getAsDouble(i), 1e-4)
            << gemmEngineName(e);
    }
  }
  EXPECT_EQ(parseGemmEngine("weir"), GemmEngine::Weir);
  EXPECT_FALSE(parseGemmEngine("mkl").has_value());
}

} // namespace
} // namespace weir::codegen::cpu
