/// \file
/// `map-collapse` (DaCe's MapCollapse, TVM's fuse of loop axes): an outer
/// map whose scope holds exactly one inner map and nothing else becomes
/// one map over both parameter lists (outer first), so the lowering sees
/// one loop nest it may parallelize as a whole and the inner body's
/// memlets, already per iteration, stay as they are. Exact: the iteration
/// order is the nest's order.
///
/// Ids: the inner entry and exit are mapped to the outer ones.

#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/map_nest.h"
#include "transforms/map_scope.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <algorithm>

namespace weir::transforms {

namespace {

using ir::NodeId;

CheckResult planCollapse(const ir::Program &p, const Match &match,
                         map_nest::MapNest &nest) {
  const ir::State &s = stateNamed(p, match.state);
  NodeId outer = match.node("outer"), inner = match.node("inner");
  auto parents = ir::scopeParents(s);
  std::string why;
  auto found = map_nest::findNest(s, parents, outer, why);
  if (!found)
    return CheckResult::failure(why, {outer, inner});
  if (found->innerEntry != inner)
    return CheckResult::failure("map %" + std::to_string(inner) +
                                    " is not the one inner map of %" +
                                    std::to_string(outer),
                                {outer, inner});
  nest = *found;
  const ir::Node &o = *s.findNode(outer), &i = *s.findNode(inner);
  const ir::MapData &om = o.map(), &im = i.map();
  for (const std::string &q : im.params)
    if (std::find(om.params.begin(), om.params.end(), q) != om.params.end())
      return CheckResult::failure("the inner " + ir::describe(i, "map") +
                                      " binds '" + q + "' of the outer " +
                                      ir::describe(o, "map") + " again",
                                  {outer, inner});
  if (auto dep = map_nest::rangeNaming(im, om.params))
    return CheckResult::failure("in the inner " + ir::describe(i, "map") +
                                    ", " + *dep + " of the outer " +
                                    ir::describe(o, "map") +
                                    "; the iteration space is not a box",
                                {outer, inner});
  return CheckResult::success();
}

} // namespace

namespace {

class MapCollapse : public PlannedTransformation<map_nest::MapNest> {
public:
  MapCollapse();

protected:
  Planned<map_nest::MapNest> plan(const ir::Program &program,
                                  const Match &match,
                                  const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params,
                      const map_nest::MapNest &plan) const override;
};

} // namespace

MapCollapse::MapCollapse()
    : PlannedTransformation({
          .id = "map-collapse",
          .tier = Tier::Movement,
          .summary = "Merge a map nest of two maps into one map over both "
                     "parameter lists",
          .description =
              "An outer map whose scope holds exactly one inner map and "
              "nothing else (every edge leaving the outer entry enters the "
              "inner entry, every edge entering the outer exit leaves the "
              "inner exit) becomes one map over the outer parameters then the "
              "inner ones. The body's memlets already describe one iteration "
              "of both, so they stay; each edge from the inner entry is "
              "re-sourced to the outer connector that fed it (and likewise at "
              "the exit), and the inner entry and exit go. The collapsed map "
              "keeps the outer map's label and schedule. Refused when the "
              "inner ranges depend on an outer parameter (the iteration space "
              "is not a box), when the inner map binds an outer parameter's "
              "name again, and when anything else sits in the outer scope. "
              "Exact: iterations run in the nest's order.",
          .pattern = Pattern()
                         .node("outer", ir::NodeKind::MapEntry)
                         .node("inner", ir::NodeKind::MapEntry)
                         .edge("outer", "inner"),
      }) {}

Planned<map_nest::MapNest> MapCollapse::plan(const ir::Program &program,
                                             const Match &match,
                                             const Params &params) const {
  Planned<map_nest::MapNest> out;
  out.verdict = planCollapse(program, match, out.plan);
  return out;
}

ApplyResult MapCollapse::rewrite(const ir::Program &program, const Match &match,
                                 const Params &params,
                                 const map_nest::MapNest &nest) const {
  ApplyResult r{program, {}};
  ir::State &s = stateNamed(r.program, match.state);

  // Which outer connector feeds each inner one (and the other way at the
  // exit); ordering edges between the two entries are dropped.
  std::map<std::string, std::string> entryConn, exitConn;
  for (const ir::Edge &e : s.edges) {
    if (e.src == nest.outerEntry && e.dst == nest.innerEntry &&
        !e.dstConn.empty())
      entryConn[ir::scopePartner(e.dstConn)] = e.srcConn;
    if (e.src == nest.innerExit && e.dst == nest.outerExit &&
        !e.srcConn.empty())
      exitConn[ir::scopePartner(e.srcConn)] = e.dstConn;
  }
  ir::CowList<ir::Edge> kept;
  for (ir::Edge e : s.edges) {
    bool middle = (e.src == nest.outerEntry && e.dst == nest.innerEntry) ||
                  (e.src == nest.innerExit && e.dst == nest.outerExit);
    if (middle)
      continue;
    if (e.src == nest.innerEntry) {
      e.src = nest.outerEntry;
      e.srcConn = e.srcConn.empty() ? "" : entryConn.at(e.srcConn);
    }
    if (e.dst == nest.innerExit) {
      e.dst = nest.outerExit;
      e.dstConn = e.dstConn.empty() ? "" : exitConn.at(e.dstConn);
    }
    kept.push_back(std::move(e));
  }
  s.edges = std::move(kept);

  const ir::MapData inner = s.findNode(nest.innerEntry)->map();
  for (NodeId id : {nest.outerEntry, nest.outerExit}) {
    ir::MapData &m = s.findNode(id)->map();
    m.params.insert(m.params.end(), inner.params.begin(), inner.params.end());
    m.ranges.insert(m.ranges.end(), inner.ranges.begin(), inner.ranges.end());
  }
  // Outer connectors that fed the inner map only through ordering edges
  // are gone with them; a data connector always feeds a body edge now.
  removeNode(s, nest.innerEntry, &r.idMap);
  removeNode(s, nest.innerExit, &r.idMap);
  r.idMap[nest.innerEntry] = nest.outerEntry;
  r.idMap[nest.innerExit] = nest.outerExit;
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<MapCollapse>()};

} // namespace weir::transforms
