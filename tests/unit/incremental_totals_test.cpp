// IncrementalTotals: analyze()'s totals, counted again only where a program
// changed since the previous one. (A recipe's whole sequence is checked
// against analyze() in tests/workspace/incremental_totals_recipe_test.cpp.)

#include "ir/incremental_totals.h"

#include "ir/analysis.h"
#include "tests/unit/ir_builders.h"

#include <gtest/gtest.h>

#include <memory>

using namespace weir::ir;
using namespace weir::ir::builders;

namespace {

std::shared_ptr<const Program> shared(Program p) {
  return std::make_shared<const Program>(std::move(p));
}

void expectTotalsOf(IncrementalTotals &totals, const Program &p) {
  IncrementalTotals::Totals t = totals(std::make_shared<const Program>(p));
  ProgramAnalysis a = analyze(p, AnalysisDetail::Totals);
  EXPECT_EQ(t.flops, a.flops);
  EXPECT_EQ(t.bytesMoved, a.bytesMoved);
}

} // namespace

TEST(IncrementalTotals, TheSameProgramAgainCountsNothingAgain) {
  IncrementalTotals totals;
  std::shared_ptr<const Program> p = shared(nestedMaps(Expr(6), Expr(7)));
  IncrementalTotals::Totals first = totals(p);
  EXPECT_EQ(totals.recounted(), totals.units());
  EXPECT_GT(totals.units(), 0u);
  // A copy shares every node and edge (CowList): nothing is counted again.
  IncrementalTotals::Totals again = totals(shared(*p));
  EXPECT_EQ(totals.recounted(), 0u);
  EXPECT_EQ(again.flops, first.flops);
  EXPECT_EQ(again.bytesMoved, first.bytesMoved);
  ProgramAnalysis a = analyze(*p);
  EXPECT_EQ(first.flops, a.flops);
  EXPECT_EQ(first.bytesMoved, a.bytesMoved);
}

TEST(IncrementalTotals, SymbolicTotalsAgreeWithTheAnalysis) {
  IncrementalTotals totals;
  Program p = elementwiseAdd(Expr::symbol("N"));
  IncrementalTotals::Totals t = totals(shared(p));
  EXPECT_EQ(t.bytesMoved.evaluate({{"N", 10}}), 120);
  EXPECT_EQ(t.flops.evaluate({{"N", 10}}), 10);
}

TEST(IncrementalTotals, AChangedNodeIsCountedAgain) {
  IncrementalTotals totals;
  Program p = nestedMaps(Expr(6), Expr(7));
  expectTotalsOf(totals, p);
  // Widen the outer map: its whole body counts again, and moves more.
  Program wider = p;
  State &s = wider.states[0];
  for (std::size_t i = 0; i < s.nodes.size(); ++i)
    if (s.nodes[i].kind == NodeKind::MapEntry &&
        s.nodes[i].map().ranges[0].size().asConstant() == 6)
      s.nodes.edit(i).map().ranges[0] = Range(0, 12);
  ProgramAnalysis before = analyze(p), after = analyze(wider);
  ASSERT_NE(before.flops, after.flops); // the edit changed the counts
  expectTotalsOf(totals, wider);
  EXPECT_GT(totals.recounted(), 0u);
}

TEST(IncrementalTotals, AContainerThatChangesDtypeOrStorageCountsAgain) {
  IncrementalTotals totals;
  Program p = elementwiseAdd(Expr(100));
  expectTotalsOf(totals, p);
  // Nothing but a container changes: every node and edge is shared.
  Program doubled = p;
  for (auto &[name, c] : doubled.containers)
    c.dtype = DType::F64;
  ASSERT_NE(analyze(doubled).bytesMoved, analyze(p).bytesMoved);
  expectTotalsOf(totals, doubled);

  // Register storage moves no bytes.
  Program registers = doubled;
  registers.containers.begin()->second.storage = Storage::Register;
  ASSERT_NE(analyze(registers).bytesMoved, analyze(doubled).bytesMoved);
  expectTotalsOf(totals, registers);
}
