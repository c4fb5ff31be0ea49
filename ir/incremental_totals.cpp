#include "ir/incremental_totals.h"

#include "ir/container_index.h"
#include "ir/state_cost.h"

#include <algorithm>

namespace weir::ir {

IncrementalTotals::Totals
IncrementalTotals::operator()(std::shared_ptr<const Program> program) {
  std::vector<std::string_view> added;
  std::unordered_map<const void *, const Unit *> previous;
  if (previous_ && containersKept(*program, added)) {
    previous.reserve(units_.size());
    for (const Unit &u : units_)
      previous.emplace(u.head, &u);
  }
  ContainerIndex containers(*program);
  std::vector<Unit> units;
  recounted_ = 0;
  for (const State &s : program->states) {
    std::vector<Unit> more = countState(containers, s, previous, added);
    units.insert(units.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
  }
  ExprTotal flops, bytes;
  for (const Unit &u : units) {
    flops.add(u.flops);
    bytes.add(u.bytes);
  }
  // The old units point into the old program: dropped before it.
  units_ = std::move(units);
  previous_ = std::move(program);
  return {flops.value(), bytes.value()};
}

bool IncrementalTotals::containersKept(
    const Program &program, std::vector<std::string_view> &added) const {
  auto was = previous_->containers.begin(), wasEnd = previous_->containers.end();
  for (const auto &[name, c] : program.containers) {
    while (was != wasEnd && was->first < name)
      ++was;
    if (was == wasEnd || was->first != name) {
      added.push_back(name);
      continue;
    }
    if (was->second.dtype != c.dtype || was->second.storage != c.storage)
      return false;
  }
  std::sort(added.begin(), added.end());
  return true;
}

std::vector<IncrementalTotals::Unit> IncrementalTotals::countState(
    const ContainerIndex &containers, const State &s,
    const std::unordered_map<const void *, const Unit *> &previous,
    const std::vector<std::string_view> &added) {
  constexpr std::size_t kNone = IdPositions::kAbsent;
  StateCost cost(containers, s);
  const NodeIndex &index = cost.nodes();
  const ScopeParents &parents = cost.parents();
  const std::size_t n = s.nodes.size();
  std::vector<Unit> units;

  // The unit of each node, by position: that of its outermost scope.
  std::vector<std::size_t> unitOf(n, kNone);
  std::vector<std::size_t> path;
  auto unitAt = [&](std::size_t at) {
    path.clear();
    std::size_t found = kNone;
    while (found == kNone) {
      if (unitOf[at] != kNone) {
        found = unitOf[at];
        break;
      }
      path.push_back(at);
      NodeId parent = parents[s.nodes[at].id];
      std::size_t up = parent ? index.position(parent) : kNone;
      if (up == kNone || path.size() > n) { // top level (or a cycle)
        found = units.size();
        units.push_back(Unit{&s.nodes[at]});
      } else {
        at = up;
      }
    }
    for (std::size_t p : path)
      unitOf[p] = found;
    return found;
  };
  for (std::size_t i = 0; i < n; ++i)
    units[unitAt(i)].nodes.push_back(&s.nodes[i]);

  for (const Edge &e : s.edges) {
    std::optional<StateCost::EdgePlace> where = cost.place(e);
    if (!where)
      continue; // counts nothing
    std::size_t scope = where->scope ? index.position(where->scope) : kNone;
    if (scope == kNone) { // between top-level nodes: a unit of its own
      units.push_back(Unit{&e, {}, {&e}, {where->src, where->dst}});
      continue;
    }
    Unit &u = units[unitAt(scope)];
    u.edges.push_back(&e);
    for (const Node *end : {where->src, where->dst})
      if (&units[unitOf[index.position(end->id)]] != &u)
        u.context.push_back(end);
  }

  auto usesAdded = [&](const Unit &u) {
    return !added.empty() &&
           std::any_of(u.edges.begin(), u.edges.end(), [&](const void *e) {
             return std::binary_search(
                 added.begin(), added.end(),
                 std::string_view(static_cast<const Edge *>(e)->memlet.container));
           });
  };
  for (Unit &u : units) {
    auto was = previous.find(u.head);
    if (was != previous.end() && was->second->nodes == u.nodes &&
        was->second->edges == u.edges && was->second->context == u.context &&
        !usesAdded(u)) {
      u.flops = was->second->flops;
      u.bytes = was->second->bytes;
      continue;
    }
    ++recounted_;
    ExprTotal flops, bytes;
    for (const void *node : u.nodes)
      flops.add(cost.flops(*static_cast<const Node *>(node)));
    for (const void *edge : u.edges) {
      const Edge &e = *static_cast<const Edge *>(edge);
      std::optional<StateCost::EdgePlace> where = cost.place(e);
      if (where && where->touchesMemory)
        bytes.add(cost.traffic(e, *where, AnalysisDetail::Totals).bytes);
    }
    u.flops = flops.value();
    u.bytes = bytes.value();
  }
  return units;
}

} // namespace weir::ir
