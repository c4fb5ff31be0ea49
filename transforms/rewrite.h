#pragma once
/// \file
/// Small graph edits the transformations share: find a state by name,
/// remove nodes with their edges, rename a container everywhere, drop
/// access nodes and containers nothing uses any more. Each keeps node ids
/// of what it does not remove.

#include "ir/program.h"
#include "transforms/transformation.h"

#include <optional>
#include <string>
#include <string_view>

namespace weir::transforms {

/// The state a match names; throws weir::Error when there is none.
ir::State &stateNamed(ir::Program &program, std::string_view name);
const ir::State &stateNamed(const ir::Program &program, std::string_view name);

/// The edge with id `id`; throws weir::Error when the state has none (a
/// transformation lost track of it).
ir::Edge &edgeWithId(ir::State &state, ir::EdgeId id);

/// Removes the node and every edge touching it; erases it from `idMap`.
void removeNode(ir::State &state, ir::NodeId id, IdMap *idMap = nullptr);

/// Renames container `from` to `to` in every access node and memlet of
/// every state (labels of access nodes named after it too). Does not touch
/// the container table.
void renameContainerUses(ir::Program &program, const std::string &from,
                         const std::string &to);

/// Whether any node or memlet of any state names `container`.
bool containerUsed(const ir::Program &program, std::string_view container);
/// Whether `container` is one of the program's inputs or outputs.
bool isArgument(const ir::Program &program, std::string_view container);
/// Why `container` is not a plain transient a transformation may remove or
/// rename (an argument, a constant, a view, or the target of a view), or
/// nullopt when it is one.
std::optional<std::string> notPlainTransient(const ir::Program &program,
                                             const std::string &container);

/// Removes access nodes without edges, then transient containers (constant
/// or not) that nothing names any more. Returns the containers removed.
std::vector<std::string> removeUnused(ir::Program &program,
                                      IdMap *idMap = nullptr);

/// Number of access nodes of `container` in every state, and the edges
/// into and out of them.
struct ContainerUses {
  int accessNodes = 0;
  int writes = 0; ///< edges into its access nodes
  int reads = 0;  ///< edges out of its access nodes
};
ContainerUses containerUses(const ir::Program &program,
                            std::string_view container);

/// The container feeding input connector `conn` of node `id` (through an
/// access node), or "" when the connector has no edge.
std::string inputContainer(const ir::State &state, ir::NodeId id,
                           std::string_view conn);
/// The container output connector `conn` writes, or "".
std::string outputContainer(const ir::State &state, ir::NodeId id,
                            std::string_view conn);

/// A container name not yet in the program: `base`, `base_1`, `base_2`, ...
std::string freshContainerName(const ir::Program &program,
                               const std::string &base);

} // namespace weir::transforms
