/// \file
/// Accesses outside a container never reach memory (codegen/lower/
/// bounds_proof.h, loop_ir.h's BoundsGuard): what the proof shows in bounds
/// runs unchecked, what it cannot show gets a guard, and a guard that fails
/// skips the access and fails the run with a message naming it, like the
/// interpreter's. `--checked` (LowerOptions::checkAllAccesses) guards
/// everything and changes no result.

#include "codegen/cpu/compile.h"
#include "codegen/lower/bounds_proof.h"
#include "codegen/lower/lower.h"
#include "codegen/past_the_end.h"
#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "ir/validate.h"
#include "onnx/import.h"
#include "transforms/operators/expansion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace weir::codegen {
namespace {

using ir::Expr;
using lowering::BoundsProof;
using ::testing::HasSubstr;

Expr sym(const char *s) { return Expr::symbol(s); }

TEST(BoundsProof, ConstantLoopsByIntervals) {
  BoundsProof p;
  p.enter("i", {0, 8, 1});
  p.enter("k", {0, 3, 1});
  EXPECT_TRUE(p.inBounds(sym("i"), 8));
  EXPECT_FALSE(p.inBounds(sym("i"), 7));
  // A padded window: i + k - 1 reaches -1 and 9.
  EXPECT_FALSE(p.inBounds(sym("i") + sym("k") - 1, 8));
  EXPECT_TRUE(p.inBounds(sym("i") + sym("k"), 10));
  EXPECT_FALSE(p.inBounds(sym("i") + sym("k"), 9));
  // Clipped to the edges with min and max, it stays inside.
  EXPECT_TRUE(p.inBounds(
      ir::max(Expr(0), ir::min(Expr(7), sym("i") + sym("k") - 1)), 8));
  // A loop variable that is not in scope proves nothing.
  EXPECT_FALSE(p.inBounds(sym("j"), 8));
  p.leave("k");
  EXPECT_FALSE(p.inBounds(sym("k"), 3));
}

TEST(BoundsProof, SymbolicShapesByExtremes) {
  // n over [0, N) indexes a dimension of N; n·C + c one of N·C.
  BoundsProof p;
  p.enter("n", {0, sym("N"), 1});
  p.enter("c", {0, 16, 1});
  EXPECT_TRUE(p.inBounds(sym("n"), sym("N")));
  EXPECT_TRUE(p.inBounds(sym("n") * 16 + sym("c"), sym("N") * 16));
  EXPECT_FALSE(p.inBounds(sym("n") + 1, sym("N")));
  EXPECT_FALSE(p.inBounds(sym("n") * 16 + sym("c"), sym("N") * 15));
  // A triangular inner loop j over [n, N): through n's range in turn.
  p.enter("j", {sym("n"), sym("N"), 1});
  EXPECT_TRUE(p.inBounds(sym("j"), sym("N")));
  EXPECT_FALSE(p.inBounds(sym("j") + sym("n"), sym("N")));
}

interp::TensorMap ones(std::int64_t n) {
  runtime::Tensor t(ir::DType::F32, {n});
  for (std::int64_t k = 0; k < n; ++k)
    t.setFromDouble(k, 1.0 + static_cast<double>(k));
  return {{"x", t}};
}

TEST(BoundsGuard, AnUnprovenReadIsGuardedAndFailsTheRun) {
  ir::Program p = fixtures::readsPastTheEnd();
  ASSERT_FALSE(ir::hasErrors(ir::validate(p)));
  LoopFunction f = lower(p);
  std::string text = print(f);
  // Only the read of a in the second map is guarded.
  EXPECT_THAT(text, HasSubstr("checked a["));
  EXPECT_EQ(text.find("checked x["), std::string::npos) << text;
  EXPECT_EQ(text.find("checked y["), std::string::npos) << text;

  CompileOptions o;
  o.useCache = false;
  Executable e = compile(p, o);
  try {
    e.run(ones(4));
    FAIL() << "the run read past the end of 'a'";
  } catch (const Error &err) {
    EXPECT_THAT(err.what(), HasSubstr("input 'v' through edge"));
    EXPECT_THAT(err.what(), HasSubstr("of container 'a' f32[4] is out of "
                                      "bounds in dimension 0: index 4 "
                                      "outside [0, 4)"));
  }
  // The interpreter refuses the same access.
  EXPECT_THROW(interp::interpret(p, ones(4)), Error);
}

TEST(BoundsGuard, CheckingEveryAccessChangesNoResult) {
  ir::Program p = fixtures::readsInside();
  CompileOptions plain, checked;
  plain.useCache = checked.useCache = false;
  checked.lower.checkAllAccesses = true;
  EXPECT_EQ(print(lower(p)).find("checked"), std::string::npos);
  EXPECT_THAT(print(lower(p, checked.lower)), HasSubstr("checked x["));
  EXPECT_THAT(print(lower(p, checked.lower)), HasSubstr("checked y["));
  interp::TensorMap a = compile(p, plain).run(ones(4));
  interp::TensorMap b = compile(p, checked).run(ones(4));
  interp::TensorMap want = interp::interpret(p, ones(4));
  for (std::int64_t k = 0; k < 6; ++k) {
    EXPECT_EQ(a.at("y").getAsDouble(k), want.at("y").getAsDouble(k)) << k;
    EXPECT_EQ(b.at("y").getAsDouble(k), want.at("y").getAsDouble(k)) << k;
  }
}

/// A gemm primitive whose sizes claim more than its buffers hold (a hostile
/// program file: the validator checks the attributes' form, not what they
/// make the call touch) fails the run without the call, naming the matrix.
TEST(BoundsGuard, AGemmCallPastItsBufferFailsTheRun) {
  ir::Program p = onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                           "/resources/models/mlp.onnx")
                      .program;
  operators::expandAll(p);
  ir::Node *gemm = nullptr;
  for (ir::State &s : p.states)
    for (ir::Node &n : s.nodes.editable())
      if (n.kind == ir::NodeKind::Primitive && !gemm)
        gemm = &n;
  ASSERT_NE(gemm, nullptr);
  // The call carries each matrix's room in its buffer, and checks it.
  EXPECT_THAT(print(lower(p)),
              HasSubstr("&fc1_matmul_out[0], 128, N*64, 8192, N*128)"));
  interp::TensorMap inputs;
  inputs["input"] = runtime::Tensor(ir::DType::F32, {2, 64});
  CompileOptions o;
  o.useCache = false;
  EXPECT_NO_THROW(compile(p, o).run(inputs));
  inputs["input"] = runtime::Tensor(ir::DType::F32, {0, 64});
  EXPECT_NO_THROW(compile(p, o).run(inputs)); // an empty batch: no call

