// buffer-reuse: golden before/after text, one negative test per refusal
// (overlapping lifetimes, different shapes, arguments, views, lifetimes
// that only the run order separates, a later transient that would read its
// buffer's zeros), equivalence on the interpreter and the CPU JIT, and the
// transient memory it saves on the bundled models after the auto recipe
// (tests/bench/movement_bench.cpp measures the bench models).

#include "ir/memory.h"
#include "onnx/import.h"
#include "transforms/auto_then_reuse.h"
#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/movement/buffer_reuse.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"
#include "workspace/auto_recipe.h"
#include "workspace/workspace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using Renames = std::vector<std::pair<std::string, std::string>>;

const transforms::Transformation &reuse() {
  return *transforms::requireTransformation("buffer-reuse");
}

ir::Expr sym(const char *s) { return ir::Expr::symbol(s); }
const ir::Expr i0 = sym("i0"), i1 = sym("i1");
const std::vector<ir::Range> kRanges{{0, 3}, {0, 5}};

/// Applies buffer-reuse (checked and validated) and checks bit-identical
/// outputs on the interpreter and the CPU JIT.
ir::Program applyVerified(const ir::Program &p) {
  ir::Program after = transforms::applyChecked(p, reuse(), {}).program;
  expectValid(after);
  expectEquivalent(p, after, reuse().exactness());
  return after;
}

std::string refusal(const ir::Program &p) {
  transforms::CheckResult c = transforms::checkMatch(p, reuse(), {});
  EXPECT_FALSE(c.ok);
  return c.reason;
}

/// x -> a -> t1 -> b -> t2 -> c -> t3 -> d -> y, elementwise over [3, 5].
/// `t3` is declared with `t3Shape`; `c` writes it with `cWcr` over rows
/// 0:`cRows`.
GraphBuilder chain(std::vector<std::int64_t> t3Shape = {3, 5},
                   std::optional<ir::Wcr> cWcr = std::nullopt,
                   std::int64_t cRows = 3) {
  GraphBuilder g("chain");
  g.input("x", {3, 5})
      .transient("t1", {3, 5})
      .transient("t2", {3, 5})
      .transient("t3", t3Shape)
      .output("y", {3, 5});
  std::vector<ir::Expr> t3Index{i0, i1};
  if (t3Shape.size() == 3)
    t3Index.push_back(ir::Expr(0));
  Maps m(g);
  m.add("a", {"i0", "i1"}, kRanges, {{"x", "x", {i0, i1}}}, "t = x * x",
        {{"t", "t1", {i0, i1}}});
  m.add("b", {"i0", "i1"}, kRanges, {{"t", "t1", {i0, i1}}}, "u = t + 1.0",
        {{"u", "t2", {i0, i1}}});
  m.add("c", {"i0", "i1"}, {{0, cRows}, {0, 5}}, {{"u", "t2", {i0, i1}}},
        "v = u * 3.0", {{"v", "t3", t3Index, cWcr}});
  m.add("d", {"i0", "i1"}, kRanges, {{"v", "t3", t3Index}}, "y = exp(v)",
        {{"y", "y", {i0, i1}}});
  return g;
}

TEST(BufferReuse, ChainGolden) {
  GraphBuilder g = chain();
  transforms::BufferReusePlan plan = transforms::planBufferReuse(g.p);
  EXPECT_EQ(plan.renames, (Renames{{"t3", "t1"}}));
  EXPECT_EQ(plan.allocatedBefore, 180);
  EXPECT_EQ(plan.allocatedAfter, 120);
  ir::Program after = applyVerified(g.p);
  expectGolden("buffer_reuse_chain", g.p, after);
  EXPECT_EQ(after.metadata.at("buffer-reuse"),
            "merges 1 transient into 1 other: allocated 180 B -> 120 B "
            "(180 -> 120 bytes)");
  ir::MemoryReport before = ir::transientMemory(g.p),
                   now = ir::transientMemory(after);
  EXPECT_EQ(now.allocated, 120);
  EXPECT_EQ(now.buffers, 2);
  EXPECT_EQ(now.peak, before.peak);
  // A second application finds nothing more to share.
  EXPECT_THAT(refusal(after), HasSubstr("no two transients"));
}

