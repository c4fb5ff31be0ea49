#include "transforms/map_scope.h"

#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/rewrite.h"

#include <algorithm>

namespace weir::transforms::map_scope {

using ir::EdgeId;
using ir::NodeId;

std::string rootOf(const ir::Program &p, const std::string &c) {
  const ir::Container *x = p.findContainer(c);
  return x && x->isView() ? x->viewOf : c;
}

ir::Range renamed(const ir::Range &r, const Rename &m) {
  return ir::Range(r.begin.substitute(m), r.end.substitute(m),
                   r.step.substitute(m));
}

ir::Subset renamed(const ir::Subset &s, const Rename &m) {
  ir::Subset out;
  for (const ir::Range &r : s.dims)
    out.dims.push_back(renamed(r, m));
  return out;
}

std::string rangesText(const ir::MapData &m) {
  std::string s;
  for (std::size_t k = 0; k < m.params.size(); ++k)
    s += (k ? ", " : "") + m.params[k] + " = " + m.ranges[k].str();
  return "[" + s + "]";
}

bool pairedConnectors(const ir::Node &n) {
  if (n.inputs.size() != n.outputs.size())
    return false;
  for (const ir::Connector &c : n.inputs) {
    auto x = ir::scopeInSuffix(c.name);
    if (!x || !n.findOutput(ir::scopeOut(*x)))
      return false;
  }
  return true;
}

bool sameMemlet(const ir::Memlet &a, const ir::Memlet &b) {
  return a.container == b.container && a.subset == b.subset && a.wcr == b.wcr;
}

bool isOrdering(const ir::Edge &e) {
  return e.memlet.empty() && !e.memlet.wcr && e.srcConn.empty() &&
         e.dstConn.empty();
}

bool distinctPerIteration(const ir::Subset &subset, const ir::MapData &m) {
  auto isParam = [&](const std::string &s) {
    return std::find(m.params.begin(), m.params.end(), s) != m.params.end();
  };
  for (std::size_t k = 0; k < m.params.size(); ++k) {
    if (m.ranges[k].size() == ir::Expr(1))
      continue;
    bool found = false;
    for (const ir::Range &r : subset.dims) {
      std::vector<std::string> rest =
          (r.begin - ir::Expr::symbol(m.params[k])).freeSymbols();
      found |= std::none_of(rest.begin(), rest.end(), isParam);
    }
    if (!found)
      return false;
  }
  return true;
}

void renameBody(ir::State &s, NodeId entry, const std::set<NodeId> &body,
                const Rename &rename) {
  NodeId exit = s.findNode(entry)->map().partner;
  s.edges.editWhere(
      [&](const ir::Edge &e) {
        return (e.src == entry || body.count(e.src)) && body.count(e.dst) &&
               !e.memlet.empty();
      },
      [&](ir::Edge &e) { e.memlet.subset = renamed(e.memlet.subset, rename); });
  s.nodes.editWhere(
      [&](const ir::Node &n) {
        return body.count(n.id) && n.id != exit &&
               (n.kind == ir::NodeKind::MapEntry ||
                n.kind == ir::NodeKind::MapExit);
      },
      [&](ir::Node &n) {
        for (ir::Range &range : n.map().ranges)
          range = renamed(range, rename);
      });
}

std::optional<std::string> renamingConflict(const ir::State &s,
                                            const ir::Node &entry,
                                            const std::set<NodeId> &body,
                                            const Rename &rename) {
  bool identity = true;
  for (const auto &[from, to] : rename)
    identity = identity && to.symbolName() == from;
  if (identity)
    return std::nullopt;
  for (NodeId id : body) {
    const ir::Node &n = *s.findNode(id);
    if (n.kind == ir::NodeKind::Library || n.kind == ir::NodeKind::Primitive)
      return ir::describe(entry, "map") + " contains '" + n.label + "' (%" +
             std::to_string(id) +
             "), whose attributes may name the map's parameters, which "
             "fusion renames";
    if (n.kind == ir::NodeKind::MapEntry)
      for (const std::string &q : n.map().params)
        for (const auto &[from, to] : rename)
          if (q == from || q == to.symbolName())
            return ir::describe(n, "map") + " inside " +
                   ir::describe(entry, "map") + " binds '" + q +
                   "', a name fusion gives another meaning";
  }
  return std::nullopt;
}

std::string freshPair(const ir::Node &n, const std::string &x) {
  std::string name = x;
  for (int k = 1;
       n.findInput(ir::scopeIn(name)) || n.findOutput(ir::scopeOut(name)); ++k)
    name = x + "_" + std::to_string(k);
  return name;
}

namespace {

std::vector<EdgeId> edgeIds(const ir::State &s, NodeId node, bool incoming) {
  std::vector<EdgeId> ids;
  for (const ir::Edge &e : s.edges)
    if ((incoming ? e.dst : e.src) == node)
      ids.push_back(e.id);
  return ids;
}

void addPair(ir::Node &n, const std::string &x, ir::DType dtype) {
  n.inputs.push_back({ir::scopeIn(x), dtype});
  n.outputs.push_back({ir::scopeOut(x), dtype});
}

/// Redirects an ordering edge to `to` at one end, or drops it when an
/// equal one is already there (or it would join `to` to itself).
void redirectOrdering(ir::State &s, EdgeId id, NodeId to, bool atDst) {
  ir::Edge &e = edgeWithId(s, id);
  NodeId src = atDst ? e.src : to, dst = atDst ? to : e.dst;
  bool drop = src == dst;
  for (const ir::Edge &f : s.edges)
    drop |= f.id != id && f.src == src && f.dst == dst && isOrdering(f);
  if (drop) {
    s.edges.eraseIf([&](const ir::Edge &x) { return x.id == id; });
    return;
  }
  (atDst ? e.dst : e.src) = to;
}

} // namespace

void mergeEntry(ir::State &s, NodeId from, NodeId to) {
  ir::Node &target = *s.findNode(to);
  const ir::Node &source = *s.findNode(from);
  std::map<std::string, std::string> outConn;
  for (EdgeId id : edgeIds(s, from, true)) {
    ir::Edge &e = edgeWithId(s, id);
    if (e.dstConn.empty()) {
      redirectOrdering(s, id, to, true);
      continue;
    }
    std::string x = *ir::scopeInSuffix(e.dstConn);
    auto shared =
        std::find_if(s.edges.begin(), s.edges.end(), [&](const ir::Edge &f) {
          return f.dst == to && f.src == e.src && f.srcConn == e.srcConn &&
                 ir::scopeInSuffix(f.dstConn).has_value() &&
                 sameMemlet(f.memlet, e.memlet);
        });
    if (shared != s.edges.end()) {
      outConn[ir::scopeOut(x)] = ir::scopePartner(shared->dstConn);
      s.edges.eraseIf([&](const ir::Edge &f) { return f.id == id; });
      continue;
    }
    std::string y = freshPair(target, x);
    addPair(target, y, source.findInput(e.dstConn)->dtype);
    outConn[ir::scopeOut(x)] = ir::scopeOut(y);
    e.dst = to;
    e.dstConn = ir::scopeIn(y);
  }
  for (EdgeId id : edgeIds(s, from, false)) {
    ir::Edge &e = edgeWithId(s, id);
    if (e.srcConn.empty()) {
      redirectOrdering(s, id, to, false);
      continue;
    }
    e.src = to;
    e.srcConn = outConn.at(e.srcConn);
  }
}

void mergeExit(ir::State &s, NodeId from, NodeId to) {
  ir::Node &target = *s.findNode(to);
  const ir::Node &source = *s.findNode(from);
  std::map<std::string, std::string> pair;
  for (EdgeId id : edgeIds(s, from, true)) {
    ir::Edge &e = edgeWithId(s, id);
    if (e.dstConn.empty()) {
      redirectOrdering(s, id, to, true);
      continue;
    }
    std::string x = *ir::scopeInSuffix(e.dstConn);
    if (!pair.count(x)) {
      pair[x] = freshPair(target, x);
      addPair(target, pair[x], source.findInput(e.dstConn)->dtype);
    }
    e.dst = to;
    e.dstConn = ir::scopeIn(pair[x]);
  }
  for (EdgeId id : edgeIds(s, from, false)) {
    ir::Edge &e = edgeWithId(s, id);
    if (e.srcConn.empty()) {
      redirectOrdering(s, id, to, false);
      continue;
    }
    e.src = to;
    e.srcConn = ir::scopeOut(pair.at(*ir::scopeOutSuffix(e.srcConn)));
  }
}

} // namespace weir::transforms::map_scope
