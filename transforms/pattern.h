#pragma once
/// \file
/// Patterns declared as data, and the one generic matcher.
///
/// A pattern is a list of roles (node kind, optionally the operator types a
/// library node or primitive may have, optionally a predicate) and a list of
/// edges between roles. The matcher binds roles to distinct nodes of one
/// state so that every pattern edge is an edge of the state:
///
///     Pattern p;
///     p.node("conv", ir::NodeKind::Library, {"Conv"})
///      .node("mid", ir::NodeKind::Access)
///      .node("bn", ir::NodeKind::Library, {"BatchNormalization"})
///      .edge("conv", "mid").edge("mid", "bn");
///
/// Matches come in a deterministic order: states in program order; within a
/// state, the first role's candidates in node order, and each later role's
/// candidates in the order of the edges that reach them from roles already
/// bound (or in node order when none does). Later roles are found through
/// the edges of earlier ones, so declare roles in an order where each is
/// connected to one before it.

#include "ir/node_index.h"
#include "ir/program.h"

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace weir::transforms {

/// Adjacency of one state, built once per matching pass (State::inEdges and
/// outEdges scan every edge). A node's edges come in the state's edge order.
class StateGraph {
public:
  using Edges = std::span<const ir::Edge *const>;

  explicit StateGraph(const ir::State &state);
  const ir::State &state() const { return state_; }
  Edges in(ir::NodeId id) const;
  Edges out(ir::NodeId id) const;
  const ir::Node *node(ir::NodeId id) const;

private:
  /// One direction's edges by node index, in two flat arrays (a vector
  /// per node made building and freeing the graph of every version of a
  /// recipe a tenth of DenseNet-121's): node i's are edges[first[i]] up
  /// to edges[first[i + 1]].
  struct Lists {
    std::vector<std::size_t> first;
    std::vector<const ir::Edge *> edges;
    Edges of(std::size_t i) const {
      return {edges.data() + first[i], first[i + 1] - first[i]};
    }
  };
  const ir::State &state_;
  /// Node positions by id: the state's memoized index (ir/state_memo.h),
  /// which the version's validation and other passes share.
  std::shared_ptr<const ir::NodeIndex> index_;
  Lists in_, out_;
  /// The node's position, or the node count when there is none.
  std::size_t indexOf(ir::NodeId id) const;
};

/// The state's graph: built once per state of a memoized program version
/// (ir/state_memo.h), else fresh.
std::shared_ptr<const StateGraph> sharedStateGraph(const ir::State &state);

/// Extra condition on a candidate node; sees the program (containers) and
/// the node's state with its adjacency.
using NodePredicate = std::function<bool(
    const ir::Program &, const StateGraph &, const ir::Node &)>;

struct PatternNode {
  std::string role;
  ir::NodeKind kind = ir::NodeKind::Access;
  /// Library op types or primitive names allowed; empty = any.
  std::vector<std::string> ops;
  NodePredicate predicate; ///< may be empty
};

struct PatternEdge {
  std::string src, dst; ///< roles
  /// Required connector names at either end; nullopt = any.
  std::optional<std::string> srcConn, dstConn;
};

struct Pattern {
  std::vector<PatternNode> nodes;
  std::vector<PatternEdge> edges;

  Pattern &node(std::string role, ir::NodeKind kind,
                std::vector<std::string> ops = {},
                NodePredicate predicate = {});
  Pattern &edge(std::string src, std::string dst,
                std::optional<std::string> srcConn = std::nullopt,
                std::optional<std::string> dstConn = std::nullopt);

  bool empty() const { return nodes.empty(); }
  /// Index of `role`, or -1.
  int roleIndex(std::string_view role) const;
  /// Whether `node` could play role `index` on its own (kind, ops,
  /// predicate), ignoring edges.
  bool admits(std::size_t index, const ir::Program &program,
              const StateGraph &graph, const ir::Node &node) const;
};

/// Every binding of the pattern's roles in one state, each a list of node
/// ids in role order, in the documented deterministic order.
std::vector<std::vector<ir::NodeId>>
matchPattern(const Pattern &pattern, const ir::Program &program,
             const StateGraph &graph);

/// How explainMismatch ends a reason when only a role's predicate refused.
inline constexpr std::string_view kPredicateRefused =
    "does not meet the pattern's condition";

/// Whether `binding` (node ids in role order) is a match of the pattern in
/// the state; otherwise the reason.
std::optional<std::string> explainMismatch(const Pattern &pattern,
                                           const ir::Program &program,
                                           const StateGraph &graph,
                                           const std::vector<ir::NodeId> &binding);

} // namespace weir::transforms
