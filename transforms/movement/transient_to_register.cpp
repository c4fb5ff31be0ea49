/// \file
/// `transient-to-register` (scalar replacement): a transient that lives
/// entirely inside one map scope — every access node of it directly in
/// the scope, every memlet naming it inside — whose per-iteration
/// footprint is a small constant box gets Storage::Register and that box
/// as its shape. Lowering then allocates it per iteration inside the loop
/// body, the analysis counts no bytes for it, and the transient-memory
/// report leaves it out.
///
/// Ids: unchanged.

#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/map_scope.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <set>

namespace weir::transforms {

namespace {

using ir::Expr;
using ir::NodeId;

/// The pattern's condition, cheap and local: a host transient written by a
/// tasklet directly, or by a map whose entry is fed by another map's entry
/// — as access nodes inside a scope are (check() decides exactly).
bool writtenInsideAScope(const ir::Program &p, const StateGraph &g,
                         const ir::Node &n) {
  const ir::Container *c = p.findContainer(n.access().container);
  if (!c || !c->transient || c->isConstant() || c->isView() ||
      c->storage != ir::Storage::Host)
    return false;
  for (const ir::Edge *e : g.in(n.id)) {
    if (e->memlet.empty())
      continue;
    const ir::Node &src = *g.node(e->src);
    if (src.kind == ir::NodeKind::Tasklet)
      return true;
    if (src.kind == ir::NodeKind::MapExit)
      for (const ir::Edge *in : g.in(src.map().partner))
        if (g.node(in->src)->kind == ir::NodeKind::MapEntry)
          return true;
  }
  return false;
}

struct Plan {
  std::string container;
  ir::Subset footprint;
};

CheckResult planRegister(const ir::Program &p, const Match &match,
                         std::int64_t maxElements, Plan &plan) {
  const ir::State &s = stateNamed(p, match.state);
  std::shared_ptr<const StateGraph> shared = sharedStateGraph(s);
  const StateGraph &g = *shared;
  NodeId node = match.node("access");
  plan.container = g.node(node)->access().container;
  const std::string &name = plan.container;
  auto parents = ir::scopeParents(s);
  NodeId scope = parents[node];
  std::vector<NodeId> involved{node};
  if (scope)
    involved.push_back(scope);
  auto fail = [&](std::string why) {
    return CheckResult::failure(std::move(why), involved);
  };
  if (auto why = notPlainTransient(p, name))
    return fail(*why);
  if (p.container(name).storage != ir::Storage::Host)
    return fail("'" + name + "' is not in host storage");
  if (!scope)
    return fail("'" + name + "' (%" + std::to_string(node) +
                ") is not inside a map");
  const std::string map = ir::describe(*g.node(scope), "map");
  for (const ir::State &other : p.states)
    if (other.name != s.name)
      for (const ir::Node &n : other.nodes)
        if (n.kind == ir::NodeKind::Access && n.access().container == name)
          return fail("'" + name + "' is also used in state '" + other.name +
                      "'");
  std::set<NodeId> body = parents.bodyOf(scope);
  NodeId exit = g.node(scope)->map().partner;
  std::vector<NodeId> nodes;
  for (const ir::Node &n : s.nodes)
    if (n.kind == ir::NodeKind::Access && n.access().container == name) {
      if (parents[n.id] != scope)
        return fail("'" + name + "' has an access node (%" +
                    std::to_string(n.id) + ") outside the scope of " + map);
      nodes.push_back(n.id);
    }
  std::optional<ir::Subset> footprint;
  for (const ir::Edge &e : s.edges) {
    if (e.memlet.container != name)
      continue;
    if (!body.count(e.src) || !body.count(e.dst) || e.src == exit ||
        e.dst == exit)
      return fail("'" + name + "' crosses the boundary of " + map + " (" +
                  e.memlet.str() + ")");
    bool direct = std::find(nodes.begin(), nodes.end(), e.src) != nodes.end() ||
                  std::find(nodes.begin(), nodes.end(), e.dst) != nodes.end();
    if (!direct)
      continue;
    if (!footprint)
      footprint = e.memlet.subset;
    else if (*footprint != e.memlet.subset)
      return fail("the nodes of " + map + " access '" + name + "' as " +
                  footprint->str() + " and as " + e.memlet.subset.str() +
                  "; the footprints differ");
  }
  if (!footprint)
    return fail("nothing moves data of '" + name + "'");
  std::int64_t elements = 1;
  for (const ir::Range &r : footprint->dims) {
    auto size = r.size().asConstant();
    if (!size || r.step != Expr(1))
      return fail("the footprint " + name + "[" + footprint->str() +
                  "] is not a constant box with unit steps");
    elements *= *size;
  }
  if (elements > maxElements)
    return fail(
        "the footprint " + name + "[" + footprint->str() + "] holds " +
        std::to_string(elements) +
        " elements, more than max_elements = " + std::to_string(maxElements));
  // One full, plain write first; everything else after it, so no
  // iteration sees a value another left behind.
  NodeId first = 0;
  for (NodeId n : nodes) {
    std::vector<const ir::Edge *> writes;
    for (const ir::Edge *e : g.in(n))
      if (!e->memlet.empty())
        writes.push_back(e);
    if (writes.size() == 1 && !writes[0]->memlet.wcr) {
      first = n;
      break;
    }
  }
  if (!first)
    return fail("no access node of '" + name +
                "' is written whole, once and without a write-conflict "
                "resolution");
  for (NodeId n : nodes) {
    if (n == first)
      continue;
    std::vector<NodeId> stack{first};
    std::set<NodeId> seen{first};
    bool after = false;
    while (!stack.empty() && !after) {
      NodeId x = stack.back();
      stack.pop_back();
      for (const ir::Edge *e : g.out(x)) {
        after |= e->dst == n;
        if (seen.insert(e->dst).second)
          stack.push_back(e->dst);
      }
    }
    if (!after)
      return fail("'" + name + "' (%" + std::to_string(n) +
                  ") is not ordered after its first write (%" +
                  std::to_string(first) +
                  "); it could see another iteration's value");
  }
  plan.footprint = *footprint;
  return CheckResult::success();
}

} // namespace

namespace {

class TransientToRegister : public PlannedTransformation<Plan> {
public:
  TransientToRegister();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

TransientToRegister::TransientToRegister()
    : PlannedTransformation({
          .id = "transient-to-register",
          .tier = Tier::Movement,
          .summary =
              "Keep a small transient private to each iteration of its map",
          .description =
              "A plain transient whose access nodes all sit directly in one "
              "map scope, whose memlets all stay inside it, and which that "
              "scope's nodes access through one subset of constant size (at "
              "most `max_elements` elements) gets register storage and that "
              "size as its shape (memlets shifted to start at 0): the lowering "
              "allocates it per iteration inside the loop body instead of once "
              "for the run, bytes moved drop by its traffic and the "
              "transient-memory report leaves it out. Each iteration must "
              "write the whole footprint (one write, no write-conflict "
              "resolution) before anything else touches it, so no value "
              "crosses iterations. Refused, naming the container and nodes, "
              "for arguments, constants, views, containers already in "
              "registers, use in another state or outside the scope, "
              "footprints that differ or are symbolic or too large, and reads "
              "before the full write. Exact.",
          .params = {{"max_elements", ParamSpec::Kind::Int, std::int64_t{16},
                      "the largest per-iteration footprint, in elements, kept "
                      "in registers",
                      1.0, 4096.0}},
          .pattern = Pattern().node("access", ir::NodeKind::Access, {},
                                    writtenInsideAScope),
      }) {}

Planned<Plan> TransientToRegister::plan(const ir::Program &program,
                                        const Match &match,
                                        const Params &params) const {
  Planned<Plan> out;
  out.verdict =
      planRegister(program, match, intParam(params, "max_elements"), out.plan);
  return out;
}

ApplyResult TransientToRegister::rewrite(const ir::Program &program,
                                         const Match &match,
                                         const Params &params,
                                         const Plan &plan) const {
  ApplyResult r{program, {}};
  ir::Container &c = r.program.containers.at(plan.container);
  c.storage = ir::Storage::Register;
  c.shape.clear();
  for (const ir::Range &d : plan.footprint.dims)
    c.shape.push_back(d.size());
  c.strides = ir::rowMajorStrides(c.shape);
  for (ir::State &s : r.program.states)
    s.edges.editWhere(
        [&](const ir::Edge &e) { return e.memlet.container == plan.container; },
        [&](ir::Edge &e) {
          for (std::size_t d = 0; d < e.memlet.subset.dims.size(); ++d) {
            ir::Range &x = e.memlet.subset.dims[d];
            Expr base = plan.footprint.dims[d].begin;
            x = ir::Range(x.begin - base, x.end - base, x.step);
          }
        });
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<TransientToRegister>()};

} // namespace weir::transforms
