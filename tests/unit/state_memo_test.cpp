// Memos of program versions (ir/state_memo.h): an index is built once per
// state of a memoized program, memos in scope nest, and validating a step's
// result inside the result's memo leaves the indexes it built there.

#include "ir/state_memo.h"

#include "ir/interval.h"
#include "ir/node_index.h"
#include "ir/validate.h"
#include "tests/unit/ir_builders.h"

#include <gtest/gtest.h>

#include <memory>

using namespace weir::ir;

namespace {

std::shared_ptr<const NodeIndex> nodeIndexOf(const State &s) {
  return memoized<NodeIndex>(s, [&] { return NodeIndex(s); });
}

} // namespace

TEST(StateMemo, BuildsAnIndexOncePerStateOfItsProgram) {
  auto p = std::make_shared<const Program>(builders::elementwiseAdd(10));
  StateMemo memo(p);
  UseStateMemo use(&memo);
  auto first = nodeIndexOf(p->states[0]);
  EXPECT_EQ(nodeIndexOf(p->states[0]), first);
  // A copy's state is another state: built fresh each time.
  Program copy = *p;
  EXPECT_NE(nodeIndexOf(copy.states[0]), nodeIndexOf(copy.states[0]));
}

TEST(StateMemo, NestedMemosEachServeTheirOwnProgram) {
  auto a = std::make_shared<const Program>(builders::elementwiseAdd(10));
  auto b = std::make_shared<const Program>(builders::elementwiseAdd(20));
  StateMemo memoA(a), memoB(b);
  UseStateMemo outer(&memoA);
  std::shared_ptr<const NodeIndex> inA, inB;
  {
    UseStateMemo inner(&memoB);
    EXPECT_EQ(memoHolding(a->states[0]), &memoA);
    EXPECT_EQ(memoHolding(b->states[0]), &memoB);
    inA = nodeIndexOf(a->states[0]);
    inB = nodeIndexOf(b->states[0]);
    EXPECT_EQ(nodeIndexOf(b->states[0]), inB);
  }
  // The inner memo is out of scope: b's indexes are built fresh again, a's
  // still come from the outer memo.
  EXPECT_EQ(memoHolding(b->states[0]), nullptr);
  EXPECT_NE(nodeIndexOf(b->states[0]), inB);
  EXPECT_EQ(nodeIndexOf(a->states[0]), inA);
  EXPECT_NE(memoB.find(b->states[0], typeid(NodeIndex)), nullptr);
}

TEST(StateMemo, ValidatingAStepsResultLeavesItsIndexesInTheResultsMemo) {
  auto base = std::make_shared<const Program>(builders::elementwiseAdd(10));
  auto result = std::make_shared<const Program>(*base);
  StateMemo baseMemo(base), resultMemo(result);
  UseStateMemo useBase(&baseMemo);
  {
    UseStateMemo useResult(&resultMemo);
    EXPECT_FALSE(hasErrors(validate(*result, *base)));
  }
  const State &s = result->states[0];
  EXPECT_NE(resultMemo.find(s, typeid(NodeIndex)), nullptr);
  EXPECT_NE(resultMemo.find(s, typeid(IntervalEnv)), nullptr);
  // The base's own indexes went to the base's memo, none to the result's
  // from the base.
  EXPECT_NE(baseMemo.find(base->states[0], typeid(NodeIndex)), nullptr);
  EXPECT_EQ(baseMemo.find(s, typeid(NodeIndex)), nullptr);
}
