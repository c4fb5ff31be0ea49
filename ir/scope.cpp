#include "ir/scope.h"

#include "ir/error.h"
#include "ir/interval.h"
#include "ir/node_index.h"
#include "ir/state_memo.h"

#include <algorithm>

namespace weir::ir {

ScopeParents::ScopeParents(const State &state)
    : ScopeParents(state, NodeIndex(state)) {}

ScopeParents::ScopeParents(const State &state, const NodeIndex &index)
    : ScopeParents(state, index, successors(state, index)) {}

ScopeParents::ScopeParents(const State &state, const NodeIndex &index,
                           const Successors &graph)
    : positions_(index) {
  const CowList<Node> &nodes = state.nodes;
  const std::size_t n = nodes.size();
  std::vector<int> indeg = graph.indegree;

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
  // inside a map reaches the map's entry, then the entry's parent. Of two
  // nodes with one id (an invalid state), the first's parent is kept, as
  // the id table finds the first.
  ids_.resize(n);
  parent_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    ids_[i] = nodes[i].id;
    std::size_t first = index.position(nodes[i].id);
    std::size_t from = first == NodeIndex::kAbsent ? i : first;
    parent_[i] = nodes[from].kind == NodeKind::MapExit
                     ? nodes[from].map().partner
                     : parent[from];
  }
}

std::vector<NodeId> ScopeParents::childrenOf(NodeId entry) const {
  std::vector<NodeId> children;
  for (std::size_t i = 0; i < ids_.size(); ++i)
    if (parent_[i] == entry && positions_.position(ids_[i]) == i)
      children.push_back(ids_[i]);
  std::sort(children.begin(), children.end());
  return children;
}

std::set<NodeId> ScopeParents::bodyOf(NodeId entry) const {
  std::set<NodeId> body;
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    NodeId x = parent_[i];
    for (std::size_t guard = 0; x != 0 && guard <= ids_.size(); ++guard) {
      if (x == entry) {
        body.insert(ids_[i]);
        break;
      }
      x = (*this)[x];
    }
  }
  return body;
}

std::map<NodeId, NodeId> ScopeParents::toMap() const {
  std::map<NodeId, NodeId> map;
  for (std::size_t i = 0; i < ids_.size(); ++i)
    map.emplace(ids_[i], parent_[i]);
  return map;
}

std::shared_ptr<const ScopeParents> sharedScopeParents(const State &state) {
  return memoized<ScopeParents>(state, [&] { return ScopeParents(state); });
}

ScopeParents scopeParents(const State &state) {
  if (memoHolding(state))
    return *sharedScopeParents(state);
  return ScopeParents(state);
}

Expr scopeExecutions(const State &state, const ScopeParents &parents,
                     NodeId scope) {
  return ScopeExecutions(state, parents)(scope);
}

ScopeExecutions::ScopeExecutions(const State &state,
                                 const ScopeParents &parents)
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
  const MapData &m = entry->second->map();
  Expr size(1);
  for (const Range &r : m.ranges)
    size = size * r.size();
  NodeId parent = parentOf(parents_, scope);
  Expr count = size * of(parent, depth + 1);
  if (!size.isConstant()) {
    // A range may use a parameter of this map or of one around it: sum
    // over the loops it depends on.
    if (std::optional<Expr> summed = sumOverLoops(loopsOf(scope), Expr(1)))
      count = *summed;
  }
  counts_.emplace(scope, count);
  return count;
}

std::vector<ScopeExecutions::Loop>
ScopeExecutions::loopsOf(NodeId scope) const {
  std::vector<const Node *> maps;
  for (int depth = 0; scope != 0 && depth <= 1024; ++depth) {
    auto entry = entries_.find(scope);
    if (entry == entries_.end())
      break;
    maps.push_back(entry->second);
    scope = parentOf(parents_, scope);
  }
  std::vector<Loop> loops;
  for (auto m = maps.rbegin(); m != maps.rend(); ++m) {
    const MapData &d = (*m)->map();
    for (std::size_t i = 0; i < d.params.size() && i < d.ranges.size(); ++i)
      loops.push_back(Loop{&d.params[i], &d.ranges[i]});
  }
  return loops;
}

