#pragma once
/// \file
/// The CPU backend: loop IR -> LLVM IR -> machine code through ORC LLJIT,
/// optimized for the host (the -O3 pipeline with the host's CPU features).
/// Parallel loops run on Weir's thread pool.
///
/// The loop IR is compiled in pieces of bounded size (cpu/pieces.h), on
/// several compile threads at once, and each piece's machine code is kept
/// in the compile cache on disk (cpu/object_cache.h): compiling a program
/// again, or one that shares most of its loop nests, reuses it.
///
///     codegen::Executable exe = codegen::compile(program);
///     interp::TensorMap outputs = exe.run(inputs);
///
/// With the pure implementations, results equal the reference interpreter's
/// bit for bit (no fast-math, no contraction or reassociation, libm calls
/// never constant-folded), except for the sign and payload of NaNs, which
/// IEEE leaves open. Library calls (the gemm primitive on OpenBLAS) sum in
/// their own order and agree to rounding.

#include "codegen/cpu/sgemm.h"
#include "codegen/lower/lower.h"
#include "core/interp/interpreter.h"
#include "ir/limits.h"
#include "ir/program.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace weir::codegen {

struct CompileOptions {
  LowerOptions lower;
  /// Threads for parallel loops; 0 = the number of cores.
  int threads = 0;
  /// Reuse earlier compilations: of a structurally equal program with equal
  /// options, in this process, and of equal pieces, from the compile cache
  /// on disk.
  bool useCache = true;
  /// Threads compiling pieces; 0 = the number of cores.
  int compileThreads = 0;
  /// Called on the calling thread as pieces are compiled: (done, total).
  std::function<void(int, int)> progress;
  /// Set from any thread to stop compiling: compile() then throws
  /// weir::Error("compilation cancelled").
  const std::atomic<bool> *cancel = nullptr;
  /// Time every loop nest and library call outside loops (RunOptions::
  /// profile collects the times).
  bool profile = false;
  /// Keep the LLVM IR as text for llvmIR() and optimizedLLVMIR() (printing
  /// a large model's IR takes a noticeable part of compiling it).
  bool keepLLVMIR = true;
  /// What runs gemm primitives: OpenBLAS (auto, openblas) or Weir's
  /// AVX-512 micro-kernel (weir). Chosen per executable at run time; the
  /// generated code is the same.
  cpu::GemmEngine gemm = cpu::GemmEngine::Auto;
  /// Checked before lowering, with the symbols unbound: buffers of a fixed
  /// size and the transient total (unbound symbols counting as 1).
  ir::RunLimits limits;
};

/// Time spent in one loop nest or library call, labelled with the map or
/// node it came from.
struct ProfileEntry {
  std::string label;
  double seconds = 0;
};

struct RunOptions {
  /// Values of symbols the input shapes do not determine.
  ir::Bindings symbols;
  /// When the program was compiled with profiling: receives one entry per
  /// timed region, in program order.
  std::vector<ProfileEntry> *profile = nullptr;
  /// Checked once the symbols are bound, before the run allocates.
  ir::RunLimits limits;
};

class Executable {
public:
  /// Runs the compiled program. Inputs are checked as the interpreter checks
  /// them (names, dtypes, shapes; symbols bound from input shapes). Throws
  /// weir::Error on bad inputs and on an integer division by zero.
  interp::TensorMap run(const interp::TensorMap &inputs,
                        const RunOptions &options = {}) const;

  /// The loop IR, printed.
  const std::string &loopIR() const;
  /// The LLVM IR as generated (before optimization) and as optimized; empty
  /// unless compiled with keepLLVMIR.
  const std::string &llvmIR() const;
  const std::string &optimizedLLVMIR() const;
  /// Seconds spent lowering, generating and optimizing (0 on a cache hit).
  double compileSeconds() const;
  /// Pieces the code was compiled in, how many came from the compile
  /// cache on disk, and how many have the code of another piece (compiled
  /// or loaded once for all of them).
  int pieceCount() const;
  int cachedPieceCount() const;
  int sharedPieceCount() const;
  int threads() const;
  /// The engine gemm primitives run on (never Auto).
  cpu::GemmEngine gemmEngine() const;

  struct Impl;

private:
  friend Executable compile(const ir::Program &, const CompileOptions &);
  std::shared_ptr<const Impl> impl_;
};

/// Forgets the compilations this process keeps for structurally equal
/// programs (the compile cache on disk stays).
void forgetCompilations();

/// Lowers and compiles. Throws weir::Error when the program cannot be
/// lowered (see lower()).
Executable compile(const ir::Program &program,
                   const CompileOptions &options = {});

} // namespace weir::codegen
