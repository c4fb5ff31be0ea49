#include "ir/analysis.h"

#include "ir/container_index.h"
#include "ir/error.h"
#include "ir/state_cost.h"

#include <map>

namespace weir::ir {
namespace {

StateAnalysis analyzeState(const ContainerIndex &containers, const State &s,
                           AnalysisDetail detail) {
  const bool full = detail == AnalysisDetail::Full;
  StateAnalysis out;
  out.state = s.name;
  // Summed once at the end (see ir::sum).
  std::vector<Expr> bytesTerms, flopsTerms;
  StateCost cost(containers, s);
  const NodeIndex &byId = cost.nodes();
  // By position in s.nodes; nodes that share an id share the first's.
  std::vector<ExprTotal> bytesIn(s.nodes.size()), bytesOut(s.nodes.size());

  for (const Edge &e : s.edges) {
    std::optional<StateCost::EdgePlace> where = cost.place(e);
    if (!where || (!full && !where->touchesMemory))
      continue;
    EdgeTraffic t = cost.traffic(e, *where, detail);
    if (where->touchesMemory) {
      bytesTerms.push_back(t.bytes);
      if (full && where->src->kind != NodeKind::Access)
        bytesOut[byId.position(where->src->id)].add(t.bytes);
      if (full && where->dst->kind != NodeKind::Access)
        bytesIn[byId.position(where->dst->id)].add(t.bytes);
    }
    if (full)
      out.edges.push_back(std::move(t));
  }

  for (const Node &n : s.nodes) {
    Expr flops = cost.flops(n);
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
