#pragma once
/// \file
/// What the graph view shows of a state: every node and edge, except that
/// a collapsed map scope is drawn as one box standing for its entry, its
/// exit and everything between (its label gives the map's parameters and
/// ranges and how many nodes are inside). Edges inside a collapsed scope
/// are not drawn; edges crossing its border end on the box. Only the view
/// collapses: the program is untouched, and the box keeps the entry's id.

#include "app/studio/glyph.h"
#include "app/studio/graph_layout.h"
#include "ir/program.h"

#include <set>
#include <unordered_map>
#include <vector>

namespace weir::studio {

struct SceneGraph {
  struct Node {
    ir::NodeId id = 0;
    Glyph glyph;
    std::size_t inside = 0; ///< a collapsed scope: the nodes it hides
  };
  struct Edge {
    std::size_t index = 0;        ///< into State::edges
    std::size_t src = 0, dst = 0; ///< into nodes, as drawn
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  /// Each hidden node's box (the entry of its outermost collapsed scope).
  std::unordered_map<ir::NodeId, ir::NodeId> hiddenIn;

  /// The boxes and edges for Graphviz.
  LayoutGraph layoutGraph() const;
};

/// `state` with the map scopes whose entries are in `collapsed` drawn as
/// boxes (ids that are no map entry of the state are ignored; a collapsed
/// scope inside another collapsed one is hidden with it).
SceneGraph sceneGraph(const ir::Program &program, const ir::State &state,
                      const std::set<ir::NodeId> &collapsed);

/// The box a collapsed scope is drawn as.
Glyph collapsedScopeGlyph(const ir::Node &entry, std::size_t inside);

} // namespace weir::studio
