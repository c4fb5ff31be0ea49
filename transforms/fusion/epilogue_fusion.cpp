/// \file
/// `epilogue-fusion`: the elementwise map that reads a gemm's output C
/// element by element (a bias add, an activation, a residual add, a
/// scale, or all of them after map- and tasklet-fusion) becomes the gemm's
/// epilogue (ir/primitives.h): the gemm writes the map's output directly,
/// and its raw product is never stored and loaded back.
///
/// Ids: the gemm keeps its id (and its map's ids); the fused map's nodes
/// and the intermediate access node disappear.

#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/gemm_alignment.h"
#include "transforms/map_scope.h"
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

bool writtenByGemm(const ir::Program &, const StateGraph &g,
                   const ir::Node &n) {
  return gemmBehind(g, n.id) != 0;
}

using map_scope::rootOf;

/// What check() establishes and apply() rewrites.
struct Plan {
  GemmSite gemm;
  ElementwiseMap map;
  NodeId array = 0;
  std::string x;                   ///< the gemm's output, read by the map
  std::vector<std::string> xConns; ///< tasklet connectors reading it
  std::vector<Operand> operands;
  std::string outConn; ///< the tasklet's output connector
  std::string y;       ///< what the map writes
  NodeId yAccess = 0;
  EdgeId yOuter = 0; ///< map exit -> y's access node
  OperandView yView;
};

CheckResult planFusion(const ir::Program &p, const Match &match, Plan &out) {
  const ir::State &s = stateNamed(p, match.state);
  std::shared_ptr<const StateGraph> shared = sharedStateGraph(s);
  const StateGraph &g = *shared;
  out.array = match.node("array");
  NodeId entry = match.node("consumer");
  auto fail = [&](std::string why) {
    return CheckResult::failure(std::move(why), {out.array, entry});
  };

  auto gemm = gemmWriting(p, g, out.array);
  if (auto *r = std::get_if<CheckResult>(&gemm))
    return *r;
  out.gemm = std::get<GemmSite>(gemm);
  const ir::Node &gemmNode = *g.node(out.gemm.gemm);
  std::string gemmName = ir::describe(gemmNode, "gemm");
  if (out.gemm.call.beta != 0)
    return fail(gemmName + " adds its product to what '" + out.gemm.container +
                "' holds (beta = " + std::to_string(out.gemm.call.beta) +
                "); fold that initialization in first (init-fusion)");

  out.x = g.node(out.array)->access().container;
  if (out.gemm.container != out.x)
    return fail(gemmName + " writes '" + out.gemm.container +
                "' inside its map but '" + out.x + "' outside it");
  if (auto why = notPlainTransient(p, out.x))
    return fail(*why);
  ContainerUses uses = containerUses(p, out.x);
  if (uses.accessNodes != 1 || uses.writes != 1 || uses.reads != 1)
    return fail("'" + out.x + "' has other readers or writers (" +
                std::to_string(uses.reads) + " reads, " +
                std::to_string(uses.writes) +
                " writes); only the map may "
                "read what the gemm writes");

  auto map = elementwiseMap(p, g, entry);
  if (auto *r = std::get_if<CheckResult>(&map))
    return *r;
  out.map = std::get<ElementwiseMap>(map);
  const ir::Node &t = *g.node(out.map.tasklet);

  // The gemm's output first: it fixes how iterations line up with C.
  std::optional<Alignment> alignment;
  std::vector<ir::Expr> xIndex;
  for (const ir::Edge *e : g.in(out.map.tasklet)) {
    if (e->memlet.container != out.x)
      continue;
    std::vector<ir::Expr> index = *pointIndex(e->memlet);
    if (!alignment) {
      auto a = align(p, out.gemm, out.map, out.x, index);
      if (auto *why = std::get_if<std::string>(&a))
        return fail(*why);
      alignment = std::get<Alignment>(a);
      xIndex = index;
    } else if (index != xIndex) {
      return fail("the map reads '" + out.x +
                  "' at two different elements in one iteration");
    }
    if (t.findInput(e->dstConn)->dtype != ir::DType::F32)
      return fail("tasklet connector '" + e->dstConn + "' reading '" + out.x +
                  "' is not f32");
    out.xConns.push_back(e->dstConn);
  }
  if (!alignment)
    return fail("the map does not read '" + out.x + "'");

  // The other arrays it reads become epilogue operands.
  auto ops = operands(p, g, out.map, *alignment, out.x);
  if (auto *why = std::get_if<std::string>(&ops))
    return fail(*why);
  out.operands = std::get<std::vector<Operand>>(ops);
  std::set<std::string> abRoots;
  for (const ir::Edge *e : g.in(out.gemm.gemm))
    if (!e->memlet.empty())
      abRoots.insert(rootOf(p, e->memlet.container));

  // Its one output becomes the gemm's C.
  StateGraph::Edges writes = g.out(out.map.tasklet);
  StateGraph::Edges stores = g.out(out.map.exit);
  if (writes.size() != 1 || stores.size() != 1)
    return fail("the map writes " + std::to_string(stores.size()) +
                " arrays; the gemm's epilogue writes one");
  out.outConn = writes[0]->srcConn;
  out.y = writes[0]->memlet.container;
  out.yAccess = stores[0]->dst;
  out.yOuter = stores[0]->id;
  const ir::Container &y = p.container(out.y);
  if (y.dtype != ir::DType::F32 ||
      t.findOutput(out.outConn)->dtype != ir::DType::F32)
    return fail("the map writes '" + out.y + "' as " +
                std::string(ir::dtypeName(y.dtype)) + "; a gemm writes f32");
  if (abRoots.count(rootOf(p, out.y)))
    return fail("the map writes '" + out.y +
                "', which the gemm reads: the gemm cannot write it");
  for (const Operand &o : out.operands)
    if (rootOf(p, o.container) == rootOf(p, out.y))
      return fail("the map reads and writes '" + out.y +
                  "'; the gemm would overwrite what it reads");
  if (containerUses(p, out.y).writes != 1 ||
      std::find(p.inputs.begin(), p.inputs.end(), out.y) != p.inputs.end())
    return fail("'" + out.y +
                "' is written elsewhere too; the gemm would write it earlier "
                "than the map did");
  std::vector<ir::Expr> yIndex = *pointIndex(writes[0]->memlet);
  if (!injective(p, out.map, out.y, yIndex))
    return fail("the map does not write a different element of '" + out.y +
                "' in every iteration");
  auto v = operandView(p, out.map, *alignment, out.y, yIndex);
  if (auto *why = std::get_if<std::string>(&v))
    return fail(*why);
  out.yView = std::get<OperandView>(v);
  if (out.gemm.n > 1 && out.yView.col != ir::Expr(1))
    return fail("the map writes a row of C to '" + out.y + "' " +
                out.yView.col.str() +
                " elements apart; a gemm writes its rows contiguously");
  if (out.gemm.m != ir::Expr(1) &&
      !(out.yView.row.asConstant().value_or(0) >= out.gemm.n))
    return fail("the map writes the rows of C to '" + out.y + "' " +
                out.yView.row.str() + " elements apart, fewer than the " +
                std::to_string(out.gemm.n) + " in a row");
  return CheckResult::success();
}

