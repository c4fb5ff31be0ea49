#pragma once
/// \file
/// Code generation in pieces: a LoopFunction cut into small functions that
/// compile on their own (concurrently, and through the compile cache), and
/// the driver that runs them in order.
///
/// Lowering wraps the whole body in the transients' allocations. The cut
/// lifts those top-level allocations (and the blocks they hold) into a flat
/// driver program of allocate / call / free steps, which the Executable runs
/// in C++. What is left between them are the program's top-level loop
/// nests and library calls. The consecutive ones of one node (their labels
/// name it: `/conv1/Conv.pad_fill`, `/conv1/Conv.gemm`) become one piece,
/// cut further past kPieceBudget loop IR nodes (a larger statement stands
/// alone; a scalar local never crosses a cut). So no LLVM function grows
/// with the model: LLVM's scheduling and register allocation are
/// superlinear in the size of one function. And a step that changes one
/// node changes the pieces of that node only: the others come from the
/// compile cache. A top-level copy nest that a cut may separate from its
/// neighbours (no local crosses it) is no piece: the driver runs it with
/// the runtime's strided copy (DriverCopy). Each piece costs LLVM some
/// milliseconds however small; DenseNet-121's 454 Concat copies were half
/// of its compile time as pieces.
///
/// A piece is a LoopFunction of its own whose buffers are those it uses (in
/// name order) and whose symbols are the program's. Its code depends only
/// on its statements, so a piece compiled once is reused by any program
/// that holds the same statements over the same buffer names.

#include "codegen/cpu/copy_nest.h"
#include "codegen/lower/loop_ir.h"
#include "ir/expr.h"

#include <cstdint>
#include <vector>

namespace weir::codegen::cpu {

/// Loop IR nodes (statements and values) a piece holds before the next
/// statement starts another.
inline constexpr std::int64_t kPieceBudget = 400;

struct Piece {
  LoopFunction function;
  /// For each of function.buffers: its slot in the driver's buffer table.
  std::vector<int> slots;
};

/// A top-level copy nest (copy_nest.h) the driver runs itself, with the
/// runtime's strided copy: it needs no code. Its offsets, strides and
/// extents hold program symbols at most (nothing encloses it).
struct DriverCopy {
  CopyNest nest;
  int dstSlot = -1, srcSlot = -1;
  std::string label; ///< the nest's, for profiles
};

/// One step of the driver. Slots 0 .. buffers-1 hold the LoopFunction's own
/// buffers (in its order); each allocation takes a new slot.
struct DriverStep {
  enum class Kind : std::uint8_t {
    Allocate,
    Call,
    Free,
    Copy
  } kind = Kind::Call;
  int slot = -1;        ///< Allocate, Free
  ir::DType dtype{};    ///< Allocate
  ir::Expr size;        ///< Allocate: element count
  bool zeroFill = true; ///< Allocate
  /// Allocate: the step after the matching Free, where the driver goes on
  /// when the allocation fails (the error is set; nothing inside runs).
  int skipTo = -1;
  int piece = -1; ///< Call
  int copy = -1;  ///< Copy: its index in PiecePlan::copies
};

struct PiecePlan {
  std::vector<Piece> pieces;
  std::vector<DriverCopy> copies;
  std::vector<DriverStep> steps;
  int slotCount = 0;
};

/// Cuts `f` (see the file comment).
PiecePlan cutIntoPieces(const LoopFunction &f,
                        std::int64_t budget = kPieceBudget);

/// Loop IR nodes in `s`: statements and the values and index expressions
/// they hold count one each.
std::int64_t loopIRSize(const Stmt &s);

} // namespace weir::codegen::cpu
