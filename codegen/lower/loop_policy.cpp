/// \file
/// See loop_policy.h.

#include "codegen/lower/loop_policy.h"

#include <algorithm>

namespace weir::codegen {

std::vector<ForKind> chooseLoopKinds(const MapLoops &loops,
                                     const AccessLog &log) {
  const std::vector<std::string> &vars = loops.vars;
  const std::vector<ir::Range> &ranges = loops.ranges;
  // A vectorized map's innermost loop, and a cpu-parallel map's when it is
  // not the loop that runs in parallel: SIMD lanes inside each thread.
  bool vectorCandidate = loops.schedule == ir::Schedule::Vectorized ||
                         loops.schedule == ir::Schedule::CpuParallel;

  // The outermost loop with more than one iteration, when its iterations
  // are provably private (the single-iteration loops outside it are fixed
  // while it runs). A loop further in is not tried: a parallel region per
  // iteration of an outer loop costs more in wake-ups than it gains.
  // Too little work pays less than waking the pool costs.
  ir::Expr iterations(1);
  for (const ir::Range &r : ranges)
    iterations = iterations * r.size();
  // A library call parallelizes itself, so a map around calls stays serial
  // unless it is cpu-parallel with a batch of at least kMinLibraryBatch
  // calls: then whole calls run side by side, each on one thread (many
  // small GEMMs, as Winograd's sixteen, scale better so than split).
  // A body of many accesses (a Winograd tile's 36 loads and 36 stores)
  // counts as that many iterations of a copy's one load and one store.
  auto known = iterations.asConstant();
  std::int64_t weight =
      std::max<std::int64_t>(1, std::int64_t(log.accesses.size()) / 2);
  bool worthIt = log.callsLibrary
                     ? loops.schedule == ir::Schedule::CpuParallel && known &&
                           *known >= kMinLibraryBatch
                     : !known || *known * weight >= loops.minParallelIterations;
  // The values each of this map's loop variables takes, where constant.
  std::map<std::string, VarBounds> bounds = ir::constantBounds(vars, ranges);
  std::size_t parallelDim = vars.size();
  std::set<std::string, std::less<>> fixed = loops.outer;
  for (std::size_t d = 0; loops.parallelCandidate && worthIt && d < vars.size();
       ++d) {
    if (ranges[d].size() == ir::Expr(1)) {
      fixed.insert(vars[d]);
      continue;
    }
    if (iterationsArePrivate(log, vars[d], fixed, bounds))
      parallelDim = d;
    break;
  }
  std::set<std::string, std::less<>> inner = loops.outer;
  inner.insert(vars.begin(), vars.end());
  if (!vars.empty())
    inner.erase(vars.back());
  std::vector<ForKind> kinds(vars.size(), ForKind::Serial);
  for (std::size_t d = 0; d < vars.size(); ++d)
    if (d == parallelDim)
      kinds[d] = ForKind::Parallel;
    else if (vectorCandidate && d + 1 == vars.size() &&
             iterationsArePrivate(log, vars[d], inner))
      kinds[d] = ForKind::Vectorized;
  return kinds;
}

} // namespace weir::codegen
