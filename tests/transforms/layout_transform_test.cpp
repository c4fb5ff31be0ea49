// layout-transform: golden before/after text, reorders cancelling through
// a residual block, refusals matching their reasons, and equivalence
// (expanded, on the JIT and the interpreter) within the declared
// tolerance on synthetic networks and the bundled CNN.

#include "core/interp/interpreter.h"
#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using I64s = std::vector<std::int64_t>;

const transforms::Transformation &layoutTransform() {
  return *transforms::requireTransformation("layout-transform");
}

std::vector<float> weights(std::size_t n, float scale) {
  std::vector<float> w(n);
  for (std::size_t i = 0; i < n; ++i)
    w[i] = scale * std::sin(0.37f * float(i) + 0.1f);
  return w;
}

ir::Attributes conv3x3() {
  return {{"kernel_shape", I64s{3, 3}}, {"pads", I64s{1, 1, 1, 1}}};
}

int countOps(const ir::Program &p, std::string_view op) {
  int n = 0;
  for (const ir::State &s : p.states)
    for (const ir::Node &node : s.nodes)
      n += node.kind == ir::NodeKind::Library && node.library().op == op;
  return n;
}

/// Applies to a fixed point with `block`; returns the steps.
int blockAll(ir::Program &p, std::int64_t block) {
  int steps = 0;
  for (bool again = true; again;) {
    again = false;
    for (const transforms::Match &m :
         transforms::findMatches(p, layoutTransform()))
      if (transforms::checkMatch(p, layoutTransform(), m, {{"block", block}})) {
        p = transforms::applyChecked(p, layoutTransform(), m,
                                     {{"block", block}})
                .program;
        ++steps;
        again = true;
        break;
      }
  }
  return steps;
}

/// Within the declared tolerance on the JIT (verifyPrograms) and, unless
/// `jitOnly` (the interpreter runs a direct convolution element by
/// element: minutes for the bundled CNN under ASan), on the reference
/// interpreter.
void expectClose(const ir::Program &before, const ir::Program &after,
                 bool jitOnly = false) {
  transforms::Exactness tol = layoutTransform().exactness();
  workspace::VerifyReport v = workspace::verifyPrograms(before, after, tol);
  EXPECT_TRUE(v.ok) << v.str();
  if (jitOnly)
    return;
  ir::Program a = expandAll(before), b = expandAll(after);
  interp::TensorMap in = runtime::randomInputs(a, 3, {});
  interp::TensorMap x = interp::interpret(a, in), y = interp::interpret(b, in);
  for (const auto &[name, t] : x) {
    const float *p = reinterpret_cast<const float *>(t.data());
    const float *q = reinterpret_cast<const float *>(y.at(name).data());
    for (std::int64_t i = 0; i < t.elementCount(); ++i)
      ASSERT_LE(std::abs(p[i] - q[i]), tol.atol + tol.rtol * std::abs(p[i]))
          << name << "[" << i << "]: " << p[i] << " vs " << q[i];
  }
}

TEST(LayoutTransform, OneConvolutionGolden) {
  GraphBuilder g("one_conv");
  g.input("x", {1, 8, 5, 6}).output("y", {1, 4, 5, 6});
  g.constantF32("w", {4, 8, 3, 3}, weights(4 * 8 * 9, 0.2f));
  g.constantF32("b", {4}, {0.5f, -0.25f, 0.125f, 1.0f});
  g.op("Conv", "conv", {{"X", "x"}, {"W", "w"}, {"B", "b"}}, {{"Y", "y"}},
       conv3x3());
  ir::Program before = g.p, after = before;
  EXPECT_EQ(blockAll(after, 4), 1);
  expectValid(after);
  expectGolden("layout_transform_one_conv", before, after);
  EXPECT_EQ(countOps(after, "ToBlockedLayout"), 1);
  EXPECT_EQ(countOps(after, "BlockedConv"), 1);
  EXPECT_EQ(countOps(after, "FromBlockedLayout"), 1);
  expectClose(before, after);
}

/// conv → relu → conv → add(residual) → relu → conv, strided last.
ir::Program residualBlock() {
  GraphBuilder g("residual");
  g.input("x", {1, 8, 6, 6}).output("y", {1, 16, 3, 3});
  for (const char *t : {"c1", "r1", "c2", "s", "r2"})
    g.transient(t, {1, 8, 6, 6});
  g.constantF32("w1", {8, 8, 3, 3}, weights(8 * 8 * 9, 0.15f));
  g.constantF32("w2", {8, 8, 3, 3}, weights(8 * 8 * 9, -0.1f));
  g.constantF32("w3", {16, 8, 1, 1}, weights(16 * 8, 0.3f));
  g.constantF32("b1", {8}, weights(8, 0.05f));
  g.op("Conv", "conv1", {{"X", "x"}, {"W", "w1"}, {"B", "b1"}}, {{"Y", "c1"}},
       conv3x3());
  g.op("Relu", "relu1", {{"X", "c1"}}, {{"Y", "r1"}});
  g.op("Conv", "conv2", {{"X", "r1"}, {"W", "w2"}}, {{"Y", "c2"}}, conv3x3());
  g.op("Add", "add", {{"A", "c2"}, {"B", "r1"}}, {{"C", "s"}});
  g.op("Relu", "relu2", {{"X", "s"}}, {{"Y", "r2"}});
  g.op("Conv", "conv3", {{"X", "r2"}, {"W", "w3"}}, {{"Y", "y"}},
       {{"kernel_shape", I64s{1, 1}}, {"strides", I64s{2, 2}}});
  return g.p;
}

