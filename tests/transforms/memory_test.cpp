// ir::transientMemory: the bytes lowering allocates (checked against the
// loop IR's allocate statements), lifetimes in the backend's run order
// (checked against ir::viewState), the live peak, symbolic sizes.

#include "codegen/lower/lower.h"
#include "ir/error.h"
#include "ir/memory.h"
#include "ir/state_view.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"

#include <gtest/gtest.h>

#include <functional>

namespace weir::transforms_testing {
namespace {

ir::Expr sym(const char *s) { return ir::Expr::symbol(s); }
const ir::Expr i0 = sym("i0"), i1 = sym("i1");

/// Bytes of every allocate statement lowering emits, symbols 1.
std::int64_t loweredAllocation(const ir::Program &p) {
  codegen::LoopFunction f = codegen::lower(p);
  std::int64_t bytes = 0;
  std::function<void(const codegen::Stmt &)> walk =
      [&](const codegen::Stmt &s) {
        if (s.kind == codegen::StmtKind::Allocate) {
          ir::Bindings b;
          for (const std::string &x : s.size.freeSymbols())
            b[x] = 1;
          bytes += s.size.evaluate(b) *
                   static_cast<std::int64_t>(ir::dtypeSize(s.dtype));
        }
        for (const codegen::StmtPtr &c : s.body)
          walk(*c);
      };
  walk(*f.body);
  return bytes;
}

/// x -> a -> t1 -> b -> t2 -> c -> t3 -> d -> y, elementwise over [3, 5].
GraphBuilder fourMapChain() {
  GraphBuilder g("four_maps");
  g.input("x", {3, 5})
      .transient("t1", {3, 5})
      .transient("t2", {3, 5})
      .transient("t3", {3, 5})
      .output("y", {3, 5});
  Maps m(g);
  std::vector<ir::Range> r{{0, 3}, {0, 5}};
  m.add("a", {"i0", "i1"}, r, {{"x", "x", {i0, i1}}}, "t = x * x",
        {{"t", "t1", {i0, i1}}});
  m.add("b", {"i0", "i1"}, r, {{"t", "t1", {i0, i1}}}, "u = t + 1.0",
        {{"u", "t2", {i0, i1}}});
  m.add("c", {"i0", "i1"}, r, {{"u", "t2", {i0, i1}}}, "v = u * 3.0",
        {{"v", "t3", {i0, i1}}});
  m.add("d", {"i0", "i1"}, r, {{"v", "t3", {i0, i1}}}, "y = exp(v)",
        {{"y", "y", {i0, i1}}});
  return g;
}

const ir::TransientLifetime &lifetime(const ir::MemoryReport &r,
                                      const std::string &name) {
  for (const ir::TransientLifetime &l : r.transients)
    if (l.container == name)
      return l;
  throw weir::Error("no transient " + name);
}

TEST(TransientMemory, ChainLifetimesAndPeak) {
  GraphBuilder g = fourMapChain();
  ir::MemoryReport r = ir::transientMemory(g.p);
  // Run order: x, a, t1, b, t2, c, t3, d, y (access nodes are top-level
  // nodes too).
  EXPECT_EQ(r.steps, 9);
  EXPECT_EQ(r.buffers, 3);
  EXPECT_EQ(r.allocated, 3 * 15 * 4);
  EXPECT_EQ(r.peak, 2 * 15 * 4);
  EXPECT_EQ(lifetime(r, "t1").first, 1);
  EXPECT_EQ(lifetime(r, "t1").last, 3);
  EXPECT_EQ(lifetime(r, "t2").first, 3);
  EXPECT_EQ(lifetime(r, "t2").last, 5);
  EXPECT_EQ(lifetime(r, "t3").first, 5);
  EXPECT_EQ(lifetime(r, "t3").last, 7);
  EXPECT_EQ(r.str(), "allocated 180 B in 3 buffers, peak 120 B");
  EXPECT_EQ(loweredAllocation(g.p), r.allocated);
}

TEST(TransientMemory, CountsWhatLoweringAllocates) {
  // Unused transients are allocated but never live; views, constants and
  // arguments are not allocated at all.
  GraphBuilder g = fourMapChain();
  g.transient("unused", {7}, ir::DType::F64);
  g.constantF32("w", {2}, {1.0f, 2.0f});
  ir::Container v = g.p.container("t1");
  v.name = "v";
  v.shape = {ir::Expr(15)};
  v.strides = ir::rowMajorStrides(v.shape);
  v.viewOf = "t1";
  g.p.addContainer(v);
  ir::MemoryReport r = ir::transientMemory(g.p);
  EXPECT_EQ(r.buffers, 4);
  EXPECT_EQ(r.allocated, 3 * 15 * 4 + 7 * 8);
  EXPECT_EQ(r.peak, 2 * 15 * 4);
  EXPECT_EQ(lifetime(r, "unused").first, -1);
  EXPECT_EQ(loweredAllocation(g.p), r.allocated);
}

TEST(TransientMemory, ViewReadsKeepTheTargetLive) {
  // d reads t1 through a view: t1 lives until d.
  GraphBuilder g("view_chain");
  g.input("x", {3, 5}).transient("t1", {3, 5}).transient("t2", {3, 5});
  g.output("y", {3, 5});
  ir::Container v = g.p.container("t1");
  v.name = "v";
  v.viewOf = "t1";
  g.p.addContainer(v);
  Maps m(g);
  std::vector<ir::Range> r{{0, 3}, {0, 5}};
  m.add("a", {"i0", "i1"}, r, {{"x", "x", {i0, i1}}}, "t = x * x",
        {{"t", "t1", {i0, i1}}});
  m.add("b", {"i0", "i1"}, r, {{"t", "t1", {i0, i1}}}, "u = t + 1.0",
        {{"u", "t2", {i0, i1}}});
  ir::State &s = g.p.states.back();
  ir::NodeId va = ir::addAccess(g.p, s, "v");
  ir::addEdge(g.p, s, m.access.at("t1"), "", va, "", ir::Memlet{});
  m.access["v"] = va;
  m.add("d", {"i0", "i1"}, r, {{"u", "t2", {i0, i1}}, {"w", "v", {i0, i1}}},
        "y = u + w", {{"y", "y", {i0, i1}}});
  expectValid(g.p);
  ir::MemoryReport mr = ir::transientMemory(g.p);
  EXPECT_EQ(mr.buffers, 2);
  const ir::TransientLifetime &t1 = lifetime(mr, "t1"),
                              &t2 = lifetime(mr, "t2");
  EXPECT_GE(t1.last, t2.last); // read by d, like t2
  EXPECT_EQ(mr.peak, mr.allocated);
  EXPECT_EQ(loweredAllocation(g.p), mr.allocated);
}

TEST(TransientMemory, SymbolicSizesUnderBindings) {
  GraphBuilder g("symbolic");
  g.p.symbols.push_back("N");
  g.transient("t", {1});
  ir::Container &c = g.p.containers.at("t");
  c.shape = {sym("N"), ir::Expr(4)};
  c.strides = ir::rowMajorStrides(c.shape);
  EXPECT_EQ(ir::transientMemory(g.p).allocated, 16); // N unbound: 1
  EXPECT_EQ(ir::transientMemory(g.p, {{"N", 3}}).allocated, 48);
}

TEST(TransientMemory, RunOrderIsThePlannersOnTheBundledModels) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program p = expandedModel(name);
    for (const ir::State &s : p.states)
      EXPECT_EQ(ir::topLevel(s).order, ir::viewState(s).order.at(0));
    ir::MemoryReport r = ir::transientMemory(p);
    EXPECT_EQ(loweredAllocation(p), r.allocated);
    EXPECT_LE(r.peak, r.allocated);
    EXPECT_GT(r.peak, 0);
    std::cout << "[ memory ] " << name << ": " << r.str() << " (" << r.allocated
              << " / " << r.peak << " bytes)\n";
  }
}

} // namespace
} // namespace weir::transforms_testing
