#pragma once
/// \file
/// Map scopes of a state: which MapEntry encloses each node, and how data
/// crosses a scope's boundary.

#include "ir/program.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace weir::ir {

/// node -> innermost enclosing MapEntry id, or 0 at the top level. A MapEntry
/// is in the scope it is entered from; its MapExit lies in the scope of the
/// entry (the map's own body). Edges are assumed acyclic; nodes on a cycle
/// land at the top level.
std::map<NodeId, NodeId> scopeParents(const State &state);
/// The same, shared: built once per state of a memoized program version
/// (ir/state_memo.h), which checks reuse instead of copying.
std::shared_ptr<const std::map<NodeId, NodeId>>
sharedScopeParents(const State &state);

/// The scope `parents` gives `id` (0, the top level, when none).
inline NodeId parentOf(const std::map<NodeId, NodeId> &parents, NodeId id) {
  auto it = parents.find(id);
  return it == parents.end() ? 0 : it->second;
}

/// Product of the range sizes of every map enclosing `scope` (itself
/// included): how many times a node directly in that scope executes.
Expr scopeExecutions(const State &state,
                     const std::map<NodeId, NodeId> &parents, NodeId scope);

/// scopeExecutions for many scopes of one state: each scope's count is
/// computed once, from its parent's (an analysis asks for every node).
class ScopeExecutions {
public:
  /// `state` and `parents` must outlive this object.
  ScopeExecutions(const State &state, const std::map<NodeId, NodeId> &parents);
  Expr operator()(NodeId scope);

private:
  Expr of(NodeId scope, int depth);
  const std::map<NodeId, NodeId> &parents_;
  std::map<NodeId, const Node *> entries_; ///< the state's map entries
  std::map<NodeId, Expr> counts_;
};

/// Scope connectors. Data crosses a map's boundary through connector
/// pairs named after one suffix x: on the entry, input `IN_x` (the edge
/// from outside) and output `OUT_x` (the edges into the body); on the
/// exit, input `IN_x` (from the body) and output `OUT_x` (to outside).
/// Every edit that makes or follows a pair spells it with these.
std::string scopeIn(std::string_view x);  ///< "IN_x"
std::string scopeOut(std::string_view x); ///< "OUT_x"
/// "x" for "IN_x"; nullopt for a connector that is not a scope input.
std::optional<std::string> scopeInSuffix(std::string_view conn);
/// "x" for "OUT_x"; nullopt for a connector that is not a scope output.
std::optional<std::string> scopeOutSuffix(std::string_view conn);
/// "x" for "IN_x" or "OUT_x". Throws weir::Error for a connector that is
/// neither (a scope connector was expected).
std::string scopeSuffix(std::string_view conn);
/// The other connector of the pair: "OUT_x" for "IN_x" and "IN_x" for
/// "OUT_x". Throws weir::Error for a connector that is neither.
std::string scopePartner(std::string_view conn);

} // namespace weir::ir
