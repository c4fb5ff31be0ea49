#pragma once
/// \file
/// An ORC LLJIT holding the compiled pieces of one program, linked against
/// libm and Weir's runtime functions. Private to codegen/cpu.

#include "codegen/cpu/piece_compiler.h"
#include "codegen/cpu/runtime_support.h"

#include <memory>
#include <string>
#include <vector>

namespace weir::codegen::cpu {

/// A piece's (and the whole function's) entry: buffers, symbol values, the
/// run's context.
using EntryFn = void (*)(void **buffers, const std::int64_t *symbols,
                         RunContext *rt);

/// Machine code for the pieces, alive as long as this object.
class JitModule {
public:
  /// Links the objects (one per distinct symbol). Throws weir::Error when
  /// LLVM fails, which is an internal error.
  explicit JitModule(const std::vector<CompiledPiece> &pieces);
  ~JitModule();

  /// The entry of pieces[i].
  EntryFn entry(std::size_t i) const { return entries_[i]; }

private:
  struct State;
  std::unique_ptr<State> state_;
  std::vector<EntryFn> entries_;
};

} // namespace weir::codegen::cpu
