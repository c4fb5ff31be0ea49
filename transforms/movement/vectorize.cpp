/// \file
/// `vectorize` (TVM's vectorize, DaCe's Vectorization): mark an innermost
/// map vectorized when its last parameter walks memory at unit stride (or
/// not at all) in every memlet, no write combines, and its iterations are
/// private, so the lowering marks the innermost loop for LLVM's loop
/// vectorizer. Exact (no fast-math: the vectorizer keeps the order of
/// floating-point operations).
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

CheckResult plan(const ir::Program &p, const Match &match) {
  const ir::State &s = stateNamed(p, match.state);
  ir::NodeId entry = match.node("map");
  const ir::Node &n = *s.findNode(entry);
  const ir::MapData &m = n.map();
  std::string name = ir::describe(n, "map");
  auto fail = [&](std::string why, std::vector<ir::NodeId> nodes = {}) {
    nodes.insert(nodes.begin(), entry);
    return CheckResult::failure(std::move(why), std::move(nodes));
  };
  if (m.schedule == ir::Schedule::Vectorized)
    return fail(name + " is already vectorized");
  if (m.params.empty())
    return fail(name + " has no parameter");
  if (m.ranges.back().size() == ir::Expr(1))
    return fail("the last parameter '" + m.params.back() + "' of " + name +
                " runs one iteration; nothing to vectorize");
  auto parents = ir::scopeParents(s);
  map_nest::ScopeInfo scope = map_nest::scopeInfo(p, s, parents, entry);
  if (!scope.innerMaps.empty())
    return fail(name + " is not innermost: it holds " +
                    ir::describe(*s.findNode(scope.innerMaps.front()), "map"),
                {scope.innerMaps.front()});
  if (!scope.calls.empty())
    return fail(name + " calls " +
                    ir::describe(*s.findNode(scope.calls.front())),
                {scope.calls.front()});
  const std::string &last = m.params.back();
  ir::Expr v = ir::Expr::symbol(last);
  for (const ir::Edge &e : s.edges) {
    // The memlets of one iteration: those next to a node inside the scope
    // (the map's own exit is in its body too, but its outgoing memlets
    // cover the whole map).
    auto inside = [&](ir::NodeId id) {
      const ir::Node *x = s.findNode(id);
      return scope.body.count(id) && x && x->kind != ir::NodeKind::MapExit &&
             x->kind != ir::NodeKind::MapEntry;
    };
    if (e.memlet.empty() || !(inside(e.src) || inside(e.dst)))
      continue;
    if (e.memlet.wcr)
      return fail(name + " writes " + e.memlet.str() +
                  " with a write-conflict resolution");
    const ir::Container *c = p.findContainer(e.memlet.container);
    if (!c)
      return fail(name + " names an unknown container in " + e.memlet.str());
    ir::Expr flat(0);
    for (std::size_t d = 0; d < e.memlet.subset.dims.size(); ++d) {
      const ir::Range &r = e.memlet.subset.dims[d];
      if (r.size() != ir::Expr(1))
        return fail(name + " moves a range (" + e.memlet.str() +
                    ") per iteration, not one element");
      flat = flat + r.begin * c->strides.at(d);
    }
    ir::Expr stride =
        ir::simplify(flat.substitute({{last, v + ir::Expr(1)}}) - flat);
    auto k = stride.asConstant();
    if (!k || (*k != 0 && *k != 1))
      return fail("the last parameter '" + last + "' of " + name + " walks " +
                  e.memlet.str() + " at stride " + stride.str() +
                  ", not 0 or 1");
  }
  auto cs = map_nest::conflicts(scope, {last}, {m.ranges.back()});
  if (!cs.empty())
    return fail("the iterations of '" + last + "' in " + name +
                " are not private: " + map_nest::describe(cs.front()));
  return CheckResult::success();
}

} // namespace

namespace {

class Vectorize : public Transformation {
public:
  Vectorize();
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace

Vectorize::Vectorize()
    : Transformation({
          .id = "vectorize",
          .tier = Tier::Movement,
          .summary = "Mark an innermost map whose last dimension is "
                     "unit-stride as vectorized",
          .description =
              "Sets the schedule of an innermost map (no map, library call or "
              "primitive inside) whose last parameter takes more than one "
              "value to vectorized when, in every memlet of its scope, its "
              "last parameter moves the flat element offset (indices times the "
              "container's strides) by 0 or 1 per iteration, no write has a "
              "write-conflict resolution, and the iterations of the last "
              "parameter are private (the lowering's proof: every written "
              "container has a dimension that is the parameter plus terms "
              "fixed while it runs). The lowering then emits the innermost "
              "loop as `vectorized for` and the CPU backend attaches "
              "llvm.loop.vectorize.enable to it. A vectorized map is no longer "
              "a cpu-parallel candidate: vectorize the inner map of a nest "
              "whose outer map is parallel. Exact.",
          .pattern = Pattern().node("map", ir::NodeKind::MapEntry),
      }) {}

CheckResult Vectorize::check(const ir::Program &program, const Match &match,
                             const Params &) const {
  return plan(program, match);
}

ApplyResult Vectorize::apply(const ir::Program &program, const Match &match,
                             const Params &) const {
  if (CheckResult c = plan(program, match); !c)
    throw Error("vectorize at " + match.str() + ": " + c.reason);
  ApplyResult r{program, {}};
  ir::State &s = stateNamed(r.program, match.state);
  ir::Node &e = *s.findNode(match.node("map"));
  e.map().schedule = ir::Schedule::Vectorized;
  s.findNode(e.map().partner)->map().schedule = ir::Schedule::Vectorized;
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<Vectorize>()};

} // namespace weir::transforms
