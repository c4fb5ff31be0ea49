#pragma once
/// \file
/// Loop IR -> LLVM IR. Private to codegen/cpu (it includes LLVM headers).
///
/// The module defines one external function,
///
///     void <entry>(ptr buffers, ptr symbols, ptr runtime)
///
/// taking the buffer pointers in LoopFunction::buffers order, the i64 symbol
/// values in LoopFunction::symbols order and the run's context (see
/// runtime_support.h). It unpacks them and calls the kernel, whose buffer
/// parameters are `noalias`, so the optimizer knows containers never
/// overlap. Each parallel loop is outlined into a function that runs a chunk
/// of iterations, called through weir_parallel_for.
///
/// Basic blocks say which loop IR statement they come from: a block of a
/// loop (or of an `if` or allocation inside one) is named `<label>$<what>`,
/// where <label> is the label of the innermost labelled loop around it (""
/// outside all) with `%` and `$` percent-encoded. So the label is what
/// precedes the first `$`, whatever suffix LLVM or its passes append (a
/// number, `.preheader`, or `.<other block>_crit_edge`, which names two).
/// A loop's exit block holds what follows the loop, so it is named after
/// the enclosing loop; a call outside all loops names its block
/// `<label>$call`, and the entry blocks are `<label>$entry` after the first
/// loop or call. Names only: the code is the same without them.

#include "codegen/lower/loop_ir.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <vector>

namespace weir::codegen::cpu {

/// Separates a block name's label from the rest (see above).
inline constexpr char kBlockLabelSeparator = '$';

/// Builds the module for `f` in `context`. `entryName` names the entry
/// function. Throws weir::Error when the loop IR uses a name it does not
/// define, and when LLVM's verifier rejects the result (an internal error).
/// With `profileLabels`, every loop nest and call outside all loops is timed
/// into RunContext::profile[k], where k indexes the label appended for it.
std::unique_ptr<llvm::Module>
emitModule(const LoopFunction &f, const std::string &entryName,
           llvm::LLVMContext &context,
           std::vector<std::string> *profileLabels = nullptr);

} // namespace weir::codegen::cpu
