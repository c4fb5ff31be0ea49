#pragma once
/// \file
/// The counting rules of ir/analysis.h applied to one state element by
/// element: what an edge moves and what a node computes. analyze() adds up
/// every element of a program; IncrementalTotals (incremental_totals.h)
/// counts again only the elements a step changed.

#include "ir/analysis.h"
#include "ir/container_index.h"
#include "ir/node_index.h"
#include "ir/scope.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace weir::ir {

/// A running sum that keeps its constant part as an integer: most terms of
/// an analysis are constants, and adding them as Exprs made a node each.
class ExprTotal {
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

/// One state's elements, counted one at a time.
class StateCost {
public:
  /// `containers` and `state` must outlive this object unchanged.
  StateCost(const ContainerIndex &containers, const State &state);

  const NodeIndex &nodes() const { return byId_; }
  const ScopeParents &parents() const { return *parents_; }

  /// The scope whose executions an edge's volume is multiplied by (0: the
  /// top level): the map it enters or leaves, else its destination's; and
  /// its endpoints. nullopt for an edge that counts nothing (an endpoint
  /// missing, or an empty memlet).
  struct EdgePlace {
    NodeId scope = 0;
    const Node *src = nullptr, *dst = nullptr;
    bool touchesMemory = false; ///< an Access node at one end
  };
  std::optional<EdgePlace> place(const Edge &e) const;

  /// What edge `e` at `where` moves. Under AnalysisDetail::Totals the
  /// elements of an edge that touches no memory are not computed (0).
  EdgeTraffic traffic(const Edge &e, const EdgePlace &where,
                      AnalysisDetail detail);
  /// What node `n` computes over all its executions.
  Expr flops(const Node &n);
  /// flops() of a tasklet whose code performs `perExecution` operations
  /// (tasklet::countOps, known from an earlier count).
  Expr taskletFlops(const Node &n, std::int64_t perExecution);

private:
  const ContainerIndex &containers_;
  std::shared_ptr<const ScopeParents> parents_;
  NodeIndex byId_;
  ScopeExecutions executions_;
};

} // namespace weir::ir
