#include "ir/scope.h"

#include "ir/error.h"
#include "ir/node_index.h"
#include "ir/state_memo.h"

#include <algorithm>

namespace weir::ir {

namespace {

std::map<NodeId, NodeId> computeScopeParents(const State &state) {
  const std::vector<Node> &nodes = state.nodes;
  NodeIndex index(state);
  const std::size_t n = nodes.size();
  Successors graph = successors(state, index);
  std::vector<int> &indeg = graph.indegree;

  std::vector<NodeId> parent(n, 0);
  std::vector<bool> assigned(n, false);
  auto parentOfId = [&](NodeId id) {
    std::size_t at = index.position(id);
    return at == NodeIndex::kAbsent ? NodeId(0) : parent[at];
  };
  // Topological walk; the scope a node sits in follows from any predecessor.
  std::vector<std::size_t> ready;
  for (std::size_t i = n; i-- > 0;)
    if (indeg[i] == 0)
      ready.push_back(i);
  while (!ready.empty()) {
    std::size_t at = ready.back();
    ready.pop_back();
    const Node &from = nodes[at];
    for (std::size_t k = graph.first[at]; k < graph.first[at + 1]; ++k) {
      std::size_t to = graph.targets[k];
      const Node &next = nodes[to];
      if (!assigned[to]) {
        NodeId scope;
        if (next.kind == NodeKind::MapExit)
          scope = next.map().partner; // a map exit belongs to its entry's body
        else if (from.kind == NodeKind::MapEntry)
          scope = from.id; // entering the map body
        else if (from.kind == NodeKind::MapExit)
          scope = parentOfId(from.map().partner); // leaving the map
        else
          scope = parent[at];
        parent[to] = scope;
        assigned[to] = true;
      }
      if (--indeg[to] == 0)
        ready.push_back(to);
    }
  }
  // Exits report the scope their entry sits in, so a walk up from a node
  // inside a map reaches the map's entry, then the entry's parent.
  std::map<NodeId, NodeId> result;
  for (std::size_t i = 0; i < n; ++i) {
    NodeId p = nodes[i].kind == NodeKind::MapExit ? nodes[i].map().partner
                                                  : parent[i];
    result.emplace_hint(result.end(), nodes[i].id, p);
  }
  return result;
}

} // namespace

std::shared_ptr<const std::map<NodeId, NodeId>>
sharedScopeParents(const State &state) {
  return memoized<std::map<NodeId, NodeId>>(
      state, [&] { return computeScopeParents(state); });
}

std::map<NodeId, NodeId> scopeParents(const State &state) {
  if (const StateMemo *memo = currentStateMemo(); memo && memo->holds(state))
    return *sharedScopeParents(state);
  return computeScopeParents(state);
}

Expr scopeExecutions(const State &state,
                     const std::map<NodeId, NodeId> &parents, NodeId scope) {
  return ScopeExecutions(state, parents)(scope);
}

ScopeExecutions::ScopeExecutions(const State &state,
                                 const std::map<NodeId, NodeId> &parents)
    : parents_(parents) {
  for (const Node &n : state.nodes)
    if (n.kind == NodeKind::MapEntry)
      entries_.emplace(n.id, &n);
}

Expr ScopeExecutions::operator()(NodeId scope) { return of(scope, 0); }

Expr ScopeExecutions::of(NodeId scope, int depth) {
  auto entry = entries_.find(scope);
  if (scope == 0 || depth > 1024 || entry == entries_.end())
    return Expr(1);
  if (auto it = counts_.find(scope); it != counts_.end())
    return it->second;
  Expr count(1);
  for (const Range &r : entry->second->map().ranges)
    count = count * r.size();
  count = count * of(parentOf(parents_, scope), depth + 1);
  counts_.emplace(scope, count);
  return count;
}

namespace {
constexpr std::string_view kIn = "IN_", kOut = "OUT_";

std::optional<std::string> suffixAfter(std::string_view conn,
                                       std::string_view prefix) {
  if (!conn.starts_with(prefix))
    return std::nullopt;
  return std::string(conn.substr(prefix.size()));
}
} // namespace

std::string scopeIn(std::string_view x) { return std::string(kIn) += x; }
std::string scopeOut(std::string_view x) { return std::string(kOut) += x; }

std::optional<std::string> scopeInSuffix(std::string_view conn) {
  return suffixAfter(conn, kIn);
}

std::optional<std::string> scopeOutSuffix(std::string_view conn) {
  return suffixAfter(conn, kOut);
}

std::string scopeSuffix(std::string_view conn) {
  if (auto x = scopeInSuffix(conn))
    return *x;
  if (auto x = scopeOutSuffix(conn))
    return *x;
  throw Error("connector '" + std::string(conn) +
              "' is not a scope connector (IN_x or OUT_x)");
}

std::string scopePartner(std::string_view conn) {
  if (auto x = scopeInSuffix(conn))
    return scopeOut(*x);
  return scopeIn(scopeSuffix(conn));
}

} // namespace weir::ir
