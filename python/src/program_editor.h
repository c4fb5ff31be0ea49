#pragma once
/// \file
/// ProgramEditor: the graph-editing API a Python plugin's apply() receives
/// (`weir.Editor`). It edits its own copy of the program — add and remove
/// nodes, edges and containers, replace a subgraph by a node that stands
/// for it — and keeps the old→new id map a transformation returns. The
/// result is validated by the framework (transforms::applyChecked) before it
/// reaches a workspace, so an editor never needs to be careful for the
/// user's sake: a broken edit is an error, not a broken program.

#include "ir/program.h"
#include "transforms/transformation.h"

#include <optional>
#include <string>
#include <vector>

namespace weir::python {

class ProgramEditor {
public:
  explicit ProgramEditor(const ir::Program &program);

  const ir::Program &program() const;
  ir::State &state(const std::string &name);

  /// Adds a container; throws when the name is taken (freshName() gives a
  /// free one). Shapes are expressions ("N", 64).
  void addContainer(const std::string &name, ir::DType dtype,
                    std::vector<ir::Expr> shape, bool transient);
  std::string freshName(const std::string &base) const;

  ir::NodeId addAccess(const std::string &state, const std::string &container);
  ir::NodeId addTasklet(const std::string &state, const std::string &label,
                        std::vector<ir::Connector> inputs,
                        std::vector<ir::Connector> outputs,
                        const std::string &code);
  ir::NodeId addLibrary(const std::string &state, const std::string &op,
                        const std::string &label,
                        std::vector<ir::Connector> inputs,
                        std::vector<ir::Connector> outputs,
                        ir::Attributes attributes, int opset,
                        const std::string &domain);
  std::pair<ir::NodeId, ir::NodeId>
  addMap(const std::string &state, const std::string &label,
         std::vector<std::string> params, std::vector<ir::Range> ranges,
         ir::Schedule schedule);
  /// `memlet` is "A[i, 0:64]", "A" (the whole container) or "" (an
  /// ordering edge).
  ir::EdgeId addEdge(const std::string &state, ir::NodeId src,
                     const std::string &srcConn, ir::NodeId dst,
                     const std::string &dstConn, const std::string &memlet,
                     std::optional<ir::Wcr> wcr);

  /// Removes the node and its edges; the id map forgets it.
  void removeNode(const std::string &state, ir::NodeId id);
  void removeEdge(const std::string &state, ir::EdgeId id);
  /// Removes `old` nodes (and their edges) and records that `replacement`
  /// stands for each of them, so references to them (a selection, later
  /// steps of a recipe) follow to it.
  void replace(const std::string &state, const std::vector<ir::NodeId> &old,
               ir::NodeId replacement);

  void setLabel(const std::string &state, ir::NodeId id, std::string label);
  void setAttribute(const std::string &state, ir::NodeId id,
                    const std::string &name, ir::AttributeValue value);
  /// Changes a map's parameters, ranges or schedule on both its entry and
  /// exit (`entry` may name either).
  void setMap(const std::string &state, ir::NodeId entry,
              std::optional<std::vector<std::string>> params,
              std::optional<std::vector<ir::Range>> ranges,
              std::optional<ir::Schedule> schedule);
  /// Re-estimates a library node's FLOPs from the containers now connected
  /// to it (after an edit changed its operands).
  void updateFlops(const std::string &state, ir::NodeId id);
  /// Removes access nodes without edges and transients nothing names.
  std::vector<std::string> removeUnused();

  /// The edited program with its id map; library nodes added without a FLOP
  /// count get the catalog's estimate from their connected containers.
  /// After it, every call throws (a plugin that kept its editor past
  /// apply() is told so instead of editing nothing).
  transforms::ApplyResult finish();

private:
  ir::Node &node(const std::string &state, ir::NodeId id);
  /// Throws once finish() ran.
  void live() const;

  ir::Program program_;
  transforms::IdMap idMap_;
  ir::NodeId firstNewId_; ///< ids from here on are the editor's
  bool finished_ = false;
};

} // namespace weir::python
