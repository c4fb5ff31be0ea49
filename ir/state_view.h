#pragma once
/// \file
/// A state as a graph to walk: its nodes by id, its edges by endpoint, and
/// the order in which every engine runs it — per map scope, a topological
/// order of the scope's direct members, each nested map counting as one
/// member placed at its entry. The interpreter runs this order, lowering
/// emits it, and the memory analysis (topLevel) reads its top level.

#include "ir/program.h"

#include <map>
#include <string>
#include <vector>

namespace weir::ir {

struct StateView {
  const State *state = nullptr;
  std::map<NodeId, const Node *> nodes;
  /// Scope (a MapEntry id, 0 for the top level) -> the members to run, in
  /// order. MapExits are not members: leaving a map moves no data.
  std::map<NodeId, std::vector<NodeId>> order;
  /// Edges by endpoint, in the state's edge order.
  std::map<NodeId, std::vector<const Edge *>> in, out;
};

/// An access-to-access copy into an access node: the edge, the containers
/// at its ends, which of them its memlet names (the subset is that
/// container's) and the other one.
struct AccessCopy {
  const Edge *edge = nullptr;
  std::string from, to, named, other;
};
/// The copies into access node `n`, in edge order: the edges from another
/// access node with a non-empty memlet.
std::vector<AccessCopy> copiesInto(const StateView &view, const Node &n);

/// The view of `state`, which must outlive it. Ties between nodes that may
/// run in either order go to the one earlier in `state.nodes`. Linear in
/// the edges (times the depth of map nesting): each edge orders members of
/// the one scope that holds both its ends. Throws
/// weir::Error naming the state when edges between scopes form a cycle.
StateView viewState(const State &state);

} // namespace weir::ir
