/// \file
/// Linking compiled pieces in an ORC LLJIT (see jit.h).

#include "codegen/cpu/jit.h"

#include "codegen/cpu/llvm_host.h"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>

#include <map>

namespace weir::codegen::cpu {

struct JitModule::State {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

JitModule::JitModule(const std::vector<CompiledPiece> &pieces)
    : state_(std::make_unique<State>()) {
  state_->jit = unwrap(
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(hostMachineBuilder())
          .create(),
      "start the JIT");
  llvm::orc::LLJIT &jit = *state_->jit;
  llvm::orc::JITDylib &lib = jit.getMainJITDylib();
  // libm (tanhf, erff, ...) from the process; Weir's runtime by address.
  lib.addGenerator(
      unwrap(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                 jit.getDataLayout().getGlobalPrefix()),
             "search the process for symbols"));
  llvm::orc::SymbolMap runtime;
  for (const RuntimeSymbol *s = runtimeSymbols(); s->name; ++s)
    runtime[jit.mangleAndIntern(s->name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(s->address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  check(lib.define(llvm::orc::absoluteSymbols(std::move(runtime))),
        "bind the runtime functions");

  // Equal pieces share one object and one symbol.
  std::map<std::string, EntryFn> bySymbol;
  for (const CompiledPiece &p : pieces)
    if (bySymbol.emplace(p.symbol, nullptr).second)
      check(jit.addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
                p.object, p.symbol)),
            "add a compiled piece");
  for (auto &[symbol, fn] : bySymbol)
    fn = unwrap(jit.lookup(symbol), "link a compiled piece").toPtr<EntryFn>();
  for (const CompiledPiece &p : pieces)
    entries_.push_back(bySymbol.at(p.symbol));
}

JitModule::~JitModule() = default;

} // namespace weir::codegen::cpu
