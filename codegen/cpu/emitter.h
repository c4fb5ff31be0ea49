#pragma once
/// \file
/// The LLVM IR emitter's class, shared by its two halves: statements and
/// functions (llvm_emit.cpp) and typed scalar values (llvm_values.cpp).
/// Private to codegen/cpu.

#include "codegen/cpu/copy_nest.h"
#include "codegen/lower/loop_ir.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <map>
#include <string>

namespace weir::codegen::cpu::detail {

using ir::DType;
using ir::tasklet::BinaryOp;
using ir::tasklet::Func;
using ir::tasklet::UnaryOp;

/// What a function being generated can see: buffers, integer variables
/// (symbols and loop variables) and scalar locals.
struct Scope {
  llvm::Function *fn = nullptr;
  llvm::Value *rt = nullptr; ///< RunContext*
  std::map<std::string, llvm::Value *, std::less<>> buffers;
  std::map<std::string, llvm::Value *, std::less<>> ints;
  std::map<std::string, llvm::AllocaInst *, std::less<>> locals;
};

class Emitter {
public:
  /// `profileLabels`: see emitModule.
  Emitter(llvm::LLVMContext &c, llvm::Module &m,
          std::vector<std::string> *profileLabels)
      : ctx_(c), m_(m), b_(c), profileLabels_(profileLabels) {}

  void emitEntry(const LoopFunction &f, const std::string &entryName);

private:
  // Types.
  llvm::Type *memType(DType t);
  llvm::Type *regType(DType t);
  llvm::Type *i64() { return b_.getInt64Ty(); }
  llvm::Type *ptr() { return b_.getPtrTy(); }

  // Statements.
  void emit(const Stmt &s);
  void emitFor(const Stmt &s);
  void emitSerialLoop(const std::string &var, llvm::Value *begin,
                      llvm::Value *end, llvm::Value *step, bool vectorize,
                      const std::vector<StmtPtr> &body);
  void emitParallelFor(const Stmt &s);
  /// A copy nest as one call of the runtime's strided copy.
  void emitCopy(const Stmt &s, const CopyNest &c);
  void emitAllocate(const Stmt &s);
  void emitStore(const Stmt &s);
  void emitCall(const Stmt &s);

  // Values.
  llvm::Value *index(const ir::Expr &e);
  llvm::Value *value(const Value &v);
  llvm::Value *loadValue(const Value &v);
  /// The unchecked load of a Load value.
  llvm::Value *rawLoad(const Value &v);
  /// Emits the checks of `g`: where one fails, reports it to the runtime
  /// (weir_out_of_bounds) and branches to `skip`. Returns the block that
  /// reports; the builder is left where every index is in bounds.
  llvm::BasicBlock *checkBounds(const BoundsGuard &g, llvm::BasicBlock *skip);
  llvm::Value *storeBits(DType t, llvm::Value *v);
  llvm::Value *castValue(DType from, DType to, llvm::Value *v);
  llvm::Value *binaryValue(const Value &v);
  llvm::Value *intDivide(const Value &v, llvm::Value *a, llvm::Value *b);
  llvm::Value *compareValues(BinaryOp op, DType t, llvm::Value *a,
                             llvm::Value *b);
  llvm::Value *callValue(const Value &v);
  llvm::Value *floatMinMax(bool isMax, llvm::Value *a, llvm::Value *b);
  /// `cond ? then() : otherwise()`, evaluating only the taken side when
  /// either side may divide integers.
  llvm::Value *lazySelect(llvm::Value *cond, const Value &then,
                          const Value &otherwise);

  llvm::Value *buffer(const std::string &name);
  llvm::AllocaInst *localSlot(const std::string &name, llvm::Type *type);
  llvm::FunctionCallee runtime(const char *name, llvm::Type *ret,
                               std::vector<llvm::Type *> params);
  llvm::Value *intrinsic(llvm::Intrinsic::ID id, llvm::Value *a,
                         llvm::Value *b = nullptr);
  /// A call to libm's `name` (f32: `namef`) that LLVM may not fold.
  llvm::Value *libm(const char *name, DType t, llvm::Value *a,
                    llvm::Value *b = nullptr);
  void setFunctionAttributes(llvm::Function *fn);

  // The tasklet language's own math (ir/tasklet_math.h), operation for
  // operation (llvm_math.cpp).
  llvm::Value *expF32(llvm::Value *x);
  llvm::Value *erfF32(llvm::Value *x);
  /// pow(x, y): x · x when y is 2, else libm's pow.
  llvm::Value *powValue(DType t, llvm::Value *x, llvm::Value *y);
  llvm::Value *horner(const float *coefs, int count, llvm::Value *t);
  /// hash(seed, counter) on i64: SplitMix64's output `counter`.
  llvm::Value *splitMix(llvm::Value *seed, llvm::Value *counter);

  llvm::LLVMContext &ctx_;
  llvm::Module &m_;
  llvm::IRBuilder<> b_;
  Scope scope_;
  int outlined_ = 0;
  std::vector<std::string> *profileLabels_;
  int loopDepth_ = 0; ///< loops (and outlined bodies) around the insert point
  /// Reads of each local in the whole function.
  LocalReads localReads_;
  /// The label of the innermost labelled loop around the insert point:
  /// block names start with it (see kBlockLabelSeparator).
  std::string label_;
  /// `label_` (encoded), kBlockLabelSeparator, then `suffix`.
  std::string blockName(const std::string &suffix) const;
  /// Times `emitBody` when profiling and outside all loops.
  template <typename F> void profiled(const std::string &label, F emitBody);
};

} // namespace weir::codegen::cpu::detail
