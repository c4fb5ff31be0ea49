#pragma once
/// \file
/// Compiling pieces (pieces.h) to machine code: each on its own LLVM
/// context, several at once on a pool of compile threads, through the
/// compile cache on disk (object_cache.h). Private to codegen/cpu.

#include "codegen/cpu/object_cache.h"
#include "codegen/cpu/pieces.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace weir::codegen::cpu {

/// One piece's machine code.
struct CompiledPiece {
  /// The external function the object defines: the piece's entry, taking
  /// (buffers, symbols, run context) as the whole function's entry does.
  /// It names the code, so equal pieces share one symbol.
  std::string symbol;
  std::string object; ///< a relocatable object file
  /// Profiled regions, in RunContext::profile order (when profiling).
  std::vector<std::string> labels;
  /// The LLVM IR as generated and as optimized (when kept).
  std::string llvmIR, optimizedIR;
  bool fromCache = false;
  /// Another piece of the same call has the same code (the same key): it
  /// was compiled, or loaded, once for both.
  bool shared = false;
};

struct PieceCompileOptions {
  bool profile = false;
  bool keepIR = false;
  /// Compile threads; 0 = the number of cores.
  int threads = 0;
  /// Where compiled pieces are looked up and stored; null: nowhere.
  const ObjectCache *cache = nullptr;
  /// Called on the calling thread as pieces finish: (done, total).
  std::function<void(int, int)> progress;
  /// Set (from any thread) to stop: compilePieces then throws weir::Error.
  const std::atomic<bool> *cancel = nullptr;
};

/// Compiles every piece, in order; pieces with the same code compile once. Throws weir::Error when one cannot be
/// emitted (an internal error: the loop IR was valid) or when cancelled.
std::vector<CompiledPiece> compilePieces(const std::vector<Piece> &pieces,
                                         const PieceCompileOptions &options);

} // namespace weir::codegen::cpu
