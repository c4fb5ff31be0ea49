/// \file
/// LLVM for the host (see llvm_host.h).

#include "codegen/cpu/llvm_host.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <dlfcn.h>
#include <mutex>
#include <sys/stat.h>

namespace weir::codegen::cpu {

void initializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

llvm::orc::JITTargetMachineBuilder hostMachineBuilder() {
  initializeLLVM();
  // Detected once: it reads the CPU's features, which do not change.
  static const llvm::orc::JITTargetMachineBuilder host = [] {
    llvm::orc::JITTargetMachineBuilder jtmb =
        unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(),
               "detect the host CPU");
    jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    return jtmb;
  }();
  return host;
}

std::unique_ptr<llvm::TargetMachine> hostMachine() {
  return unwrap(hostMachineBuilder().createTargetMachine(),
                "create a target machine");
}

namespace {

/// This build of Weir: the file holding this code, its size and time. A
/// rebuild changes them, so code a changed code generator made is never
/// taken for the old one's.
std::string buildIdentity() {
  Dl_info info{};
  static const int anchor = 0;
  if (dladdr(&anchor, &info) && info.dli_fname) {
    struct stat st{};
    if (::stat(info.dli_fname, &st) == 0)
      return std::string(info.dli_fname) + ":" + std::to_string(st.st_size) +
             ":" + std::to_string(st.st_mtim.tv_sec) + "." +
             std::to_string(st.st_mtim.tv_nsec);
  }
  return std::string("built ") + __DATE__ + " " + __TIME__;
}

} // namespace

const std::string &codeIdentity() {
  static const std::string id = [] {
    std::unique_ptr<llvm::TargetMachine> tm = hostMachine();
    return tm->getTargetTriple().str() + "|" + tm->getTargetCPU().str() + "|" +
           tm->getTargetFeatureString().str() + "|LLVM " LLVM_VERSION_STRING
           "|" + buildIdentity();
  }();
  return id;
}

void targetModule(llvm::Module &m, llvm::TargetMachine &tm) {
  m.setDataLayout(tm.createDataLayout());
  m.setTargetTriple(tm.getTargetTriple().str());
  for (llvm::Function &fn : m) {
    if (fn.isDeclaration())
      continue;
    fn.addFnAttr("target-cpu", tm.getTargetCPU());
    fn.addFnAttr("target-features", tm.getTargetFeatureString());
  }
}

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

std::string printModule(const llvm::Module &m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return text;
}

void check(llvm::Error e, const char *what) {
  if (e)
    throw Error(std::string("internal error: LLVM could not ") + what + ": " +
                llvm::toString(std::move(e)));
}

} // namespace weir::codegen::cpu
