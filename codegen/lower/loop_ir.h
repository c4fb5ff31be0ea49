#pragma once
/// \file
/// Weir's loop IR: the form every backend prints or compiles. Immutable,
/// shared statement and value trees in the style of Halide's: a loop nest of
/// `for` (serial, parallel or vectorized), `allocate`, `store`, `assign` (a
/// scalar local) and `if`, over typed scalar values (`load`, literals,
/// locals, arithmetic, calls, select, casts).
///
/// Index arithmetic is symbolic (ir::Expr over program symbols and loop
/// variables) and already flattened: a load or store names a buffer and one
/// element offset computed from the container's strides. Values follow the
/// typed semantics of the reference interpreter (core/interp/tasklet_eval.h):
/// every value has a dtype; integers wrap; f16/bf16 values are computed in
/// f32 and rounded to their own precision on store and by casts.

#include "ir/dtype.h"
#include "ir/expr.h"
#include "ir/tasklet.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace weir::codegen {

// ---------------------------------------------------------------- values --

enum class ValueKind : std::uint8_t {
  Literal, ///< `f` for floats, `bits` for integers and bool
  Load,    ///< buffer[index]
  Local,   ///< a scalar local set by an Assign
  Unary,
  Binary,
  Call,
  Select, ///< operands: condition, then, else; evaluates only the taken side
  Cast,
};

struct Value;
using ValuePtr = std::shared_ptr<const Value>;

/// A bounds check on an access that lowering could not prove in bounds
/// (codegen/lower/bounds_proof.h), or on every access when lowering is
/// asked to check them all. Each index must lie in [0, extent). An access
/// that fails is not made (a load gives 0); the run records the failure
/// and ends with an error naming `what`, the dimension, the index and the
/// extent. Guards never let generated code touch memory outside a buffer.
struct BoundsGuard {
  std::vector<ir::Expr> index;  ///< per dimension of the container
  std::vector<ir::Expr> extent; ///< the container's shape
  /// The access, as the interpreter names it: "tasklet 'conv2.im2col'
  /// input 'x' through edge 99 (conv2_padded[n, c, k0 + o0, k1 + o1]) of
  /// container 'conv2_padded' f32[1, 16, 18, 18]".
  std::string what;
};
using GuardPtr = std::shared_ptr<const BoundsGuard>;

struct Value {
  ValueKind kind = ValueKind::Literal;
  ir::DType type = ir::DType::F32;
  double f = 0;           ///< Literal of a float type
  std::uint64_t bits = 0; ///< Literal of an integer type (wrapped) or bool
  std::string name;       ///< Load: buffer; Local: local name
  ir::Expr index;         ///< Load: element offset
  GuardPtr guard;         ///< Load: its bounds check; null when proven
  ir::tasklet::UnaryOp unaryOp = ir::tasklet::UnaryOp::Neg;
  ir::tasklet::BinaryOp binaryOp = ir::tasklet::BinaryOp::Add;
  ir::tasklet::Func func = ir::tasklet::Func::Exp;
  /// Comparisons: the type both operands have (the result is bool).
  ir::DType operandType = ir::DType::F32;
  std::vector<ValuePtr> operands;
};

ValuePtr floatLiteral(ir::DType type, double value);
ValuePtr intLiteral(ir::DType type, std::uint64_t bits);
ValuePtr load(ir::DType type, std::string buffer, ir::Expr index,
              GuardPtr guard = nullptr);
ValuePtr local(ir::DType type, std::string name);
ValuePtr unary(ir::tasklet::UnaryOp op, ValuePtr a);
/// Arithmetic (result type of the operands) or comparison/logical (bool).
ValuePtr binary(ir::tasklet::BinaryOp op, ValuePtr a, ValuePtr b);
ValuePtr call(ir::tasklet::Func f, ir::DType type, std::vector<ValuePtr> args);
ValuePtr select(ValuePtr cond, ValuePtr then, ValuePtr otherwise);
/// `value` converted to `to` (returns `value` itself when the type matches).
ValuePtr cast(ir::DType to, ValuePtr value);

/// Whether evaluating `v` may divide integers (and so must not be evaluated
/// speculatively: a division by zero is an error the run reports).
bool hasIntegerDivision(const Value &v);

// ------------------------------------------------------------ statements --

enum class StmtKind : std::uint8_t {
  Block,    ///< `body` in order
  For,      ///< `var` over [begin, end) by `step`, `body`
  Allocate, ///< buffer `buffer` of `size` elements for `body`, zero-filled
            ///< unless `zeroFill` is false
  Store,    ///< buffer[index] = value
  Assign,   ///< local `var` = value
  If,       ///< if (value) body
  Call,     ///< a library routine: `callee`(args)
};

