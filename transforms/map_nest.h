#pragma once
/// \file
/// What the scheduling helpers (`map-interchange`, `map-collapse`,
/// `parallelize`, `vectorize`) share: the contents of a map scope, the
/// accesses its memlets make, which parameters two iterations touching one
/// element may differ in (the order of such iterations is what a schedule
/// must keep), a map nest of exactly two maps, and the image of a subset
/// over a map's ranges (to re-derive the memlets between two nested maps).
///
/// The independence analysis works on memlets, not on the loop IR: the
/// transformations may not depend on codegen. It is the same rule as the
/// lowering's proof (codegen/lower/parallel_proof.h) applied to every
/// parameter, so a map `parallelize` accepts is one the lowering can prove.

#include "ir/affine.h"
#include "ir/program.h"
#include "ir/scope.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace weir::transforms::map_nest {

/// One access a memlet next to a computing node inside a scope makes.
struct ScopeAccess {
  std::string container; ///< the root when `container` was a view
  ir::Subset subset;
  bool write = false;
  bool wcr = false;
  /// The index says nothing (through a view, or by an access node inside
  /// the scope): no parameter is pinned by it.
  bool unknown = false;
  std::string text; ///< the memlet, for reasons
};

struct ScopeInfo {
  ir::NodeId entry = 0, exit = 0;
  std::set<ir::NodeId> body;         ///< every node inside, exit included
  std::vector<ir::NodeId> innerMaps; ///< entries of maps nested inside
  std::set<std::string> innerParams; ///< their parameters
  std::vector<ir::NodeId> calls;     ///< library and primitive nodes inside
  std::vector<ScopeAccess> accesses;
};

/// The scope of the map entered at `entry` (a MapEntry of `state`).
ScopeInfo scopeInfo(const ir::Program &program, const ir::State &state,
                    const ir::ScopeParents &parents,
                    ir::NodeId entry);

/// MapEntries enclosing `node`, innermost first.
std::vector<ir::NodeId>
enclosingMaps(const ir::ScopeParents &parents, ir::NodeId node);

/// A container written inside a scope whose accesses leave some
/// parameters free: two iterations that differ only in `free` may touch
/// one element of it (at least one of them writing).
struct Conflict {
  std::string container;
  std::vector<std::string> free; ///< in the order of `params`
  std::string example;           ///< a memlet that touches it
  bool wcr = false;              ///< some write combines (sum, max, ...)
};

/// For each container written in `scope`, the parameters among `params`
/// (with `ranges`; a range of one iteration never conflicts) that its
/// accesses do not pin. A parameter p is pinned when some dimension is, in
/// every access of the container, the same point `p + rest`, where `rest`
/// names no parameter of `params`, `alsoVarying` or a map inside; or points
/// that give distinct values of p disjoint intervals, the varying names in
/// them bounded by `bounds` (ir::disjointPerValue). Only containers with a
/// free parameter are listed.
std::vector<Conflict>
conflicts(const ScopeInfo &scope, const std::vector<std::string> &params,
          const std::vector<ir::Range> &ranges,
          const std::set<std::string> &alsoVarying = {},
          const std::map<std::string, ir::VarBounds> &bounds = {});

/// "'y' at y[i] (sum) may be touched by iterations that differ in j, k".
std::string describe(const Conflict &c);

/// An outer map whose scope holds exactly one inner map and nothing else:
/// every edge leaving the outer entry enters the inner one, every edge
/// entering the outer exit leaves the inner one.
struct MapNest {
  ir::NodeId outerEntry = 0, outerExit = 0, innerEntry = 0, innerExit = 0;
};
/// The nest below `outer`, or a reason naming the nodes.
std::optional<MapNest> findNest(const ir::State &state,
                                const ir::ScopeParents &parents,
                                ir::NodeId outer, std::string &why);

/// Whether any range of `ranges` names one of `names`.
std::optional<std::string> rangeNaming(const ir::MapData &m,
                                       const std::vector<std::string> &names);

/// The bounding box of `subset` over every value of `params` (each ranging
/// over `ranges`), when every bound is affine in each parameter with a
/// constant coefficient; otherwise nullopt.
std::optional<ir::Subset> image(const ir::Subset &subset,
                                const std::vector<std::string> &params,
                                const std::vector<ir::Range> &ranges);

} // namespace weir::transforms::map_nest
