#include "ir/analysis.h"

#include "ir/container_index.h"
#include "ir/error.h"
#include "ir/node_index.h"
#include "ir/primitives.h"
#include "ir/tasklet.h"
#include "ir/scope.h"

#include <map>

namespace weir::ir {
namespace {

/// A running sum that keeps its constant part as an integer: most terms of
/// an analysis are constants, and adding them as Exprs made a node each.
class Total {
public:
  void add(const Expr &e) {
    std::int64_t next = 0;
    if (std::optional<std::int64_t> v = e.asConstant();
        v && !__builtin_add_overflow(constant_, *v, &next)) {
      constant_ = next;
      return;
    }
    symbolic_ = symbolic_ ? *symbolic_ + e : e;
  }
  Expr value() const {
    return symbolic_ ? *symbolic_ + Expr(constant_) : Expr(constant_);
  }

private:
  std::int64_t constant_ = 0;
  std::optional<Expr> symbolic_;
};

StateAnalysis analyzeState(const ContainerIndex &containers, const State &s,
                           AnalysisDetail detail) {
  const bool full = detail == AnalysisDetail::Full;
  StateAnalysis out;
  out.state = s.name;
  // Summed once at the end (see ir::sum).
  std::vector<Expr> bytesTerms, flopsTerms;
  std::shared_ptr<const ScopeParents> shared = sharedScopeParents(s);
  const ScopeParents &parents = *shared;
  NodeIndex byId(s);
  ScopeExecutions executions(s, parents);
  // By position in s.nodes; nodes that share an id share the first's.
  std::vector<Total> bytesIn(s.nodes.size()), bytesOut(s.nodes.size());

  for (const Edge &e : s.edges) {
    const Node *src = byId.find(e.src);
    const Node *dst = byId.find(e.dst);
    if (!src || !dst || e.memlet.empty())
      continue;
    const Node &a = *src;
    const Node &b = *dst;
    NodeId scope = b.kind == NodeKind::MapExit    ? b.map().partner
                   : a.kind == NodeKind::MapEntry ? a.id
                                                  : parentOf(parents, b.id);
    bool touchesMemory =
        a.kind == NodeKind::Access || b.kind == NodeKind::Access;
    if (!full && !touchesMemory)
      continue;
    Expr elements = executions.total(scope, e.memlet.volume());
    Expr bytes(0);
    const Container *c = containers.find(e.memlet.container);
    // Register storage lives in the loop body: no memory traffic.
    if (c && c->storage != Storage::Register && touchesMemory) {
      bytes = elements * Expr(static_cast<std::int64_t>(dtypeSize(c->dtype)));
      bytesTerms.push_back(bytes);
      if (full && a.kind != NodeKind::Access)
        bytesOut[byId.position(a.id)].add(bytes);
      if (full && b.kind != NodeKind::Access)
        bytesIn[byId.position(b.id)].add(bytes);
    }
    if (full)
      out.edges.push_back(EdgeTraffic{e.id, elements, bytes});
  }

  for (const Node &n : s.nodes) {
    Expr flops(0);
    switch (n.kind) {
    case NodeKind::Tasklet:
      if (n.tasklet().code)
        flops = executions.total(parentOf(parents, n.id),
                                 Expr(tasklet::countOps(*n.tasklet().code)));
      break;
    case NodeKind::Library:
      if (n.library().flops)
        flops = executions.total(parentOf(parents, n.id), *n.library().flops);
      break;
    case NodeKind::Primitive: {
      const Attributes &attrs = n.primitive().attributes;
      if (auto it = attrs.find("flops"); it != attrs.end()) {
        if (auto *v = std::get_if<std::int64_t>(&it->second))
          flops = executions.total(parentOf(parents, n.id), Expr(*v));
      } else if (n.primitive().primitive == "gemm") {
        // 2·M·N·K multiply-adds (alpha and beta scaling are not counted,
        // as for the library node the gemm came from).
        GemmCall g = readGemm(n.primitive());
        Expr perCall = Expr(2) * g.m * g.n * g.k;
        if (!g.epilogue.empty())
          perCall = perCall + Expr(tasklet::countOps(tasklet::parse(g.epilogue))) *
                                  g.m * g.n;
        flops = executions.total(parentOf(parents, n.id), perCall);
      }
      break;
    }
    default:
      break;
    }
    flopsTerms.push_back(flops);
    if (!full)
      continue;
    std::size_t at = byId.position(n.id);
    out.nodes.push_back(NodeCost{n.id, std::move(flops), bytesIn[at].value(),
                                 bytesOut[at].value()});
  }
  out.bytesMoved = sum(bytesTerms);
  out.flops = sum(flopsTerms);
  return out;
}

} // namespace

std::optional<double>
ProgramAnalysis::arithmeticIntensity(const Bindings &b) const {
  try {
    std::int64_t bytes = bytesMoved.evaluate(b);
    if (bytes == 0)
      return std::nullopt;
    return static_cast<double>(flops.evaluate(b)) / static_cast<double>(bytes);
  } catch (const Error &) {
    return std::nullopt;
  }
}

ProgramAnalysis analyze(const Program &program, AnalysisDetail detail) {
  ProgramAnalysis out;
  std::vector<Expr> bytesTerms, flopsTerms;
  ContainerIndex containers(program);
  for (const State &s : program.states) {
    out.states.push_back(analyzeState(containers, s, detail));
    bytesTerms.push_back(out.states.back().bytesMoved);
    flopsTerms.push_back(out.states.back().flops);
  }
  out.bytesMoved = sum(bytesTerms);
  out.flops = sum(flopsTerms);
  return out;
}

} // namespace weir::ir
