/// \file
/// `map-fusion`: a map that writes a transient element by element, and the
/// map with the same iteration space that reads it back element by element,
/// become one map in which the value goes from the producing tasklet to the
/// consuming one directly (DaCe's MapFusion). When the first map writes
/// several arrays the second reads (a diamond), every one of them is handed
/// over in the same step.
///
/// Ids: the fused map keeps the producer's MapEntry and the consumer's
/// MapExit, so every other match listed before the fusion (the next link of
/// a chain A → B → C, in either order) still names existing nodes. The id
/// map sends the consumer's entry to the kept entry and the producer's exit
/// to the kept exit; a removed intermediate access node is absent.

#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/map_scope.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>

namespace weir::transforms {

namespace {

using ir::EdgeId;
using ir::NodeId;
using namespace map_scope;

/// One array between the two maps: written element by element by a
/// tasklet of the first, read back at the same element by tasklets of the
/// second.
struct Link {
  NodeId array = 0;
  std::string container;
  NodeId producer = 0;       ///< the tasklet writing the element
  std::string producerConn;  ///< its output connector
  EdgeId write = 0;          ///< producer -> first exit
  EdgeId outerRead = 0;      ///< array -> second entry
  std::vector<EdgeId> reads; ///< second entry -> consuming tasklets
  bool materialize = false;  ///< read elsewhere too: the fused map writes it
  std::string exitConn, entryConn; ///< x of OUT_x / IN_x around the array
};

/// What check() establishes and apply() rewrites.
struct Plan {
  NodeId firstEntry = 0, firstExit = 0, secondEntry = 0, secondExit = 0;
  std::vector<Link> links;     ///< the matched array first
  Rename rename;               ///< consumer params -> producer params
  std::set<NodeId> secondBody; ///< inside the consumer map, its exit too
};

std::string accessName(const ir::Node &n) {
  return "access node '" + n.access().container + "' (%" +
         std::to_string(n.id) + ")";
}

/// Establishes a Plan, one group of preconditions at a time; each failure
/// names the nodes involved.
class Planner {
public:
  Planner(const ir::Program &p, const Match &match, Plan &plan)
      : p_(p), s_(stateNamed(p, match.state)), graph_(sharedStateGraph(s_)),
        g_(*graph_), plan_(plan) {
    plan.firstExit = match.node("first_exit");
    array_ = match.node("array");
    plan.secondEntry = match.node("second_entry");
    exit1_ = s_.findNode(plan.firstExit);
    entry2_ = s_.findNode(plan.secondEntry);
    plan.firstEntry = exit1_->map().partner;
    plan.secondExit = entry2_->map().partner;
    entry1_ = s_.findNode(plan.firstEntry);
    exit2_ = s_.findNode(plan.secondExit);
  }

  CheckResult run() {
    for (auto step : {&Planner::scopes, &Planner::ranges})
      if (CheckResult r = (this->*step)(); !r)
        return r;
    // Every array the first map writes and the second reads is handed
    // over at once (a diamond: x -> {t, u} -> y); the matched one first.
    std::vector<NodeId> arrays{array_};
    for (const ir::Edge *e : g_.out(plan_.firstExit)) {
      const ir::Node *n = s_.findNode(e->dst);
      if (e->dst == array_ || n->kind != ir::NodeKind::Access ||
          std::find(arrays.begin(), arrays.end(), e->dst) != arrays.end())
        continue;
      for (const ir::Edge *f : g_.out(e->dst))
        if (f->dst == plan_.secondEntry && !f->memlet.empty()) {
          arrays.push_back(e->dst);
          break;
        }
    }
    for (NodeId a : arrays) {
      Link link;
      link.array = a;
      if (CheckResult r = intermediate(link); !r)
        return r;
      if (CheckResult r = iterations(link); !r)
        return r;
      link.materialize = g_.out(a).size() > 1 ||
                         containerUses(p_, link.container).accessNodes > 1;
      plan_.links.push_back(std::move(link));
    }
    for (auto step : {&Planner::renaming, &Planner::ordering})
      if (CheckResult r = (this->*step)(); !r)
        return r;
    return CheckResult::success();
  }

private:
  CheckResult fail(std::string why, NodeId array = 0) const {
    return CheckResult::failure(
        std::move(why),
        {plan_.firstExit, array ? array : array_, plan_.secondEntry});
  }

