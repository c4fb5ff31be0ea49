#include "transforms/fusion/map_fusion.h"

#include "ir/error.h"
#include "ir/scope.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>

namespace weir::transforms {

std::string_view MapFusion::description() const {
  return "Fusion (tier 2). A map that writes a transient one element per "
         "iteration, followed by a map over the same ranges that reads back "
         "exactly that element in the same iteration, becomes one map: the "
         "producing tasklet hands its value to the consuming tasklet "
         "directly, and the transient is neither stored nor loaded (two "
         "passes over memory disappear). When the transient has other "
         "readers it stays materialized: the fused map still writes it. The "
         "fused map keeps the producer's entry, label and schedule and the "
         "consumer's exit. Exact: every value is computed as before.";
}

const Pattern &MapFusion::pattern() const {
  static const Pattern p = Pattern()
                               .node("first_exit", ir::NodeKind::MapExit)
                               .node("array", ir::NodeKind::Access)
                               .node("second_entry", ir::NodeKind::MapEntry)
                               .edge("first_exit", "array")
                               .edge("array", "second_entry");
  return p;
}

namespace {

using ir::EdgeId;
using ir::NodeId;
using Rename = std::map<std::string, ir::Expr, std::less<>>;

/// What check() establishes and apply() rewrites.
struct Plan {
  NodeId firstEntry = 0, firstExit = 0, array = 0, secondEntry = 0,
         secondExit = 0;
  std::string container;
  NodeId producer = 0;         ///< the tasklet writing the element
  std::string producerConn;    ///< its output connector
  EdgeId write = 0;            ///< producer -> first exit
  EdgeId outerRead = 0;        ///< array -> second entry
  std::vector<EdgeId> reads;   ///< second entry -> consuming tasklets
  Rename rename;               ///< consumer params -> producer params
  std::set<NodeId> secondBody; ///< inside the consumer map, its exit too
  bool materialize = false;
};

std::string mapName(const ir::Node &n) {
  return "map '" + n.label + "' (%" + std::to_string(n.id) + ")";
}

std::string accessName(const ir::Node &n) {
  return "access node '" + n.access().container + "' (%" +
         std::to_string(n.id) + ")";
}

/// "x" for a scope connector "IN_x" / "OUT_x".
std::optional<std::string> suffix(const std::string &conn,
                                  std::string_view prefix) {
  if (!conn.starts_with(prefix))
    return std::nullopt;
  return conn.substr(prefix.size());
}

/// Views alias their target: hazards are judged on the target.
std::string rootOf(const ir::Program &p, const std::string &c) {
  const ir::Container *x = p.findContainer(c);
  return x && x->isView() ? x->viewOf : c;
}

ir::Range renamed(const ir::Range &r, const Rename &m) {
  return ir::Range(r.begin.substitute(m), r.end.substitute(m),
                   r.step.substitute(m));
}

ir::Subset renamed(const ir::Subset &s, const Rename &m) {
  ir::Subset out;
  for (const ir::Range &r : s.dims)
    out.dims.push_back(renamed(r, m));
  return out;
}

std::string rangesText(const ir::MapData &m) {
  std::string s;
  for (std::size_t k = 0; k < m.params.size(); ++k)
    s += (k ? ", " : "") + m.params[k] + " = " + m.ranges[k].str();
  return "[" + s + "]";
}

/// Whether two iterations of `m` never write the same element through
/// `subset`: every parameter that takes more than one value is, in some
/// dimension, the index plus a term no parameter changes.
bool distinctPerIteration(const ir::Subset &subset, const ir::MapData &m) {
  auto isParam = [&](const std::string &s) {
    return std::find(m.params.begin(), m.params.end(), s) != m.params.end();
  };
  for (std::size_t k = 0; k < m.params.size(); ++k) {
    if (m.ranges[k].size() == ir::Expr(1))
      continue;
    bool found = false;
    for (const ir::Range &r : subset.dims) {
      std::vector<std::string> rest =
          (r.begin - ir::Expr::symbol(m.params[k])).freeSymbols();
      found |= std::none_of(rest.begin(), rest.end(), isParam);
    }
    if (!found)
      return false;
  }
  return true;
}

/// Nodes whose chain of enclosing scopes reaches `entry` (its exit too).
std::set<NodeId> bodyOf(const std::map<NodeId, NodeId> &parents, NodeId entry) {
  std::set<NodeId> body;
  for (const auto &[id, parent] : parents) {
    NodeId x = parent;
    for (std::size_t guard = 0; x != 0 && guard <= parents.size(); ++guard) {
      if (x == entry) {
        body.insert(id);
        break;
      }
      auto it = parents.find(x);
      x = it == parents.end() ? 0 : it->second;
    }
  }
  return body;
}

/// Scope connectors come in pairs IN_x / OUT_x; fusion moves them by pair.
bool pairedConnectors(const ir::Node &n) {
  if (n.inputs.size() != n.outputs.size())
    return false;
  for (const ir::Connector &c : n.inputs) {
    auto x = suffix(c.name, "IN_");
    if (!x || !n.findOutput("OUT_" + *x))
      return false;
  }
  return true;
}

bool sameMemlet(const ir::Memlet &a, const ir::Memlet &b) {
  return a.container == b.container && a.subset == b.subset && a.wcr == b.wcr;
}

/// Establishes a Plan, one group of preconditions at a time; each failure
/// names the nodes involved.
class Planner {
public:
  Planner(const ir::Program &p, const Match &match, Plan &plan)
      : p_(p), s_(stateNamed(p, match.state)), g_(s_), plan_(plan) {
    plan.firstExit = match.node("first_exit");
    plan.array = match.node("array");
    plan.secondEntry = match.node("second_entry");
    exit1_ = s_.findNode(plan.firstExit);
    array_ = s_.findNode(plan.array);
    entry2_ = s_.findNode(plan.secondEntry);
    plan.firstEntry = exit1_->map().partner;
    plan.secondExit = entry2_->map().partner;
    entry1_ = s_.findNode(plan.firstEntry);
    exit2_ = s_.findNode(plan.secondExit);
  }

