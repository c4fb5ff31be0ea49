#include "app/studio/graph_layout.h"

#include "ir/error.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

namespace weir::studio {

namespace {

constexpr double kPointsPerInch = 72;

/// cgraph takes `char *` for names and values it only reads.
char *text(const char *s) { return const_cast<char *>(s); }

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

struct GraphDeleter {
  GVC_t *gvc;
  bool laidOut = false;
  void operator()(Agraph_t *g) const {
    if (laidOut)
      gvFreeLayout(gvc, g);
    agclose(g);
  }
};

} // namespace

LayoutSettings LayoutSettings::forSize(std::size_t nodes) {
  LayoutSettings s;
  s.newrank = true;
  if (nodes >= 1000)
    s.positionIterations = 250;
  return s;
}

GraphvizLayout::GraphvizLayout() : gvc_(gvContext()) {
  if (!gvc_)
    throw Error("Graphviz: cannot create a layout context");
}

GraphvizLayout::~GraphvizLayout() { gvFreeContext(gvc_); }

LayoutResult GraphvizLayout::run(const LayoutGraph &graph,
                                 const LayoutSettings &settings) {
  auto start = std::chrono::steady_clock::now();
  LayoutResult out;
  if (graph.nodes.empty())
    return out;

  GraphDeleter deleter{gvc_};
  std::unique_ptr<Agraph_t, GraphDeleter &> g(
      agopen(text("weir"), Agdirected, nullptr), deleter);
  if (!g)
    throw Error("Graphviz: cannot create a graph");
  agattr(g.get(), AGRAPH, text("rankdir"), text("TB"));
  agattr(g.get(), AGRAPH, text("splines"), text(settings.splines.c_str()));
  agattr(g.get(), AGRAPH, text("nodesep"), text("0.3"));
  agattr(g.get(), AGRAPH, text("ranksep"), text("0.45"));
  if (settings.newrank)
    agattr(g.get(), AGRAPH, text("newrank"), text("true"));
  if (settings.positionIterations > 0)
    // dot allows nslimit × (node count) iterations.
    agattr(g.get(), AGRAPH, text("nslimit"),
           text(number(double(settings.positionIterations) /
                       double(graph.nodes.size()))
                    .c_str()));
  // The viewer draws glyphs and labels itself: dot sees fixed-size boxes
  // with no text to measure, and edges without arrowheads so a path ends
  // on the node's border.
  agattr(g.get(), AGNODE, text("shape"), text("box"));
  agattr(g.get(), AGNODE, text("fixedsize"), text("true"));
  agattr(g.get(), AGNODE, text("label"), text(""));
  Agsym_t *width = agattr(g.get(), AGNODE, text("width"), text("1"));
  Agsym_t *height = agattr(g.get(), AGNODE, text("height"), text("0.5"));
  agattr(g.get(), AGEDGE, text("arrowhead"), text("none"));

  std::vector<Agnode_t *> nodes;
  nodes.reserve(graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    Agnode_t *n = agnode(g.get(), text(("n" + std::to_string(i)).c_str()), 1);
    agxset(n, width,
           text(number(graph.nodes[i].width / kPointsPerInch).c_str()));
    agxset(n, height,
           text(number(graph.nodes[i].height / kPointsPerInch).c_str()));
    nodes.push_back(n);
  }
  std::vector<Agedge_t *> edges;
  edges.reserve(graph.edges.size());
  for (const LayoutGraph::Edge &e : graph.edges) {
    if (e.src >= nodes.size() || e.dst >= nodes.size())
      throw Error("Graphviz: an edge names node " +
                  std::to_string(std::max(e.src, e.dst)) + " of " +
                  std::to_string(nodes.size()));
    // Anonymous: a multigraph's parallel edges each get their own.
    edges.push_back(agedge(g.get(), nodes[e.src], nodes[e.dst], nullptr, 1));
  }

  if (gvLayout(gvc_, g.get(), "dot") != 0)
    throw Error("Graphviz: dot could not lay the graph out");
  deleter.laidOut = true;

  // Graphviz's y axis points up; the viewer's points down.
  boxf bb = GD_bb(g.get());
  auto flip = [&](pointf p) {
    return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y};
  };
  out.width = bb.UR.x - bb.LL.x;
  out.height = bb.UR.y - bb.LL.y;
  out.centers.reserve(nodes.size());
  for (Agnode_t *n : nodes)
    out.centers.push_back(flip(ND_coord(n)));
  out.edgePaths.resize(edges.size());
  for (std::size_t i = 0; i < edges.size(); ++i) {
    // dot routes an edge as one Bézier; more than one appears only with
    // compound edges or `concentrate`, which are not used here. An edge dot
    // could not route has none.
    const splines *spl = ED_spl(edges[i]);
    if (!spl || spl->size == 0)
      continue;
    const bezier &route = spl->list[0];
    for (int k = 0; k < route.size; ++k)
      out.edgePaths[i].push_back(flip(route.list[k]));
  }
  out.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return out;
}

} // namespace weir::studio
