#pragma once
/// \file
/// The order in which the interpreter runs the nodes of a state: per map
/// scope, a topological order of the scope's direct members, each nested
/// map counting as one member placed at its entry.

#include "ir/program.h"

#include <map>
#include <vector>

namespace weir::interp {

struct StatePlan {
  const ir::State *state = nullptr;
  std::map<ir::NodeId, const ir::Node *> nodes;
  /// Scope (a MapEntry id, 0 for the top level) -> the members to run, in
  /// order. MapExits are not members: leaving a map moves no data.
  std::map<ir::NodeId, std::vector<ir::NodeId>> order;
  /// Edges by endpoint, in the state's edge order.
  std::map<ir::NodeId, std::vector<const ir::Edge *>> in, out;
};

/// Plans `state`, which must outlive the plan. Ties between nodes that may
/// run in either order go to the one earlier in `state.nodes`. Throws
/// weir::Error naming the state when edges between scopes form a cycle.
StatePlan planState(const ir::State &state);

} // namespace weir::interp