  CheckResult run() {
    for (auto step :
         {&Planner::scopes, &Planner::intermediate, &Planner::iterations,
          &Planner::renaming, &Planner::ordering})
      if (CheckResult r = (this->*step)(); !r)
        return r;
    plan_.materialize = g_.out(plan_.array).size() > 1 ||
                        containerUses(p_, plan_.container).accessNodes > 1;
    return CheckResult::success();
  }

private:
  CheckResult fail(std::string why) const {
    return CheckResult::failure(
        std::move(why), {plan_.firstExit, plan_.array, plan_.secondEntry});
  }

  /// Two distinct, well-formed map scopes.
  CheckResult scopes() {
    if (!entry1_ || !exit2_ || entry1_->kind != ir::NodeKind::MapEntry ||
        exit2_->kind != ir::NodeKind::MapExit)
      return fail("the map scopes of " + mapName(*exit1_) + " and " +
                  mapName(*entry2_) + " are not paired");
    if (plan_.firstEntry == plan_.secondEntry)
      return fail(mapName(*entry2_) + " would be fused with itself");
    if (!pairedConnectors(*entry1_) || !pairedConnectors(*exit1_) ||
        !pairedConnectors(*entry2_) || !pairedConnectors(*exit2_))
      return fail("the scope connectors of " + mapName(*entry1_) + " or " +
                  mapName(*entry2_) + " are not IN_x/OUT_x pairs");
    return CheckResult::success();
  }