  // Twice the rows of A and C it has.
  ir::Attributes &a = std::get<ir::PrimitiveData>(gemm->payload).attributes;
  a["M"] = (ir::parseExpr(std::get<std::string>(a["M"])) * 2).str();
  ASSERT_FALSE(ir::hasErrors(ir::validate(p)));
  inputs["input"] = runtime::Tensor(ir::DType::F32, {2, 64});
  try {
    compile(p, o).run(inputs);
    FAIL() << "the gemm call ran past its buffers";
  } catch (const Error &err) {
    EXPECT_THAT(err.what(), HasSubstr("the 4x64 matrix A (leading "
                                      "dimension 64) is out of bounds in "
                                      "dimension 0: index 255 outside "
                                      "[0, 128)"));
  }
  // The interpreter refuses the same call.
  EXPECT_THROW(interp::interpret(p, inputs), Error);
}

/// The compile limit (ir/limits.h): a program that lowers to more loop
/// statements than allowed is refused before code is made.
TEST(Limits, LoweringPastTheStatementLimitIsRefused) {
  ir::Program p = fixtures::readsInside();
  std::size_t statements = codegen::statementCount(*codegen::lower(p).body);
  codegen::LowerOptions options;
  options.maxStatements = statements;
  EXPECT_NO_THROW(codegen::lower(p, options));
  options.maxStatements = statements - 1;
  try {
    codegen::lower(p, options);
    FAIL() << "lowered past the limit";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(
                              "loop statements, more than the limit of " +
                              std::to_string(statements - 1)));
  }
}

} // namespace
} // namespace weir::codegen