TEST(LayoutTransform, ReordersCancelThroughAResidualBlock) {
  ir::Program before = residualBlock(), after = before;
  EXPECT_EQ(blockAll(after, 4), 3);
  expectValid(after);
  // One reorder at each end; relu, add and relu run on blocked tensors.
  EXPECT_EQ(countOps(after, "ToBlockedLayout"), 1);
  EXPECT_EQ(countOps(after, "FromBlockedLayout"), 1);
  EXPECT_EQ(countOps(after, "BlockedConv"), 3);
  for (const char *gone : {"c1", "r1", "c2", "s", "r2"})
    EXPECT_EQ(after.findContainer(gone), nullptr) << gone;
  expectClose(before, after);
}

TEST(LayoutTransform, AReorderStaysWhileSomethingReadsIt) {
  // r1 is also a program output: relu1 still moves onto the blocked
  // tensor, and a reorder back writes r1 for the caller.
  ir::Program p = residualBlock();
  p.containers.at("r1").transient = false;
  p.outputs.push_back("r1");
  ir::Program after = p;
  EXPECT_EQ(blockAll(after, 4), 3);
  expectValid(after);
  EXPECT_NE(after.findContainer("r1"), nullptr);
  EXPECT_EQ(countOps(after, "ToBlockedLayout"), 1);
  EXPECT_EQ(countOps(after, "FromBlockedLayout"), 2);
  expectClose(p, after);
}

TEST(LayoutTransform, Refusals) {
  GraphBuilder g("refusals");
  g.input("x", {1, 6, 5, 5}).input("wx", {4, 6, 3, 3});
  g.output("a", {1, 6, 5, 5}).output("b", {1, 4, 5, 5});
  g.output("c", {1, 8, 5, 5}).output("d", {1, 8, 5, 5});
  g.constantF32("w6", {6, 3, 3, 3}, weights(6 * 3 * 9, 0.1f));
  g.constantF32("w8", {8, 6, 3, 3}, weights(8 * 6 * 9, 0.1f));
  ir::Attributes grouped = conv3x3();
  grouped["group"] = std::int64_t(2);
  g.op("Conv", "grouped", {{"X", "x"}, {"W", "w6"}}, {{"Y", "a"}}, grouped);
  g.op("Conv", "dynamic", {{"X", "x"}, {"W", "wx"}}, {{"Y", "b"}}, conv3x3());
  g.op("Conv", "odd", {{"X", "x"}, {"W", "w8"}}, {{"Y", "c"}}, conv3x3());
  g.op("Conv", "same", {{"X", "x"}, {"W", "w8"}}, {{"Y", "d"}},
       {{"kernel_shape", I64s{3, 3}}, {"auto_pad", std::string("SAME_UPPER")}});
  std::string why;
  for (const transforms::Match &m :
       transforms::findMatches(g.p, layoutTransform()))
    why += transforms::checkMatch(g.p, layoutTransform(), m, {{"block", 2}})
               .reason +
           "\n";
  EXPECT_THAT(why, HasSubstr("Conv 'grouped': grouped convolutions"));
  EXPECT_THAT(why,
              HasSubstr("Conv 'dynamic': the weights 'wx' are not a constant"));
  EXPECT_THAT(why,
              HasSubstr("Conv 'same': auto_pad 'SAME_UPPER' is not handled"));
  // 6 input channels: block 2 divides them, block 4 does not.
  EXPECT_THAT(refusals(g.p, layoutTransform()),
              HasSubstr("Conv 'odd': block 16 does not divide the 6 input and "
                        "8 output channels"));
  EXPECT_EQ(blockAll(g.p, 2), 1) << "only 'odd' passes with block 2";
}

TEST(LayoutTransform, BundledCnn) {
  ir::Program before = onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                                "/resources/models/cnn.onnx")
                           .program;
  ir::Program after = before;
  int steps = blockAll(after, 4);
  std::cout << "[ layout-transform ] cnn.onnx: " << steps
            << " convolutions blocked, " << countOps(after, "ToBlockedLayout")
            << " reorders in, " << countOps(after, "FromBlockedLayout")
            << " out\n";
  EXPECT_GT(steps, 0);
  expectValid(after);
  expectClose(before, after, /*jitOnly=*/true);
}

} // namespace
} // namespace weir::transforms_testing