  /// A plain transient, written here by the first map only and read by
  /// the second through one edge.
  CheckResult intermediate() {
    const std::string &name = array_->access().container;
    plan_.container = name;
    const ir::Container *c = p_.findContainer(name);
    if (!c)
      return fail("container '" + name + "' does not exist");
    if (!c->transient || isArgument(p_, name))
      return fail("'" + name +
                  "' is not transient (a program argument must stay in "
                  "memory)");
    if (c->isConstant())
      return fail("'" + name + "' is a constant");
    if (c->isView())
      return fail("'" + name + "' is a view of '" + c->viewOf + "'");
    for (const auto &[other, oc] : p_.containers)
      if (oc.viewOf == name)
        return fail("'" + name + "' is viewed by '" + other + "'");

    if (g_.in(plan_.array).size() != 1)
      return fail(accessName(*array_) + " has " +
                  std::to_string(g_.in(plan_.array).size()) +
                  " incoming edges; only " + mapName(*exit1_) +
                  " may write it");
    const ir::Edge &outerWrite = *g_.in(plan_.array)[0];
    auto exitConn = suffix(outerWrite.srcConn, "OUT_");
    if (outerWrite.memlet.container != name || !exitConn)
      return fail(mapName(*exit1_) + " does not write '" + name + "' into " +
                  accessName(*array_));
    if (outerWrite.memlet.wcr)
      return fail(mapName(*exit1_) + " writes '" + name +
                  "' with a write-conflict resolution (" +
                  std::string(ir::wcrName(*outerWrite.memlet.wcr)) + ")");
    int sameConn = 0;
    for (const ir::Edge *e : g_.out(plan_.firstExit))
      sameConn += e->srcConn == outerWrite.srcConn;
    if (sameConn != 1)
      return fail(mapName(*exit1_) + " writes '" + name +
                  "' through more than one edge");
    exitConn_ = *exitConn;

    std::vector<const ir::Edge *> direct;
    for (const ir::Edge *e : g_.out(plan_.array))
      if (e->dst == plan_.secondEntry)
        direct.push_back(e);
    if (direct.size() != 1)
      return fail(accessName(*array_) + " has " +
                  std::to_string(direct.size()) + " edges into " +
                  mapName(*entry2_));
    const ir::Edge &outerRead = *direct[0];
    plan_.outerRead = outerRead.id;
    auto entryConn = suffix(outerRead.dstConn, "IN_");
    if (outerRead.memlet.container != name || !entryConn)
      return fail(mapName(*entry2_) + " does not read '" + name + "' from " +
                  accessName(*array_) + " (the edge only orders the two)");
    if (outerRead.memlet.wcr)
      return fail(mapName(*entry2_) + " reads '" + name +
                  "' with a write-conflict resolution");
    entryConn_ = *entryConn;
    return CheckResult::success();
  }

  /// The same iteration space up to parameter names; the first map writes
  /// one distinct element per iteration and the second reads exactly that
  /// element in the same iteration.
  CheckResult iterations() {
    const std::string &name = plan_.container;
    const ir::MapData &m1 = entry1_->map(), &m2 = entry2_->map();
    if (m1.params.size() != m2.params.size())
      return fail(mapName(*entry1_) + " has " +
                  std::to_string(m1.params.size()) + " dimensions and " +
                  mapName(*entry2_) + " " + std::to_string(m2.params.size()));
    for (std::size_t k = 0; k < m1.params.size(); ++k)
      plan_.rename.insert_or_assign(m2.params[k],
                                    ir::Expr::symbol(m1.params[k]));
    for (std::size_t k = 0; k < m1.ranges.size(); ++k)
      if (renamed(m2.ranges[k], plan_.rename) != m1.ranges[k])
        return fail(mapName(*entry1_) + " and " + mapName(*entry2_) +
                    " iterate over different ranges: " + rangesText(m1) +
                    " and " + rangesText(m2));

    parents_ = ir::scopeParents(s_);
    std::vector<const ir::Edge *> writes;
    for (const ir::Edge *e : g_.in(plan_.firstExit))
      if (e->dstConn == "IN_" + exitConn_)
        writes.push_back(e);
    if (writes.size() != 1)
      return fail(mapName(*exit1_) + " collects '" + name + "' from " +
                  std::to_string(writes.size()) + " edges inside the map");
    const ir::Edge &write = *writes[0];
    const ir::Node &producer = *s_.findNode(write.src);
    if (producer.kind != ir::NodeKind::Tasklet ||
        parents_[producer.id] != plan_.firstEntry)
      return fail("'" + name +
                  "' is not written by a tasklet directly inside " +
                  mapName(*entry1_));
    if (write.memlet.wcr)
      return fail("tasklet '" + producer.label + "' (%" +
                  std::to_string(producer.id) + ") writes '" + name +
                  "' with a write-conflict resolution (" +
                  std::string(ir::wcrName(*write.memlet.wcr)) + ")");
    if (write.memlet.container != name ||
        write.memlet.subset.volume() != ir::Expr(1))
      return fail(mapName(*entry1_) + " writes " + write.memlet.str() +
                  " per iteration; only a single element can be handed over");
    if (!distinctPerIteration(write.memlet.subset, m1))
      return fail(mapName(*entry1_) + " writes " + write.memlet.str() +
                  ", which is not provably a different element in every "
                  "iteration");
    plan_.producer = producer.id;
    plan_.producerConn = write.srcConn;
    plan_.write = write.id;
    const ir::Connector *produced = producer.findOutput(write.srcConn);

    for (const ir::Edge *e : g_.out(plan_.secondEntry)) {
      if (e->srcConn != "OUT_" + entryConn_)
        continue;
      const ir::Node &consumer = *s_.findNode(e->dst);
      if (consumer.kind != ir::NodeKind::Tasklet ||
          parents_[consumer.id] != plan_.secondEntry)
        return fail(mapName(*entry2_) + " reads '" + name +
                    "' in a node other than a tasklet directly inside it");
      ir::Subset read = renamed(e->memlet.subset, plan_.rename);
      if (e->memlet.container != name || read != write.memlet.subset ||
          e->memlet.wcr)
        return fail(mapName(*entry2_) + " reads " + e->memlet.str() +
                    " where " + mapName(*entry1_) + " wrote " +
                    write.memlet.str() +
                    " in the same iteration; only an element-for-element "
                    "hand-over fuses (no neighbourhood, shift or "
                    "permutation)");
      const ir::Connector *wanted = consumer.findInput(e->dstConn);
      if (!produced || !wanted || produced->dtype != wanted->dtype)
        return fail("tasklet '" + consumer.label + "' (%" +
                    std::to_string(consumer.id) + ") reads '" + name +
                    "' with another dtype than tasklet '" + producer.label +
                    "' writes it");
      plan_.reads.push_back(e->id);
    }
    if (plan_.reads.empty())
      return fail(mapName(*entry2_) + " takes '" + name +
                  "' in but no node inside reads it");
    return CheckResult::success();
  }

