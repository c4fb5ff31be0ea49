// transient-to-register: golden before/after text, negative tests matching
// their reasons, equivalence on the interpreter and the CPU JIT, the
// lowering's per-iteration allocation, the analysis and memory report, and
// the bundled models after expand-all and after the auto recipe.

#include "codegen/lower/loop_ir.h"
#include "codegen/lower/lower.h"
#include "ir/memory.h"
#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"
#include "unit/ir_builders.h"
#include "workspace/auto_recipe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;

const transforms::Transformation &toRegister() {
  return *transforms::requireTransformation("transient-to-register");
}

struct RowOptions {
  std::int64_t cols = 4;
  std::int64_t readCols = 4; ///< columns the second inner map reads
  bool tmpIsOutput = false;
};

/// Y[i, k] = X[i, k]^2 + 1 through tmp: an outer map over rows i holds
/// two inner maps, the first writing row i of tmp (an access node inside
/// the outer scope), the second reading it.
ir::Program rowProgram(RowOptions o = {}) {
  using namespace ir;
  Program p;
  p.name = "rows";
  const std::int64_t rows = 8;
  p.addContainer(builders::argument("X", DType::F32, {rows, o.cols}));
  p.addContainer(builders::argument("Y", DType::F32, {rows, o.readCols}));
  Container tmp = builders::argument("tmp", DType::F32, {rows, o.cols});
  tmp.transient = !o.tmpIsOutput;
  p.addContainer(tmp);
  p.inputs = {"X"};
  p.outputs = {"Y"};
  if (o.tmpIsOutput)
    p.outputs.push_back("tmp");
  State &s = p.states.emplace_back();
  s.name = "main";
  Expr i = Expr::symbol("i"), j = Expr::symbol("j"), k = Expr::symbol("k");
  auto conns = [&](NodeId id, std::string in, std::string out) {
    Node &n = *s.findNode(id);
    n.inputs = {{"IN_" + in, DType::F32}};
    n.outputs = {{"OUT_" + out, DType::F32}};
  };
  NodeId x = addAccess(p, s, "X");
  auto [outer, outerExit] =
      addMap(p, s, "rows", {"i"}, {Range(0, rows)}, Schedule::CpuParallel);
  auto [sq, sqExit] = addMap(p, s, "square", {"j"}, {Range(0, o.cols)});
  NodeId t1 = addTasklet(p, s, "square", {{"x", DType::F32}},
                         {{"s", DType::F32}}, "s = x * x");
  NodeId t = addAccess(p, s, "tmp");
  auto [inc, incExit] = addMap(p, s, "inc", {"k"}, {Range(0, o.readCols)});
  NodeId t2 = addTasklet(p, s, "inc", {{"t", DType::F32}}, {{"y", DType::F32}},
                         "y = t + 1.0");
  NodeId y = addAccess(p, s, "Y");
  conns(outer, "X", "X");
  conns(outerExit, "Y", "Y");
  conns(sq, "X", "X");
  conns(sqExit, "tmp", "tmp");
  conns(inc, "tmp", "tmp");
  conns(incExit, "Y", "Y");
  auto m = [](std::string c, std::vector<Range> r) {
    return Memlet{std::move(c), Subset{std::move(r)}, {}};
  };
  addEdge(p, s, x, "", outer, "IN_X", m("X", {{0, rows}, {0, o.cols}}));
  addEdge(p, s, outer, "OUT_X", sq, "IN_X",
          m("X", {Range::point(i), {0, o.cols}}));
  addEdge(p, s, sq, "OUT_X", t1, "x",
          m("X", {Range::point(i), Range::point(j)}));
  addEdge(p, s, t1, "s", sqExit, "IN_tmp",
          m("tmp", {Range::point(i), Range::point(j)}));
  addEdge(p, s, sqExit, "OUT_tmp", t, "",
          m("tmp", {Range::point(i), {0, o.cols}}));
  addEdge(p, s, t, "", inc, "IN_tmp",
          m("tmp", {Range::point(i), {0, o.readCols}}));
  addEdge(p, s, inc, "OUT_tmp", t2, "t",
          m("tmp", {Range::point(i), Range::point(k)}));
  addEdge(p, s, t2, "y", incExit, "IN_Y",
          m("Y", {Range::point(i), Range::point(k)}));
  addEdge(p, s, incExit, "OUT_Y", outerExit, "IN_Y",
          m("Y", {Range::point(i), {0, o.readCols}}));
  addEdge(p, s, outerExit, "OUT_Y", y, "",
          m("Y", {{0, rows}, {0, o.readCols}}));
  return p;
}

TEST(TransientToRegister, RowOfAnInnerMapGolden) {
  ir::Program before = rowProgram();
  expectValid(before);
  ir::Program after = before;
  EXPECT_EQ(toFixedPoint(after, toRegister()), 1);
  expectValid(after);
  expectGolden("transient_to_register_rows", before, after);
  const ir::Container &tmp = after.container("tmp");
  EXPECT_EQ(tmp.storage, ir::Storage::Register);
  EXPECT_EQ(tmp.shape, (std::vector<ir::Expr>{ir::Expr(1), ir::Expr(4)}));
  // 8 rows x 4 columns, written and read once each, 4 bytes an element.
  EXPECT_EQ(bytesMoved(before) - bytesMoved(after), 2 * 8 * 4 * 4);
  ir::MemoryReport m0 = ir::transientMemory(before),
                   m1 = ir::transientMemory(after);
  EXPECT_EQ(m1.buffers, m0.buffers - 1);
  EXPECT_EQ(m0.allocated - m1.allocated, 8 * 4 * 4);
  expectEquivalent(before, after, toRegister().exactness());
}