TEST(BufferReuse, LongChainAlternatesTwoBuffers) {
  GraphBuilder g("long_chain");
  g.input("x", {3, 5}).output("y", {3, 5});
  for (int k = 1; k <= 6; ++k)
    g.transient("t" + std::to_string(k), {3, 5});
  Maps m(g);
  std::string prev = "x";
  for (int k = 1; k <= 7; ++k) {
    std::string next = k == 7 ? "y" : "t" + std::to_string(k);
    m.add("m" + std::to_string(k), {"i0", "i1"}, kRanges,
          {{"a", prev, {i0, i1}}}, "b = a * 0.5 + 1.0",
          {{"b", next, {i0, i1}}});
    prev = next;
  }
  EXPECT_EQ(transforms::planBufferReuse(g.p).renames,
            (Renames{{"t3", "t1"}, {"t4", "t2"}, {"t5", "t1"}, {"t6", "t2"}}));
  ir::Program after = applyVerified(g.p);
  EXPECT_EQ(ir::transientMemory(after).buffers, 2);
  EXPECT_EQ(ir::transientMemory(after).allocated,
            ir::transientMemory(g.p).peak);
}

TEST(BufferReuse, AcrossStates) {
  // t1 lives in the first state, t3 in the second.
  GraphBuilder g("two_states");
  g.input("x", {3, 5})
      .transient("t1", {3, 5})
      .transient("t3", {3, 5})
      .output("y", {3, 5})
      .output("z", {3, 5});
  {
    Maps m(g);
    m.add("a", {"i0", "i1"}, kRanges, {{"x", "x", {i0, i1}}}, "t = x * x",
          {{"t", "t1", {i0, i1}}});
    m.add("b", {"i0", "i1"}, kRanges, {{"t", "t1", {i0, i1}}}, "y = t + 1.0",
          {{"y", "y", {i0, i1}}});
  }
  g.newState("second");
  {
    Maps m(g);
    m.add("c", {"i0", "i1"}, kRanges, {{"y", "y", {i0, i1}}}, "v = y * 3.0",
          {{"v", "t3", {i0, i1}}});
    m.add("d", {"i0", "i1"}, kRanges, {{"v", "t3", {i0, i1}}}, "z = exp(v)",
          {{"z", "z", {i0, i1}}});
  }
  EXPECT_EQ(transforms::planBufferReuse(g.p).renames, (Renames{{"t3", "t1"}}));
  applyVerified(g.p);
}

TEST(BufferReuse, CopiedTransientShares) {
  // t3 is a copy of t2 (an access-to-access edge writing all of it), so it
  // may take t1's buffer; a copy of only its first two rows may not.
  for (std::int64_t rows : {3, 2}) {
    GraphBuilder g("copy");
    g.input("x", {3, 5})
        .transient("t1", {3, 5})
        .transient("t2", {3, 5})
        .transient("t3", {3, 5})
        .output("y", {3, 5});
    Maps m(g);
    m.add("a", {"i0", "i1"}, kRanges, {{"x", "x", {i0, i1}}}, "t = x * x",
          {{"t", "t1", {i0, i1}}});
    m.add("b", {"i0", "i1"}, kRanges, {{"t", "t1", {i0, i1}}}, "u = t + 1.0",
          {{"u", "t2", {i0, i1}}});
    ir::State &s = g.p.states.back();
    ir::NodeId t3 = ir::addAccess(g.p, s, "t3");
    ir::addEdge(g.p, s, m.access.at("t2"), "", t3, "",
                ir::Memlet{"t3", ir::Subset{{{0, rows}, {0, 5}}}, {}});
    m.access["t3"] = t3;
    m.add("d", {"i0", "i1"}, kRanges, {{"v", "t3", {i0, i1}}}, "y = exp(v)",
          {{"y", "y", {i0, i1}}});
    expectValid(g.p);
    if (rows == 3) {
      EXPECT_EQ(transforms::planBufferReuse(g.p).renames,
                (Renames{{"t3", "t1"}}));
      applyVerified(g.p);
    } else {
      EXPECT_THAT(refusal(g.p), HasSubstr("no two transients"));
    }
  }
}

