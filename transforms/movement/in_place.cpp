/// \file
/// `in-place`: an elementwise map that reads each element of a transient
/// for the last time and writes its result to the same position of
/// another transient of the same type and layout writes into the first
/// one instead, so the program needs one buffer fewer (the peak of live
/// transient memory falls; the bytes moved do not change).
///
/// Ids: unchanged; the output container is renamed to the input.

#include "ir/error.h"
#include "transforms/gemm_alignment.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

namespace weir::transforms {

namespace {

using ir::NodeId;

struct Plan {
  std::string x, y;
};

CheckResult planInPlace(const ir::Program &p, const Match &match, Plan &out) {
  const ir::State &s = stateNamed(p, match.state);
  std::shared_ptr<const StateGraph> shared = sharedStateGraph(s);
  const StateGraph &g = *shared;
  NodeId input = match.node("input"), entry = match.node("map");
  auto fail = [&](std::string why) {
    return CheckResult::failure(std::move(why), {input, entry});
  };
  auto map = gemm_alignment::elementwiseMap(p, g, entry);
  if (auto *r = std::get_if<CheckResult>(&map))
    return *r;
  const gemm_alignment::ElementwiseMap &m =
      std::get<gemm_alignment::ElementwiseMap>(map);
  out.x = g.node(input)->access().container;
  StateGraph::Edges writes = g.out(m.tasklet);
  if (writes.size() != 1)
    return fail("the map writes more than one array");
  out.y = writes[0]->memlet.container;

  for (const std::string &name : {out.x, out.y})
    if (auto why = notPlainTransient(p, name))
      return fail(*why);
  if (out.x == out.y)
    return fail("the map already writes '" + out.x + "'");
  const ir::Container &x = p.container(out.x), &y = p.container(out.y);
  if (x.dtype != y.dtype || x.shape != y.shape || x.strides != y.strides)
    return fail("'" + out.x + "' and '" + out.y +
                "' differ in type, shape or strides");
  ContainerUses xu = containerUses(p, out.x), yu = containerUses(p, out.y);
  if (xu.reads != 1 || xu.writes != 1)
    return fail("'" + out.x + "' is read or written elsewhere (" +
                std::to_string(xu.reads) + " reads, " +
                std::to_string(xu.writes) + " writes); its buffer is not free");
  if (yu.writes != 1)
    return fail("'" + out.y + "' is written elsewhere too");

  std::vector<ir::Expr> written =
      *gemm_alignment::pointIndex(writes[0]->memlet);
  int reads = 0;
  for (const ir::Edge *e : g.in(m.tasklet)) {
    if (e->memlet.container != out.x)
      continue;
    ++reads;
    if (*gemm_alignment::pointIndex(e->memlet) != written)
      return fail("the map reads '" + out.x + "' at " + e->memlet.str() +
                  " but writes " + writes[0]->memlet.str() +
                  "; an iteration could overwrite what another still reads");
  }
  if (reads == 0)
    return fail("the map does not read '" + out.x + "' element by element");
  if (!gemm_alignment::injective(p, m, out.y, written))
    return fail("the map writes some element of '" + out.y + "' twice");
  return CheckResult::success();
}

} // namespace

namespace {

class InPlace : public PlannedTransformation<Plan> {
public:
  InPlace();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

InPlace::InPlace()
    : PlannedTransformation({
          .id = "in-place",
          .tier = Tier::Movement,
          .summary = "Let an elementwise map write its result over the input "
                     "it consumes",
          .description =
              "A map holding one tasklet that reads element k of transient X "
              "and writes element k of transient Y (the same index, so no "
              "iteration reads what another writes), where nothing else reads "
              "X and X and Y have the same type, shape and strides, writes X "
              "instead: Y's uses are renamed to X and Y disappears, so the "
              "backend allocates one buffer fewer. Refused for arguments, "
              "constants, views and viewed containers, for X read or written "
              "elsewhere, for Y written elsewhere, and when the map reads X at "
              "another index than it writes. Exact.",
          .pattern = Pattern()
                         .node("input", ir::NodeKind::Access)
                         .node("map", ir::NodeKind::MapEntry)
                         .edge("input", "map"),
      }) {}

Planned<Plan> InPlace::plan(const ir::Program &program, const Match &match,
                            const Params &params) const {
  Planned<Plan> out;
  out.verdict = planInPlace(program, match, out.plan);
  return out;
}

ApplyResult InPlace::rewrite(const ir::Program &program, const Match &match,
                             const Params &params, const Plan &plan) const {
  ApplyResult r{program, {}};
  renameContainerUses(r.program, plan.y, plan.x);
  r.program.containers.erase(plan.y);
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<InPlace>()};

} // namespace weir::transforms
