/// \file
/// `parallelize` (TVM's parallel): mark a map cpu-parallel when no two of
/// its iterations touch one element that either writes, so the lowering
/// may run them on the thread pool. Exact.
///
/// Ids: unchanged.

#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/map_nest.h"
#include "transforms/map_scope.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"
#include "transforms/transformation.h"

namespace weir::transforms {

namespace {

CheckResult plan(const ir::Program &p, const Match &match, bool outermostOnly) {
  const ir::State &s = stateNamed(p, match.state);
  ir::NodeId entry = match.node("map");
  const ir::Node &n = *s.findNode(entry);
  std::string name = ir::describe(n, "map");
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
  for (ir::NodeId outer : map_nest::enclosingMaps(parents, entry)) {
    const ir::Node &o = *s.findNode(outer);
    if (o.map().schedule == ir::Schedule::CpuParallel)
      return CheckResult::failure(name + " is inside the cpu-parallel " +
                                      ir::describe(o, "map") +
                                      "; parallel regions do not nest",
                                  {entry, outer});
  }
  map_nest::ScopeInfo scope = map_nest::scopeInfo(p, s, parents, entry);
  if (!scope.calls.empty()) {
    const ir::Node &c = *s.findNode(scope.calls.front());
    return CheckResult::failure(
        name + " calls " + ir::describe(c) +
            ", a library routine that parallelizes itself",
        {entry, c.id});
  }
  for (ir::NodeId inner : scope.innerMaps) {
    const ir::Node &i = *s.findNode(inner);
    if (i.map().schedule == ir::Schedule::CpuParallel)
      return CheckResult::failure(
          name + " holds the cpu-parallel " + ir::describe(i, "map") +
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
  auto cs = map_nest::conflicts(scope, params, ranges, alsoVarying,
                                ir::constantBounds(m.params, m.ranges));
  if (!cs.empty())
    return CheckResult::failure(
        "the iterations of " + name +
            " are not provably independent: " + map_nest::describe(cs.front()) +
            (cs.front().wcr ? " (a write-conflict resolution combines them)"
                            : ""),
        {entry});
  return CheckResult::success();
}

} // namespace

namespace {

class Parallelize : public Transformation {
public:
  Parallelize();
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace

Parallelize::Parallelize()
    : Transformation({
          .id = "parallelize",
          .tier = Tier::Movement,
          .summary = "Mark a map whose iterations are provably independent as "
                     "cpu-parallel",
          .description =
              "Sets a map's schedule to cpu-parallel when its iterations are "
              "provably independent: for every container written anywhere in "
              "its scope (inner maps included), every parameter with more than "
              "one value is, in some dimension of every access to that "
              "container, the index plus terms no parameter of this map or of "
              "a map inside changes (or, more generally, the points give "
              "distinct values of the parameter disjoint intervals, as an "
              "im2col's row 9c + 3k0 + k1 does for c). Distinct iterations "
              "then touch distinct elements, so no write-conflict resolution "
              "is needed between them (a sum inside, private to one iteration, "
              "is fine). This is the lowering's own proof applied to every "
              "parameter, so the lowering runs the map's outermost loop with "
              "more than one iteration on the thread pool when the map has at "
              "least LowerOptions::minParallelIterations iterations. Refused "
              "for maps of one iteration, maps already cpu-parallel, inside "
              "another cpu-parallel map (parallel regions do not nest), "
              "holding a library call or primitive (they parallelize "
              "themselves), or reading a view of a container they write. With "
              "`outermost`, only the outermost parameter with more than one "
              "value must be private (the others may conflict, as in a "
              "row-wise sum): that loop is the only one the lowering runs in "
              "parallel, and each element is still touched in the sequential "
              "order, by one thread. Exact.",
          .params =
              {{"outermost", ParamSpec::Kind::Bool, false,
                "require only the outermost parameter with more than one value "
                "to be private (the loop the lowering parallelizes)"}},
          .pattern = Pattern().node("map", ir::NodeKind::MapEntry),
      }) {}

CheckResult Parallelize::check(const ir::Program &program, const Match &match,
                               const Params &params) const {
  return plan(program, match, boolParam(params, "outermost"));
}

ApplyResult Parallelize::apply(const ir::Program &program, const Match &match,
                               const Params &params) const {
  if (CheckResult c = plan(program, match, boolParam(params, "outermost")); !c)
    throw Error("parallelize at " + match.str() + ": " + c.reason);
  ApplyResult r{program, {}};
  ir::State &s = stateNamed(r.program, match.state);
  ir::Node &e = *s.findNode(match.node("map"));
  e.map().schedule = ir::Schedule::CpuParallel;
  s.findNode(e.map().partner)->map().schedule = ir::Schedule::CpuParallel;
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<Parallelize>()};

} // namespace weir::transforms