TEST(BufferReuse, GemmOutputsShare) {
  // MatMul -> Relu -> MatMul -> Relu: the second gemm (beta 0, all of C)
  // may write into the first one's buffer, the second Relu into the first's.
  GraphBuilder g("mlp");
  std::vector<float> w(16);
  for (int k = 0; k < 16; ++k)
    w[k] = 0.25f * static_cast<float>(k % 5) - 0.5f;
  g.input("x", {4, 4})
      .constantF32("w1", {4, 4}, w)
      .constantF32("w2", {4, 4}, w)
      .transient("h1", {4, 4})
      .transient("r1", {4, 4})
      .transient("h2", {4, 4})
      .transient("r2", {4, 4})
      .output("y", {4, 4});
  g.op("MatMul", "mm1", {{"A", "x"}, {"B", "w1"}}, {{"Y", "h1"}});
  g.op("Relu", "relu1", {{"X", "h1"}}, {{"Y", "r1"}});
  g.op("MatMul", "mm2", {{"A", "r1"}, {"B", "w2"}}, {{"Y", "h2"}});
  g.op("Relu", "relu2", {{"X", "h2"}}, {{"Y", "r2"}});
  g.op("Neg", "neg", {{"X", "r2"}}, {{"Y", "y"}});
  ir::Program p = transforms::applyChecked(
                      g.p, *transforms::requireTransformation("expand-all"), {})
                      .program;
  ASSERT_EQ(countNodes(p, ir::NodeKind::Primitive), 2);
  Renames renames = transforms::planBufferReuse(p).renames;
  EXPECT_THAT(renames, ::testing::Contains(
                           std::pair<std::string, std::string>("h2", "h1")));
  EXPECT_THAT(renames, ::testing::Contains(
                           std::pair<std::string, std::string>("r2", "r1")));
  applyVerified(p);
}

TEST(BufferReuse, RefusesOverlappingLifetimes) {
  // t1 is still read by the map that writes t2.
  GraphBuilder g = threeMapChain();
  EXPECT_THAT(refusal(g.p), HasSubstr("no two transients"));
}

TEST(BufferReuse, RefusesDifferentShapes) {
  GraphBuilder g = chain({3, 5, 1});
  expectValid(g.p);
  EXPECT_TRUE(transforms::planBufferReuse(g.p).renames.empty());
  EXPECT_THAT(refusal(g.p), HasSubstr("same dtype, shape and strides"));
}

