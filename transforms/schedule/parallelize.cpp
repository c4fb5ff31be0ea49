#include "transforms/schedule/parallelize.h"

#include "ir/error.h"
#include "ir/scope.h"
#include "transforms/fusion/map_scope.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"
#include "transforms/schedule/map_nest.h"

namespace weir::transforms {

std::string_view Parallelize::description() const {
  return "Scheduling (tier 3). Sets a map's schedule to cpu-parallel when "
         "its iterations are provably independent: for every container "
         "written anywhere in its scope (inner maps included), every "
         "parameter with more than one value is, in some dimension of every "
         "access to that container, the index plus terms no parameter of "
         "this map or of a map inside changes (or, more generally, the "
         "points give distinct values of the parameter disjoint intervals, "
         "as an im2col's row 9c + 3k0 + k1 does for c). Distinct iterations "
         "then touch distinct elements, so no write-conflict resolution is "
         "needed between them (a sum inside, private to one iteration, is "
         "fine). This is the lowering's own proof applied to every "
         "parameter, so the lowering runs the map's outermost loop with "
         "more than one iteration on the thread pool when the map has at "
         "least LowerOptions::minParallelIterations iterations. Refused "
         "for maps of one iteration, maps already cpu-parallel, inside another "
         "cpu-parallel map "
         "(parallel regions do not nest), holding a library call or "
         "primitive (they parallelize themselves), or reading a view of a "
         "container they write. With `outermost`, only the outermost "
         "parameter with more than one value must be private (the others "
         "may conflict, as in a row-wise sum): that loop is the only one "
         "the lowering runs in parallel, and each element is still touched "
         "in the sequential order, by one thread. Exact.";
}

std::vector<ParamSpec> Parallelize::params() const {
  return {{"outermost", ParamSpec::Kind::Bool, false,
           "require only the outermost parameter with more than one value "
           "to be private (the loop the lowering parallelizes)"}};
}

const Pattern &Parallelize::pattern() const {
  static const Pattern p = Pattern().node("map", ir::NodeKind::MapEntry);
  return p;
}

namespace {

CheckResult plan(const ir::Program &p, const Match &match, bool outermostOnly) {
  const ir::State &s = stateNamed(p, match.state);
  ir::NodeId entry = match.node("map");
  const ir::Node &n = *s.findNode(entry);
  std::string name = map_scope::mapName(n);
  if (n.map().schedule == ir::Schedule::CpuParallel)
    return CheckResult::failure(name + " is already cpu-parallel", {entry});
  bool single = true;
  for (const ir::Range &r : n.map().ranges)
    single = single && r.size() == ir::Expr(1);
  if (single)
    return CheckResult::failure(name + " runs one iteration; nothing to "
                                       "run in parallel",
                                {entry});
  auto parents = ir::scopeParents(s);
  for (ir::NodeId outer : schedule::enclosingMaps(parents, entry)) {
    const ir::Node &o = *s.findNode(outer);
    if (o.map().schedule == ir::Schedule::CpuParallel)
      return CheckResult::failure(name + " is inside the cpu-parallel " +
                                      map_scope::mapName(o) +
                                      "; parallel regions do not nest",
                                  {entry, outer});
  }
  schedule::ScopeInfo scope = schedule::scopeInfo(p, s, parents, entry);
  if (!scope.calls.empty()) {
    const ir::Node &c = *s.findNode(scope.calls.front());
    return CheckResult::failure(
        name + " calls '" + c.label + "' (%" + std::to_string(c.id) +
            "), a library routine that parallelizes itself",
        {entry, c.id});
  }
  for (ir::NodeId inner : scope.innerMaps) {
    const ir::Node &i = *s.findNode(inner);
    if (i.map().schedule == ir::Schedule::CpuParallel)
      return CheckResult::failure(
          name + " holds the cpu-parallel " + map_scope::mapName(i) +
              "; parallel regions do not nest (parallelize one of them)",
          {entry, inner});
  }
  const ir::MapData &m = n.map();
  std::vector<std::string> params = m.params;
  std::vector<ir::Range> ranges = m.ranges;
  std::set<std::string> alsoVarying;
  if (outermostOnly) {
    std::size_t d = 0;
    while (d + 1 < m.params.size() && m.ranges[d].size() == ir::Expr(1))
      ++d;
    params = {m.params[d]};
    ranges = {m.ranges[d]};
    alsoVarying.insert(m.params.begin(), m.params.end());
  }
  auto cs = schedule::conflicts(scope, params, ranges, alsoVarying,
                                schedule::constantBounds(m.params, m.ranges));
  if (!cs.empty())
    return CheckResult::failure(
        "the iterations of " + name +
            " are not provably independent: " + schedule::describe(cs.front()) +
            (cs.front().wcr ? " (a write-conflict resolution combines them)"
                            : ""),
        {entry});
  return CheckResult::success();
}

} // namespace

CheckResult Parallelize::check(const ir::Program &program, const Match &match,
                               const Params &params) const {
  return plan(program, match, boolParam(params, "outermost"));
}

ApplyResult Parallelize::apply(const ir::Program &program, const Match &match,
                               const Params &params) const {
  if (CheckResult c = plan(program, match, boolParam(params, "outermost")); !c)
    throw Error("parallelize at " + match.str() + ": " + c.reason);
  ApplyResult r{program, identityIdMap(program)};
  ir::State &s = stateNamed(r.program, match.state);
  ir::Node &e = *s.findNode(match.node("map"));
  e.map().schedule = ir::Schedule::CpuParallel;
  s.findNode(e.map().partner)->map().schedule = ir::Schedule::CpuParallel;
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<Parallelize>()};

} // namespace weir::transforms
