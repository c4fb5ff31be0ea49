#pragma once
/// \file
/// Map scopes of a state: which MapEntry encloses each node, and how data
/// crosses a scope's boundary.

#include "ir/node_index.h"
#include "ir/program.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace weir::ir {

/// node -> innermost enclosing MapEntry id, or 0 at the top level. A MapEntry
/// is in the scope it is entered from; its MapExit lies in the scope of the
/// entry (the map's own body). Edges are assumed acyclic; nodes on a cycle
/// land at the top level.
///
/// Flat: the parents sit in a vector by the nodes' positions, found through
/// an id table (node_index.h). A recipe asks for a state's parents once per
/// version, and a tree node per node made that a tenth of a long chain's
/// optimize.
class ScopeParents {
public:
  explicit ScopeParents(const State &state);
  /// From an index and successor lists of `state` the caller has already
  /// built (the validator's).
  ScopeParents(const State &state, const NodeIndex &index,
               const Successors &graph);

  /// The scope of `id`: 0 at the top level, and for an id not in the state.
  NodeId operator[](NodeId id) const {
    std::size_t at = positions_.position(id);
    return at == IdPositions::kAbsent ? 0 : parent_[at];
  }
  /// How many nodes the state has.
  std::size_t size() const { return ids_.size(); }
  /// The nodes the map entered at `entry` holds directly (its exit
  /// included), by ascending id.
  std::vector<NodeId> childrenOf(NodeId entry) const;
  /// Nodes whose chain of enclosing scopes reaches `entry` (its exit too).
  std::set<NodeId> bodyOf(NodeId entry) const;
  /// (node, parent) for every node, by ascending id.
  std::map<NodeId, NodeId> toMap() const;

private:
  ScopeParents(const State &state, const NodeIndex &index);

  IdPositions positions_;
  std::vector<NodeId> ids_;    ///< by position
  std::vector<NodeId> parent_; ///< by position
};

/// The scope parents of `state`, built now or taken from the current
/// version's memo (ir/state_memo.h).
ScopeParents scopeParents(const State &state);
/// The same, shared: built once per state of a memoized program version,
/// which checks reuse instead of copying.
std::shared_ptr<const ScopeParents> sharedScopeParents(const State &state);

/// The scope `parents` gives `id` (0, the top level, when none).
inline NodeId parentOf(const ScopeParents &parents, NodeId id) {
  return parents[id];
}

/// Product of the range sizes of every map enclosing `scope` (itself
/// included): how many times a node directly in that scope executes.
Expr scopeExecutions(const State &state, const ScopeParents &parents,
                     NodeId scope);

/// scopeExecutions for many scopes of one state: each scope's count is
/// computed once, from its parent's (an analysis asks for every node).
///
/// A map whose ranges depend on the parameters of the maps around it (a
/// pooling window clamped at the border is smaller there) executes the sum
/// of its sizes over the outer iterations, not their product with a free
/// parameter: `total` sums exactly over the loops the sum depends on when
/// they are constant and span at most kEnumerated points (the others only
/// multiply it), and otherwise takes the largest value the interval
/// analysis gives for each iteration (an upper bound). Only when neither
/// applies does the count keep the parameter.
class ScopeExecutions {
public:
  /// Outer iteration points summed one by one at most.
  static constexpr std::int64_t kEnumerated = 1 << 16;
  /// One iteration variable of the maps around a node.
  struct Loop {
    const std::string *param;
    const Range *range;
  };

  /// `state` and `parents` must outlive this object.
  ScopeExecutions(const State &state, const ScopeParents &parents);
  Expr operator()(NodeId scope);
  /// Sum of `perIteration` over every iteration of `scope` and the maps
  /// around it; `perIteration` may use their parameters (0: run once).
  Expr total(NodeId scope, const Expr &perIteration);

private:
  Expr of(NodeId scope, int depth);
  /// The loops of `scope` and the maps around it, outermost first.
  std::vector<Loop> loopsOf(NodeId scope) const;
  /// The sum of `perIteration` over `loops` (see the class comment);
  /// nullopt when it does not depend on them or cannot be bounded.
  std::optional<Expr> sumOverLoops(const std::vector<Loop> &loops,
                                   const Expr &perIteration);
  const ScopeParents &parents_;
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
