#include "app/studio/scope_view.h"

#include "ir/scope.h"

#include <QCoreApplication>
#include <QFontMetricsF>

#include <algorithm>
#include <map>
#include <optional>
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

namespace {

QString insideText(std::size_t n) {
  return n == 1 ? QCoreApplication::translate("weir::studio::GraphScene",
                                              "1 node inside")
                : QCoreApplication::translate("weir::studio::GraphScene",
                                              "%1 nodes inside")
                      .arg(n);
}

/// A box: what it hides stands for what it computes, as an operator does.
Glyph boxGlyph(const QString &title, const QStringList &details) {
  Glyph g;
  g.kind = ir::NodeKind::Library;
  g.title = title;
  g.details = details;
  QFontMetricsF titleMetrics(glyphTitleFont()), detail(glyphFont());
  double w = titleMetrics.horizontalAdvance(g.title);
  for (const QString &l : g.details)
    w = std::max(w, detail.horizontalAdvance(l));
  double h = titleMetrics.height() + detail.height() * double(g.details.size());
  g.size = QSizeF(std::max(w + 28, 40.0), std::max(h + 14, 24.0));
  return g;
}

/// `conv1.gemm` -> `conv1`; the operator's own name may hold dots
/// (`/layer.0/Add.map`), the suffix an expansion adds does not.
std::optional<std::string> groupName(const std::string &label) {
  std::size_t dot = label.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == label.size())
    return std::nullopt;
  return label.substr(0, dot);
}

std::vector<OperatorGroup>
groupsOf(const ir::Program &program, const ir::State &state,
         const ir::ScopeParents &parents) {
  auto parentOf = [&](ir::NodeId id) { return parents[id]; };
  // The top-level operator nodes of each name.
  std::map<std::string, std::vector<ir::NodeId>> tops;
  for (const ir::Node &n : state.nodes)
    if (n.kind != ir::NodeKind::Access && !parentOf(n.id))
      if (auto name = groupName(n.label))
        tops[*name].push_back(n.id);
  std::unordered_map<ir::NodeId, const std::string *> member;
  for (const auto &[name, ids] : tops)
    if (ids.size() >= 2)
      for (ir::NodeId id : ids)
        member[id] = &name;
  if (member.empty())
    return {};
  // Everything inside their scopes: the outermost scope decides.
  for (const ir::Node &n : state.nodes) {
    ir::NodeId top = n.id;
    for (ir::NodeId p = parentOf(n.id); p; p = parentOf(p))
      top = p;
    if (top != n.id)
      if (auto it = member.find(top); it != member.end())
        member[n.id] = it->second;
  }
  // Intermediates private to a group (weights are constants, not
  // intermediates, even when only the group reads them).
  std::unordered_map<ir::NodeId, std::vector<ir::NodeId>> neighbours;
  for (const ir::Edge &e : state.edges) {
    neighbours[e.src].push_back(e.dst);
    neighbours[e.dst].push_back(e.src);
  }
  std::vector<std::pair<ir::NodeId, const std::string *>> intermediates;
  for (const ir::Node &n : state.nodes) {
    if (n.kind != ir::NodeKind::Access || member.count(n.id))
      continue;
    const ir::Container *c = program.findContainer(n.access().container);
    auto it = neighbours.find(n.id);
    if (!c || !c->transient || c->isConstant() || it == neighbours.end())
      continue;
    const std::string *group = nullptr;
    bool own = true;
    for (ir::NodeId other : it->second) {
      auto m = member.find(other);
      own = own && m != member.end() && (!group || group == m->second);
      if (own)
        group = m->second;
    }
    if (own && group)
      intermediates.emplace_back(n.id, group);
  }
  for (const auto &[id, group] : intermediates)
    member[id] = group;

  std::vector<OperatorGroup> out;
  std::unordered_map<const std::string *, std::size_t> index;
  for (const ir::Node &n : state.nodes) {
    auto m = member.find(n.id);
    if (m == member.end())
      continue;
    auto [it, added] = index.try_emplace(m->second, out.size());
    if (added)
      out.push_back({*m->second, {}});
    out[it->second].nodes.push_back(n.id);
  }
  return out;
}

} // namespace

