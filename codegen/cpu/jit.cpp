/// \file
/// Host target, optimization pipeline and ORC LLJIT (see jit.h).

#include "codegen/cpu/jit.h"

#include "codegen/cpu/llvm_emit.h"
#include "ir/error.h"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <mutex>

namespace weir::codegen::cpu {
namespace {

constexpr const char *kEntryName = "weir_entry";

void initializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string errorText(llvm::Error e) { return llvm::toString(std::move(e)); }

template <typename T> T unwrap(llvm::Expected<T> v, const char *what) {
  if (!v)
    throw Error(std::string("internal error: LLVM could not ") + what + ": " +
                errorText(v.takeError()));
  return std::move(*v);
}

void check(llvm::Error e, const char *what) {
  if (e)
    throw Error(std::string("internal error: LLVM could not ") + what + ": " +
                errorText(std::move(e)));
}

std::string printModule(const llvm::Module &m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return text;
}

/// The -O3 pipeline (without full loop unrolling, see below), with the
/// target's cost model (vector widths, AVX-512) from `tm`.
void optimize(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  // Full unrolling would copy every loop body again after the vectorizer
  // has already widened and interleaved it: on ResNet-50 it cost 40% of
  // the optimization time and no measurable run time.
  tuning.LoopUnrolling = false;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

} // namespace

struct JitModule::State {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

JitModule::JitModule(const LoopFunction &f, bool profile, bool keepIR)
    : state_(std::make_unique<State>()) {
  initializeLLVM();
  llvm::orc::JITTargetMachineBuilder jtmb = unwrap(
      llvm::orc::JITTargetMachineBuilder::detectHost(), "detect the host CPU");
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  std::unique_ptr<llvm::TargetMachine> tm =
      unwrap(jtmb.createTargetMachine(), "create a target machine");
  target_ = tm->getTargetTriple().str() + " " + tm->getTargetCPU().str();

  auto context = std::make_unique<llvm::LLVMContext>();
  // Optimization remarks and warnings (a loop marked for vectorization
  // that could not be) are not the user's business; errors still throw.
  context->setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo *, void *) {});
  std::unique_ptr<llvm::Module> module =
      emitModule(f, kEntryName, *context, profile ? &labels_ : nullptr);
  module->setDataLayout(tm->createDataLayout());
  module->setTargetTriple(tm->getTargetTriple().str());
  for (llvm::Function &fn : *module) {
    if (fn.isDeclaration())
      continue;
    fn.addFnAttr("target-cpu", tm->getTargetCPU());
    fn.addFnAttr("target-features", tm->getTargetFeatureString());
  }
  if (keepIR)
    llvmIR_ = printModule(*module);
  optimize(*module, *tm);
  if (keepIR)
    optimizedIR_ = printModule(*module);

  state_->jit = unwrap(llvm::orc::LLJITBuilder()
                           .setJITTargetMachineBuilder(std::move(jtmb))
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
  check(jit.addIRModule(
            llvm::orc::ThreadSafeModule(std::move(module), std::move(context))),
        "add the module");
  entry_ =
      unwrap(jit.lookup(kEntryName), "compile the module").toPtr<EntryFn>();
}

JitModule::~JitModule() = default;

} // namespace weir::codegen::cpu
