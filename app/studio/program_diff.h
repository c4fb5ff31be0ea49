#pragma once
/// \file
/// What a step changed, node by node, from the step's id map
/// (transforms::IdMap, old id -> new id): the nodes it added, those it kept
/// but changed (what they show, or the memlets on their edges), and those
/// it removed. The preview of a transformation highlights the first two
/// and lists the third.

#include "ir/program.h"
#include "transforms/transformation.h"

#include <string>
#include <vector>

namespace weir::studio {

struct ProgramDiff {
  std::vector<ir::NodeId> added;   ///< in `after`, no old node maps to them
  std::vector<ir::NodeId> changed; ///< in `after`, mapped, but different
  /// Nodes of `before` that map to nothing: "label (kind)".
  std::vector<std::string> removed;
};

ProgramDiff diffPrograms(const ir::Program &before, const ir::Program &after,
                         const transforms::IdMap &idMap);

} // namespace weir::studio
