#pragma once
/// \file
/// Map scopes of a state: which MapEntry encloses each node.

#include "ir/program.h"

#include <map>

namespace weir::ir {

/// node -> innermost enclosing MapEntry id, or 0 at the top level. A MapEntry
/// is in the scope it is entered from; its MapExit lies in the scope of the
/// entry (the map's own body). Edges are assumed acyclic; nodes on a cycle
/// land at the top level.
std::map<NodeId, NodeId> scopeParents(const State &state);

/// Product of the range sizes of every map enclosing `scope` (itself
/// included): how many times a node directly in that scope executes.
Expr scopeExecutions(const State &state,
                     const std::map<NodeId, NodeId> &parents, NodeId scope);

} // namespace weir::ir