TEST(TransientToRegister, LoweringAllocatesInsideTheLoop) {
  ir::Program p = rowProgram();
  EXPECT_EQ(toFixedPoint(p, toRegister()), 1);
  std::string loops = codegen::print(codegen::lower(p));
  std::string host = codegen::print(codegen::lower(rowProgram()));
  auto loopAt = loops.find(" i in "), allocAt = loops.find("allocate tmp");
  ASSERT_NE(loopAt, std::string::npos) << loops;
  ASSERT_NE(allocAt, std::string::npos) << loops;
  EXPECT_LT(loopAt, allocAt) << loops;
  EXPECT_LT(host.find("allocate tmp"), host.find(" i in ")) << host;
}

TEST(TransientToRegister, RefusesLargeDifferingAndArgumentFootprints) {
  ir::Program wide = rowProgram({.cols = 32, .readCols = 32});
  EXPECT_EQ(toFixedPoint(wide, toRegister()), 0);
  EXPECT_THAT(refusals(wide, toRegister()),
              HasSubstr("the footprint tmp[i, 0:32] holds 32 elements, more "
                        "than max_elements = 16"));
  // A larger bound admits it.
  auto matches = transforms::findMatches(wide, toRegister());
  ASSERT_EQ(matches.size(), 1u);
  transforms::Params bigger{{"max_elements", std::int64_t{32}}};
  EXPECT_TRUE(transforms::checkMatch(wide, toRegister(), matches[0], bigger));
  ir::Program widened =
      transforms::applyChecked(wide, toRegister(), matches[0], bigger).program;
  expectEquivalent(wide, widened, toRegister().exactness());

  ir::Program partial = rowProgram({.cols = 4, .readCols = 2});
  EXPECT_EQ(toFixedPoint(partial, toRegister()), 0);
  EXPECT_THAT(refusals(partial, toRegister()),
              HasSubstr("access 'tmp' as i, 0:4 and as i, 0:2; the "
                        "footprints differ"));

  // An output is no match; asked anyway, check() says why.
  ir::Program output = rowProgram({.tmpIsOutput = true});
  EXPECT_TRUE(transforms::findMatches(output, toRegister()).empty());
  transforms::Match m{"main", {}};
  for (const ir::Node &n : output.states[0].nodes)
    if (n.kind == ir::NodeKind::Access && n.access().container == "tmp")
      m.roles = {{"access", n.id}};
  transforms::CheckResult c = transforms::checkMatch(output, toRegister(), m);
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason, HasSubstr("'tmp' is not a plain transient"));
}

TEST(TransientToRegister, RefusesContainersThatLeaveTheScope) {
  // The inner maps write tmp inside the scope, but the outer map also
  // hands tmp out through its exit.
  ir::Program p = rowProgram();
  ir::State &s = p.states.back();
  ir::NodeId tmp = 0, outerExit = 0;
  for (const ir::Node &n : s.nodes) {
    if (n.kind == ir::NodeKind::Access && n.access().container == "tmp")
      tmp = n.id;
    if (n.kind == ir::NodeKind::MapExit && n.label == "rows")
      outerExit = n.id;
  }
  s.findNode(outerExit)->inputs.push_back({"IN_tmp", ir::DType::F32});
  s.findNode(outerExit)->outputs.push_back({"OUT_tmp", ir::DType::F32});
  ir::Expr i = ir::Expr::symbol("i");
  ir::addEdge(p, s, tmp, "", outerExit, "IN_tmp",
              {"tmp", ir::Subset{{ir::Range::point(i), {0, 4}}}, {}});
  ir::NodeId after = ir::addAccess(p, s, "tmp");
  ir::addEdge(p, s, outerExit, "OUT_tmp", after, "",
              {"tmp", ir::Subset{{{0, 8}, {0, 4}}}, {}});
  expectValid(p);
  EXPECT_EQ(toFixedPoint(p, toRegister()), 0);
  EXPECT_THAT(refusals(p, toRegister()),
              HasSubstr("'tmp' has an access node (%" + std::to_string(after) +
                        ") outside the scope of map 'rows'"));

  // Register storage set by hand on such a container: lowering and the
  // memory report both keep one buffer for the run.
  ir::Program forced = p;
  forced.containers.at("tmp").storage = ir::Storage::Register;
  EXPECT_EQ(ir::transientMemory(forced).buffers,
            ir::transientMemory(p).buffers);
  std::string loops = codegen::print(codegen::lower(forced));
  EXPECT_LT(loops.find("allocate tmp"), loops.find(" i in ")) << loops;
}

/// Wherever it matches on the bundled models, after expand-all and after
/// the auto recipe (map-fusion hands values over on empty memlets, so the
/// fused programs may leave nothing to move into registers).
TEST(TransientToRegister, BundledModels) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program expanded = expandedModel(name);
    workspace::Workspace ws(
        onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                 "/resources/models/" + name)
            .program);
    workspace::applyAutoRecipe(ws, "cpu");
    for (const auto &[when, before] :
         {std::pair<std::string, ir::Program>{"expanded", expanded},
          {"after auto", ws.program()}}) {
      ir::Program after = before;
      int applied = toFixedPoint(after, toRegister());
      expectValid(after);
      std::cout << "[ transient-to-register ] " << name << " " << when << ": "
                << transforms::findMatches(before, toRegister()).size()
                << " matches, " << applied << " applied, bytes moved "
                << bytesMoved(before) << " -> " << bytesMoved(after)
                << ", transients " << ir::transientMemory(before).str()
                << " -> " << ir::transientMemory(after).str() << "\n";
      std::string why = refusals(after, toRegister());
      if (!why.empty())
        std::cout << "  refused:\n" << why;
      if (applied > 0)
        expectEquivalent(before, after, toRegister().exactness(), 13);
    }
  }
}

} // namespace
} // namespace weir::transforms_testing
