/// \file
/// What validating a step's result may take from its input (see
/// validation_baseline.h).

#include "ir/validation_baseline.h"

#include "ir/state_memo.h"

namespace weir::ir {

IntervalEnv mapParamBounds(const State &s) {
  IntervalEnv env;
  std::set<std::string, std::less<>> ambiguous;
  for (const Node &n : s.nodes) {
    if (n.kind != NodeKind::MapEntry ||
        !std::holds_alternative<MapData>(n.payload))
      continue;
    const MapData &m = n.map();
    for (std::size_t i = 0; i < m.params.size() && i < m.ranges.size(); ++i) {
      auto b = boundOf(m.ranges[i].begin, env);
      auto e = boundOf(m.ranges[i].end, env);
      // A name bound by two maps with different ranges stays unbounded:
      // without scopes we cannot tell which one an edge sees.
      const std::string &name = m.params[i];
      if (ambiguous.count(name))
        continue;
      if (!b || !e || e->hi <= b->lo) {
        ambiguous.insert(name);
        env.erase(name);
        continue;
      }
      Interval bound{b->lo, e->hi - 1};
      auto [it, fresh] = env.emplace(name, bound);
      if (!fresh && (it->second.lo != bound.lo || it->second.hi != bound.hi)) {
        ambiguous.insert(name);
        env.erase(it);
      }
    }
  }
  return env;
}

std::vector<char> sameContainers(const ContainerIndex &index,
                                 const Program &base) {
  std::vector<char> same(index.size(), 0);
  auto b = base.containers.begin();
  for (std::size_t i = 0; i < index.size(); ++i) {
    std::string_view key = index.key(i);
    while (b != base.containers.end() && std::string_view(b->first) < key)
      ++b;
    if (b == base.containers.end())
      break;
    const Container &c = index.at(i);
    same[i] = b->first == key && c.name == key && b->second.dtype == c.dtype &&
              b->second.shape == c.shape;
  }
  return same;
}

namespace {

/// Names bound in one environment and not the other, or bound differently.
std::set<std::string, std::less<>> differences(const IntervalEnv &a,
                                               const IntervalEnv &b) {
  std::set<std::string, std::less<>> out;
  auto i = a.begin(), j = b.begin();
  while (i != a.end() || j != b.end()) {
    if (j == b.end() || (i != a.end() && i->first < j->first)) {
      out.insert((i++)->first);
    } else if (i == a.end() || j->first < i->first) {
      out.insert((j++)->first);
    } else {
      if (i->second.lo != j->second.lo || i->second.hi != j->second.hi)
        out.insert(i->first);
      ++i;
      ++j;
    }
  }
  return out;
}

} // namespace

StateBaseline::StateBaseline(const State &state, const NodeIndex &nodes,
                             const State *base, const IntervalEnv &env)
    : state_(state), nodes_(nodes), base_(base) {
  if (!base_)
    return;
  // The base is the version a recipe checks its matches on: its indexes
  // are built once per version (ir/state_memo.h).
  baseNodes_ = memoized<NodeIndex>(*base_, [&] { return NodeIndex(*base_); });
  baseEdges_ = memoized<EdgeIndex>(*base_, [&] { return EdgeIndex(*base_); });
  changedParams_ = differences(env, *memoized<IntervalEnv>(*base_, [&] {
                                 return mapParamBounds(*base_);
                               }));
  sameConnectors_.assign(state.nodes.size(), -1);
  // A node keeps its connections when it is the base's record and every
  // edge at it, in the state and in the base, is the base's record between
  // two such nodes. Shared ids (an error) make positions ambiguous: then
  // every node is counted.
  std::vector<char> baseRecord(state.nodes.size());
  for (std::size_t i = 0; i < state.nodes.size(); ++i)
    baseRecord[i] = sameNode(state.nodes[i]);
  sameConnections_.assign(state.nodes.size(), 0);
  if (nodes_.duplicateIds().empty())
    sameConnections_ = baseRecord;
  auto touched = [&](NodeId id) {
    if (std::size_t at = nodes_.position(id); at != NodeIndex::kAbsent)
      sameConnections_[at] = 0;
  };
  auto unchanged = [&](NodeId id) {
    std::size_t at = nodes_.position(id);
    return at != NodeIndex::kAbsent && baseRecord[at];
  };
  std::vector<char> kept(base_->edges.size(), 0);
  for (const Edge &e : state.edges) {
    std::size_t at = baseEdges_->position(e.id);
    if (at != EdgeIndex::kAbsent && &base_->edges[at] == &e) {
      kept[at] = 1;
      if (unchanged(e.src) && unchanged(e.dst))
        continue;
    }
    touched(e.src);
    touched(e.dst);
  }
  for (std::size_t at = 0; at < kept.size(); ++at)
    if (!kept[at]) {
      touched(base_->edges[at].src);
      touched(base_->edges[at].dst);
    }
}

bool StateBaseline::sameNode(const Node &n) const {
  return base_ && baseNodes_->find(n.id) == &n;
}

bool StateBaseline::sameTasklet(const Node &n) const {
  if (!base_ || !std::holds_alternative<TaskletData>(n.payload))
    return false;
  const Node *b = baseNodes_->find(n.id);
  if (b == &n) // shared with the base, so unchanged
    return true;
  return b && b->kind == NodeKind::Tasklet &&
         std::holds_alternative<TaskletData>(b->payload) && b->tasklet().code &&
         b->tasklet().code == n.tasklet().code && b->inputs == n.inputs &&
         b->outputs == n.outputs;
}

const Edge *StateBaseline::baseEdge(const Edge &e) const {
  if (!base_)
    return nullptr;
  const Edge *b = baseEdges_->find(e.id);
  if (b == &e)
    return b;
  if (!b || b->src != e.src || b->dst != e.dst ||
      b->memlet.container != e.memlet.container)
    return nullptr;
  return b;
}

bool StateBaseline::sameConnectors(std::size_t position) {
  signed char &known = sameConnectors_[position];
  if (known < 0) {
    const Node &n = state_.nodes[position];
    const Node *b = baseNodes_->find(n.id);
    known = b == &n || (b && b->kind == n.kind &&
                        b->payload.index() == n.payload.index() &&
                        b->inputs == n.inputs && b->outputs == n.outputs);
  }
  return known == 1;
}

bool StateBaseline::sameEndpoints(const Edge &e, bool containerSame) {
  const Edge *b = baseEdge(e);
  if (!b || !containerSame ||
      (b != &e && (b->srcConn != e.srcConn || b->dstConn != e.dstConn)))
    return false;
  std::size_t src = nodes_.position(e.src), dst = nodes_.position(e.dst);
  return src != NodeIndex::kAbsent && dst != NodeIndex::kAbsent &&
         sameConnectors(src) && sameConnectors(dst);
}

bool StateBaseline::sameBounds(const Edge &e, const Container &c,
                               bool containerSame) const {
  const Edge *b = baseEdge(e);
  if (!b || !containerSame || (b != &e && b->memlet.subset != e.memlet.subset))
    return false;
  if (changedParams_.empty())
    return true;
  auto names = [&](const Expr &x) {
    for (const std::string &s : x.freeSymbols())
      if (changedParams_.count(s))
        return true;
    return false;
  };
  for (const Range &r : e.memlet.subset.dims)
    if (names(r.begin) || names(r.end) || names(r.step))
      return false;
  for (const Expr &d : c.shape)
    if (names(d))
      return false;
  return true;
}

} // namespace weir::ir