  /// Two distinct, well-formed map scopes.
  CheckResult scopes() {
    if (!entry1_ || !exit2_ || entry1_->kind != ir::NodeKind::MapEntry ||
        exit2_->kind != ir::NodeKind::MapExit)
      return fail("the map scopes of " + ir::describe(*exit1_, "map") +
                  " and " + ir::describe(*entry2_, "map") + " are not paired");
    if (plan_.firstEntry == plan_.secondEntry)
      return fail(ir::describe(*entry2_, "map") +
                  " would be fused with itself");
    if (!pairedConnectors(*entry1_) || !pairedConnectors(*exit1_) ||
        !pairedConnectors(*entry2_) || !pairedConnectors(*exit2_))
      return fail("the scope connectors of " + ir::describe(*entry1_, "map") +
                  " or " + ir::describe(*entry2_, "map") +
                  " are not IN_x/OUT_x pairs");
    return CheckResult::success();
  }

  /// The same iteration space up to parameter names.
  CheckResult ranges() {
    const ir::MapData &m1 = entry1_->map(), &m2 = entry2_->map();
    if (m1.params.size() != m2.params.size())
      return fail(ir::describe(*entry1_, "map") + " has " +
                  std::to_string(m1.params.size()) + " dimensions and " +
                  ir::describe(*entry2_, "map") + " " +
                  std::to_string(m2.params.size()));
    for (std::size_t k = 0; k < m1.params.size(); ++k)
      plan_.rename.insert_or_assign(m2.params[k],
                                    ir::Expr::symbol(m1.params[k]));
    for (std::size_t k = 0; k < m1.ranges.size(); ++k)
      if (renamed(m2.ranges[k], plan_.rename) != m1.ranges[k])
        return fail(ir::describe(*entry1_, "map") + " and " +
                    ir::describe(*entry2_, "map") +
                    " iterate over different ranges: " + rangesText(m1) +
                    " and " + rangesText(m2));
    parents_ = ir::sharedScopeParents(s_);
    return CheckResult::success();
  }

  /// A plain transient, written here by the first map only and read by
  /// the second through one edge.
  CheckResult intermediate(Link &link) {
    const ir::Node &array = *s_.findNode(link.array);
    auto fail = [&](std::string why) {
      return this->fail(std::move(why), link.array);
    };
    const std::string &name = array.access().container;
    link.container = name;
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

    if (g_.in(link.array).size() != 1)
      return fail(accessName(array) + " has " +
                  std::to_string(g_.in(link.array).size()) +
                  " incoming edges; only " + ir::describe(*exit1_, "map") +
                  " may write it");
    const ir::Edge &outerWrite = *g_.in(link.array)[0];
    auto exitConn = ir::scopeOutSuffix(outerWrite.srcConn);
    if (outerWrite.memlet.container != name || !exitConn)
      return fail(ir::describe(*exit1_, "map") + " does not write '" + name +
                  "' into " + accessName(array));
    if (outerWrite.memlet.wcr)
      return fail(ir::describe(*exit1_, "map") + " writes '" + name +
                  "' with a write-conflict resolution (" +
                  std::string(ir::wcrName(*outerWrite.memlet.wcr)) + ")");
    int sameConn = 0;
    for (const ir::Edge *e : g_.out(plan_.firstExit))
      sameConn += e->srcConn == outerWrite.srcConn;
    if (sameConn != 1)
      return fail(ir::describe(*exit1_, "map") + " writes '" + name +
                  "' through more than one edge");
    link.exitConn = *exitConn;

    std::vector<const ir::Edge *> direct;
    for (const ir::Edge *e : g_.out(link.array))
      if (e->dst == plan_.secondEntry)
        direct.push_back(e);
    if (direct.size() != 1)
      return fail(accessName(array) + " has " + std::to_string(direct.size()) +
                  " edges into " + ir::describe(*entry2_, "map"));
    const ir::Edge &outerRead = *direct[0];
    link.outerRead = outerRead.id;
    auto entryConn = ir::scopeInSuffix(outerRead.dstConn);
    if (outerRead.memlet.container != name || !entryConn)
      return fail(ir::describe(*entry2_, "map") + " does not read '" + name +
                  "' from " + accessName(array) +
                  " (the edge only orders the two)");
    if (outerRead.memlet.wcr)
      return fail(ir::describe(*entry2_, "map") + " reads '" + name +
                  "' with a write-conflict resolution");
    link.entryConn = *entryConn;
    return CheckResult::success();
  }

