#pragma once
/// \file
/// LLVM for the host: initialization, the target machine, the -O3 pipeline
/// and error conversion. Private to codegen/cpu (it includes LLVM headers).

#include "ir/error.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>

namespace weir::codegen::cpu {

/// Initializes the native target once per process.
void initializeLLVM();

/// The host CPU with its features, at -O3 code generation: what the JIT
/// links for and what pieces are compiled for.
llvm::orc::JITTargetMachineBuilder hostMachineBuilder();
std::unique_ptr<llvm::TargetMachine> hostMachine();

/// Everything besides the IR that generated code depends on: the target
/// triple, CPU and features, LLVM's version and this build of Weir.
const std::string &codeIdentity();

/// Sets the module's data layout and triple and every function's CPU and
/// features to `tm`'s.
void targetModule(llvm::Module &m, llvm::TargetMachine &tm);

/// The -O3 pipeline (without full loop unrolling, see llvm_host.cpp), with
/// the target's cost model (vector widths, AVX-512) from `tm`.
void optimize(llvm::Module &m, llvm::TargetMachine &tm);

std::string printModule(const llvm::Module &m);

/// A value, or weir::Error "internal error: LLVM could not <what>: ...".
template <typename T> T unwrap(llvm::Expected<T> v, const char *what) {
  if (!v)
    throw Error(std::string("internal error: LLVM could not ") + what + ": " +
                llvm::toString(v.takeError()));
  return std::move(*v);
}
void check(llvm::Error e, const char *what);

} // namespace weir::codegen::cpu
