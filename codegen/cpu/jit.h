#pragma once
/// \file
/// LLVM for the host: the target machine, the -O3 pipeline and an ORC LLJIT
/// holding one compiled module. Private to codegen/cpu.

#include "codegen/cpu/runtime_support.h"
#include "codegen/lower/loop_ir.h"

#include <memory>
#include <string>
#include <vector>

namespace weir::codegen::cpu {

/// The generated entry: buffers, symbol values, the run's context.
using EntryFn = void (*)(void **buffers, const std::int64_t *symbols,
                         RunContext *rt);

/// Machine code for one LoopFunction, alive as long as this object.
class JitModule {
public:
  /// Emits, optimizes and compiles `f`. Throws weir::Error when LLVM fails
  /// (which is an internal error: the loop IR was valid).
  /// With `profile`, loop nests and calls outside loops are timed (see
  /// profileLabels()); with `keepIR`, the LLVM IR is kept as text.
  JitModule(const LoopFunction &f, bool profile, bool keepIR);
  ~JitModule();

  EntryFn entry() const { return entry_; }
  const std::string &llvmIR() const { return llvmIR_; }
  const std::string &optimizedLLVMIR() const { return optimizedIR_; }
  /// The host CPU and features the code was optimized for.
  const std::string &target() const { return target_; }
  /// One label per timed region, in RunContext::profile order; empty when
  /// compiled without profiling.
  const std::vector<std::string> &profileLabels() const { return labels_; }

private:
  struct State;
  std::unique_ptr<State> state_;
  EntryFn entry_ = nullptr;
  std::string llvmIR_, optimizedIR_, target_;
  std::vector<std::string> labels_;
};

} // namespace weir::codegen::cpu
