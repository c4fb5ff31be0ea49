// MaxPool's `window` implementation against the pure expansion on the
// reference interpreter, bit for bit: ResNet's 3x3/2 with padding 1, an odd
// input whose last window hangs past the end (ceil_mode), a 1-D and a 3-D
// pool, integers, NaN and signed zeros at the edges; its single map with no
// write-conflict resolution; the pools it refuses, with their reasons; and
// that it is never the default.

#include "core/interp/interpreter.h"
#include "ir/validate.h"
#include "transforms/operators/expansion.h"
#include "unit/ir_builders.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace weir;
using namespace weir::ir;
using namespace weir::ir::builders;

#include "expansion/single_op.h"

using namespace weir::expansion_testing;

namespace {

Program maxPool(std::vector<std::int64_t> x, std::vector<std::int64_t> y,
                Attributes attrs, DType dtype = DType::F32) {
  return single("MaxPool", std::move(attrs), {{"X", "X", x, dtype}},
                {{"Y", "Y", y, dtype}});
}

/// Expands `p` with `window` and purely; on `input` both give the same
/// bits. Returns the window program.
Program expectSameAsPure(const Program &p, const runtime::Tensor &input) {
  Program fast = p, pure = p;
  auto report = operators::expandAll(fast, {{"MaxPool", "window"}});
  EXPECT_TRUE(report.skipped.empty()) << report.skipped.front();
  EXPECT_TRUE(
      operators::expandAll(pure, {{"MaxPool", "pure"}}).skipped.empty());
  expectValid(fast);
  EXPECT_EQ(count(fast, NodeKind::MapEntry), 1);
  EXPECT_EQ(wcrEdges(fast), 0);
  interp::TensorMap in{{"X", input}};
  const runtime::Tensor got = interp::interpret(fast, in).at("Y");
  const runtime::Tensor want = interp::interpret(pure, in).at("Y");
  EXPECT_EQ(got.shape(), want.shape());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.byteSize()), 0);
  return fast;
}

const Attributes kResNet{{"kernel_shape", std::vector<std::int64_t>{3, 3}},
                         {"strides", std::vector<std::int64_t>{2, 2}},
                         {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}};

TEST(MaxPoolWindow, ResNetStemPoolEqualsPure) {
  Program p = maxPool({2, 3, 12, 12}, {2, 3, 6, 6}, kResNet);
  expectSameAsPure(p, random({2, 3, 12, 12}, 5));
}

TEST(MaxPoolWindow, NaNAndSignedZerosAtTheEdges) {
  runtime::Tensor x = random({1, 2, 7, 7}, 6);
  float *v = x.mutableAs<float>();
  v[0] = std::numeric_limits<float>::quiet_NaN(); // a clamped corner
  v[6] = -0.0f;
  v[5] = 0.0f;
  for (int i = 49; i < 98; ++i) // the second channel: all zeros of both signs
    v[i] = (i % 3) ? -0.0f : 0.0f;
  Program fast =
      expectSameAsPure(maxPool({1, 2, 7, 7}, {1, 2, 4, 4}, kResNet), x);
  interp::TensorMap out = interp::interpret(fast, {{"X", x}});
  EXPECT_TRUE(std::isnan(out.at("Y").as<float>()[0]));
}

TEST(MaxPoolWindow, CeilModeWindowPastTheEnd) {
  // 8 wide, kernel 3, stride 2, no pads, ceil_mode: the last window is
  // [6, 8], one position past the end.
  Program p = maxPool({1, 2, 8, 8}, {1, 2, 4, 4},
                      {{"kernel_shape", std::vector<std::int64_t>{3, 3}},
                       {"strides", std::vector<std::int64_t>{2, 2}},
                       {"ceil_mode", std::int64_t(1)}});
  expectSameAsPure(p, random({1, 2, 8, 8}, 7));
}

TEST(MaxPoolWindow, OneAndThreeSpatialDimensionsAndIntegers) {
  expectSameAsPure(maxPool({2, 3, 9}, {2, 3, 9},
                           {{"kernel_shape", std::vector<std::int64_t>{4}},
                            {"pads", std::vector<std::int64_t>{2, 1}}}),
                   random({2, 3, 9}, 8));
  expectSameAsPure(
      maxPool({1, 2, 5, 6, 4}, {1, 2, 2, 3, 2},
              {{"kernel_shape", std::vector<std::int64_t>{2, 2, 2}},
               {"strides", std::vector<std::int64_t>{2, 2, 2}}}),
      random({1, 2, 5, 6, 4}, 9));
  // A 1x1 window of a NaN with a payload: the canonical NaN, as purely.
  runtime::Tensor odd = random({1, 1, 2, 2}, 10);
  std::uint32_t payload = 0xffc01234u;
  std::memcpy(odd.mutableAs<float>(), &payload, 4);
  expectSameAsPure(maxPool({1, 1, 2, 2}, {1, 1, 2, 2},
                           {{"kernel_shape", std::vector<std::int64_t>{1, 1}}}),
                   odd);
  runtime::Tensor ints(DType::I32, {1, 1, 6, 6});
  for (std::int64_t i = 0; i < 36; ++i)
    ints.setFromDouble(i, double((i * 7) % 11) - 5);
  expectSameAsPure(maxPool({1, 1, 6, 6}, {1, 1, 3, 3}, kResNet, DType::I32),
                   ints);
}

TEST(MaxPoolWindow, RefusesWhatItCannotCompute) {
  auto reason = [](Program p) {
    auto report = operators::expandAll(p, {{"MaxPool", "window"}});
    EXPECT_EQ(report.skipped.size(), 1u);
    return report.skipped.empty() ? std::string() : report.skipped[0];
  };
  std::string dilated =
      reason(maxPool({1, 1, 8, 8}, {1, 1, 4, 4},
                     {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
                      {"dilations", std::vector<std::int64_t>{2, 2}}}));
  EXPECT_NE(dilated.find("dilations must be 1"), std::string::npos) << dilated;
  // Pads of 2 around a 2-wide kernel: the first window is all padding.
  std::string padding =
      reason(maxPool({1, 1, 4, 4}, {1, 1, 7, 7},
                     {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
                      {"pads", std::vector<std::int64_t>{2, 2, 2, 2}}}));
  EXPECT_NE(padding.find("wholly in the padding"), std::string::npos)
      << padding;
  std::string large =
      reason(maxPool({1, 1, 16, 16}, {1, 1, 1, 1},
                     {{"kernel_shape", std::vector<std::int64_t>{16, 16}}}));
  EXPECT_NE(large.find("more than 64 positions"), std::string::npos) << large;
  Program indices = single(
      "MaxPool", {{"kernel_shape", std::vector<std::int64_t>{2, 2}}},
      {{"X", "X", {1, 1, 4, 4}}},
      {{"Y", "Y", {1, 1, 2, 2}}, {"Indices", "I", {1, 1, 2, 2}, DType::I64}});
  std::string r = reason(indices);
  EXPECT_NE(r.find("Indices"), std::string::npos) << r;
}

TEST(MaxPoolWindow, NeverTheDefault) {
  Program p = maxPool({1, 1, 6, 6}, {1, 1, 3, 3}, kResNet);
  ASSERT_TRUE(operators::expandAll(p).skipped.empty());
  EXPECT_GT(wcrEdges(p), 0) << "the pure expansion's Max resolution";
}

} // namespace
