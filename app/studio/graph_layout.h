#pragma once
/// \file
/// Graph layout with Graphviz `dot` (cgraph + gvc), free of Qt so a
/// benchmark or another front end can use it.
///
///     GraphvizLayout dot;                 // one per thread that lays out
///     LayoutResult r = dot.run(graph);    // positions in points, y down
///
/// cgraph is not thread-safe and re-laying out a graph after gvFreeLayout
/// has crashed (../shared/notes/ecosystem-reliability.md, A3), so every run
/// builds a fresh Agraph_t, and one GraphvizLayout must only ever be used by
/// one thread at a time. A run cannot be interrupted: callers that want
/// cancel discard the result (see layout_runner.h).

#include <cstddef>
#include <string>
#include <vector>

struct GVC_s;

namespace weir::studio {

struct LayoutPoint {
  double x = 0, y = 0;
};

/// What dot lays out: boxes of a given size (points) and directed edges
/// between them, by index. Labels are drawn by the viewer, not measured by
/// Graphviz, so the layout does not depend on fonts.
struct LayoutGraph {
  struct Node {
    double width = 0, height = 0;
  };
  struct Edge {
    std::size_t src = 0, dst = 0;
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;
};

/// The dot settings that matter for speed, measured with Graphviz 2.42 on
/// network-shaped DAGs (tests/bench/layout_bench.cpp). Two costs dominate
/// large graphs: dot's classic ranking pass (collapse, class1, network
/// simplex set-up), which `newrank` replaces by one network simplex over the
/// whole graph, and network simplex for the x coordinates, whose iterations
/// `positionIterations` bounds (dot's `nslimit`). Spline routing is cheap
/// on these graphs.
struct LayoutSettings {
  std::string splines = "spline"; ///< "spline", "polyline", "line"
  bool newrank = false;           ///< dot's `newrank`
  /// Bound on network-simplex iterations for x coordinates; 0 = none.
  std::size_t positionIterations = 0;

  /// What the viewer uses for a graph of `nodes` nodes: `newrank`, and
  /// from 1,000 nodes on at most 250 position iterations, which cost ~4 ms
  /// each at 5,000 nodes — the layouts stay straight where it matters
  /// (chains), and 5,000 nodes take under 2 s of CPU.
  static LayoutSettings forSize(std::size_t nodes);
};

struct LayoutResult {
  /// Node centres, in points, y pointing down, origin at the top left of
  /// the bounding box.
  std::vector<LayoutPoint> centers;
  /// Per edge: the cubic Bézier control points dot routed (start, then
  /// three points per segment), ending on the head node's border; empty
  /// when dot gave none (the viewer then draws a straight line).
  std::vector<std::vector<LayoutPoint>> edgePaths;
  double width = 0, height = 0;
  double seconds = 0; ///< wall time of the layout itself
};

class GraphvizLayout {
public:
  GraphvizLayout();
  ~GraphvizLayout();
  GraphvizLayout(const GraphvizLayout &) = delete;
  GraphvizLayout &operator=(const GraphvizLayout &) = delete;

  /// Lays `graph` out with `dot`; throws weir::Error when Graphviz fails.
  LayoutResult run(const LayoutGraph &graph, const LayoutSettings &settings);
  LayoutResult run(const LayoutGraph &graph) {
    return run(graph, LayoutSettings::forSize(graph.nodes.size()));
  }

private:
  GVC_s *gvc_;
};

} // namespace weir::studio
