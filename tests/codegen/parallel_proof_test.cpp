/// \file
/// The privacy proof behind parallel loops (codegen/lower/parallel_proof.h):
/// one index dimension that is `var + invariant`, or `a·var + c + Σ b·u +
/// invariant` whose offsets c and inner part span less than |a|; and, end
/// to end, an im2col whose rows `c·9 + 3·k0 + k1` run their channels in
/// parallel with the JIT still equal to the interpreter.

#include "codegen/cpu/compile.h"
#include "codegen/lower/parallel_proof.h"
#include "core/interp/interpreter.h"
#include "expansion/single_op.h"
#include "transforms/operators/expansion.h"

#include <gtest/gtest.h>

namespace weir::codegen {
namespace {

using ir::Expr;

Expr sym(const char *s) { return Expr::symbol(s); }

AccessLog writes(std::vector<Expr> index) {
  AccessLog log;
  log.accesses.push_back({"Y", std::move(index), true});
  return log;
}

const std::set<std::string, std::less<>> kNone;

TEST(ParallelProof, UnitCoefficientPlusInvariant) {
  EXPECT_TRUE(iterationsArePrivate(writes({sym("c") + sym("n") * Expr(4)}), "c",
                                   {"n"}));
  EXPECT_FALSE(iterationsArePrivate(writes({sym("c") + sym("k")}), "c", kNone));
}

TEST(ParallelProof, StridedRowsWhoseInnerSpanIsShorter) {
  // c·9 + 3·k0 + k1 with k0, k1 in 0..2 spans 0..8 per channel.
  Expr row = sym("c") * Expr(9) + sym("k0") * Expr(3) + sym("k1");
  std::map<std::string, VarBounds> inner{{"k0", {0, 2}}, {"k1", {0, 2}}};
  EXPECT_TRUE(iterationsArePrivate(writes({row, sym("o")}), "c", kNone, inner));
  // One more k1 and channel c's last row is channel c + 1's first.
  inner["k1"] = {0, 3};
  EXPECT_FALSE(
      iterationsArePrivate(writes({row, sym("o")}), "c", kNone, inner));
  // A variable with no known bounds proves nothing.
  inner.erase("k1");
  EXPECT_FALSE(iterationsArePrivate(writes({row}), "c", kNone, inner));
}

TEST(ParallelProof, EveryAccessMustStayInsideTheInterval) {
  std::map<std::string, VarBounds> inner{{"k", {0, 1}}};
  // Iteration c writes 2c and 2c + 1 and reads 2c + 1: its own.
  AccessLog log = writes({sym("c") * Expr(2) + sym("k")});
  log.accesses.push_back({"Y", {sym("c") * Expr(2) + Expr(1)}, false});
  EXPECT_TRUE(iterationsArePrivate(log, "c", kNone, inner));
  // Reading 2c + 2 reads the next iteration's first element.
  log.accesses.back().index = {sym("c") * Expr(2) + Expr(2)};
  EXPECT_FALSE(iterationsArePrivate(log, "c", kNone, inner));
  // So does a read with another coefficient.
  log.accesses.back().index = {sym("c")};
  EXPECT_FALSE(iterationsArePrivate(log, "c", kNone, inner));
  // A negative coefficient spans as far.
  EXPECT_TRUE(iterationsArePrivate(writes({sym("c") * Expr(-2) + sym("k")}),
                                   "c", kNone, inner));
}

TEST(ParallelProof, TileOutputsAtConstantOffsets) {
  // A 2x2 tile's four outputs y[2ty + i, 2tx + j]: private to each tx.
  AccessLog log;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      log.accesses.push_back(
          {"Y",
           {sym("ty") * Expr(2) + Expr(i), sym("tx") * Expr(2) + Expr(j)},
           true});
  EXPECT_TRUE(iterationsArePrivate(log, "tx", {"ty"}));
  EXPECT_TRUE(iterationsArePrivate(log, "ty", {"tx"}));
  // Three outputs per two columns overlap.
  log.accesses.push_back(
      {"Y", {sym("ty") * Expr(2), sym("tx") * Expr(2) + Expr(2)}, true});
  EXPECT_FALSE(iterationsArePrivate(log, "tx", {"ty"}));
}

TEST(ParallelProof, Im2colChannelsRunInParallel) {
  using expansion_testing::single;
  ir::Program p = single("Conv",
                         {{"kernel_shape", std::vector<std::int64_t>{3, 3}},
                          {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}},
                         {{"X", "X", {1, 4, 12, 12}}, {"W", "W", {8, 4, 3, 3}}},
                         {{"Y", "Y", {1, 8, 12, 12}}});
  ASSERT_TRUE(operators::expandAll(p, {{"Conv", "im2col"}}).skipped.empty());
  interp::TensorMap in = expansion_testing::randomInputs(p, 3);
  CompileOptions o;
  o.threads = 2;
  o.lower.minParallelIterations = 1;
  Executable exe = compile(p, o);
  EXPECT_NE(exe.loopIR().find("parallel for c in 0:4 {  # Conv0.im2col"),
            std::string::npos)
      << exe.loopIR();
  interp::TensorMap got = exe.run(in), want = interp::interpret(p, in);
  const runtime::Tensor &g = got.at("Y"), &w = want.at("Y");
  for (std::int64_t i = 0; i < w.elementCount(); ++i)
    ASSERT_NEAR(g.getAsDouble(i), w.getAsDouble(i), 1e-5) << i;
}

} // namespace
} // namespace weir::codegen
