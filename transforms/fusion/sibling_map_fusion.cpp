/// \file
/// `sibling-map-fusion`: two maps over the same ranges that read the same
/// data and do not depend on each other become one map, which reads the
/// shared data once (DaCe's horizontal MapFusion; DNNFusion's fusion of
/// operators sharing an input).
///
/// Ids: the fused map keeps the first map's entry and exit; the id map
/// sends the second's entry and exit to them.

#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/map_scope.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <algorithm>
#include <deque>
#include <set>

namespace weir::transforms {

namespace {

using ir::EdgeId;
using ir::NodeId;
using namespace map_scope;

struct Plan {
  NodeId data = 0, firstEntry = 0, firstExit = 0, secondEntry = 0,
         secondExit = 0;
  Rename rename;               ///< second's params -> first's
  std::set<NodeId> secondBody; ///< inside the second map, its exit too
};

class Planner {
public:
  Planner(const ir::Program &p, const Match &match, Plan &plan)
      : p_(p), s_(stateNamed(p, match.state)), graph_(sharedStateGraph(s_)), g_(*graph_), plan_(plan) {
    plan.data = match.node("data");
    plan.firstEntry = match.node("first");
    plan.secondEntry = match.node("second");
    entry1_ = s_.findNode(plan.firstEntry);
    entry2_ = s_.findNode(plan.secondEntry);
    plan.firstExit = entry1_->map().partner;
    plan.secondExit = entry2_->map().partner;
    exit1_ = s_.findNode(plan.firstExit);
    exit2_ = s_.findNode(plan.secondExit);
  }

  CheckResult run() {
    for (auto step :
         {&Planner::scopes, &Planner::shared, &Planner::ranges,
          &Planner::renaming, &Planner::independent, &Planner::hazards})
      if (CheckResult r = (this->*step)(); !r)
        return r;
    return CheckResult::success();
  }

private:
  CheckResult fail(std::string why, std::vector<NodeId> more = {}) const {
    std::vector<NodeId> nodes{plan_.data, plan_.firstEntry, plan_.secondEntry};
    nodes.insert(nodes.end(), more.begin(), more.end());
    return CheckResult::failure(std::move(why), std::move(nodes));
  }

  /// Two well-formed map scopes in one scope.
  CheckResult scopes() {
    if (!exit1_ || !exit2_ || exit1_->kind != ir::NodeKind::MapExit ||
        exit2_->kind != ir::NodeKind::MapExit)
      return fail("the map scopes of " + ir::describe(*entry1_, "map") +
                  " and " + ir::describe(*entry2_, "map") + " are not paired");
    if (!pairedConnectors(*entry1_) || !pairedConnectors(*exit1_) ||
        !pairedConnectors(*entry2_) || !pairedConnectors(*exit2_))
      return fail("the scope connectors of " + ir::describe(*entry1_, "map") +
                  " or " + ir::describe(*entry2_, "map") +
                  " are not IN_x/OUT_x pairs");
    parents_ = ir::sharedScopeParents(s_);
    if (ir::parentOf(*parents_, plan_.firstEntry) != ir::parentOf(*parents_, plan_.secondEntry))
      return fail(ir::describe(*entry1_, "map") + " and " +
                  ir::describe(*entry2_, "map") + " are in different scopes");
    return CheckResult::success();
  }

