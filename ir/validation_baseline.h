#pragma once
/// \file
/// What validating a step's result may take from the step's input
/// (validate.cpp's, not a public interface).
///
/// A recipe validates every version it makes, and a step changes a few
/// nodes of thousands: re-proving every memlet in bounds and type-checking
/// every tasklet was a third of DenseNet-121's auto recipe. When the input
/// validated without errors, a check that can only find errors need not be
/// repeated for a node or edge whose every input is the input's: the same
/// id, the same connectors, the same (shared) tasklet code, the same memlet
/// into a container of the same shape, under the same bounds of the map
/// parameters it names. Everything else is checked as before, so the
/// diagnostics are exactly validate(program)'s. A node or edge the step
/// did not touch is still shared with the input (ir/cow_list.h), so the
/// comparison is one of addresses.

#include "ir/container_index.h"
#include "ir/interval.h"
#include "ir/node_index.h"
#include "ir/program.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace weir::ir {

/// The bounds the validator gives map parameters in `s`: each parameter's
/// range, or none for a name two maps bind with different ranges (without
/// scopes, an edge's parameter could be either).
IntervalEnv mapParamBounds(const State &s);

/// Per container of `index` (a program's, by ordinal): whether the base (a
/// step's input, which validated without errors) has a container of the
/// same name, dtype and shape. Both maps are walked once, in name order. A
/// container whose key is not its name (an error of its own) counts as
/// changed, so every check that reads it runs.
std::vector<char> sameContainers(const ContainerIndex &index,
                                 const Program &base);

/// One state against the base's state of the same name.
class StateBaseline {
public:
  /// `base` null: a state the base does not have, where nothing is
  /// skipped. `nodes` indexes `state`; `env` is mapParamBounds(state).
  StateBaseline(const State &state, const NodeIndex &nodes, const State *base,
                const IntervalEnv &env);

  /// Whether node `n` is the base's own record (shared, so unchanged): what
  /// the validator checks of a node alone (its payload, connectors, map
  /// ranges, subgraphs, gemm contract) finds nothing.
  bool sameNode(const Node &n) const;
  /// Whether tasklet `n` is the base's: same id, connectors and code, so
  /// its type check finds nothing.
  bool sameTasklet(const Node &n) const;
  /// Whether edge `e` and its two ends are the base's (same endpoints,
  /// connectors, container and nodes' connectors), so checking its
  /// endpoints finds nothing. `containerSame`: sameContainers' flag of
  /// its container (true for an empty memlet).
  bool sameEndpoints(const Edge &e, bool containerSame);
  /// Whether the node at `position` is the base's record with exactly the
  /// base's edges at both ends (none added, removed or replaced), so that
  /// counting the edges on its connectors finds nothing.
  bool sameConnections(std::size_t position) const {
    return base_ && sameConnections_[position];
  }
  /// Whether edge `e`'s memlet is the base's, into a container of the same
  /// shape, under the same bounds of every symbol it names, so proving it
  /// in bounds finds nothing.
  bool sameBounds(const Edge &e, const Container &c, bool containerSame) const;

private:
  const Edge *baseEdge(const Edge &e) const;
  /// Whether the node at `position` in the state has the base's kind and
  /// connectors (memoized per position).
  bool sameConnectors(std::size_t position);

  const State &state_;
  const NodeIndex &nodes_;
  const State *base_;
  std::shared_ptr<const NodeIndex> baseNodes_;
  std::shared_ptr<const EdgeIndex> baseEdges_;
  /// Parameters whose bounds differ from the base's.
  std::set<std::string, std::less<>> changedParams_;
  std::vector<signed char> sameConnectors_; ///< -1 unknown, 0, 1
  std::vector<char> sameConnections_;      ///< by position
};

} // namespace weir::ir
