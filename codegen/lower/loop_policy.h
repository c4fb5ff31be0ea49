#pragma once
/// \file
/// Which loops of a map run in parallel or in SIMD lanes: the policy half
/// of lowering, apart from the translation (lower.h states the rules).
/// The proof that a loop may run so is parallel_proof.h; this file decides
/// where it is worth trying: the outermost loop with more than one
/// iteration of a cpu-parallel map no parallel loop encloses, when the map
/// does enough work to pay for waking the thread pool; the innermost loop
/// of a vectorized or cpu-parallel map when it is not the parallel one.

#include "codegen/lower/loop_ir.h"
#include "codegen/lower/parallel_proof.h"
#include "ir/program.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace weir::codegen {

/// The fewest library calls a cpu-parallel map must make to run them side
/// by side rather than one after another (each then parallel itself).
constexpr std::int64_t kMinLibraryBatch = 8;

/// One map's loops as lowering has built them, and what decides their kind.
struct MapLoops {
  ir::Schedule schedule = ir::Schedule::Sequential;
  /// No enclosing loop runs in parallel, and the schedule asks for it
  /// (cpu-parallel, or sequential with LowerOptions::
  /// parallelizeSequentialMaps).
  bool parallelCandidate = false;
  std::vector<std::string> vars; ///< loop variables, outermost first
  std::vector<ir::Range> ranges; ///< their ranges, substituted
  /// The names fixed while the map runs: symbols and enclosing loops'
  /// variables.
  std::set<std::string, std::less<>> outer;
  std::int64_t minParallelIterations = 0;
};

/// The kind of each of `loops.vars`' loops, given the accesses `log` of
/// the body.
std::vector<ForKind> chooseLoopKinds(const MapLoops &loops,
                                     const AccessLog &log);

} // namespace weir::codegen
