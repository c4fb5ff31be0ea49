/// \file
/// See state_view.h.

#include "ir/state_view.h"

#include "ir/error.h"
#include "ir/scope.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

namespace weir::ir {
namespace {

/// Kahn's algorithm over the members of one scope, the ready node earliest
/// in `State::nodes` going first.
std::vector<NodeId> orderScope(const std::vector<NodeId> &members,
                               const std::map<NodeId, std::set<NodeId>> &succ,
                               const std::map<NodeId, std::size_t> &position) {
  std::map<NodeId, int> indeg;
  for (NodeId id : members)
    indeg[id] = 0;
  for (const auto &[from, tos] : succ)
    for (NodeId to : tos)
      ++indeg[to];
  std::set<std::pair<std::size_t, NodeId>> ready;
  for (NodeId id : members)
    if (indeg[id] == 0)
      ready.insert({position.at(id), id});
  std::vector<NodeId> order;
  while (!ready.empty()) {
    NodeId id = ready.begin()->second;
    ready.erase(ready.begin());
    order.push_back(id);
    if (auto it = succ.find(id); it != succ.end())
      for (NodeId next : it->second)
        if (--indeg[next] == 0)
          ready.insert({position.at(next), next});
  }
  return order;
}

} // namespace

StateView viewState(const State &state) {
  StateView plan;
  plan.state = &state;
  std::map<NodeId, std::size_t> position;
  for (std::size_t i = 0; i < state.nodes.size(); ++i) {
    plan.nodes[state.nodes[i].id] = &state.nodes[i];
    position[state.nodes[i].id] = i;
  }
  for (const Edge &e : state.edges) {
    plan.out[e.src].push_back(&e);
    plan.in[e.dst].push_back(&e);
  }

  ScopeParents parent = scopeParents(state);
  std::map<NodeId, std::vector<NodeId>> members;
  members[0];
  for (const Node &n : state.nodes) {
    if (n.kind == NodeKind::MapEntry)
      members[n.id]; // an empty body still gets an (empty) order
    if (n.kind != NodeKind::MapExit)
      members[parent[n.id]].push_back(n.id);
  }

  // An edge orders two members of one scope only: the deepest scope that
  // holds both its ends (a map's exit counting as its entry) strictly
  // inside, when its ends lie in different members there. In every scope
  // above, both ends are inside one member; in every scope below, at most
  // one end is. So each edge is looked at once, along the chains of
  // scopes around its two ends: linear in the edges, not edges x scopes.
  auto chain = [&](NodeId x) {
    const Node *n = plan.nodes.at(x);
    if (n->kind == NodeKind::MapExit)
      x = n->map().partner;
    std::vector<NodeId> c = {x}; // x, its scope, that scope's, ..., 0
    // Bounded in case the scopes of an odd graph loop.
    for (std::size_t guard = 0; c.back() != 0; ++guard) {
      if (guard > state.nodes.size())
        return std::vector<NodeId>{};
      c.push_back(parent[c.back()]);
    }
    return c;
  };
  std::map<NodeId, std::map<NodeId, std::set<NodeId>>> succ; ///< by scope
  for (const Edge &e : state.edges) {
    if (!plan.nodes.count(e.src) || !plan.nodes.count(e.dst))
      continue;
    std::vector<NodeId> from = chain(e.src), to = chain(e.dst);
    if (from.empty() || to.empty())
      continue;
    for (std::size_t j = 1; j < to.size(); ++j) {
      auto at = std::find(from.begin() + 1, from.end(), to[j]);
      if (at == from.end())
        continue;
      if (*(at - 1) != to[j - 1])
        succ[to[j]][*(at - 1)].insert(to[j - 1]);
      break;
    }
  }

  for (const auto &[scope, ids] : members) {
    std::vector<NodeId> order = orderScope(ids, succ[scope], position);
    if (order.size() != ids.size())
      throw Error(
          "state '" + state.name + "': edges between map scopes form a cycle" +
          (scope == 0 ? std::string(" at the top level")
                      : " in the map of node " + std::to_string(scope)));
    plan.order[scope] = std::move(order);
  }
  return plan;
}

std::vector<AccessCopy> copiesInto(const StateView &view, const Node &n) {
  std::vector<AccessCopy> out;
  auto in = view.in.find(n.id);
  if (in == view.in.end())
    return out;
  for (const Edge *e : in->second) {
    const Node &src = *view.nodes.at(e->src);
    if (src.kind != NodeKind::Access || e->memlet.empty())
      continue;
    AccessCopy c{e, src.access().container, n.access().container,
                 e->memlet.container, ""};
    c.other = c.named == c.from ? c.to : c.from;
    out.push_back(std::move(c));
  }
  return out;
}

} // namespace weir::ir
