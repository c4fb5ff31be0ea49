#include "app/studio/program_diff.h"

#include "app/studio/glyph.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

namespace weir::studio {

namespace {

struct Located {
  const ir::State *state = nullptr;
  const ir::Node *node = nullptr;
};

std::unordered_map<ir::NodeId, Located> nodesOf(const ir::Program &p) {
  std::unordered_map<ir::NodeId, Located> out;
  for (const ir::State &s : p.states)
    for (const ir::Node &n : s.nodes)
      out[n.id] = {&s, &n};
  return out;
}

std::string_view kindName(ir::NodeKind k) {
  switch (k) {
  case ir::NodeKind::Access:
    return "access";
  case ir::NodeKind::Tasklet:
    return "tasklet";
  case ir::NodeKind::MapEntry:
    return "map entry";
  case ir::NodeKind::MapExit:
    return "map exit";
  case ir::NodeKind::Library:
    return "operator";
  case ir::NodeKind::Primitive:
    return "primitive";
  }
  return "node";
}

/// The memlets on a node's edges, by direction and connector.
std::multiset<std::string> edgesOf(const Located &l) {
  std::multiset<std::string> out;
  for (const ir::Edge *e : l.state->inEdges(l.node->id))
    out.insert("in " + e->dstConn + " " + e->memlet.str());
  for (const ir::Edge *e : l.state->outEdges(l.node->id))
    out.insert("out " + e->srcConn + " " + e->memlet.str());
  return out;
}

bool differs(const ir::Program &before, const Located &a,
             const ir::Program &after, const Located &b) {
  if (a.node->kind != b.node->kind || a.node->label != b.node->label ||
      a.node->inputs != b.node->inputs || a.node->outputs != b.node->outputs)
    return true;
  // What the node shows: its operator, ranges, code, container shape.
  Glyph ga = makeGlyph(before, *a.node), gb = makeGlyph(after, *b.node);
  if (ga.title != gb.title || ga.details != gb.details)
    return true;
  return edgesOf(a) != edgesOf(b);
}

} // namespace

ProgramDiff diffPrograms(const ir::Program &before, const ir::Program &after,
                         const transforms::IdMap &idMap) {
  ProgramDiff diff;
  auto old = nodesOf(before);
  std::unordered_map<ir::NodeId, std::vector<ir::NodeId>> sources;
  for (const ir::State &s : before.states)
    for (const ir::Node &n : s.nodes)
      if (std::optional<ir::NodeId> to = idMap.find(n.id))
        sources[*to].push_back(n.id);
  for (const ir::State &s : after.states)
    for (const ir::Node &n : s.nodes) {
      auto it = sources.find(n.id);
      if (it == sources.end()) {
        diff.added.push_back(n.id);
        continue;
      }
      Located now{&s, &n};
      bool changed = it->second.size() > 1; // several merged into one
      for (ir::NodeId from : it->second) {
        auto o = old.find(from);
        changed = changed || o == old.end() || from != n.id ||
                  differs(before, o->second, after, now);
      }
      if (changed)
        diff.changed.push_back(n.id);
    }
  for (const ir::State &s : before.states)
    for (const ir::Node &n : s.nodes)
      if (!idMap.count(n.id))
        diff.removed.push_back(n.label + " (" + std::string(kindName(n.kind)) +
                               ")");
  return diff;
}

} // namespace weir::studio