/// The gemm's epilogue followed by the map's tasklet (renamed to fit), and
/// the new operands' connector names in plan order.
ir::GemmCall composed(const ir::Node &gemm, const ir::Node &tasklet,
                      const Plan &plan,
                      std::vector<std::string> &operandNames) {
  ir::GemmCall call = plan.gemm.call;
  std::set<std::string> taken{"A", "B", "Cin", "C", "acc"};
  for (const ir::Connector &c : gemm.inputs)
    taken.insert(c.name);
  ir::tasklet::Code code;
  std::string input = "acc";
  if (!call.epilogue.empty()) {
    ir::tasklet::Code prior = ir::tasklet::parse(call.epilogue);
    for (const std::string &n : codeNames(prior))
      taken.insert(n);
    input = freshName(taken, "t");
    code = renamedCode(prior, {{"C", input}});
  }
  std::map<std::string, std::string> names;
  for (const std::string &c : plan.xConns)
    names[c] = input;
  for (const Operand &o : plan.operands) {
    names[o.conn] = freshName(taken, "e");
    operandNames.push_back(names[o.conn]);
  }
  names[plan.outConn] = "C";
  const ir::tasklet::Code &body = *tasklet.tasklet().code;
  for (const std::string &n : codeNames(body))
    if (!names.count(n))
      names[n] = freshName(taken, "t");
  for (ir::tasklet::Assignment &a : renamedCode(body, names).statements)
    code.statements.push_back(std::move(a));
  call.epilogue = ir::tasklet::print(code);
  for (std::size_t k = 0; k < plan.operands.size(); ++k)
    call.operands.push_back({operandNames[k], plan.operands[k].view.row,
                             plan.operands[k].view.col});
  call.ldc =
      plan.gemm.m == ir::Expr(1) ? ir::Expr(plan.gemm.n) : plan.yView.row;
  return call;
}

} // namespace