  /// The first map writes one distinct element per iteration and the
  /// second reads exactly that element in the same iteration.
  CheckResult iterations(Link &link) {
    auto fail = [&](std::string why) {
      return this->fail(std::move(why), link.array);
    };
    const std::string &name = link.container;
    const ir::MapData &m1 = entry1_->map();
    std::vector<const ir::Edge *> writes;
    for (const ir::Edge *e : g_.in(plan_.firstExit))
      if (e->dstConn == ir::scopeIn(link.exitConn))
        writes.push_back(e);
    if (writes.size() != 1)
      return fail(ir::describe(*exit1_, "map") + " collects '" + name +
                  "' from " + std::to_string(writes.size()) +
                  " edges inside the map");
    const ir::Edge &write = *writes[0];
    const ir::Node &producer = *s_.findNode(write.src);
    if (producer.kind != ir::NodeKind::Tasklet ||
        ir::parentOf(*parents_, producer.id) != plan_.firstEntry)
      return fail("'" + name +
                  "' is not written by a tasklet directly inside " +
                  ir::describe(*entry1_, "map"));
    if (write.memlet.wcr)
      return fail("tasklet '" + producer.label + "' (%" +
                  std::to_string(producer.id) + ") writes '" + name +
                  "' with a write-conflict resolution (" +
                  std::string(ir::wcrName(*write.memlet.wcr)) + ")");
    if (write.memlet.container != name ||
        write.memlet.subset.volume() != ir::Expr(1))
      return fail(ir::describe(*entry1_, "map") + " writes " +
                  write.memlet.str() +
                  " per iteration; only a single element can be handed over");
    if (!distinctPerIteration(write.memlet.subset, m1))
      return fail(ir::describe(*entry1_, "map") + " writes " +
                  write.memlet.str() +
                  ", which is not provably a different element in every "
                  "iteration");
    link.producer = producer.id;
    link.producerConn = write.srcConn;
    link.write = write.id;
    const ir::Connector *produced = producer.findOutput(write.srcConn);

    for (const ir::Edge *e : g_.out(plan_.secondEntry)) {
      if (e->srcConn != ir::scopeOut(link.entryConn))
        continue;
      const ir::Node &consumer = *s_.findNode(e->dst);
      if (consumer.kind != ir::NodeKind::Tasklet ||
          ir::parentOf(*parents_, consumer.id) != plan_.secondEntry)
        return fail(ir::describe(*entry2_, "map") + " reads '" + name +
                    "' in a node other than a tasklet directly inside it");
      ir::Subset read = renamed(e->memlet.subset, plan_.rename);
      if (e->memlet.container != name || read != write.memlet.subset ||
          e->memlet.wcr)
        return fail(ir::describe(*entry2_, "map") + " reads " +
                    e->memlet.str() + " where " +
                    ir::describe(*entry1_, "map") + " wrote " +
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
      link.reads.push_back(e->id);
    }
    if (link.reads.empty())
      return fail(ir::describe(*entry2_, "map") + " takes '" + name +
                  "' in but no node inside reads it");
    return CheckResult::success();
  }

  /// Renaming the second map's parameters must not meet a nested map that
  /// binds one of the names, nor a node whose attributes may name them.
  CheckResult renaming() {
    plan_.secondBody = parents_->bodyOf(plan_.secondEntry);
    if (auto why =
            renamingConflict(s_, *entry2_, plan_.secondBody, plan_.rename))
      return fail(*why);
    return CheckResult::success();
  }

  /// Fused, the two maps' accesses interleave and their neighbours merge:
  /// no container one writes and the other touches (but the arrays handed
  /// over), and no other path from the first map to the second.
  CheckResult ordering() {
    std::set<EdgeId> handed;
    for (const Link &l : plan_.links)
      handed.insert(l.outerRead);
    std::set<std::string> read1, write1, read2, write2;
    auto collect = [&](StateGraph::Edges edges,
                       std::set<std::string> &into) {
      for (const ir::Edge *e : edges)
        if (!e->memlet.empty() && !handed.count(e->id))
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
      return fail("'" + *x + "' is written by " +
                  ir::describe(*entry1_, "map") + " and read by " +
                  ir::describe(*entry2_, "map") + " elsewhere");
    if (const std::string *x = clash(read1, write2))
      return fail("'" + *x + "' is read by " + ir::describe(*entry1_, "map") +
                  " and written by " + ir::describe(*entry2_, "map"));
    if (const std::string *x = clash(write1, write2))
      return fail("'" + *x + "' is written by both " +
                  ir::describe(*entry1_, "map") + " and " +
                  ir::describe(*entry2_, "map"));

    std::map<NodeId, NodeId> from{{plan_.firstExit, plan_.firstExit}};
    std::deque<NodeId> todo{plan_.firstExit};
    while (!todo.empty() && !from.count(plan_.secondEntry)) {
      NodeId at = todo.front();
      todo.pop_front();
      for (const ir::Edge *e : g_.out(at))
        if (!handed.count(e->id) && from.emplace(e->dst, at).second)
          todo.push_back(e->dst);
    }
    if (!from.count(plan_.secondEntry))
      return CheckResult::success();
    const ir::Node &via = *s_.findNode(from.at(plan_.secondEntry));
    return CheckResult::failure(
        ir::describe(*entry2_, "map") + " also depends on " +
            ir::describe(*exit1_, "map") + " through " + ir::describe(via) +
            "; fused, the map would depend on itself",
        {plan_.firstExit, via.id, plan_.secondEntry});
  }

  const ir::Program &p_;
  const ir::State &s_;
  std::shared_ptr<const StateGraph> graph_;
  const StateGraph &g_;
  Plan &plan_;
  NodeId array_ = 0; ///< the matched array
  const ir::Node *exit1_, *entry2_, *entry1_ = nullptr, *exit2_ = nullptr;
  std::shared_ptr<const ir::ScopeParents> parents_;
};

} // namespace

namespace {

class MapFusion : public PlannedTransformation<Plan> {
public:
  MapFusion();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

MapFusion::MapFusion()
    : PlannedTransformation({
          .id = "map-fusion",
          .tier = Tier::Fusion,
          .summary = "Fuse a map into the map that reads its output element by "
                     "element",
          .description =
              "A map that writes a transient one element per iteration, "
              "followed by a map over the same ranges that reads back exactly "
              "that element in the same iteration, becomes one map: the "
              "producing tasklet hands its value to the consuming tasklet "
              "directly, and the transient is neither stored nor loaded (two "
              "passes over memory disappear). Every array the first map writes "
              "and the second reads is handed over in the same step (a diamond "
              "such as GELU's x -> {x, erf(x)} -> product): fusing through one "
              "of them alone would leave the others as a dependency the fused "
              "map has on itself. When a transient has other readers it stays "
              "materialized: the fused map still writes it. The fused map "
              "keeps the producer's entry, label and schedule and the "
              "consumer's exit. Exact: every value is computed as before.",
          .pattern = Pattern()
                         .node("first_exit", ir::NodeKind::MapExit)
                         .node("array", ir::NodeKind::Access)
                         .node("second_entry", ir::NodeKind::MapEntry)
                         .edge("first_exit", "array")
                         .edge("array", "second_entry"),
      }) {}

Planned<Plan> MapFusion::plan(const ir::Program &program, const Match &match,
                              const Params &params) const {
  Planned<Plan> out;
  out.verdict = Planner(program, match, out.plan).run();
  return out;
}

ApplyResult MapFusion::rewrite(const ir::Program &program, const Match &match,
                               const Params &params, const Plan &plan) const {
  ApplyResult r{program, {}};
  ir::State &s = stateNamed(r.program, match.state);

  // The consumer's body speaks of the producer's parameters.
  renameBody(s, plan.secondEntry, plan.secondBody, plan.rename);

  // Each element goes from tasklet to tasklet.
  for (const Link &link : plan.links) {
    for (EdgeId id : link.reads) {
      ir::Edge &e = edgeWithId(s, id);
      e.src = link.producer;
      e.srcConn = link.producerConn;
      e.memlet = ir::Memlet{};
    }
    s.edges.eraseIf([&](const ir::Edge &e) { return e.id == link.outerRead; });
    if (!link.materialize) {
      s.edges.eraseIf([&](const ir::Edge &e) { return e.id == link.write; });
      removeNode(s, link.array, &r.idMap);
    }
  }

  mergeEntry(s, plan.secondEntry, plan.firstEntry);
  mergeExit(s, plan.firstExit, plan.secondExit);
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
  for (const Link &link : plan.links)
    if (!link.materialize && !containerUsed(r.program, link.container))
      r.program.containers.erase(link.container);
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<MapFusion>()};

} // namespace weir::transforms