TEST(BufferReuse, RefusesArguments) {
  // x (an input) is last read by a; t2 is first written by b, after it.
  GraphBuilder g("arguments");
  g.input("x", {3, 5})
      .transient("t1", {3, 5})
      .transient("t2", {3, 5})
      .output("y", {3, 5});
  Maps m(g);
  m.add("a", {"i0", "i1"}, kRanges, {{"x", "x", {i0, i1}}}, "t = x * x",
        {{"t", "t1", {i0, i1}}});
  m.add("b", {"i0", "i1"}, kRanges, {{"t", "t1", {i0, i1}}}, "u = t + 1.0",
        {{"u", "t2", {i0, i1}}});
  m.add("c", {"i0", "i1"}, kRanges, {{"u", "t2", {i0, i1}}}, "y = exp(u)",
        {{"y", "y", {i0, i1}}});
  EXPECT_THAT(refusal(g.p), HasSubstr("no two transients"));

  // The same with x a transient computed from an input: t2 takes x's
  // buffer.
  GraphBuilder h("not_arguments");
  h.input("z", {3, 5})
      .transient("x", {3, 5})
      .transient("t1", {3, 5})
      .transient("t2", {3, 5})
      .output("y", {3, 5});
  Maps n(h);
  n.add("pre", {"i0", "i1"}, kRanges, {{"z", "z", {i0, i1}}}, "x = z - 1.0",
        {{"x", "x", {i0, i1}}});
  n.add("a", {"i0", "i1"}, kRanges, {{"x", "x", {i0, i1}}}, "t = x * x",
        {{"t", "t1", {i0, i1}}});
  n.add("b", {"i0", "i1"}, kRanges, {{"t", "t1", {i0, i1}}}, "u = t + 1.0",
        {{"u", "t2", {i0, i1}}});
  n.add("c", {"i0", "i1"}, kRanges, {{"u", "t2", {i0, i1}}}, "y = exp(u)",
        {{"y", "y", {i0, i1}}});
  EXPECT_EQ(transforms::planBufferReuse(h.p).renames, (Renames{{"t2", "x"}}));
  applyVerified(h.p);
}

TEST(BufferReuse, RefusesViewsAndTheirTargets) {
  // b reads t1 through view v: neither t1 nor v may be shared, though t3
  // would otherwise take t1's buffer.
  GraphBuilder g("views");
  g.input("x", {3, 5})
      .transient("t1", {3, 5})
      .transient("t2", {3, 5})
      .transient("t3", {3, 5})
      .output("y", {3, 5});
  ir::Container v = g.p.container("t1");
  v.name = "v";
  v.viewOf = "t1";
  g.p.addContainer(v);
  Maps m(g);
  m.add("a", {"i0", "i1"}, kRanges, {{"x", "x", {i0, i1}}}, "t = x * x",
        {{"t", "t1", {i0, i1}}});
  ir::State &s = g.p.states.back();
  ir::NodeId va = ir::addAccess(g.p, s, "v");
  ir::addEdge(g.p, s, m.access.at("t1"), "", va, "", ir::Memlet{});
  m.access["v"] = va;
  m.add("b", {"i0", "i1"}, kRanges, {{"t", "v", {i0, i1}}}, "u = t + 1.0",
        {{"u", "t2", {i0, i1}}});
  m.add("c", {"i0", "i1"}, kRanges, {{"u", "t2", {i0, i1}}}, "v = u * 3.0",
        {{"v", "t3", {i0, i1}}});
  m.add("d", {"i0", "i1"}, kRanges, {{"v", "t3", {i0, i1}}}, "y = exp(v)",
        {{"y", "y", {i0, i1}}});
  expectValid(g.p);
  EXPECT_THAT(refusal(g.p), HasSubstr("no two transients"));
}

/// Two branches from x: a1 -> t1 -> a2 -> y and b1 -> t2 -> b2 -> z; with
/// `ordered`, b1 also reads y, which puts a path from t1's uses to t2's.
GraphBuilder branches(bool ordered) {
  GraphBuilder g("branches");
  g.input("x", {3, 5})
      .transient("t1", {3, 5})
      .transient("t2", {3, 5})
      .output("y", {3, 5})
      .output("z", {3, 5});
  Maps m(g);
  m.add("a1", {"i0", "i1"}, kRanges, {{"x", "x", {i0, i1}}}, "t = x * x",
        {{"t", "t1", {i0, i1}}});
  m.add("a2", {"i0", "i1"}, kRanges, {{"t", "t1", {i0, i1}}}, "y = t + 1.0",
        {{"y", "y", {i0, i1}}});
  std::vector<ir::MappedInput> in{{"x", "x", {i0, i1}}};
  if (ordered)
    in.push_back({"y", "y", {i0, i1}});
  m.add("b1", {"i0", "i1"}, kRanges, in, ordered ? "t = x - y" : "t = x - 2.0",
        {{"t", "t2", {i0, i1}}});
  m.add("b2", {"i0", "i1"}, kRanges, {{"t", "t2", {i0, i1}}}, "z = t * t",
        {{"z", "z", {i0, i1}}});
  return g;
}

