#include "ir/scope.h"

#include "ir/error.h"
#include "ir/state_memo.h"

#include <algorithm>

namespace weir::ir {

namespace {

std::map<NodeId, NodeId> computeScopeParents(const State &state) {
  std::map<NodeId, NodeId> parent;
  std::map<NodeId, int> indeg;
  std::map<NodeId, std::vector<const Edge *>> out;
  std::map<NodeId, const Node *> byId;
  for (const Node &n : state.nodes) {
    byId[n.id] = &n;
    indeg[n.id] = 0;
    parent[n.id] = 0;
  }
  for (const Edge &e : state.edges) {
    if (!byId.count(e.src) || !byId.count(e.dst))
      continue;
    out[e.src].push_back(&e);
    ++indeg[e.dst];
  }
  // Topological walk; the scope a node sits in follows from any predecessor.
  std::vector<NodeId> ready;
  for (const Node &n : state.nodes)
    if (indeg[n.id] == 0)
      ready.push_back(n.id);
  std::reverse(ready.begin(), ready.end());
  std::map<NodeId, bool> assigned;
  while (!ready.empty()) {
    NodeId id = ready.back();
    ready.pop_back();
    const Node &n = *byId[id];
    for (const Edge *e : out[id]) {
      const Node &dst = *byId[e->dst];
      NodeId scope;
      if (n.kind == NodeKind::MapEntry)
        scope = n.id; // entering the map body
      else if (n.kind == NodeKind::MapExit)
        scope = parent[n.map().partner]; // leaving the map
      else
        scope = parent[id];
      // A map exit belongs to its entry's body.
      if (dst.kind == NodeKind::MapExit)
        scope = dst.map().partner;
      if (!assigned[dst.id]) {
        parent[dst.id] =
            dst.kind == NodeKind::MapExit ? dst.map().partner : scope;
        assigned[dst.id] = true;
      }
      if (--indeg[dst.id] == 0)
        ready.push_back(dst.id);
    }
  }
  // Exits report the scope their entry sits in, so a walk up from a node
  // inside a map reaches the map's entry, then the entry's parent.
  for (const Node &n : state.nodes)
    if (n.kind == NodeKind::MapExit)
      parent[n.id] = n.map().partner;
  return parent;
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