namespace {

class EpilogueFusion : public PlannedTransformation<Plan> {
public:
  EpilogueFusion();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

EpilogueFusion::EpilogueFusion()
    : PlannedTransformation({
          .id = "epilogue-fusion",
          .tier = Tier::Fusion,
          .summary = "Run the elementwise map that reads a gemm's output as "
                     "the gemm's epilogue",
          .description =
              "A map that reads a gemm's output C one element per iteration "
              "and writes one element of another array (a bias add, an "
              "activation, a residual add or a scale; a chain of them once "
              "map-fusion and tasklet-fusion have joined it) becomes the "
              "gemm's epilogue: the gemm applies the map's tasklet to each "
              "element of its product and writes the map's output directly, so "
              "the product is never stored and read back. The map's iterations "
              "must line up with C's elements (each batch parameter of the "
              "gemm's map walked once, rows and columns covered exactly once) "
              "and every other array it reads must be reached at a fixed "
              "stride per row and column of C. Applied to a gemm that already "
              "has an epilogue, the new one runs after it. Exact: the same "
              "float operations on the same values.",
          .pattern = Pattern()
                         .node("array", ir::NodeKind::Access, {}, writtenByGemm)
                         .node("consumer", ir::NodeKind::MapEntry)
                         .edge("array", "consumer"),
      }) {}

Planned<Plan> EpilogueFusion::plan(const ir::Program &program,
                                   const Match &match,
                                   const Params &params) const {
  Planned<Plan> out;
  out.verdict = planFusion(program, match, out.plan);
  return out;
}

ApplyResult EpilogueFusion::rewrite(const ir::Program &program,
                                    const Match &match, const Params &params,
                                    const Plan &plan) const {
  ApplyResult r{program, {}};
  ir::State &s = stateNamed(r.program, match.state);
  auto edge = [&](EdgeId id) -> ir::Edge & { return edgeWithId(s, id); };

  ir::Node &gemm = *s.findNode(plan.gemm.gemm);
  std::vector<std::string> names;
  ir::GemmCall call =
      composed(gemm, *s.findNode(plan.map.tasklet), plan, names);
  std::get<ir::PrimitiveData>(gemm.payload).attributes =
      withCall(gemm.primitive(), call);

  // The operands: into the gemm, through its map when it has one.
  for (std::size_t k = 0; k < plan.operands.size(); ++k) {
    const Operand &o = plan.operands[k];
    ir::Memlet outer = edge(o.outer).memlet; // a copy: edges grow below
    connectOperand(r.program, s, plan.gemm, names[k], o.dtype, o.access, outer,
                   {o.container, o.view.subset, std::nullopt});
  }

  // C goes to the map's output instead of the intermediate.
  ir::Memlet yOuter = edge(plan.yOuter).memlet;
  ir::Edge &inner = edge(plan.gemm.inner);
  inner.memlet = {plan.y, plan.yView.subset, std::nullopt};
  if (plan.gemm.entry == 0) {
    inner.dst = plan.yAccess;
  } else {
    ir::Node &exit = *s.findNode(plan.gemm.exit);
    std::string from = ir::scopeSuffix(inner.dstConn);
    std::string to = map_scope::freshPair(exit, plan.y);
    for (ir::Connector &c : exit.inputs)
      if (c.name == ir::scopeIn(from))
        c.name = ir::scopeIn(to);
    for (ir::Connector &c : exit.outputs)
      if (c.name == ir::scopeOut(from))
        c.name = ir::scopeOut(to);
    inner.dstConn = ir::scopeIn(to);
    ir::Edge &outer = edge(plan.gemm.outer);
    outer.srcConn = ir::scopeOut(to);
    outer.dst = plan.yAccess;
    outer.memlet = yOuter;
  }

  for (NodeId id :
       {plan.array, plan.map.entry, plan.map.tasklet, plan.map.exit})
    removeNode(s, id, &r.idMap);
  removeUnused(r.program, &r.idMap);
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<EpilogueFusion>()};

} // namespace weir::transforms
