// Pure expansions of MatMul, Gemm and Conv: structure, validation, and runs
// on the reference interpreter against naive loops computed here.

#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "ir/validate.h"
#include "transforms/operators/expansion.h"
#include "unit/ir_builders.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>

using namespace weir;
using namespace weir::ir;
using namespace weir::ir::builders;

#include "expansion/single_op.h"

using namespace weir::expansion_testing;

namespace {

// These tests are about the pure implementations (the defaults call
// OpenBLAS; tests/expansion/blas_test.cpp covers those).
const std::map<std::string, std::string> kPure{
    {"MatMul", "pure"}, {"Gemm", "pure"}, {"Conv", "pure"}};

TEST(LinalgExpansion, BatchedMatMulBroadcastsAndMatchesNaiveLoop) {
  // A [2, 1, 3, 4] x B [5, 4, 6] -> Y [2, 5, 3, 6].
  Program p =
      single("MatMul", {}, {{"A", "A", {2, 1, 3, 4}}, {"B", "B", {5, 4, 6}}},
             {{"Y", "Y", {2, 5, 3, 6}}});
  auto report = operators::expandAll(p, kPure);
  ASSERT_TRUE(report.skipped.empty()) << report.skipped.front();
  expectValid(p);
  EXPECT_EQ(count(p, NodeKind::MapEntry), 2); // init + accumulate
  EXPECT_EQ(count(p, NodeKind::Library), 0);
  EXPECT_GE(wcrEdges(p), 1);

  runtime::Tensor a = random({2, 1, 3, 4}, 1), b = random({5, 4, 6}, 2);
  auto out = interp::interpret(p, {{"A", a}, {"B", b}});
  std::vector<double> want;
  for (int n = 0; n < 2; ++n)
    for (int q = 0; q < 5; ++q)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 6; ++j) {
          double acc = 0;
          for (int k = 0; k < 4; ++k)
            acc += a.getAsDouble(n * 12 + i * 4 + k) *
                   b.getAsDouble(q * 24 + k * 6 + j);
          want.push_back(acc);
        }
  expectNear(out.at("Y"), want);
}

TEST(LinalgExpansion, MatMulWithVectorOperands) {
  // [4] x [2, 4, 3] -> [2, 3]
  Program p = single("MatMul", {}, {{"A", "A", {4}}, {"B", "B", {2, 4, 3}}},
                     {{"Y", "Y", {2, 3}}});
  ASSERT_TRUE(operators::expandAll(p, kPure).skipped.empty());
  expectValid(p);
  runtime::Tensor a = random({4}, 3), b = random({2, 4, 3}, 4);
  auto out = interp::interpret(p, {{"A", a}, {"B", b}});
  std::vector<double> want;
  for (int q = 0; q < 2; ++q)
    for (int j = 0; j < 3; ++j) {
      double acc = 0;
      for (int k = 0; k < 4; ++k)
        acc += a.getAsDouble(k) * b.getAsDouble(q * 12 + k * 3 + j);
      want.push_back(acc);
    }
  expectNear(out.at("Y"), want);
}

TEST(LinalgExpansion, GemmWithTransposesAlphaBetaAndRowBias) {
  Attributes attrs{{"transA", std::int64_t(1)},
                   {"transB", std::int64_t(1)},
                   {"alpha", 0.5},
                   {"beta", 2.0}};
  // A' = A^T with A [4, 3]; B' = B^T with B [5, 4]; C [5] broadcasts.
  Program p = single("Gemm", attrs,
                     {{"A", "A", {4, 3}}, {"B", "B", {5, 4}}, {"C", "C", {5}}},
                     {{"Y", "Y", {3, 5}}});
  ASSERT_TRUE(operators::expandAll(p, kPure).skipped.empty());
  expectValid(p);
  runtime::Tensor a = random({4, 3}, 5), b = random({5, 4}, 6),
                  c = random({5}, 7);
  auto out = interp::interpret(p, {{"A", a}, {"B", b}, {"C", c}});
  std::vector<double> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      double acc = 0;
      for (int k = 0; k < 4; ++k)
        acc += a.getAsDouble(k * 3 + i) * b.getAsDouble(j * 4 + k);
      want.push_back(0.5 * acc + 2.0 * c.getAsDouble(j));
    }
  expectNear(out.at("Y"), want);
}

