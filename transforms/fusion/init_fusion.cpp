/// \file
/// `init-fusion`: the map that fills a gemm's accumulator before the gemm
/// adds its product to it (beta != 0; a convolution's or Gemm's bias
/// broadcast over the output) becomes a term of the gemm's epilogue
/// (ir/primitives.h), and the gemm starts from zero: the accumulator is no
/// longer written, then read and written again.
///
/// Ids: the gemm keeps its id; the initializing map and the access node
/// between it and the gemm disappear.

#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/gemm_alignment.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <algorithm>
#include <set>

namespace weir::transforms {

namespace {

using ir::EdgeId;
using ir::NodeId;
using namespace gemm_alignment;
namespace tl = ir::tasklet;

bool accumulatedByGemm(const ir::Program &, const StateGraph &g,
                       const ir::Node &n) {
  return gemmAhead(g, n.id) != 0;
}

/// What check() establishes and apply() rewrites.
struct Plan {
  GemmSite gemm; ///< inner/outer: the edges carrying Cin
  ElementwiseMap map;
  NodeId array = 0;
  std::string x;       ///< the accumulator
  std::string outConn; ///< the tasklet's output connector
  std::vector<Operand> operands;
};

CheckResult planFusion(const ir::Program &p, const Match &match, Plan &out) {
  const ir::State &s = stateNamed(p, match.state);
  std::shared_ptr<const StateGraph> shared = sharedStateGraph(s);
  const StateGraph &g = *shared;
  out.array = match.node("array");
  NodeId exit = match.node("init_exit");
  auto fail = [&](std::string why) {
    return CheckResult::failure(std::move(why), {exit, out.array});
  };

  auto gemm = gemmAccumulating(p, g, out.array);
  if (auto *r = std::get_if<CheckResult>(&gemm))
    return *r;
  out.gemm = std::get<GemmSite>(gemm);
  const ir::Node &gemmNode = *g.node(out.gemm.gemm);
  std::string gemmName = ir::describe(gemmNode, "gemm");
  if (out.gemm.call.beta == 0)
    return fail(gemmName + " has beta = 0: it does not read its output");

  out.x = g.node(out.array)->access().container;
  const ir::Container &x = p.container(out.x);
  if (out.gemm.container != out.x)
    return fail(gemmName + " accumulates into '" + out.gemm.container +
                "' inside its map but reads '" + out.x + "' outside it");
  if (x.isConstant() || x.isView())
    return fail("'" + out.x + "' is a constant or a view");
  if (g.in(out.array).size() != 1 || g.out(out.array).size() != 1)
    return fail("access node %" + std::to_string(out.array) + " of '" + out.x +
                "' has other writers or readers than the map and the gemm");

  if (out.gemm.entry != 0) {
    const ir::Edge *outer = nullptr;
    for (const ir::Edge *e : g.out(out.array))
      outer = e;
    for (const ir::Edge *e : g.out(out.gemm.entry))
      if (e->srcConn == ir::scopePartner(outer->dstConn) &&
          e->id != out.gemm.inner)
        return fail("'" + out.x +
                    "' also reaches other nodes in the map "
                    "around " +
                    gemmName);
  }

  auto map = elementwiseMap(p, g, g.node(exit)->map().partner);
  if (auto *r = std::get_if<CheckResult>(&map))
    return *r;
  out.map = std::get<ElementwiseMap>(map);
  StateGraph::Edges writes = g.out(out.map.tasklet);
  if (writes.size() != 1 || g.out(exit).size() != 1 ||
      writes[0]->memlet.container != out.x)
    return fail("the map writes more than '" + out.x + "'");
  out.outConn = writes[0]->srcConn;
  const ir::Node &t = *g.node(out.map.tasklet);
  if (t.findOutput(out.outConn)->dtype != ir::DType::F32)
    return fail("the map computes '" + out.x + "' in " +
                std::string(ir::dtypeName(t.findOutput(out.outConn)->dtype)) +
                "; the gemm accumulates in f32");
  for (const ir::Edge *e : g.in(out.map.tasklet))
    if (e->memlet.container == out.x)
      return fail("the map reads '" + out.x + "', which it initializes");

  auto a = align(p, out.gemm, out.map, out.x, *pointIndex(writes[0]->memlet));
  if (auto *why = std::get_if<std::string>(&a))
    return fail(*why);
  auto ops = operands(p, g, out.map, std::get<Alignment>(a), out.x);
  if (auto *why = std::get_if<std::string>(&ops))
    return fail(*why);
  out.operands = std::get<std::vector<Operand>>(ops);
  return CheckResult::success();
}

tl::ExprPtr var(std::string name) {
  auto e = std::make_shared<tl::Expr>();
  e->kind = tl::ExprKind::Var;
  e->name = std::move(name);
  return e;
}

tl::ExprPtr binary(tl::BinaryOp op, tl::ExprPtr a, tl::ExprPtr b) {
  auto e = std::make_shared<tl::Expr>();
  e->kind = tl::ExprKind::Binary;
  e->binaryOp = op;
  e->operands = {std::move(a), std::move(b)};
  return e;
}

tl::ExprPtr literal(double v) {
  auto e = std::make_shared<tl::Expr>();
  e->kind = tl::ExprKind::FloatLit;
  e->floatValue = v;
  return e;
}

/// The initializing tasklet (renamed to fit), `acc + beta * init`, then the
/// gemm's epilogue, if any, on that sum; beta becomes 0.
ir::GemmCall composed(const ir::Node &gemm, const ir::Node &tasklet,
                      const Plan &plan,
                      std::vector<std::string> &operandNames) {
  ir::GemmCall call = plan.gemm.call;
  std::set<std::string> taken{"A", "B", "Cin", "C", "acc"};
  for (const ir::Connector &c : gemm.inputs)
    taken.insert(c.name);
  std::optional<tl::Code> prior;
  if (!call.epilogue.empty()) {
    prior = tl::parse(call.epilogue);
    for (const std::string &n : codeNames(*prior))
      taken.insert(n);
  }

  std::map<std::string, std::string> names;
  for (const Operand &o : plan.operands) {
    names[o.conn] = freshName(taken, "e");
    operandNames.push_back(names[o.conn]);
  }
  std::string init = freshName(taken, "t");
  names[plan.outConn] = init;
  const tl::Code &body = *tasklet.tasklet().code;
  for (const std::string &n : codeNames(body))
    if (!names.count(n))
      names[n] = freshName(taken, "t");
  tl::Code code = renamedCode(body, names);

  tl::ExprPtr term = var(init);
  if (call.beta != 1)
    term = binary(tl::BinaryOp::Mul, literal(call.beta), term);
  std::string sum = prior ? freshName(taken, "t") : "C";
  code.statements.push_back(
      {sum, binary(tl::BinaryOp::Add, var("acc"), std::move(term))});
  if (prior)
    for (tl::Assignment &a : renamedCode(*prior, {{"acc", sum}}).statements)
      code.statements.push_back(std::move(a));

  call.epilogue = tl::print(code);
  call.beta = 0;
  for (std::size_t k = 0; k < plan.operands.size(); ++k)
    call.operands.push_back({operandNames[k], plan.operands[k].view.row,
                             plan.operands[k].view.col});
  return call;
}

} // namespace

namespace {

class InitFusion : public PlannedTransformation<Plan> {
public:
  InitFusion();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

InitFusion::InitFusion()
    : PlannedTransformation({
          .id = "init-fusion",
          .tier = Tier::Fusion,
          .summary = "Add what initializes a gemm's accumulator in its "
                     "epilogue instead",
          .description =
              "A gemm with beta != 0 adds its product to what its output "
              "already holds; the expansions of Gemm and Conv fill that output "
              "first with a map (the bias broadcast over rows or channels). "
              "This transformation removes the map: its tasklet becomes the "
              "first part of the gemm's epilogue, which adds beta times the "
              "value it computes to the product, and the gemm starts from zero "
              "(beta = 0). The output is then written once instead of being "
              "written, read and written again, and epilogue-fusion can go on "
              "to fuse what reads it. The map's iterations must line up with "
              "the gemm's output elements and what it reads must be reached at "
              "fixed strides per row and column. Within tolerance: the initial "
              "value is added after the product rather than before it.",
          // The initial value is added after the product instead of before it:
          // one rounding moves.
          .exactness = {false, 1e-5, 1e-6},
          .pattern =
              Pattern()
                  .node("init_exit", ir::NodeKind::MapExit)
                  .node("array", ir::NodeKind::Access, {}, accumulatedByGemm)
                  .edge("init_exit", "array"),
      }) {}

Planned<Plan> InitFusion::plan(const ir::Program &program, const Match &match,
                               const Params &params) const {
  Planned<Plan> out;
  out.verdict = planFusion(program, match, out.plan);
  return out;
}

ApplyResult InitFusion::rewrite(const ir::Program &program, const Match &match,
                                const Params &params, const Plan &plan) const {
  ApplyResult r{program, {}};
  ir::State &s = stateNamed(r.program, match.state);
  auto edge = [&](EdgeId id) -> ir::Edge & { return edgeWithId(s, id); };

  ir::Node &gemm = *s.findNode(plan.gemm.gemm);
  std::vector<std::string> names;
  ir::GemmCall call =
      composed(gemm, *s.findNode(plan.map.tasklet), plan, names);
  std::get<ir::PrimitiveData>(gemm.payload).attributes =
      withCall(gemm.primitive(), call);

  // Cin goes, with its path through the gemm's map.
  std::erase_if(gemm.inputs,
                [](const ir::Connector &c) { return c.name == "Cin"; });
  if (plan.gemm.entry != 0) {
    ir::Node &entry = *s.findNode(plan.gemm.entry);
    std::string via = ir::scopeSuffix(edge(plan.gemm.outer).dstConn);
    std::erase_if(entry.inputs, [&](const ir::Connector &c) {
      return c.name == ir::scopeIn(via);
    });
    std::erase_if(entry.outputs, [&](const ir::Connector &c) {
      return c.name == ir::scopeOut(via);
    });
  }
  s.edges.eraseIf([&](const ir::Edge &e) {
    return e.id == plan.gemm.inner || e.id == plan.gemm.outer;
  });

  for (std::size_t k = 0; k < plan.operands.size(); ++k) {
    const Operand &o = plan.operands[k];
    ir::Memlet outer = edge(o.outer).memlet; // a copy: edges grow below
    connectOperand(r.program, s, plan.gemm, names[k], o.dtype, o.access, outer,
                   {o.container, o.view.subset, std::nullopt});
  }

  for (NodeId id :
       {plan.array, plan.map.entry, plan.map.tasklet, plan.map.exit})
    removeNode(s, id, &r.idMap);
  removeUnused(r.program, &r.idMap);
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<InitFusion>()};

} // namespace weir::transforms
