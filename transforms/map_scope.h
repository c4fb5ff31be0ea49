#pragma once
/// \file
/// Edits of map scopes that the map-level fusions share: scope connector
/// pairs (named by ir/scope.h), parameter renaming (over a body that
/// ir::ScopeParents::bodyOf gives), and moving one scope's edges onto
/// another's entry or exit.

#include "ir/program.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace weir::transforms::map_scope {

using Rename = std::map<std::string, ir::Expr, std::less<>>;

/// Views alias their target: hazards are judged on the target.
std::string rootOf(const ir::Program &p, const std::string &container);
ir::Subset renamed(const ir::Subset &s, const Rename &m);
ir::Range renamed(const ir::Range &r, const Rename &m);
/// "[i0 = 0:4, i1 = 0:6]".
std::string rangesText(const ir::MapData &m);
/// Every input connector has its OUT_ partner and the other way round.
bool pairedConnectors(const ir::Node &n);
bool sameMemlet(const ir::Memlet &a, const ir::Memlet &b);
bool isOrdering(const ir::Edge &e);
/// Whether two iterations of `m` never touch the same element through
/// `subset`: every parameter that takes more than one value is, in some
/// dimension, the index plus a term no parameter changes.
bool distinctPerIteration(const ir::Subset &subset, const ir::MapData &m);

/// "x", "x_1", ...: a pair IN_x / OUT_x not yet on `n`.
std::string freshPair(const ir::Node &n, const std::string &x);

/// Renames the parameters in every memlet inside the scope of `entry` and
/// in the ranges of nested maps (`body` from ir::ScopeParents::bodyOf).
void renameBody(ir::State &s, ir::NodeId entry,
                const std::set<ir::NodeId> &body, const Rename &rename);

/// Why renaming the parameters of the map `entry` (body from ir::ScopeParents::bodyOf) by
/// `rename` is unsafe — a nested map binds one of the names, or a library
/// node or primitive inside may name them in its attributes — or nullopt.
std::optional<std::string> renamingConflict(const ir::State &s,
                                            const ir::Node &entry,
                                            const std::set<ir::NodeId> &body,
                                            const Rename &rename);

/// Moves every edge of `from` (a MapEntry) onto `to`: incoming edges get
/// fresh IN_/OUT_ pairs on `to` unless `to` already reads the same source
/// through an equal memlet (then the connector is shared); ordering edges
/// move or go when an equal one is there. `from` keeps no edge.
void mergeEntry(ir::State &s, ir::NodeId from, ir::NodeId to);
/// The same for MapExits: incoming edges get fresh pairs on `to`.
void mergeExit(ir::State &s, ir::NodeId from, ir::NodeId to);

} // namespace weir::transforms::map_scope