/// Naive grouped 2-D convolution with symmetric-or-not zero padding.
std::vector<double> naiveConv(const runtime::Tensor &x,
                              const runtime::Tensor &w,
                              const runtime::Tensor *bias, int group,
                              std::array<int, 2> stride, std::array<int, 2> dil,
                              std::array<int, 4> pads,
                              std::array<int, 2> outHW) {
  auto xs = x.shape();
  auto ws = w.shape();
  int n = xs[0], c = xs[1], h = xs[2], wd = xs[3];
  int m = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
  int mg = m / group;
  std::vector<double> y;
  for (int b = 0; b < n; ++b)
    for (int o = 0; o < m; ++o)
      for (int oy = 0; oy < outHW[0]; ++oy)
        for (int ox = 0; ox < outHW[1]; ++ox) {
          double acc = bias ? bias->getAsDouble(o) : 0;
          for (int ci = 0; ci < cg; ++ci)
            for (int ky = 0; ky < kh; ++ky)
              for (int kx = 0; kx < kw; ++kx) {
                int iy = oy * stride[0] + ky * dil[0] - pads[0];
                int ix = ox * stride[1] + kx * dil[1] - pads[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd)
                  continue;
                int ch = (o / mg) * cg + ci;
                acc += x.getAsDouble(((b * c + ch) * h + iy) * wd + ix) *
                       w.getAsDouble(((o * cg + ci) * kh + ky) * kw + kx);
              }
          y.push_back(acc);
        }
  return y;
}

TEST(LinalgExpansion, GroupedStridedDilatedPaddedConvWithBias) {
  // X [1, 4, 7, 6], W [6, 2, 3, 2], group 2, strides [2, 1], dilations
  // [1, 2], pads [1, 0, 2, 1] -> H: (7 + 3 - 3) / 2 + 1 = 4,
  // W: (6 + 1 - 3) / 1 + 1 = 5.
  Attributes attrs{{"group", std::int64_t(2)},
                   {"strides", std::vector<std::int64_t>{2, 1}},
                   {"dilations", std::vector<std::int64_t>{1, 2}},
                   {"pads", std::vector<std::int64_t>{1, 0, 2, 1}}};
  Program p = single(
      "Conv", attrs,
      {{"X", "X", {1, 4, 7, 6}}, {"W", "W", {6, 2, 3, 2}}, {"B", "B", {6}}},
      {{"Y", "Y", {1, 6, 4, 5}}});
  ASSERT_TRUE(operators::expandAll(p, kPure).skipped.empty());
  expectValid(p);
  // pad fill, pad copy, init, accumulate
  EXPECT_EQ(count(p, NodeKind::MapEntry), 4);
  runtime::Tensor x = random({1, 4, 7, 6}, 8), w = random({6, 2, 3, 2}, 9),
                  b = random({6}, 10);
  auto out = interp::interpret(p, {{"X", x}, {"W", w}, {"B", b}});
  expectNear(out.at("Y"),
             naiveConv(x, w, &b, 2, {2, 1}, {1, 2}, {1, 0, 2, 1}, {4, 5}));
}

TEST(LinalgExpansion, ConvSameUpperPadsAsymmetrically) {
  // H = W = 5, kernel 2, stride 2: out 3, total pad 1, all of it after.
  Attributes attrs{{"auto_pad", std::string("SAME_UPPER")},
                   {"strides", std::vector<std::int64_t>{2, 2}}};
  Program p = single("Conv", attrs,
                     {{"X", "X", {1, 1, 5, 5}}, {"W", "W", {1, 1, 2, 2}}},
                     {{"Y", "Y", {1, 1, 3, 3}}});
  ASSERT_TRUE(operators::expandAll(p, kPure).skipped.empty());
  expectValid(p);
  runtime::Tensor x = random({1, 1, 5, 5}, 11), w = random({1, 1, 2, 2}, 12);
  auto out = interp::interpret(p, {{"X", x}, {"W", w}});
  expectNear(out.at("Y"),
             naiveConv(x, w, nullptr, 1, {2, 2}, {1, 1}, {0, 0, 1, 1}, {3, 3}));
}

TEST(LinalgExpansion, RefusedCasesLeaveTheNodeAndSayWhy) {
  Program conv = single("Conv", {{"group", std::int64_t(4)}},
                        {{"X", "X", {1, 6, 4, 4}}, {"W", "W", {6, 1, 3, 3}}},
                        {{"Y", "Y", {1, 6, 2, 2}}});
  auto report = operators::expandAll(conv, kPure);
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_NE(report.skipped[0].find("group"), std::string::npos);
  EXPECT_EQ(count(conv, NodeKind::Library), 1);
  EXPECT_EQ(conv.containers.size(), 3u); // no transient left behind

  Program mm = single("MatMul", {}, {{"A", "A", {2, 3}}, {"B", "B", {4, 5}}},
                      {{"Y", "Y", {2, 5}}});
  report = operators::expandAll(mm, kPure);
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_NE(report.skipped[0].find("inner dimensions"), std::string::npos);

  Program gemm =
      single("Gemm", {{"alpha", 2.0}},
             {{"A", "A", {2, 3}, DType::I32}, {"B", "B", {3, 4}, DType::I32}},
             {{"Y", "Y", {2, 4}, DType::I32}});
  report = operators::expandAll(gemm, kPure);
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_NE(report.skipped[0].find("float"), std::string::npos);
}

} // namespace