Glyph collapsedScopeGlyph(const ir::Node &entry, std::size_t inside) {
  const ir::MapData &m = entry.map();
  QStringList ranges;
  for (std::size_t i = 0; i < m.params.size() && i < m.ranges.size(); ++i)
    ranges << QString::fromStdString(m.params[i]) + "=" +
                  QString::fromStdString(m.ranges[i].str());
  QString line = "[" + ranges.join(", ") + "]";
  constexpr int kLineChars = 48;
  if (line.size() > kLineChars)
    line = line.left(kLineChars - 1) + "…";
  return boxGlyph("▸ " + QString::fromStdString(entry.label),
                  {line, insideText(inside)});
}

Glyph collapsedGroupGlyph(const std::string &name, std::size_t size) {
  return boxGlyph("▸ " + QString::fromStdString(name),
                  {QCoreApplication::translate("weir::studio::GraphScene",
                                               "operator group"),
                   insideText(size)});
}

std::vector<OperatorGroup> operatorGroups(const ir::Program &program,
                                          const ir::State &state) {
  return groupsOf(program, state, ir::scopeParents(state));
}

SceneGraph sceneGraph(const ir::Program &program, const ir::State &state,
                      const std::set<ir::NodeId> &collapsed,
                      const std::set<std::string> &collapsedGroups) {
  SceneGraph out;
  ir::ScopeParents parents = ir::scopeParents(state);
  auto isCollapsedEntry = [&](ir::NodeId id) {
    if (!collapsed.count(id))
      return false;
    const ir::Node *n = state.findNode(id);
    return n && n->kind == ir::NodeKind::MapEntry;
  };
  // Each node drawn as itself, as its collapsed group's box or as the
  // outermost collapsed scope around it; a group hides the scopes in it.
  std::unordered_map<ir::NodeId, ir::NodeId> shownAs;
  std::unordered_map<ir::NodeId, std::size_t> inside;
  std::unordered_map<ir::NodeId, const std::string *> groupBox;
  std::vector<OperatorGroup> groups = groupsOf(program, state, parents);
  for (const OperatorGroup &g : groups) {
    for (ir::NodeId id : g.nodes)
      out.groupOf[id] = g.name;
    if (!collapsedGroups.count(g.name))
      continue;
    groupBox[g.nodes.front()] = &g.name;
    for (ir::NodeId id : g.nodes)
      shownAs[id] = g.nodes.front();
    inside[g.nodes.front()] = g.nodes.size() - 1;
  }
  for (const ir::Node &n : state.nodes) {
    if (shownAs.count(n.id))
      continue;
    ir::NodeId rep = n.id;
    for (ir::NodeId up = parents[n.id]; up; up = parents[up])
      if (isCollapsedEntry(up))
        rep = up;
    shownAs[n.id] = rep;
    if (rep != n.id)
      ++inside[rep];
  }
  for (const auto &[id, rep] : shownAs)
    if (rep != id)
      out.hiddenIn[id] = rep;
  std::unordered_map<ir::NodeId, std::size_t> index;
  for (const ir::Node &n : state.nodes) {
    if (shownAs[n.id] != n.id)
      continue;
    index[n.id] = out.nodes.size();
    auto hidden = inside.find(n.id);
    if (auto g = groupBox.find(n.id); g != groupBox.end())
      out.nodes.push_back({n.id,
                           collapsedGroupGlyph(*g->second, hidden->second + 1),
                           hidden->second, *g->second});
    else if (hidden != inside.end())
      out.nodes.push_back(
          {n.id, collapsedScopeGlyph(n, hidden->second), hidden->second, {}});
    else
      out.nodes.push_back({n.id, makeGlyph(program, n), 0, {}});
  }
  for (std::size_t j = 0; j < state.edges.size(); ++j) {
    const ir::Edge &e = state.edges[j];
    ir::NodeId src = shownAs.at(e.src), dst = shownAs.at(e.dst);
    if (src == dst)
      continue; // inside a collapsed scope or group
    out.edges.push_back({j, index.at(src), index.at(dst)});
  }
  return out;
}

} // namespace weir::studio