  /// Both read the data through equal memlets, so one read serves both.
  CheckResult shared() {
    const ir::Node &data = *s_.findNode(plan_.data);
    const std::string &name = data.access().container;
    const ir::Edge *a = nullptr, *b = nullptr;
    for (const ir::Edge *e : g_.out(plan_.data)) {
      if (e->memlet.empty())
        continue;
      if (e->dst == plan_.firstEntry)
        a = e;
      if (e->dst == plan_.secondEntry)
        b = e;
    }
    if (!a || !b)
      return fail("'" + name + "' only orders " +
                  ir::describe(*entry1_, "map") + " and " +
                  ir::describe(*entry2_, "map") + "; they share no data");
    if (!sameMemlet(a->memlet, b->memlet))
      return fail(ir::describe(*entry1_, "map") + " reads " + a->memlet.str() +
                  " and " + ir::describe(*entry2_, "map") + " reads " +
                  b->memlet.str() + "; only an equal read is shared");
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

  /// Neither map reaches the other: fused, the map would depend on itself.
  CheckResult independent() {
    for (auto [from, to] : {std::pair{plan_.firstExit, plan_.secondEntry},
                            std::pair{plan_.secondExit, plan_.firstEntry}}) {
      std::set<NodeId> seen{from};
      std::deque<NodeId> todo{from};
      while (!todo.empty()) {
        NodeId at = todo.front();
        todo.pop_front();
        for (const ir::Edge *e : g_.out(at))
          if (seen.insert(e->dst).second)
            todo.push_back(e->dst);
      }
      if (seen.count(to)) {
        const ir::Node &a = *s_.findNode(s_.findNode(from)->map().partner);
        return fail(ir::describe(*s_.findNode(to), "map") + " depends on " +
                    ir::describe(a, "map") +
                    "; fused, the map would depend on itself");
      }
    }
    return CheckResult::success();
  }

  /// Interleaved, neither may touch what the other writes.
  CheckResult hazards() {
    std::set<std::string> read1, write1, read2, write2;
    auto collect = [&](StateGraph::Edges edges,
                       std::set<std::string> &into) {
      for (const ir::Edge *e : edges)
        if (!e->memlet.empty())
          into.insert(rootOf(p_, e->memlet.container));
    };
    collect(g_.in(plan_.firstEntry), read1);
    collect(g_.out(plan_.firstExit), write1);
    collect(g_.in(plan_.secondEntry), read2);
    collect(g_.out(plan_.secondExit), write2);
    for (const std::string &x : write1) {
      if (read2.count(x))
        return fail("'" + x + "' is written by " +
                    ir::describe(*entry1_, "map") + " and read by " +
                    ir::describe(*entry2_, "map"));
      if (write2.count(x))
        return fail("'" + x + "' is written by both " +
                    ir::describe(*entry1_, "map") + " and " +
                    ir::describe(*entry2_, "map"));
    }
    for (const std::string &x : write2)
      if (read1.count(x))
        return fail("'" + x + "' is written by " +
                    ir::describe(*entry2_, "map") + " and read by " +
                    ir::describe(*entry1_, "map"));
    return CheckResult::success();
  }

  const ir::Program &p_;
  const ir::State &s_;
  std::shared_ptr<const StateGraph> graph_;
  const StateGraph &g_;
  Plan &plan_;
  const ir::Node *entry1_, *entry2_, *exit1_ = nullptr, *exit2_ = nullptr;
  std::shared_ptr<const ir::ScopeParents> parents_;
};

} // namespace

namespace {

class SiblingMapFusion : public PlannedTransformation<Plan> {
public:
  SiblingMapFusion();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

SiblingMapFusion::SiblingMapFusion()
    : PlannedTransformation({
          .id = "sibling-map-fusion",
          .tier = Tier::Fusion,
          .summary = "Join two independent maps over the same ranges that read "
                     "the same data",
          .description =
              "Two maps over the same ranges (up to parameter names) that both "
              "read a container from the same access node, neither depending "
              "on the other, become one map: the data they share is read "
              "through one connector (one pass over memory instead of two), "
              "and each body runs as before in the same iteration. Refused "
              "when a container one map writes is read or written by the "
              "other, when one map reaches the other through the graph, or "
              "when the ranges or scopes differ. The fused map keeps the first "
              "map's entry, exit, label and schedule. Exact: every value is "
              "computed as before.",
          .pattern = Pattern()
                         .node("data", ir::NodeKind::Access)
                         .node("first", ir::NodeKind::MapEntry)
                         .node("second", ir::NodeKind::MapEntry)
                         .edge("data", "first")
                         .edge("data", "second"),
      }) {}

Planned<Plan> SiblingMapFusion::plan(const ir::Program &program,
                                     const Match &match,
                                     const Params &params) const {
  Planned<Plan> out;
  out.verdict = Planner(program, match, out.plan).run();
  return out;
}

ApplyResult SiblingMapFusion::rewrite(const ir::Program &program,
                                      const Match &match, const Params &params,
                                      const Plan &plan) const {
  ApplyResult r{program, {}};
  ir::State &s = stateNamed(r.program, match.state);
  renameBody(s, plan.secondEntry, plan.secondBody, plan.rename);
  mergeEntry(s, plan.secondEntry, plan.firstEntry);
  mergeExit(s, plan.secondExit, plan.firstExit);
  removeNode(s, plan.secondEntry, &r.idMap);
  removeNode(s, plan.secondExit, &r.idMap);
  r.idMap[plan.secondEntry] = plan.firstEntry;
  r.idMap[plan.secondExit] = plan.firstExit;
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<SiblingMapFusion>()};

} // namespace weir::transforms
