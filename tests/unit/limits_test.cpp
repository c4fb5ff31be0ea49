/// \file
/// The limits of ir/limits.h: each refused with a message naming it.

#include "ir/error.h"
#include "ir/limits.h"
#include "ir/validate.h"
#include "ir_builders.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace weir::ir {
namespace {

using namespace builders;
using ::testing::HasSubstr;

std::string refusal(const Program &p, const Bindings &symbols,
                    const RunLimits &limits = {}) {
  try {
    checkRunLimits(p, symbols, limits);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

/// `depth` maps nested in one another, each of one iteration, around one
/// tasklet that copies X[0] to Y[0].
Program deeplyNestedMaps(int depth) {
  Program p;
  p.name = "deep";
  p.addContainer(argument("X", DType::F32, {1}));
  p.addContainer(argument("Y", DType::F32, {1}));
  p.inputs = {"X"};
  p.outputs = {"Y"};
  State &s = p.states.emplace_back();
  s.name = "main";
  NodeId from = addAccess(p, s, "X");
  std::string fromConn;
  std::vector<NodeId> exits;
  for (int d = 0; d < depth; ++d) {
    auto [entry, exit] = addMap(p, s, "m" + std::to_string(d),
                                {"i" + std::to_string(d)}, {Range(0, 1)});
    Node &e = *s.findNode(entry);
    e.inputs = {{"IN_X", DType::F32}};
    e.outputs = {{"OUT_X", DType::F32}};
    Node &x = *s.findNode(exit);
    x.inputs = {{"IN_Y", DType::F32}};
    x.outputs = {{"OUT_Y", DType::F32}};
    addEdge(p, s, from, fromConn, entry, "IN_X", memlet("X", {Range(0, 1)}));
    from = entry;
    fromConn = "OUT_X";
    exits.push_back(exit);
  }
  NodeId t = addTasklet(p, s, "copy", {{"x", DType::F32}}, {{"y", DType::F32}},
                        "y = x");
  addEdge(p, s, from, fromConn, t, "x", memlet("X", {Range(0, 1)}));
  NodeId to = t;
  std::string toConn = "y";
  for (auto it = exits.rbegin(); it != exits.rend(); ++it) {
    addEdge(p, s, to, toConn, *it, "IN_Y", memlet("Y", {Range(0, 1)}));
    to = *it;
    toConn = "OUT_Y";
  }
  addEdge(p, s, to, toConn, addAccess(p, s, "Y"), "",
          memlet("Y", {Range(0, 1)}));
  return p;
}

TEST(Limits, NestingUpToTheLimitValidates) {
  EXPECT_FALSE(hasErrors(validate(deeplyNestedMaps(kMaxScopeDepth))));
}

TEST(Limits, NestingPastTheLimitIsRefused) {
  std::vector<Diagnostic> d = validate(deeplyNestedMaps(kMaxScopeDepth + 1));
  ASSERT_TRUE(hasErrors(d));
  EXPECT_THAT(d.front().str(), HasSubstr("nested more than 64 map scopes"));
  // Far past it: refused the same way, without a deep recursion.
  EXPECT_TRUE(hasErrors(validate(deeplyNestedMaps(5000))));
}

TEST(Limits, ATensorPastTheLimitIsRefusedBeforeAllocation) {
  Program p = elementwiseAdd(Expr::symbol("N"));
  EXPECT_EQ(refusal(p, {{"N", 1000}}), "");
  // 2^30 f32 elements: 4 GiB, exactly the limit, passes; one more does not.
  EXPECT_EQ(refusal(p, {{"N", std::int64_t(1) << 30}}), "");
  EXPECT_THAT(refusal(p, {{"N", (std::int64_t(1) << 30) + 1}}),
              HasSubstr("more than the limit of 4.0 GiB for one tensor"));
  RunLimits tight;
  tight.maxTensorBytes = 64;
  EXPECT_THAT(refusal(p, {{"N", 17}}, tight), HasSubstr("container '"));
  // Unbound, the symbol's containers wait for a later check.
  EXPECT_EQ(refusal(p, {}, tight), "");
}

TEST(Limits, AHugeSymbolIsRefused) {
  Program p = elementwiseAdd(Expr::symbol("N"));
  EXPECT_THAT(refusal(p, {{"N", std::int64_t(1) << 40}}),
              HasSubstr("symbol 'N' is bound to 1099511627776, more than "
                        "the limit of 2147483647"));
}

TEST(Limits, DimensionsWhoseProductOverflowsAreRefused) {
  Program p;
  p.name = "huge";
  Expr n = Expr::symbol("N");
  declareSymbols(p, n);
  p.addContainer(argument("X", DType::F32, {n, n, n}));
  p.inputs = {"X"};
  RunLimits wide;
  wide.maxSymbolValue = std::int64_t(1) << 40;
  EXPECT_THAT(refusal(p, {{"N", std::int64_t(1) << 30}}, wide),
              HasSubstr("more than 2^62 bytes"));
}

TEST(Limits, TransientTotalIsRefused) {
  Program p = matmulWithWcr(64, 64, 64);
  RunLimits tight;
  tight.maxTransientBytes = 1;
  bool hasTransient = false;
  for (const auto &[name, c] : p.containers)
    hasTransient |= c.transient && !c.isView() && !c.isConstant();
  if (!hasTransient) {
    Container t = argument("T", DType::F32, {64, 64});
    t.transient = true;
    p.addContainer(t);
  }
  EXPECT_THAT(refusal(p, {}, tight), HasSubstr("transient buffers would take"));
}

} // namespace
} // namespace weir::ir
