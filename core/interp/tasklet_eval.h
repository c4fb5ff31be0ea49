#pragma once
/// \file
/// Typed evaluation of tasklet code for the reference interpreter.
///
/// The arithmetic is that of the value's dtype, so the interpreter can serve
/// as the oracle for generated code:
/// - f64 is computed in double; f32 in float, each operation rounded to
///   float; f16 and bf16 in float too, rounded to their own precision only
///   when stored (or by an explicit cast such as `f16(x)`).
/// - Integers wrap around at their width after every operation (two's
///   complement), computed with unsigned arithmetic so nothing is undefined.
///   `/` truncates toward zero and `%` takes the sign of the dividend, as in
///   C; `MIN / -1` wraps to MIN. Division or remainder by zero is a
///   weir::Error.
/// - Float `%` is fmod. Float min and max return NaN when either side is
///   NaN (as numpy's minimum/maximum and ONNX Min/Max do).
/// - `&&`, `||` and `select` evaluate only what decides the result, as C's
///   `&&`, `||` and `?:` do, so `select(b != 0, a / b, 0)` never divides by
///   zero.
/// - A literal takes the type of the typed operand beside it (the rule of
///   tasklet::typeCheck); one inside a cast takes the cast's target when it
///   fits (`f64(0.1)` is the double nearest 0.1); otherwise an integer
///   literal is i64 and a float literal f32.
/// - Casts: float to float rounds to nearest even; float to integer truncates
///   toward zero, saturating at the target's range, NaN giving 0 (the
///   conversions of runtime::Tensor::setFromDouble); integer to integer keeps
///   the low bits (C's conversion); to bool is `!= 0`; bool is 0 or 1.

#include "core/runtime/tensor.h"
#include "ir/program.h"
#include "ir/tasklet.h"
#include "ir/tasklet_value.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace weir::interp {

using ir::tasklet::Value;

/// Element `flatIndex` of `t`, decoded to a Value of the tensor's dtype.
Value loadElement(const runtime::Tensor &t, std::int64_t flatIndex);
/// Store `v` (converted to the tensor's dtype if it differs) at `flatIndex`.
void storeElement(runtime::Tensor &t, std::int64_t flatIndex, const Value &v);
/// Write-conflict resolution: `existing` combined with `incoming`, in the
/// arithmetic of `existing`'s dtype. For bool, sum and max are `||`, prod
/// and min `&&`.
Value combine(ir::Wcr wcr, const Value &existing, const Value &incoming);

/// A tasklet body with the type of every subexpression settled, ready to run
/// once per map iteration.
class CompiledTasklet {
public:
  /// Throws weir::Error listing the type errors when the body does not type
  /// check against the connectors.
  CompiledTasklet(const ir::tasklet::Code &code,
                  const std::vector<ir::Connector> &inputs,
                  const std::vector<ir::Connector> &outputs);

  /// `inputs` and `outputs` follow the order of the connectors given to the
  /// constructor; each input must have its connector's dtype. Throws
  /// weir::Error on integer division by zero, quoting the expression.
  void run(std::span<const Value> inputs, std::span<Value> outputs) const;

private:
  /// One typed expression node; operands index into `nodes_`.
  struct Node {
    ir::tasklet::ExprKind kind = ir::tasklet::ExprKind::FloatLit;
    ir::DType type = ir::DType::F32;
    /// Comparisons: the type both operands are compared in.
    ir::DType operandType = ir::DType::F32;
    ir::tasklet::UnaryOp unaryOp = ir::tasklet::UnaryOp::Neg;
    ir::tasklet::BinaryOp binaryOp = ir::tasklet::BinaryOp::Add;
    ir::tasklet::Func func = ir::tasklet::Func::Exp;
    Value literal; ///< literals, already converted to `type`
    int slot = -1; ///< variables
    std::vector<int> operands;
    std::string text; ///< integer `/` and `%`: the source, for errors
  };
  struct Statement {
    int slot;
    int value; ///< root node index
  };
  struct Builder;

  Value eval(int node, const std::vector<Value> &slots) const;

  std::vector<Node> nodes_;
  std::vector<Statement> statements_;
  std::vector<ir::DType> inputTypes_;
  /// Slots hold the inputs, then the outputs, then the temporaries.
  std::size_t inputCount_ = 0, outputCount_ = 0, slotCount_ = 0;
};

} // namespace weir::interp
