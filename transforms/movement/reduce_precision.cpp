/// \file
/// `reduce-precision`: a single-precision container — a transient or a
/// constant (weights) — is stored in bfloat16 while every tasklet that
/// reads or writes it still computes in f32: reads widen (`f32(x)`) and
/// writes round to nearest even (`bf16(...)`). Every byte moved to and
/// from the container halves; the result changes within bf16's 8-bit
/// significand, so the transformation declares a tolerance.
///
/// Only tasklets may touch the container (through any map scopes): a
/// library node, a primitive (gemm reads f32 operands), a copy between
/// containers, a write-conflict resolution (a sum accumulated in bf16
/// would lose far more than storage precision), a program argument, a view
/// or a view's target is refused with a reason. A container with several
/// access nodes is converted through the first one, so each container has
/// one match.
///
/// Ids: unchanged.

#include "ir/error.h"
#include "ir/float16.h"
#include "ir/tasklet.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <cstring>
#include <map>
#include <optional>
#include <set>

namespace weir::transforms {

namespace {

using ir::NodeId;
using ir::NodeKind;
namespace tl = ir::tasklet;

/// The tasklets to retype: node id -> its connectors bound to the
/// container (inputs and outputs).
struct Plan {
  std::string container;
  std::map<NodeId, std::pair<std::set<std::string>, std::set<std::string>>>
      tasklets; ///< id -> (input connectors, output connectors)
  /// Map entries and exits the container passes: their connectors on its
  /// path are retyped too, so the printed program says what moves.
  std::map<NodeId, std::pair<std::set<std::string>, std::set<std::string>>>
      scopes;
};

/// The state and id of the first access node of `name`, in state order.
std::optional<std::pair<const ir::State *, NodeId>>
firstAccessNode(const ir::Program &p, std::string_view name) {
  for (const ir::State &s : p.states)
    for (const ir::Node &n : s.nodes)
      if (n.kind == NodeKind::Access && n.access().container == name)
        return std::pair{&s, n.id};
  return std::nullopt;
}

CheckResult planReduce(const ir::Program &p, const Match &match, Plan &out) {
  const ir::State &state = stateNamed(p, match.state);
  NodeId data = match.node("data");
  const ir::Node *node = state.findNode(data);
  out.container = node->access().container;
  const std::string &name = out.container;
  auto fail = [&](std::string why, std::vector<NodeId> nodes = {}) {
    nodes.insert(nodes.begin(), data);
    return CheckResult::failure("'" + name + "': " + std::move(why),
                                std::move(nodes));
  };

  // One match per container: its first access node.
  if (auto first = firstAccessNode(p, name);
      first && (first->first != &state || first->second != data))
    return fail("converted through its first access node (" +
                    first->first->name + ": %" + std::to_string(first->second) +
                    ")",
                {first->second});

  const ir::Container &c = p.container(name);
  if (c.dtype != ir::DType::F32)
    return fail("is " + std::string(ir::dtypeName(c.dtype)) +
                "; only f32 storage is reduced");
  if (isArgument(p, name))
    return fail("is a program argument; its type is part of the interface");
  if (c.isView())
    return fail("is a view of '" + c.viewOf + "'");
  for (const auto &[other, oc] : p.containers)
    if (oc.viewOf == name)
      return fail("is viewed as '" + other + "', which must keep its type");

  for (const ir::State &s : p.states)
    for (const ir::Edge &e : s.edges) {
      if (e.memlet.container != name)
        continue;
      if (e.memlet.wcr)
        return fail("edge " + std::to_string(e.id) +
                        " accumulates into it with '" +
                        std::string(ir::wcrName(*e.memlet.wcr)) +
                        "'; a bf16 accumulator loses more than storage "
                        "precision",
                    {e.src, e.dst});
      const ir::Node &src = *s.findNode(e.src), &dst = *s.findNode(e.dst);
      if (src.kind == NodeKind::Access && dst.kind == NodeKind::Access)
        return fail("is copied between containers (edge " +
                        std::to_string(e.id) + ")",
                    {e.src, e.dst});
      for (const ir::Node *end : {&src, &dst}) {
        bool reads = end == &dst;
        const std::string &conn = reads ? e.dstConn : e.srcConn;
        switch (end->kind) {
        case NodeKind::Access:
          break;
        case NodeKind::MapEntry:
        case NodeKind::MapExit:
          (reads ? out.scopes[end->id].first : out.scopes[end->id].second)
              .insert(conn);
          break;
        case NodeKind::Tasklet:
          (reads ? out.tasklets[end->id].first : out.tasklets[end->id].second)
              .insert(conn);
          break;
        case NodeKind::Library:
        case NodeKind::Primitive:
          return fail(std::string(reads ? "read" : "written") + " by " +
                          std::string(ir::nodeKindName(end->kind)) + " '" +
                          end->label + "', which computes on f32 storage",
                      {end->id});
        }
      }
    }
  if (out.tasklets.empty())
    return fail("no tasklet reads or writes it");
  return CheckResult::success();
}

/// `e` with every read of a connector in `widen` replaced by f32(read).
tl::ExprPtr widenReads(const tl::ExprPtr &e,
                       const std::set<std::string> &widen) {
  if (e->kind == tl::ExprKind::Var) {
    if (!widen.count(e->name))
      return e;
    auto cast = std::make_shared<tl::Expr>();
    cast->kind = tl::ExprKind::Cast;
    cast->castTo = ir::DType::F32;
    cast->operands = {e};
    return cast;
  }
  bool changed = false;
  std::vector<tl::ExprPtr> operands;
  operands.reserve(e->operands.size());
  for (const tl::ExprPtr &o : e->operands) {
    operands.push_back(widenReads(o, widen));
    changed |= operands.back() != o;
  }
  if (!changed)
    return e;
  auto copy = std::make_shared<tl::Expr>(*e);
  copy->operands = std::move(operands);
  return copy;
}

void retypeConnectors(ir::Node &n, const std::set<std::string> &inputs,
                      const std::set<std::string> &outputs) {
  for (ir::Connector &c : n.inputs)
    if (inputs.count(c.name))
      c.dtype = ir::DType::BF16;
  for (ir::Connector &c : n.outputs)
    if (outputs.count(c.name))
      c.dtype = ir::DType::BF16;
}

void retype(ir::Node &tasklet, const std::set<std::string> &inputs,
            const std::set<std::string> &outputs) {
  tl::Code code = *tasklet.tasklet().code;
  for (tl::Assignment &a : code.statements) {
    a.value = widenReads(a.value, inputs);
    if (outputs.count(a.target)) {
      auto cast = std::make_shared<tl::Expr>();
      cast->kind = tl::ExprKind::Cast;
      cast->castTo = ir::DType::BF16;
      cast->operands = {a.value};
      a.value = cast;
    }
  }
  retypeConnectors(tasklet, inputs, outputs);
  tasklet.payload = ir::TaskletData{
      tl::print(code), std::make_shared<const tl::Code>(std::move(code))};
}

/// f32 values packed row-major, rounded to bf16 (nearest even).
ir::Blob toBfloat16(const ir::Blob &f32) {
  std::size_t count = f32->size() / sizeof(float);
  auto out = std::make_shared<std::vector<std::byte>>(count * 2);
  for (std::size_t i = 0; i < count; ++i) {
    float v;
    std::memcpy(&v, f32->data() + i * sizeof(float), sizeof v);
    std::uint16_t bits = ir::floatToBfloat16(v);
    std::memcpy(out->data() + i * 2, &bits, 2);
  }
  return out;
}

} // namespace

namespace {

class ReducePrecision : public PlannedTransformation<Plan> {
public:
  ReducePrecision();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

ReducePrecision::ReducePrecision()
    : PlannedTransformation({
          .id = "reduce-precision",
          .tier = Tier::Movement,
          .summary =
              "Store an f32 transient or constant in bf16, computing in f32",
          .description =
              "An f32 transient or constant whose every reader and writer is a "
              "tasklet (through any map scopes) is stored in bfloat16: the "
              "tasklets read it through f32(...) and write bf16(...) of what "
              "they computed, so they still compute in f32 while every element "
              "moved to and from it takes 2 bytes instead of 4; a constant's "
              "data is rounded to nearest even once. Refused for program "
              "arguments, views and their targets, other dtypes, and when a "
              "library node, a primitive (gemm), a copy between containers or "
              "a write-conflict resolution touches it. Not exact: declared "
              "within rtol 5e-2 / atol 1e-2.",
          // bf16 keeps 8 significant bits: one rounding is within 2^-9
          // relative. Roundings compound through a network and cancellation
          // amplifies them in small outputs: with all 57 eligible activations
          // and weights of the bundled transformer in bf16 the worst output
          // error is 5.5e-3 absolute, which this bound covers.
          .exactness = {false, 5e-2, 1e-2},
          .pattern = Pattern().node("data", NodeKind::Access),
      }) {}

Planned<Plan> ReducePrecision::plan(const ir::Program &program,
                                    const Match &match,
                                    const Params &params) const {
  Planned<Plan> out;
  out.verdict = planReduce(program, match, out.plan);
  return out;
}

ApplyResult ReducePrecision::rewrite(const ir::Program &program,
                                     const Match &match, const Params &params,
                                     const Plan &plan) const {
  ApplyResult r{program, {}};
  ir::Container &c = r.program.containers.at(plan.container);
  c.dtype = ir::DType::BF16;
  if (c.isConstant())
    c.constant = toBfloat16(c.constant);
  for (ir::State &s : r.program.states)
    s.nodes.editWhere(
        [&](const ir::Node &n) {
          return plan.tasklets.count(n.id) || plan.scopes.count(n.id);
        },
        [&](ir::Node &n) {
          if (auto it = plan.tasklets.find(n.id); it != plan.tasklets.end())
            retype(n, it->second.first, it->second.second);
          else if (auto sc = plan.scopes.find(n.id); sc != plan.scopes.end())
            retypeConnectors(n, sc->second.first, sc->second.second);
        });
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<ReducePrecision>()};

} // namespace weir::transforms