enum class ForKind : std::uint8_t {
  Serial,
  Parallel,   ///< iterations are independent; run on the thread pool
  Vectorized, ///< iterations are independent; ask for SIMD
};
const char *forKindName(ForKind k);

struct Stmt;
using StmtPtr = std::shared_ptr<const Stmt>;

/// An argument of a Call: a pointer into a buffer, an integer or a float.
struct CallArg {
  enum class Kind : std::uint8_t { Pointer, Int, Float } kind = Kind::Int;
  std::string buffer;               ///< Pointer
  ir::DType dtype = ir::DType::F32; ///< Pointer: the buffer's element type
  ir::Expr expr;                    ///< Pointer: element offset; Int: value
  double f = 0;                     ///< Float

  static CallArg pointer(std::string buffer, ir::DType dtype, ir::Expr offset);
  static CallArg integer(ir::Expr value);
  static CallArg real(double value);
};

/// The routines a Call may name, with their arguments:
/// - "sgemm": transA, transB, M, N, K (ints), alpha (float), A, lda, B, ldb,
///   beta, C, ldc — row-major C = alpha * op(A) * op(B) + beta * C
///   (ir/primitives.h) — then, for A, B and C, the elements from the
///   matrix's first to the end of its buffer: the call checks that each
///   matrix fits there, as the interpreter does, and refuses to run when
///   one does not (every backend; no proof is needed).
inline constexpr const char *kCallSgemm = "sgemm";
inline constexpr std::size_t kSgemmArgs = 16;

struct Stmt {
  StmtKind kind = StmtKind::Block;
  std::vector<StmtPtr> body;
  /// For: loop variable; Assign: local name.
  std::string var;
  ir::Expr begin, end, step = ir::Expr(1);
  ForKind forKind = ForKind::Serial;
  /// Allocate, Store: the buffer.
  std::string buffer;
  ir::DType dtype = ir::DType::F32; ///< Allocate
  ir::Expr size;                    ///< Allocate: element count
  /// Allocate: clear the buffer first; false when the body writes every
  /// element before reading any (codegen/lower/first_touch.h).
  bool zeroFill = true;
  ir::Expr index;            ///< Store: element offset
  GuardPtr guard;            ///< Store: its bounds check; null when proven
  ValuePtr value;            ///< Store, Assign: value; If: condition
  std::string callee;        ///< Call
  std::vector<CallArg> args; ///< Call
  /// For, Call: where it came from (a map's or node's label), for people
  /// and profiles; "" when nothing names it.
  std::string label;
};

/// Statements in `s`, itself and every nested one: the measure of code
/// size the compile limit (ir/limits.h) is stated in.
std::size_t statementCount(const Stmt &s);

StmtPtr block(std::vector<StmtPtr> body);
StmtPtr forLoop(std::string var, ir::Expr begin, ir::Expr end, ir::Expr step,
                ForKind kind, std::vector<StmtPtr> body,
                std::string label = "");
StmtPtr allocate(std::string buffer, ir::DType dtype, ir::Expr size,
                 std::vector<StmtPtr> body, bool zeroFill = true);
StmtPtr store(std::string buffer, ir::Expr index, ValuePtr value,
              GuardPtr guard = nullptr);
StmtPtr assign(std::string var, ValuePtr value);
StmtPtr ifThen(ValuePtr cond, std::vector<StmtPtr> body);
StmtPtr callStmt(std::string callee, std::vector<CallArg> args,
                 std::string label = "");

// -------------------------------------------------------------- function --

/// A buffer the function receives from its caller.
struct BufferParam {
  std::string name; ///< the container's name
  ir::DType dtype = ir::DType::F32;
  std::vector<ir::Expr> shape;
  enum class Role : std::uint8_t { Input, Output, Constant } role = Role::Input;
  /// Whether the function stores into it (an input written in place must be
  /// copied by the caller first).
  bool written = false;
};

/// A lowered program: one function over buffers and integer symbols.
struct LoopFunction {
  std::string name;
  /// In call order: the program's inputs, its outputs, then its constants.
  std::vector<BufferParam> buffers;
  /// Program symbols, passed as i64 in this order.
  std::vector<std::string> symbols;
  StmtPtr body;
};

/// The readable text form (what `weir lower` and the GUI show).
std::string print(const LoopFunction &f);
std::string print(const Stmt &s, int indent = 0);
std::string print(const Value &v);

} // namespace weir::codegen
