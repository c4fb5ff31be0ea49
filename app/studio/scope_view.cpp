#include "app/studio/scope_view.h"

#include "ir/scope.h"

#include <QCoreApplication>
#include <QFontMetricsF>

#include <algorithm>
#include <unordered_map>

namespace weir::studio {

LayoutGraph SceneGraph::layoutGraph() const {
  LayoutGraph g;
  for (const Node &n : nodes)
    g.nodes.push_back({n.glyph.size.width(), n.glyph.size.height()});
  for (const Edge &e : edges)
    g.edges.push_back({e.src, e.dst});
  return g;
}

Glyph collapsedScopeGlyph(const ir::Node &entry, std::size_t inside) {
  const ir::MapData &m = entry.map();
  Glyph g;
  // A box: the scope stands for what it computes, as an operator does.
  g.kind = ir::NodeKind::Library;
  g.title = "▸ " + QString::fromStdString(entry.label);
  QStringList ranges;
  for (std::size_t i = 0; i < m.params.size() && i < m.ranges.size(); ++i)
    ranges << QString::fromStdString(m.params[i]) + "=" +
                  QString::fromStdString(m.ranges[i].str());
  QString line = "[" + ranges.join(", ") + "]";
  constexpr int kLineChars = 48;
  if (line.size() > kLineChars)
    line = line.left(kLineChars - 1) + "…";
  g.details << line
            << (inside == 1 ? QCoreApplication::translate(
                                  "weir::studio::GraphScene", "1 node inside")
                            : QCoreApplication::translate(
                                  "weir::studio::GraphScene", "%1 nodes inside")
                                  .arg(inside));
  QFontMetricsF title(glyphTitleFont()), detail(glyphFont());
  double w = title.horizontalAdvance(g.title);
  for (const QString &l : g.details)
    w = std::max(w, detail.horizontalAdvance(l));
  double h = title.height() + detail.height() * double(g.details.size());
  g.size = QSizeF(std::max(w + 28, 40.0), std::max(h + 14, 24.0));
  return g;
}

SceneGraph sceneGraph(const ir::Program &program, const ir::State &state,
                      const std::set<ir::NodeId> &collapsed) {
  SceneGraph out;
  std::map<ir::NodeId, ir::NodeId> parents;
  if (!collapsed.empty())
    parents = ir::scopeParents(state);
  auto isCollapsedEntry = [&](ir::NodeId id) {
    if (!collapsed.count(id))
      return false;
    const ir::Node *n = state.findNode(id);
    return n && n->kind == ir::NodeKind::MapEntry;
  };
  // Each node drawn as itself or as the outermost collapsed scope around
  // it.
  std::unordered_map<ir::NodeId, ir::NodeId> shownAs;
  std::unordered_map<ir::NodeId, std::size_t> inside;
  for (const ir::Node &n : state.nodes) {
    ir::NodeId rep = n.id;
    for (auto it = parents.find(n.id); it != parents.end() && it->second;
         it = parents.find(it->second))
      if (isCollapsedEntry(it->second))
        rep = it->second;
    shownAs[n.id] = rep;
    if (rep != n.id) {
      ++inside[rep];
      out.hiddenIn[n.id] = rep;
    }
  }
  std::unordered_map<ir::NodeId, std::size_t> index;
  for (const ir::Node &n : state.nodes) {
    if (shownAs[n.id] != n.id)
      continue;
    index[n.id] = out.nodes.size();
    auto hidden = inside.find(n.id);
    if (hidden != inside.end())
      out.nodes.push_back(
          {n.id, collapsedScopeGlyph(n, hidden->second), hidden->second});
    else
      out.nodes.push_back({n.id, makeGlyph(program, n), 0});
  }
  for (std::size_t j = 0; j < state.edges.size(); ++j) {
    const ir::Edge &e = state.edges[j];
    ir::NodeId src = shownAs.at(e.src), dst = shownAs.at(e.dst);
    if (src == dst)
      continue; // inside a collapsed scope
    out.edges.push_back({j, index.at(src), index.at(dst)});
  }
  return out;
}

} // namespace weir::studio
