/// \file
/// Scope contents, conflicts and map nests for the scheduling helpers.

#include "transforms/map_nest.h"

#include "ir/print.h"
#include "transforms/map_scope.h"

#include <algorithm>

namespace weir::transforms::map_nest {

using ir::NodeId;
using ir::NodeKind;

namespace {

bool computes(NodeKind k) {
  return k == NodeKind::Tasklet || k == NodeKind::Primitive ||
         k == NodeKind::Library;
}

std::string join(const std::vector<std::string> &v) {
  std::string s;
  for (const std::string &x : v)
    s += (s.empty() ? "" : ", ") + x;
  return s;
}

} // namespace

ScopeInfo scopeInfo(const ir::Program &program, const ir::State &state,
                    const ir::ScopeParents &parents, NodeId entry) {
  ScopeInfo info;
  info.entry = entry;
  const ir::Node *e = state.findNode(entry);
  info.exit = e ? e->map().partner : 0;
  info.body = parents.bodyOf(entry);
  for (const ir::Node &n : state.nodes) {
    if (!info.body.count(n.id))
      continue;
    if (n.kind == NodeKind::MapEntry) {
      info.innerMaps.push_back(n.id);
      info.innerParams.insert(n.map().params.begin(), n.map().params.end());
    } else if (n.kind == NodeKind::Library || n.kind == NodeKind::Primitive) {
      info.calls.push_back(n.id);
    }
  }
  for (const ir::Edge &edge : state.edges) {
    if (edge.memlet.empty())
      continue;
    const ir::Node *src = state.findNode(edge.src),
                   *dst = state.findNode(edge.dst);
    if (!src || !dst)
      continue;
    bool srcIn = info.body.count(edge.src) > 0,
         dstIn = info.body.count(edge.dst) > 0;
    if (!srcIn && !dstIn)
      continue;
    ScopeAccess a;
    a.container = map_scope::rootOf(program, edge.memlet.container);
    a.subset = edge.memlet.subset;
    a.wcr = edge.memlet.wcr.has_value();
    a.text = edge.memlet.str();
    a.unknown = a.container != edge.memlet.container;
    if (srcIn && computes(src->kind)) {
      a.write = true;
    } else if (dstIn && computes(dst->kind)) {
      a.write = false;
    } else if ((srcIn && src->kind == NodeKind::Access) ||
               (dstIn && dst->kind == NodeKind::Access)) {
      // An access node inside the scope: copies and locals whose index
      // this analysis does not follow.
      a.write = dstIn && dst->kind == NodeKind::Access;
      a.unknown = true;
    } else {
      continue; // between scope nodes: a summary of accesses listed anyway
    }
    info.accesses.push_back(std::move(a));
  }
  return info;
}

std::vector<NodeId> enclosingMaps(const ir::ScopeParents &parents,
                                  NodeId node) {
  std::vector<NodeId> out;
  NodeId x = parents[node];
  for (std::size_t guard = 0; x != 0 && guard <= parents.size(); ++guard) {
    out.push_back(x);
    x = parents[x];
  }
  return out;
}

std::vector<Conflict>
conflicts(const ScopeInfo &scope, const std::vector<std::string> &params,
          const std::vector<ir::Range> &ranges,
          const std::set<std::string> &alsoVarying,
          const std::map<std::string, ir::VarBounds> &bounds) {
  std::set<std::string> varying(params.begin(), params.end());
  varying.insert(alsoVarying.begin(), alsoVarying.end());
  varying.insert(scope.innerParams.begin(), scope.innerParams.end());
  std::map<std::string, std::vector<const ScopeAccess *>> byContainer;
  for (const ScopeAccess &a : scope.accesses)
    byContainer[a.container].push_back(&a);

  std::vector<Conflict> out;
  for (const auto &[name, accesses] : byContainer) {
    const ScopeAccess *written = nullptr;
    bool wcr = false, unknown = false;
    for (const ScopeAccess *a : accesses) {
      if (a->write && !written)
        written = a;
      wcr = wcr || (a->write && a->wcr);
      unknown = unknown || a->unknown;
    }
    if (!written)
      continue;
    Conflict c{name, {}, written->text, wcr};
    for (std::size_t k = 0; k < params.size(); ++k) {
      if (ranges[k].size() == ir::Expr(1))
        continue;
      ir::Expr p = ir::Expr::symbol(params[k]);
      std::size_t rank = accesses.front()->subset.dims.size();
      bool pinned = false;
      auto fixed = [&](const std::string &s) { return !varying.count(s); };
      for (std::size_t d = 0; d < rank && !pinned && !unknown; ++d) {
        const ir::Range &first = accesses.front()->subset.dims[d];
        bool same = true, points = true;
        std::vector<const ir::Expr *> begins;
        for (const ScopeAccess *a : accesses) {
          bool ranked = a->subset.dims.size() == rank;
          same = same && ranked && a->subset.dims[d] == first;
          points = points && ranked && a->subset.dims[d].size() == ir::Expr(1);
          if (ranked)
            begins.push_back(&a->subset.dims[d].begin);
        }
        if (!points)
          continue;
        if (same) {
          std::vector<std::string> rest = (first.begin - p).freeSymbols();
          pinned = std::all_of(rest.begin(), rest.end(), fixed);
        }
        pinned =
            pinned || ir::disjointPerValue(begins, params[k], fixed, bounds);
      }
      if (!pinned)
        c.free.push_back(params[k]);
    }
    if (!c.free.empty())
      out.push_back(std::move(c));
  }
  return out;
}

std::string describe(const Conflict &c) {
  return "'" + c.container + "' (" + c.example +
         ") may be touched by iterations that differ in " + join(c.free);
}

std::optional<MapNest> findNest(const ir::State &state,
                                const ir::ScopeParents &parents,
                                NodeId outer, std::string &why) {
  const ir::Node *o = state.findNode(outer);
  if (!o || o->kind != NodeKind::MapEntry) {
    why = "node %" + std::to_string(outer) + " is not a map entry";
    return std::nullopt;
  }
  MapNest nest;
  nest.outerEntry = outer;
  nest.outerExit = o->map().partner;
  std::vector<NodeId> children;
  for (NodeId id : parents.childrenOf(outer))
    if (id != nest.outerExit)
      children.push_back(id);
  const ir::Node *inner =
      children.size() == 1 ? state.findNode(children.front()) : nullptr;
  if (!inner || inner->kind != NodeKind::MapEntry) {
    why = ir::describe(*o, "map") +
          " does not hold exactly one inner map and "
          "nothing else (" +
          std::to_string(children.size()) + " nodes directly in its scope)";
    return std::nullopt;
  }
  nest.innerEntry = inner->id;
  nest.innerExit = inner->map().partner;
  for (const ir::Edge &e : state.edges) {
    if ((e.src == outer && e.dst != nest.innerEntry) ||
        (e.dst == nest.outerExit && e.src != nest.innerExit)) {
      why = "an edge of " + ir::describe(*o, "map") + " bypasses the inner " +
            ir::describe(*inner, "map");
      return std::nullopt;
    }
  }
  if (!map_scope::pairedConnectors(*inner) ||
      !map_scope::pairedConnectors(*state.findNode(nest.innerExit))) {
    why = "the connectors of the inner " + ir::describe(*inner, "map") +
          " are not IN_/OUT_ pairs";
    return std::nullopt;
  }
  return nest;
}

std::optional<std::string> rangeNaming(const ir::MapData &m,
                                       const std::vector<std::string> &names) {
  for (std::size_t k = 0; k < m.ranges.size(); ++k) {
    const ir::Range &r = m.ranges[k];
    for (const ir::Expr *e : {&r.begin, &r.end, &r.step})
      for (const std::string &s : e->freeSymbols())
        if (std::find(names.begin(), names.end(), s) != names.end())
          return "the range of '" + m.params[k] + "' (" + r.str() +
                 ") depends on '" + s + "'";
  }
  return std::nullopt;
}

namespace {

/// e at its smallest (or largest) over the parameters, when e is affine in
/// each of them with a constant coefficient.
std::optional<ir::Expr> extreme(const ir::Expr &e,
                                const std::vector<std::string> &params,
                                const std::vector<ir::Range> &ranges,
                                bool largest) {
  std::map<std::string, ir::Expr, std::less<>> at;
  for (std::size_t k = 0; k < params.size(); ++k) {
    ir::Expr p = ir::Expr::symbol(params[k]);
    ir::Expr c = ir::simplify(e.substitute({{params[k], p + ir::Expr(1)}}) - e);
    auto coeff = c.asConstant();
    if (!coeff)
      return std::nullopt;
    if (ir::simplify(e.substitute({{params[k], ir::Expr(0)}})) !=
        ir::simplify(e - c * p))
      return std::nullopt;
    const ir::Range &r = ranges[k];
    ir::Expr last = r.begin + (r.size() - ir::Expr(1)) * r.step;
    at[params[k]] = (*coeff >= 0) == largest ? last : r.begin;
  }
  return ir::simplify(e.substitute(at));
}

} // namespace

std::optional<ir::Subset> image(const ir::Subset &subset,
                                const std::vector<std::string> &params,
                                const std::vector<ir::Range> &ranges) {
  ir::Subset out;
  for (const ir::Range &r : subset.dims) {
    bool depends = false;
    for (const ir::Expr *e : {&r.begin, &r.end, &r.step})
      for (const std::string &s : e->freeSymbols())
        depends = depends ||
                  std::find(params.begin(), params.end(), s) != params.end();
    if (!depends) {
      out.dims.push_back(r);
      continue;
    }
    if (r.step.freeSymbols().size() > 0)
      return std::nullopt;
    // The last index the range touches, then one past it.
    ir::Expr lastIndex = r.begin + (r.size() - ir::Expr(1)) * r.step;
    auto lo = extreme(r.begin, params, ranges, false);
    auto hi = extreme(ir::simplify(lastIndex), params, ranges, true);
    if (!lo || !hi)
      return std::nullopt;
    out.dims.push_back(ir::Range(*lo, *hi + ir::Expr(1), ir::Expr(1)));
  }
  return out;
}

} // namespace weir::transforms::map_nest
