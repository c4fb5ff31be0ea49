#pragma once
/// \file
/// What the graph view shows of a state: every node and edge, except that
/// a collapsed map scope is drawn as one box standing for its entry, its
/// exit and everything between (its label gives the map's parameters and
/// ranges and how many nodes are inside). Edges inside a collapsed scope
/// are not drawn; edges crossing its border end on the box. Only the view
/// collapses: the program is untouched, and the box keeps the entry's id.
///
/// An operator group (the nodes one ONNX operator expanded into, found by
/// their labels: operatorGroups) collapses the same way into one box that
/// keeps the id of the group's first node.

#include "app/studio/glyph.h"
#include "app/studio/graph_layout.h"
#include "ir/program.h"

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace weir::studio {

struct SceneGraph {
  struct Node {
    ir::NodeId id = 0;
    Glyph glyph;
    std::size_t inside = 0; ///< a collapsed scope or group: the nodes it hides
    std::string group;      ///< a collapsed operator group: its name
  };
  struct Edge {
    std::size_t index = 0;        ///< into State::edges
    std::size_t src = 0, dst = 0; ///< into nodes, as drawn
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  /// Each hidden node's box (the entry of its outermost collapsed scope).
  std::unordered_map<ir::NodeId, ir::NodeId> hiddenIn;
  /// Each node of an operator group (collapsed or not): the group's name.
  std::unordered_map<ir::NodeId, std::string> groupOf;

  /// The boxes and edges for Graphviz.
  LayoutGraph layoutGraph() const;
};

/// The nodes one ONNX operator expanded into: the top-level non-access
/// nodes labelled `name + "." + suffix` (at least two of them), everything
/// inside their map scopes, and the transient access nodes whose every
/// producer and consumer is among those (the group's own intermediates).
struct OperatorGroup {
  std::string name;
  std::vector<ir::NodeId> nodes; ///< in state order; the box keeps nodes[0]
};

/// The operator groups of `state`, ordered by their first node.
std::vector<OperatorGroup> operatorGroups(const ir::Program &program,
                                          const ir::State &state);

/// `state` with the map scopes whose entries are in `collapsed` and the
/// operator groups named in `collapsedGroups` drawn as boxes (ids that are
/// no map entry of the state and names that are no group are ignored; a
/// collapsed scope inside another collapsed scope or group is hidden with
/// it).
SceneGraph sceneGraph(const ir::Program &program, const ir::State &state,
                      const std::set<ir::NodeId> &collapsed,
                      const std::set<std::string> &collapsedGroups = {});

/// The box a collapsed scope is drawn as.
Glyph collapsedScopeGlyph(const ir::Node &entry, std::size_t inside);
/// The box a collapsed operator group of `size` nodes is drawn as.
Glyph collapsedGroupGlyph(const std::string &name, std::size_t size);

} // namespace weir::studio
