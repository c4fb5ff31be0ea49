#include "ir/state_cost.h"

#include "ir/primitives.h"
#include "ir/tasklet.h"

namespace weir::ir {

StateCost::StateCost(const ContainerIndex &containers, const State &state)
    : containers_(containers), parents_(sharedScopeParents(state)),
      byId_(state), executions_(state, *parents_) {}

std::optional<StateCost::EdgePlace> StateCost::place(const Edge &e) const {
  const Node *a = byId_.find(e.src);
  const Node *b = byId_.find(e.dst);
  if (!a || !b || e.memlet.empty())
    return std::nullopt;
  NodeId scope = b->kind == NodeKind::MapExit    ? b->map().partner
                 : a->kind == NodeKind::MapEntry ? a->id
                                                 : parentOf(*parents_, b->id);
  return EdgePlace{scope, a, b,
                   a->kind == NodeKind::Access || b->kind == NodeKind::Access};
}

EdgeTraffic StateCost::traffic(const Edge &e, const EdgePlace &where,
                               AnalysisDetail detail) {
  EdgeTraffic out{e.id, Expr(0), Expr(0)};
  if (detail == AnalysisDetail::Totals && !where.touchesMemory)
    return out;
  out.elements = executions_.total(where.scope, e.memlet.volume());
  const Container *c = containers_.find(e.memlet.container);
  // Register storage lives in the loop body: no memory traffic.
  if (c && c->storage != Storage::Register && where.touchesMemory)
    out.bytes =
        out.elements * Expr(static_cast<std::int64_t>(dtypeSize(c->dtype)));
  return out;
}

Expr StateCost::flops(const Node &n) {
  switch (n.kind) {
  case NodeKind::Tasklet:
    if (n.tasklet().code)
      return taskletFlops(n, tasklet::countOps(*n.tasklet().code));
    break;
  case NodeKind::Library:
    if (n.library().flops)
      return executions_.total(parentOf(*parents_, n.id), *n.library().flops);
    break;
  case NodeKind::Primitive: {
    const Attributes &attrs = n.primitive().attributes;
    if (auto it = attrs.find("flops"); it != attrs.end()) {
      if (auto *v = std::get_if<std::int64_t>(&it->second))
        return executions_.total(parentOf(*parents_, n.id), Expr(*v));
    } else if (n.primitive().primitive == "gemm") {
      // 2·M·N·K multiply-adds (alpha and beta scaling are not counted, as
      // for the library node the gemm came from).
      GemmCall g = readGemm(n.primitive());
      Expr perCall = Expr(2) * g.m * g.n * g.k;
      if (!g.epilogue.empty())
        perCall = perCall +
                  Expr(tasklet::countOps(tasklet::parse(g.epilogue))) * g.m *
                      g.n;
      return executions_.total(parentOf(*parents_, n.id), perCall);
    }
    break;
  }
  default:
    break;
  }
  return Expr(0);
}

Expr StateCost::taskletFlops(const Node &n, std::int64_t perExecution) {
  return executions_.total(parentOf(*parents_, n.id), Expr(perExecution));
}

} // namespace weir::ir