TEST(BufferReuse, RefusesLifetimesOnlyTheRunOrderSeparates) {
  // The backend happens to run a1, a2 before b1, b2, so t1 is dead when t2
  // is born, but another valid order interleaves them: no sharing.
  GraphBuilder g = branches(false);
  ir::MemoryReport r = ir::transientMemory(g.p);
  ASSERT_EQ(r.transients.size(), 2u);
  EXPECT_LT(r.transients[0].last, r.transients[1].first); // in run order
  EXPECT_EQ(r.peak, 60);
  EXPECT_THAT(refusal(g.p), HasSubstr("no two transients"));

  // With `order`, an empty edge from a2 to b1 orders them first.
  transforms::BufferReusePlan plan = transforms::planBufferReuse(g.p, true);
  EXPECT_EQ(plan.renames, (Renames{{"t2", "t1"}}));
  ASSERT_EQ(plan.edges.size(), 1u);
  ir::Program ordered =
      transforms::applyChecked(g.p, reuse(), {}, {{"order", true}}).program;
  expectValid(ordered);
  expectGolden("buffer_reuse_order", g.p, ordered);
  expectEquivalent(g.p, ordered, reuse().exactness());
  EXPECT_THAT(ordered.metadata.at("buffer-reuse"),
              HasSubstr("1 ordering edge added"));

  // When b1 also reads y, every order runs a2 before b1.
  GraphBuilder h = branches(true);
  EXPECT_EQ(transforms::planBufferReuse(h.p).renames, (Renames{{"t2", "t1"}}));
  applyVerified(h.p);
}

TEST(BufferReuse, RefusesALaterTransientThatReadsItsZeros) {
  // c adds into t3 (write-conflict resolution on a fresh, zero-filled
  // buffer), or writes only its first two rows while d reads all three:
  // t1's leftovers would show through.
  for (auto [wcr, rows] :
       {std::pair<std::optional<ir::Wcr>, std::int64_t>{ir::Wcr::Sum, 3},
        {std::nullopt, 2}}) {
    GraphBuilder g = chain({3, 5}, wcr, rows);
    expectValid(g.p);
    EXPECT_THAT(refusal(g.p), HasSubstr("no two transients"));
  }
}

TEST(BufferReuse, RefusesSubgraphs) {
  GraphBuilder g("subgraph");
  g.input("c", {1}, ir::DType::Bool).output("y", {3});
  ir::Attributes attrs;
  attrs["then_branch"] = std::make_shared<const ir::Program>();
  g.op("If", "if", {{"cond", "c"}}, {{"out0", "y"}}, attrs);
  EXPECT_THAT(refusal(g.p), HasSubstr("has a subgraph"));
}

TEST(BufferReuse, BundledModelsExpanded) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name);
    ir::MemoryReport m0 = ir::transientMemory(before);
    transforms::BufferReusePlan plan = transforms::planBufferReuse(before);
    std::cout << "[ buffer-reuse ] " << name << " expanded: " << m0.str()
              << "; " << plan.str() << "\n";
    if (plan.renames.empty())
      continue;
    ir::Program after = applyVerified(before);
    ir::MemoryReport m1 = ir::transientMemory(after);
    EXPECT_EQ(m1.allocated, plan.allocatedAfter);
    EXPECT_GE(m1.peak, m0.peak);
    EXPECT_LE(m1.peak, m1.allocated);
  }
}

TEST(BufferReuse, BundledModelsAfterAuto) {
  for (const char *name : {"cnn.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    for (bool order : {false, true})
      autoThenReuse(std::string(WEIR_SOURCE_DIR) + "/resources/models/" + name,
                    true, order);
  }
}

} // namespace
} // namespace weir::transforms_testing