namespace {

using Loop = ScopeExecutions::Loop;

bool uses(const std::vector<std::string> &sortedSymbols, const std::string &s) {
  return std::binary_search(sortedSymbols.begin(), sortedSymbols.end(), s);
}

bool rangeUses(const Range &r, const std::string &s) {
  for (const Expr *e : {&r.begin, &r.end, &r.step})
    if (uses(e->freeSymbols(), s))
      return true;
  return false;
}

/// Sums `f` over loops[at..], the outer ones bound in `b`; false when a
/// range is not constant under `b` or the budget of points runs out.
bool enumerate(const std::vector<Loop> &loops, std::size_t at, const Expr &f,
               Bindings &b, std::int64_t &budget, std::int64_t &sum) {
  if (at == loops.size()) {
    std::int64_t v = f.evaluate(b);
    return --budget >= 0 && !__builtin_add_overflow(sum, v, &sum);
  }
  const Range &r = *loops[at].range;
  std::int64_t begin = r.begin.evaluate(b), end = r.end.evaluate(b),
               step = r.step.evaluate(b);
  if (step <= 0)
    return false;
  for (std::int64_t v = begin; v < end; v += step) {
    b[*loops[at].param] = v;
    if (!enumerate(loops, at + 1, f, b, budget, sum))
      return false;
  }
  b.erase(*loops[at].param);
  return true;
}

} // namespace

Expr ScopeExecutions::total(NodeId scope, const Expr &perIteration) {
  if (perIteration.isConstant() || scope == 0)
    return perIteration * of(scope, 0);
  std::optional<Expr> summed = sumOverLoops(loopsOf(scope), perIteration);
  return summed ? *summed : perIteration * of(scope, 0);
}

std::optional<Expr>
ScopeExecutions::sumOverLoops(const std::vector<Loop> &loops,
                              const Expr &perIteration) {
  // The loops the sum depends on: those whose parameter perIteration uses,
  // whose range uses another loop's parameter, or whose parameter such a
  // range uses. The others only multiply it by their size.
  std::vector<std::string> used = perIteration.freeSymbols();
  std::vector<bool> relevant(loops.size(), false);
  for (std::size_t i = 0; i < loops.size(); ++i) {
    relevant[i] = uses(used, *loops[i].param);
    for (const Loop &other : loops)
      relevant[i] = relevant[i] || rangeUses(*loops[i].range, *other.param);
  }
  if (std::find(relevant.begin(), relevant.end(), true) == relevant.end())
    return std::nullopt;
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t i = 0; i < loops.size(); ++i)
      if (relevant[i])
        for (std::size_t j = 0; j < loops.size(); ++j)
          if (!relevant[j] && rangeUses(*loops[i].range, *loops[j].param))
            relevant[j] = grew = true;
  }
  std::vector<Loop> summed;
  Expr rest(1);
  for (std::size_t i = 0; i < loops.size(); ++i) {
    if (relevant[i])
      summed.push_back(loops[i]);
    else
      rest = rest * loops[i].range->size();
  }
  // The most iterations and the largest value per iteration, each
  // parameter in its range: an upper bound, and the size of the sum.
  IntervalEnv env;
  Expr count(1);
  std::int64_t points = 1;
  bool bounded = true;
  for (const Loop &l : summed) {
    std::optional<Interval> lo = boundOf(l.range->begin, env),
                            hi = boundOf(l.range->end, env),
                            size = boundOf(l.range->size(), env);
    if (!lo || !hi || !size || hi->hi - 1 < lo->lo) {
      bounded = false;
      break;
    }
    env[*l.param] = Interval{lo->lo, hi->hi - 1};
    std::int64_t most = std::max<std::int64_t>(size->hi, 0);
    count = count * Expr(most);
    if (__builtin_mul_overflow(points, most, &points))
      points = kEnumerated + 1;
  }
  if (bounded && points <= kEnumerated) {
    try {
      Bindings b;
      std::int64_t budget = kEnumerated, sum = 0;
      if (enumerate(summed, 0, perIteration, b, budget, sum))
        return Expr(sum) * rest;
    } catch (const Error &) {
      // An operation the evaluation refuses: bound it instead.
    }
  }
  if (bounded)
    if (std::optional<Interval> most = boundOf(perIteration, env))
      return Expr(std::max<std::int64_t>(most->hi, 0)) * count * rest;
  return std::nullopt;
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
