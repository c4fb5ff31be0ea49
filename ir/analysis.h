#pragma once
/// \file
/// Static analyses a viewer overlays and benchmarks report: data moved per
/// memlet, FLOPs per node, totals per state and program, arithmetic
/// intensity. Results are symbolic when shapes are (batch size N, ...).
///
/// Counting rules:
/// - An edge moves `volume × executions` elements, where executions is the
///   product of the range sizes of the maps enclosing it.
/// - Bytes moved are counted on edges with an Access node at one end — the
///   traffic to and from containers. Edges between computing nodes inside a
///   scope pass values in registers and are reported with their elements but
///   add no bytes.
/// - A tasklet performs `countOps(code) × executions` operations; a library
///   node its `flops` (set by the importer from the operator's formula, 0
///   when unknown); a primitive its integer attribute "flops" if present,
///   a "gemm" 2·M·N·K plus its epilogue's operations per element of C.

#include "ir/expr.h"
#include "ir/program.h"

#include <optional>
#include <string>
#include <vector>

namespace weir::ir {

struct EdgeTraffic {
  EdgeId edge = 0;
  Expr elements; ///< over all executions
  Expr bytes;    ///< 0 for edges between computing nodes
};

struct NodeCost {
  NodeId node = 0;
  Expr flops;
  Expr bytesIn;  ///< bytes on the node's incoming access edges
  Expr bytesOut; ///< bytes on the node's outgoing access edges
};

struct StateAnalysis {
  std::string state;
  std::vector<EdgeTraffic> edges;
  std::vector<NodeCost> nodes;
  Expr bytesMoved;
  Expr flops;
};

struct ProgramAnalysis {
  std::vector<StateAnalysis> states;
  Expr bytesMoved;
  Expr flops;

  /// FLOPs per byte moved under the bindings (nullopt when nothing moves or
  /// a symbol is unbound).
  std::optional<double> arithmeticIntensity(const Bindings &b = {}) const;
};

/// How much analyze() records: every edge and node (Full), or only the
/// states' and the program's totals (Totals: `edges` and `nodes` stay empty;
/// the per-step report of `weir optimize` needs no more).
enum class AnalysisDetail { Full, Totals };

ProgramAnalysis analyze(const Program &program,
                        AnalysisDetail detail = AnalysisDetail::Full);

} // namespace weir::ir
