#include "ir/incremental_totals.h"

#include "ir/container_index.h"
#include "ir/state_cost.h"
#include "ir/tasklet.h"

#include <algorithm>

namespace weir::ir {

IncrementalTotals::Totals
IncrementalTotals::operator()(std::shared_ptr<const Program> program) {
  std::vector<std::string_view> added;
  const bool kept = previous_ && containersKept(*program, added);
  byHead_.clear();
  if (kept)
    for (std::size_t u = 0; u < units_.heads.size(); ++u)
      byHead_.emplace(units_.heads[u], u);
  ContainerIndex containers(*program);
  Units next;
  recounted_ = 0;
  for (const State &s : program->states) {
    StateCost cost(containers, s);
    std::size_t first = next.heads.size();
    layOut(cost, s, next);
    for (std::size_t u = first; u < next.heads.size(); ++u) {
      auto was = byHead_.find(next.heads[u]);
      count(cost, next, u,
            was == byHead_.end() ? std::nullopt : std::optional(was->second),
            added);
    }
  }
  ExprTotal flops, bytes;
  for (std::size_t u = 0; u < next.heads.size(); ++u) {
    flops.add(next.flops[u]);
    bytes.add(next.bytes[u]);
  }
  // The old units point into the old program: dropped before it.
  units_ = std::move(next);
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

void IncrementalTotals::layOut(const StateCost &cost, const State &s,
                               Units &out) {
  constexpr std::size_t kNone = IdPositions::kAbsent;
  constexpr std::uint32_t kNoUnit = UINT32_MAX;
  const NodeIndex &index = cost.nodes();
  const ScopeParents &parents = cost.parents();
  const std::size_t n = s.nodes.size(), first = out.heads.size();

  // The unit of each node, by position: that of its outermost scope. A
  // state's units are numbered from 0 here, `first` in `out`.
  std::vector<std::uint32_t> unitOf(n, kNoUnit);
  std::vector<std::uint64_t> heads;
  std::vector<std::size_t> path;
  auto unitAt = [&](std::size_t at) {
    path.clear();
    std::uint32_t found = kNoUnit;
    while (found == kNoUnit) {
      if (unitOf[at] != kNoUnit) {
        found = unitOf[at];
        break;
      }
      path.push_back(at);
      NodeId parent = parents[s.nodes[at].id];
      std::size_t up = parent ? index.position(parent) : kNone;
      if (up == kNone || path.size() > n) { // top level (or a cycle)
        found = static_cast<std::uint32_t>(heads.size());
        heads.push_back(2 * s.nodes[at].id);
      } else {
        at = up;
      }
    }
    for (std::size_t p : path)
      unitOf[p] = found;
    return found;
  };
  for (std::size_t i = 0; i < n; ++i)
    unitAt(i);

  // Each edge's unit; an edge between top-level nodes is one of its own,
  // whose context is its two endpoints.
  struct Placed {
    const Edge *edge;
    std::uint32_t unit;
    const Node *outside[2]; ///< endpoints outside the unit, or null
  };
  std::vector<Placed> placed;
  placed.reserve(s.edges.size());
  for (const Edge &e : s.edges) {
    std::optional<StateCost::EdgePlace> where = cost.place(e);
    if (!where)
      continue; // counts nothing
    std::size_t scope = where->scope ? index.position(where->scope) : kNone;
    if (scope == kNone) {
      placed.push_back({&e, static_cast<std::uint32_t>(heads.size()),
                        {where->src, where->dst}});
      heads.push_back(2 * e.id + 1);
      continue;
    }
    std::uint32_t u = unitAt(scope);
    Placed p{&e, u, {nullptr, nullptr}};
    for (int end = 0; end < 2; ++end) {
      const Node *node = end ? where->dst : where->src;
      if (unitOf[index.position(node->id)] != u)
        p.outside[end] = node;
    }
    placed.push_back(p);
  }

  // Members by unit (a counting sort): nodes, edges, context.
  const std::size_t units = heads.size();
  std::vector<std::uint32_t> nodes(units), edges(units), context(units);
  for (std::size_t i = 0; i < n; ++i)
    ++nodes[unitOf[i]];
  for (const Placed &p : placed) {
    ++edges[p.unit];
    context[p.unit] += (p.outside[0] != nullptr) + (p.outside[1] != nullptr);
  }
  std::size_t base = out.members.size();
  std::vector<std::size_t> at(units); // next free member slot per unit
  std::vector<std::size_t> edgeAt(units), contextAt(units);
  std::size_t total = base;
  for (std::size_t u = 0; u < units; ++u) {
    at[u] = total;
    edgeAt[u] = total + nodes[u];
    contextAt[u] = edgeAt[u] + edges[u];
    total = contextAt[u] + context[u];
    out.begin.push_back(static_cast<std::uint32_t>(total));
  }
  out.members.resize(total);
  for (std::size_t i = 0; i < n; ++i)
    out.members[at[unitOf[i]]++] = &s.nodes[i];
  for (const Placed &p : placed) {
    out.members[edgeAt[p.unit]++] = p.edge;
    for (const Node *node : p.outside)
      if (node)
        out.members[contextAt[p.unit]++] = node;
  }
  out.heads.insert(out.heads.end(), heads.begin(), heads.end());
  out.nodes.insert(out.nodes.end(), nodes.begin(), nodes.end());
  out.edges.insert(out.edges.end(), edges.begin(), edges.end());
  out.flops.resize(first + units);
  out.bytes.resize(first + units);
  out.ops.resize(total, -1);
}

void IncrementalTotals::count(StateCost &cost, Units &out, std::size_t u,
                              std::optional<std::size_t> was,
                              const std::vector<std::string_view> &added) {
  const std::size_t begin = out.begin[u], end = out.begin[u + 1];
  const std::size_t firstEdge = begin + out.nodes[u];
  auto usesAdded = [&] {
    for (std::size_t i = firstEdge; i < firstEdge + out.edges[u]; ++i)
      if (std::binary_search(
              added.begin(), added.end(),
              std::string_view(
                  static_cast<const Edge *>(out.members[i])->memlet.container)))
        return true;
    return false;
  };
  if (was) {
    const std::size_t wasBegin = units_.begin[*was],
                      wasEnd = units_.begin[*was + 1];
    if (wasEnd - wasBegin == end - begin &&
        units_.nodes[*was] == out.nodes[u] &&
        units_.edges[*was] == out.edges[u] &&
        std::equal(out.members.begin() + begin, out.members.begin() + end,
                   units_.members.begin() + wasBegin) &&
        (added.empty() || !usesAdded())) {
      out.flops[u] = units_.flops[*was];
      out.bytes[u] = units_.bytes[*was];
      std::copy(units_.ops.begin() + wasBegin, units_.ops.begin() + wasEnd,
                out.ops.begin() + begin);
      return;
    }
  }
  ++recounted_;
  // The operations of the tasklets the unit had before.
  std::unordered_map<const void *, std::int64_t> known;
  if (was)
    for (std::size_t i = units_.begin[*was];
         i < units_.begin[*was] + units_.nodes[*was]; ++i)
      if (units_.ops[i] >= 0)
        known.emplace(units_.members[i], units_.ops[i]);
  ExprTotal flops, bytes;
  for (std::size_t i = begin; i < firstEdge; ++i) {
    const Node &node = *static_cast<const Node *>(out.members[i]);
    if (node.kind != NodeKind::Tasklet || !node.tasklet().code) {
      flops.add(cost.flops(node));
      continue;
    }
    auto k = known.find(&node);
    out.ops[i] = k != known.end() ? k->second
                                  : tasklet::countOps(*node.tasklet().code);
    flops.add(cost.taskletFlops(node, out.ops[i]));
  }
  for (std::size_t i = firstEdge; i < firstEdge + out.edges[u]; ++i) {
    const Edge &e = *static_cast<const Edge *>(out.members[i]);
    std::optional<StateCost::EdgePlace> where = cost.place(e);
    if (where && where->touchesMemory)
      bytes.add(cost.traffic(e, *where, AnalysisDetail::Totals).bytes);
  }
  out.flops[u] = flops.value();
  out.bytes[u] = bytes.value();
}

} // namespace weir::ir