  /// Renaming the second map's parameters must not meet a nested map that
  /// binds one of the names, nor a node whose attributes may name them.
  CheckResult renaming() {
    plan_.secondBody = bodyOf(parents_, plan_.secondEntry);
    bool identity = true;
    for (const auto &[from, to] : plan_.rename)
      identity = identity && to.symbolName() == from;
    if (identity)
      return CheckResult::success();
    for (NodeId id : plan_.secondBody) {
      const ir::Node &n = *s_.findNode(id);
      if (n.kind == ir::NodeKind::Library || n.kind == ir::NodeKind::Primitive)
        return fail(mapName(*entry2_) + " contains '" + n.label + "' (%" +
                    std::to_string(id) +
                    "), whose attributes may name the map's parameters, "
                    "which fusion renames");
      if (n.kind == ir::NodeKind::MapEntry)
        for (const std::string &q : n.map().params)
          for (const auto &[from, to] : plan_.rename)
            if (q == from || q == to.symbolName())
              return fail(mapName(n) + " inside " + mapName(*entry2_) +
                          " binds '" + q +
                          "', a name fusion gives another meaning");
    }
    return CheckResult::success();
  }

  /// Fused, the two maps' accesses interleave and their neighbours merge:
  /// no container one writes and the other touches (but the intermediate),
  /// and no other path from the first map to the second.
  CheckResult ordering() {
    std::set<std::string> read1, write1, read2, write2;
    auto collect = [&](const std::vector<const ir::Edge *> &edges,
                       std::set<std::string> &into) {
      for (const ir::Edge *e : edges)
        if (!e->memlet.empty() && e->id != plan_.outerRead)
          into.insert(rootOf(p_, e->memlet.container));
    };
    collect(g_.in(plan_.firstEntry), read1);
    collect(g_.out(plan_.firstExit), write1);
    collect(g_.in(plan_.secondEntry), read2);
    collect(g_.out(plan_.secondExit), write2);
    auto clash = [](const std::set<std::string> &a,
                    const std::set<std::string> &b) -> const std::string * {
      for (const std::string &x : a)
        if (b.count(x))
          return &x;
      return nullptr;
    };
    if (const std::string *x = clash(write1, read2))
      return fail("'" + *x + "' is written by " + mapName(*entry1_) +
                  " and read by " + mapName(*entry2_) + " elsewhere");
    if (const std::string *x = clash(read1, write2))
      return fail("'" + *x + "' is read by " + mapName(*entry1_) +
                  " and written by " + mapName(*entry2_));
    if (const std::string *x = clash(write1, write2))
      return fail("'" + *x + "' is written by both " + mapName(*entry1_) +
                  " and " + mapName(*entry2_));

    std::map<NodeId, NodeId> from{{plan_.firstExit, plan_.firstExit}};
    std::deque<NodeId> todo{plan_.firstExit};
    while (!todo.empty() && !from.count(plan_.secondEntry)) {
      NodeId at = todo.front();
      todo.pop_front();
      for (const ir::Edge *e : g_.out(at))
        if (e->id != plan_.outerRead && from.emplace(e->dst, at).second)
          todo.push_back(e->dst);
    }
    if (!from.count(plan_.secondEntry))
      return CheckResult::success();
    const ir::Node &via = *s_.findNode(from.at(plan_.secondEntry));
    return CheckResult::failure(
        mapName(*entry2_) + " also depends on " + mapName(*exit1_) +
            " through '" + via.label + "' (%" + std::to_string(via.id) +
            "); fused, the map would depend on itself",
        {plan_.firstExit, via.id, plan_.secondEntry});
  }

