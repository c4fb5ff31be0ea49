#pragma once
/// \file
/// The readable C++ export: a lowered program (the loop IR) printed as one
/// standalone C++17 translation unit with OpenMP, for teaching and for
/// deployment without Weir.
///
///     std::string source = codegen::exportCpp(codegen::lower(program));
///
/// The unit holds a comment header (the source program, how to compile it,
/// the buffer and symbol order), a small preamble of inline helpers, and one
/// entry point:
///
///     extern "C" int weir_<name>(void **buffers, const int64_t *symbols);
///
/// `buffers` follow LoopFunction::buffers (inputs, outputs, constants), each
/// a dense array of its dtype (f16 and bf16 as their uint16_t bit patterns,
/// bool as one byte per element); outputs must be zero-filled by the caller,
/// as the JIT and the interpreter start them. `symbols` follow
/// LoopFunction::symbols. It returns 0; 1 when an integer division or
/// remainder by zero happened; 3 when a bounds guard (loop_ir.h,
/// BoundsGuard) stopped an access outside its container, which it also
/// describes on stderr. The outputs are then unspecified.
///
/// Each loop nest or library call lowered from a node starts with a comment
/// `// node: <label>` (the Stmt's label; nested loops from the same node
/// get none), so a reader — or the studio's Code dock — can tell which node
/// the lines up to the statement's closing `}` or `;` came from.
///
/// The code keeps the loop IR's shape: one C++ `for` per loop
/// (`#pragma omp parallel for` on parallel loops, `#pragma omp simd` on
/// vectorized ones), locals as typed variables, loads and stores as
/// `name[index]` on typed pointers named after the containers, an allocation
/// as a 64-byte-aligned zero-filled block freed at the end of its body. Its
/// arithmetic is exactly the reference interpreter's
/// (core/interp/tasklet_eval.h): integers wrap (computed in uint64_t), `/`
/// and `%` truncate and report division by zero, float-to-integer casts
/// saturate with NaN giving 0, f16/bf16 are computed in float and rounded
/// (by integer bit manipulation) on store and cast, float min/max propagate
/// NaN, round is half to even, and select/&&/|| evaluate only the side that
/// decides. Compiled with `g++ -std=c++17 -O2 -fopenmp -ffp-contract=off` it
/// gives the JIT's and the interpreter's results bit for bit (so never with
/// -ffast-math or -Ofast).

#include "codegen/lower/loop_ir.h"

#include <string>
#include <vector>

namespace weir::codegen {

/// The lines one node's statement printed: from its `// node:` comment to
/// the statement's closing line, 0-based and inclusive. Regions nest (a
/// node's loop inside another node's).
struct SourceRegion {
  std::string label; ///< the Stmt's label: the node's
  int first = 0, last = 0;
};

/// The exported source and its source map, so a viewer maps lines to nodes
/// without reading the comments back.
struct ExportedCpp {
  std::string text;
  std::vector<SourceRegion> regions; ///< by first line
};

/// The standalone C++ source of `f` (see the file comment).
std::string exportCpp(const LoopFunction &f);
/// The same with its source map.
ExportedCpp exportCppWithMap(const LoopFunction &f);

/// The C identifier of the entry point: `weir_` and the function's name made
/// an identifier.
std::string exportedSymbol(const LoopFunction &f);

} // namespace weir::codegen
