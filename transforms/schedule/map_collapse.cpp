#include "transforms/schedule/map_collapse.h"

#include "ir/error.h"
#include "ir/scope.h"
#include "transforms/fusion/map_scope.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"
#include "transforms/schedule/map_nest.h"

#include <algorithm>

namespace weir::transforms {

std::string_view MapCollapse::description() const {
  return "Scheduling (tier 3). An outer map whose scope holds exactly one "
         "inner map and nothing else (every edge leaving the outer entry "
         "enters the inner entry, every edge entering the outer exit leaves "
         "the inner exit) becomes one map over the outer parameters then the "
         "inner ones. The body's memlets already describe one iteration of "
         "both, so they stay; each edge from the inner entry is re-sourced "
         "to the outer connector that fed it (and likewise at the exit), "
         "and the inner entry and exit go. The collapsed map keeps the "
         "outer map's label and schedule. Refused when the inner ranges "
         "depend on an outer parameter (the iteration space is not a "
         "box), when the inner map binds an outer parameter's name again, "
         "and when anything else sits in the outer scope. Exact: iterations "
         "run in the nest's order.";
}

const Pattern &MapCollapse::pattern() const {
  static const Pattern p = Pattern()
                               .node("outer", ir::NodeKind::MapEntry)
                               .node("inner", ir::NodeKind::MapEntry)
                               .edge("outer", "inner");
  return p;
}

namespace {

using ir::NodeId;

CheckResult plan(const ir::Program &p, const Match &match,
                 schedule::MapNest &nest) {
  const ir::State &s = stateNamed(p, match.state);
  NodeId outer = match.node("outer"), inner = match.node("inner");
  auto parents = ir::scopeParents(s);
  std::string why;
  auto found = schedule::findNest(s, parents, outer, why);
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
      return CheckResult::failure("the inner " + map_scope::mapName(i) +
                                      " binds '" + q + "' of the outer " +
                                      map_scope::mapName(o) + " again",
                                  {outer, inner});
  if (auto dep = schedule::rangeNaming(im, om.params))
    return CheckResult::failure("in the inner " + map_scope::mapName(i) + ", " +
                                    *dep + " of the outer " +
                                    map_scope::mapName(o) +
                                    "; the iteration space is not a box",
                                {outer, inner});
  return CheckResult::success();
}

} // namespace

CheckResult MapCollapse::check(const ir::Program &program, const Match &match,
                               const Params &) const {
  schedule::MapNest nest;
  return plan(program, match, nest);
}

ApplyResult MapCollapse::apply(const ir::Program &program, const Match &match,
                               const Params &) const {
  schedule::MapNest nest;
  if (CheckResult c = plan(program, match, nest); !c)
    throw Error("map-collapse at " + match.str() + ": " + c.reason);
  ApplyResult r{program, identityIdMap(program)};
  ir::State &s = stateNamed(r.program, match.state);

  // Which outer connector feeds each inner one (and the other way at the
  // exit); ordering edges between the two entries are dropped.
  std::map<std::string, std::string> entryConn, exitConn;
  for (const ir::Edge &e : s.edges) {
    if (e.src == nest.outerEntry && e.dst == nest.innerEntry &&
        !e.dstConn.empty())
      entryConn["OUT_" + e.dstConn.substr(3)] = e.srcConn;
    if (e.src == nest.innerExit && e.dst == nest.outerExit &&
        !e.srcConn.empty())
      exitConn["IN_" + e.srcConn.substr(4)] = e.dstConn;
  }
  std::vector<ir::Edge> kept;
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