  const ir::Program &p_;
  const ir::State &s_;
  StateGraph g_;
  Plan &plan_;
  const ir::Node *exit1_, *array_, *entry2_, *entry1_ = nullptr,
                                             *exit2_ = nullptr;
  std::string exitConn_, entryConn_; ///< x of OUT_x / IN_x around the array
  std::map<NodeId, NodeId> parents_;
};

ir::Edge &edgeWithId(ir::State &s, EdgeId id) {
  for (ir::Edge &e : s.edges)
    if (e.id == id)
      return e;
  throw Error("map-fusion: edge " + std::to_string(id) + " vanished");
}

std::vector<EdgeId> edgeIds(const ir::State &s, NodeId node, bool incoming) {
  std::vector<EdgeId> ids;
  for (const ir::Edge &e : s.edges)
    if ((incoming ? e.dst : e.src) == node)
      ids.push_back(e.id);
  return ids;
}

/// "x", "x_1", ...: a pair IN_/OUT_ not yet on `n`.
std::string freshPair(const ir::Node &n, const std::string &x) {
  std::string name = x;
  for (int k = 1; n.findInput("IN_" + name) || n.findOutput("OUT_" + name); ++k)
    name = x + "_" + std::to_string(k);
  return name;
}

void addPair(ir::Node &n, const std::string &x, ir::DType dtype) {
  n.inputs.push_back({"IN_" + x, dtype});
  n.outputs.push_back({"OUT_" + x, dtype});
}

/// Redirects an ordering edge to `to` at one end, or drops it when an
/// equal one is already there.
void redirectOrdering(ir::State &s, EdgeId id, NodeId to, bool atDst) {
  ir::Edge &e = edgeWithId(s, id);
  NodeId src = atDst ? e.src : to, dst = atDst ? to : e.dst;
  for (const ir::Edge &f : s.edges)
    if (f.id != id && f.src == src && f.dst == dst && f.memlet.empty() &&
        f.srcConn.empty() && f.dstConn.empty()) {
      std::erase_if(s.edges, [&](const ir::Edge &x) { return x.id == id; });
      return;
    }
  (atDst ? e.dst : e.src) = to;
}

/// The consumer's entry edges move to the producer's entry; an input both
/// read through equal edges from the same node is shared.
void mergeEntries(ir::State &s, const Plan &plan) {
  ir::Node &entry1 = *s.findNode(plan.firstEntry);
  const ir::Node &entry2 = *s.findNode(plan.secondEntry);
  std::map<std::string, std::string> outConn;
  for (EdgeId id : edgeIds(s, plan.secondEntry, true)) {
    ir::Edge &e = edgeWithId(s, id);
    if (e.dstConn.empty()) {
      redirectOrdering(s, id, plan.firstEntry, true);
      continue;
    }
    std::string x = *suffix(e.dstConn, "IN_");
    auto shared =
        std::find_if(s.edges.begin(), s.edges.end(), [&](const ir::Edge &f) {
          return f.dst == plan.firstEntry && f.src == e.src &&
                 f.srcConn == e.srcConn && f.dstConn.starts_with("IN_") &&
                 sameMemlet(f.memlet, e.memlet);
        });
    if (shared != s.edges.end()) {
      outConn["OUT_" + x] = "OUT_" + *suffix(shared->dstConn, "IN_");
      std::erase_if(s.edges, [&](const ir::Edge &f) { return f.id == id; });
      continue;
    }
    std::string y = freshPair(entry1, x);
    addPair(entry1, y, entry2.findInput(e.dstConn)->dtype);
    outConn["OUT_" + x] = "OUT_" + y;
    e.dst = plan.firstEntry;
    e.dstConn = "IN_" + y;
  }
  for (EdgeId id : edgeIds(s, plan.secondEntry, false)) {
    ir::Edge &e = edgeWithId(s, id);
    if (e.srcConn.empty()) {
      redirectOrdering(s, id, plan.firstEntry, false);
      continue;
    }
    e.src = plan.firstEntry;
    e.srcConn = outConn.at(e.srcConn);
  }
}

/// The producer's exit edges move to the consumer's exit.
void mergeExits(ir::State &s, const Plan &plan) {
  ir::Node &exit2 = *s.findNode(plan.secondExit);
  const ir::Node &exit1 = *s.findNode(plan.firstExit);
  std::map<std::string, std::string> pair;
  for (EdgeId id : edgeIds(s, plan.firstExit, true)) {
    ir::Edge &e = edgeWithId(s, id);
    if (e.dstConn.empty()) {
      redirectOrdering(s, id, plan.secondExit, true);
      continue;
    }
    std::string x = *suffix(e.dstConn, "IN_");
    if (!pair.count(x)) {
      pair[x] = freshPair(exit2, x);
      addPair(exit2, pair[x], exit1.findInput(e.dstConn)->dtype);
    }
    e.dst = plan.secondExit;
    e.dstConn = "IN_" + pair[x];
  }
  for (EdgeId id : edgeIds(s, plan.firstExit, false)) {
    ir::Edge &e = edgeWithId(s, id);
    if (e.srcConn.empty()) {
      redirectOrdering(s, id, plan.secondExit, false);
      continue;
    }
    e.src = plan.secondExit;
    e.srcConn = "OUT_" + pair.at(*suffix(e.srcConn, "OUT_"));
  }
}

} // namespace

CheckResult MapFusion::check(const ir::Program &program, const Match &match,
                             const Params &) const {
  Plan plan;
  return Planner(program, match, plan).run();
}

ApplyResult MapFusion::apply(const ir::Program &program, const Match &match,
                             const Params &) const {
  Plan plan;
  if (CheckResult c = Planner(program, match, plan).run(); !c)
    throw Error("map-fusion at " + match.str() + ": " + c.reason);
  ApplyResult r{program, identityIdMap(program)};
  ir::State &s = stateNamed(r.program, match.state);

  // The consumer's body speaks of the producer's parameters.
  for (ir::Edge &e : s.edges)
    if ((e.src == plan.secondEntry || plan.secondBody.count(e.src)) &&
        plan.secondBody.count(e.dst) && !e.memlet.empty())
      e.memlet.subset = renamed(e.memlet.subset, plan.rename);
  for (ir::Node &n : s.nodes)
    if (plan.secondBody.count(n.id) && n.id != plan.secondExit &&
        (n.kind == ir::NodeKind::MapEntry || n.kind == ir::NodeKind::MapExit))
      for (ir::Range &range : n.map().ranges)
        range = renamed(range, plan.rename);

  // The element goes from tasklet to tasklet.
  for (EdgeId id : plan.reads) {
    ir::Edge &e = edgeWithId(s, id);
    e.src = plan.producer;
    e.srcConn = plan.producerConn;
    e.memlet = ir::Memlet{};
  }
  std::erase_if(s.edges,
                [&](const ir::Edge &e) { return e.id == plan.outerRead; });
  if (!plan.materialize) {
    std::erase_if(s.edges,
                  [&](const ir::Edge &e) { return e.id == plan.write; });
    removeNode(s, plan.array, &r.idMap);
  }

  mergeEntries(s, plan);
  mergeExits(s, plan);
  ir::Node &entry1 = *s.findNode(plan.firstEntry);
  ir::Node &exit2 = *s.findNode(plan.secondExit);
  entry1.map().partner = plan.secondExit;
  ir::MapData data = entry1.map();
  data.partner = plan.firstEntry;
  exit2.payload = std::move(data);
  exit2.label = entry1.label;
  removeNode(s, plan.secondEntry, &r.idMap);
  removeNode(s, plan.firstExit, &r.idMap);
  r.idMap[plan.secondEntry] = plan.firstEntry;
  r.idMap[plan.firstExit] = plan.secondExit;
  if (!plan.materialize && !containerUsed(r.program, plan.container))
    r.program.containers.erase(plan.container);
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<MapFusion>()};

} // namespace weir::transforms
