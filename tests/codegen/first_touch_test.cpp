/// \file
/// Which allocations skip their zero-fill (codegen/lower/first_touch.h):
/// loop nests and sgemm calls that write a buffer whole before reading it,
/// and the near misses that must stay cleared (a gap, a repeated element, a
/// read first, beta 1); end to end, a program whose transients are all
/// written first runs twice on reused, uncleared blocks and still equals
/// the interpreter.

#include "codegen/cpu/compile.h"
#include "codegen/lower/first_touch.h"
#include "core/interp/interpreter.h"
#include "expansion/single_op.h"
#include "transforms/operators/expansion.h"

#include <gtest/gtest.h>

namespace weir::codegen {
namespace {

using ir::DType;
using ir::Expr;

Expr sym(const char *s) { return Expr::symbol(s); }

StmtPtr loop(const char *var, std::int64_t begin, std::int64_t end,
             std::vector<StmtPtr> body) {
  return forLoop(var, Expr(begin), Expr(end), Expr(1), ForKind::Serial,
                 std::move(body));
}

StmtPtr put(Expr index, ValuePtr v = floatLiteral(DType::F32, 1)) {
  return store("B", std::move(index), std::move(v));
}

bool whole(const StmtPtr &body, std::int64_t size) {
  return writtenWholeFirst(body, {{"B", Expr(size)}}).count("B") > 0;
}

/// C[m×n] = A·X, beta as given, C at `offset` of B.
StmtPtr gemm(Expr offset, std::int64_t m, std::int64_t n, double beta) {
  return callStmt(
      kCallSgemm,
      {CallArg::integer(Expr(0)), CallArg::integer(Expr(0)),
       CallArg::integer(Expr(m)), CallArg::integer(Expr(n)),
       CallArg::integer(Expr(4)), CallArg::real(1.0),
       CallArg::pointer("A", DType::F32, Expr(0)), CallArg::integer(Expr(4)),
       CallArg::pointer("X", DType::F32, Expr(0)), CallArg::integer(Expr(n)),
       CallArg::real(beta), CallArg::pointer("B", DType::F32, offset),
       CallArg::integer(Expr(n)),
       // the room of A, X and B from their first elements
       CallArg::integer(Expr(m * 4)), CallArg::integer(Expr(4 * n)),
       CallArg::integer(Expr(1 << 20) - offset)});
}

TEST(FirstTouch, RowMajorNestWritesWhole) {
  EXPECT_TRUE(whole(
      loop("i", 0, 4, {loop("j", 0, 3, {put(sym("i") * Expr(3) + sym("j"))})}),
      12));
  // Loops in either order, and one that starts at 1.
  EXPECT_TRUE(whole(
      loop("j", 0, 3,
           {loop("i", 1, 5, {put(sym("i") * Expr(3) + sym("j") - Expr(3))})}),
      12));
  // A one-iteration loop around it is its body.
  EXPECT_TRUE(whole(
      loop("n", 0, 1, {loop("i", 0, 4, {put(sym("n") * Expr(4) + sym("i"))})}),
      4));
}

TEST(FirstTouch, GapsRepeatsAndReadsKeepTheFill) {
  // Every other element.
  EXPECT_FALSE(whole(loop("i", 0, 4, {put(sym("i") * Expr(2))}), 8));
  // Elements written twice, others never.
  EXPECT_FALSE(
      whole(loop("i", 0, 4, {loop("j", 0, 2, {put(sym("i") + sym("j"))})}), 8));
  // Smaller than the buffer.
  EXPECT_FALSE(whole(loop("i", 0, 4, {put(sym("i"))}), 5));
  // A sum into it reads it first.
  EXPECT_FALSE(whole(loop("i", 0, 4,
                          {put(sym("i"), binary(ir::tasklet::BinaryOp::Add,
                                                load(DType::F32, "B", sym("i")),
                                                floatLiteral(DType::F32, 1)))}),
                     4));
  // Its first touch is a read elsewhere.
  EXPECT_FALSE(whole(
      block({loop("i", 0, 4,
                  {store("Y", sym("i"), load(DType::F32, "B", sym("i")))}),
             loop("i", 0, 4, {put(sym("i"))})}),
      4));
  // A store under a condition may not happen.
  EXPECT_FALSE(
      whole(loop("i", 0, 4,
                 {ifThen(load(DType::Bool, "M", sym("i")), {put(sym("i"))})}),
            4));
}

TEST(FirstTouch, TileStoresAtConstantOffsets) {
  // A 2x2 tile per (ty, tx) of a 4x6 buffer: offsets 0, 1, 6, 7.
  std::vector<StmtPtr> tile;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      tile.push_back(
          put(sym("ty") * Expr(12) + sym("tx") * Expr(2) + Expr(i * 6 + j)));
  EXPECT_TRUE(whole(loop("ty", 0, 2, {loop("tx", 0, 3, tile)}), 24));
  tile.pop_back();
  EXPECT_FALSE(whole(loop("ty", 0, 2, {loop("tx", 0, 3, tile)}), 24));
}

TEST(FirstTouch, GemmWithBetaZero) {
  EXPECT_TRUE(whole(gemm(Expr(0), 3, 5, 0.0), 15));
  EXPECT_FALSE(whole(gemm(Expr(0), 3, 5, 1.0), 15));
  EXPECT_FALSE(whole(gemm(Expr(0), 3, 4, 0.0), 15));
  // Sixteen products side by side, one per (a, b).
  EXPECT_TRUE(whole(loop("a", 0, 4,
                         {loop("b", 0, 4,
                               {gemm((sym("a") * Expr(4) + sym("b")) * Expr(15),
                                     3, 5, 0.0)})}),
                    240));
}

TEST(FirstTouch, UnclearedBlocksStillGiveTheInterpretersResult) {
  using namespace expansion_testing;
  ir::Program p = single("Conv",
                         {{"kernel_shape", std::vector<std::int64_t>{3, 3}},
                          {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}},
                         {{"X", "X", {1, 3, 9, 9}}, {"W", "W", {4, 3, 3, 3}}},
                         {{"Y", "Y", {1, 4, 9, 9}}});
  ASSERT_TRUE(operators::expandAll(p, {{"Conv", "im2col"}}).skipped.empty());
  CompileOptions o;
  o.threads = 2;
  Executable exe = compile(p, o);
  // The zero padding is a fill map, the columns an im2col copy: both
  // written whole first.
  EXPECT_NE(exe.loopIR().find("Conv0_columns: f32[2187] {  # not cleared"),
            std::string::npos)
      << exe.loopIR();
  EXPECT_NE(exe.loopIR().find("Conv0_padded: f32[363] {  # not cleared"),
            std::string::npos)
      << exe.loopIR();
  // The second run reuses the first run's blocks as they were left.
  for (unsigned seed : {3u, 4u}) {
    interp::TensorMap in = randomInputs(p, seed);
    interp::TensorMap got = exe.run(in), want = interp::interpret(p, in);
    const runtime::Tensor &g = got.at("Y"), &w = want.at("Y");
    for (std::int64_t i = 0; i < w.elementCount(); ++i)
      ASSERT_NEAR(g.getAsDouble(i), w.getAsDouble(i), 1e-5) << seed << " " << i;
  }
}

} // namespace
} // namespace weir::codegen
