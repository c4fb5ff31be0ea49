/// \file
/// `map-tiling` (DaCe's MapTiling, TVM's split): a map over i, j with
/// ranges [b, e) becomes an outer map over tile origins (step = tile size
/// times the range's step) whose body is the original map, now iterating
/// [origin, min(origin + T·step, e)). The inner map keeps its parameters,
/// tasklets and memlets; the memlets between the two scopes describe what
/// one tile touches. Iteration order changes from row-major to tile by
/// tile, so a map whose writes could collide in a different order is
/// refused (see the description).
///
/// Ids: every node keeps its id (the original entry and exit become the
/// inner map); the outer entry and exit are new.

#include "transforms/movement/map_tiling.h"

#include "ir/affine.h"
#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <algorithm>
#include <set>

namespace weir::transforms {

namespace {

using ir::Expr;
using ir::NodeId;
using ir::Range;

struct Plan {
  NodeId entry = 0, exit = 0;
  std::vector<std::int64_t> tiles;      ///< per dimension; 0 = not tiled
  std::vector<std::string> outerParams; ///< per tiled dimension
};

/// Tile sizes from `tile`/`tiles`, or the reason they are unusable.
std::variant<std::vector<std::int64_t>, std::string>
tileSizes(const Params &params, std::size_t rank) {
  const IntList &list = intListParam(params, "tiles");
  if (list.empty())
    return std::vector<std::int64_t>(rank, intParam(params, "tile"));
  if (list.size() != rank)
    return "parameter tiles=" + paramValueText(list) + " gives " +
           std::to_string(list.size()) + " sizes but the map has " +
           std::to_string(rank) + " dimensions";
  return list;
}

/// Parameters a point index pins: dimensions whose index is c + k·p for a
/// single parameter p of the map (equal elements mean equal p).
std::set<std::string> pinned(const ir::Memlet &m,
                             const std::vector<std::string> &params) {
  std::set<std::string> out;
  for (const Range &r : m.subset.dims) {
    if (!r.isPoint())
      continue;
    auto a = ir::affineIn(r.begin, params);
    if (!a)
      continue;
    std::vector<std::string> used;
    for (const auto &[v, c] : a->coef)
      if (c != 0)
        used.push_back(v);
    if (used.size() == 1)
      out.insert(used[0]);
  }
  return out;
}

CheckResult planTiling(const ir::Program &p, const Match &match,
                       const Params &params, Plan &plan) {
  const ir::State &s = stateNamed(p, match.state);
  plan.entry = match.node("map");
  const ir::Node &entry = *s.findNode(plan.entry);
  const ir::MapData &m = entry.map();
  plan.exit = m.partner;
  const ir::Node *exit = s.findNode(plan.exit);
  auto fail = [&](std::string why) {
    return CheckResult::failure(std::move(why), {plan.entry, plan.exit});
  };
  if (!exit || exit->kind != ir::NodeKind::MapExit)
    return fail(ir::describe(entry, "map") + " has no map exit");
  for (const ir::Node *n : {&entry, exit})
    for (const auto *conns : {&n->inputs, &n->outputs})
      for (const ir::Connector &c : *conns)
        if (!ir::scopeInSuffix(c.name).has_value() &&
            !ir::scopeOutSuffix(c.name).has_value())
          return fail("connector '" + c.name + "' of " +
                      ir::describe(*n, "map") +
                      " is not a scope connector (IN_x/OUT_x)");

  auto sizes = tileSizes(params, m.params.size());
  if (auto *why = std::get_if<std::string>(&sizes))
    return fail(*why);
  plan.tiles = std::get<std::vector<std::int64_t>>(sizes);
  bool any = false;
  for (std::size_t d = 0; d < plan.tiles.size(); ++d) {
    std::int64_t &t = plan.tiles[d];
    auto n = constantUpperBound(m.ranges[d].size());
    if (t <= 1 || (n && *n <= t))
      t = 0;
    any |= t != 0;
  }
  if (!any)
    return fail("every range of " + ir::describe(entry, "map") + " [" + [&] {
      std::string r;
      for (std::size_t d = 0; d < m.ranges.size(); ++d)
        r += (d ? ", " : "") + m.params[d] + " = " + m.ranges[d].str();
      return r;
    }() + "] fits in one tile; nothing to tile");

  // The order in which the writes to one element arrive must not change:
  // the iterations writing it agree on the pinned parameters; among the
  // free ones, tile-major order equals row-major order only when the first
  // free parameter is the only tiled one.
  std::map<std::string, std::vector<const ir::Edge *>> reads, writes;
  // Reads through a view count as reads of its target.
  auto root = [&](const std::string &name) {
    const ir::Container *c = p.findContainer(name);
    return c && c->isView() ? c->viewOf : name;
  };
  for (const ir::Edge *e : s.outEdges(plan.entry))
    if (!e->memlet.empty())
      reads[root(e->memlet.container)].push_back(e);
  for (const ir::Edge *e : s.inEdges(plan.exit))
    if (!e->memlet.empty())
      writes[e->memlet.container].push_back(e);
  for (const auto &[name, ws] : writes)
    for (const ir::Edge *w : ws) {
      // Two writes at different indices may meet: nothing is pinned.
      bool oneIndex = std::all_of(ws.begin(), ws.end(), [&](const ir::Edge *o) {
        return o->memlet.subset == w->memlet.subset;
      });
      std::set<std::string> pins;
      if (oneIndex)
        pins = pinned(w->memlet, m.params);
      std::vector<std::size_t> freeDims;
      for (std::size_t d = 0; d < m.params.size(); ++d)
        if (!pins.count(m.params[d]))
          freeDims.push_back(d);
      int tiledFree = 0;
      for (std::size_t d : freeDims)
        tiledFree += plan.tiles[d] != 0;
      bool firstOnly =
          tiledFree == 0 || (tiledFree == 1 && plan.tiles[freeDims[0]] != 0);
      if (!firstOnly)
        return fail(ir::describe(entry, "map") + " writes " + w->memlet.str() +
                    " from several iterations; tiling would change the "
                    "order in which they reach one element of '" +
                    name + "'");
      if (reads.count(name)) {
        for (const ir::Edge *r : reads[name])
          if (r->memlet.container != name ||
              r->memlet.subset != w->memlet.subset || !freeDims.empty())
            return fail(ir::describe(entry, "map") + " reads " +
                        r->memlet.str() + " and writes " + w->memlet.str() +
                        "; tiling would reorder an iteration's read of '" +
                        name + "' and another's write");
      }
    }

  // Fresh outer parameter names: not a symbol, not a parameter in the state.
  std::set<std::string> taken(p.symbols.begin(), p.symbols.end());
  for (const ir::Node &n : s.nodes)
    if (n.kind == ir::NodeKind::MapEntry)
      taken.insert(n.map().params.begin(), n.map().params.end());
  for (std::size_t d = 0; d < m.params.size(); ++d) {
    if (!plan.tiles[d])
      continue;
    std::string name = "tile_" + m.params[d];
    for (int k = 1; taken.count(name); ++k)
      name = "tile_" + m.params[d] + "_" + std::to_string(k);
    taken.insert(name);
    plan.outerParams.push_back(name);
  }
  return CheckResult::success();
}

/// The values one parameter takes over a tile: first and last.
struct Span {
  Expr lo, last;
};

/// [lo, hi) over the spans for a memlet range whose bounds are affine in
/// the map's parameters; nullopt when they are not.
std::optional<Range> boxOf(const Range &r,
                           const std::vector<std::string> &params,
                           const std::map<std::string, Span> &spans) {
  auto b = ir::affineIn(r.begin, params);
  auto e = ir::affineIn(r.isPoint() ? r.begin : r.end, params);
  if (!b || !e)
    return std::nullopt;
  Expr lo = b->constant, hi = e->constant + (r.isPoint() ? 1 : 0);
  for (const auto &[v, c] : b->coef)
    lo = lo + Expr(c) * (c > 0 ? spans.at(v).lo : spans.at(v).last);
  for (const auto &[v, c] : e->coef)
    hi = hi + Expr(c) * (c > 0 ? spans.at(v).last : spans.at(v).lo);
  return Range(lo, hi);
}

/// The union of the boxes of `edges`' memlets, when every box is known and
/// the boxes differ by constants; otherwise `fallback`.
ir::Memlet tileMemlet(const std::vector<const ir::Edge *> &edges,
                      const std::vector<std::string> &params,
                      const std::map<std::string, Span> &spans,
                      const ir::Memlet &fallback) {
  ir::Memlet out{fallback.container, {}, fallback.wcr};
  for (const ir::Edge *e : edges)
    if (e->memlet.wcr)
      out.wcr = e->memlet.wcr;
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const ir::Subset &sub = edges[k]->memlet.subset;
    for (std::size_t d = 0; d < sub.dims.size(); ++d) {
      auto box = boxOf(sub.dims[d], params, spans);
      if (!box)
        return ir::Memlet{fallback.container, fallback.subset, out.wcr};
      if (k == 0) {
        out.subset.dims.push_back(*box);
        continue;
      }
      Range &u = out.subset.dims[d];
      auto db = (box->begin - u.begin).asConstant();
      auto de = (box->end - u.end).asConstant();
      if (!db || !de)
        return ir::Memlet{fallback.container, fallback.subset, out.wcr};
      u = Range(*db < 0 ? box->begin : u.begin, *de > 0 ? box->end : u.end);
    }
  }
  if (out.subset.dims.size() != fallback.subset.dims.size())
    return ir::Memlet{fallback.container, fallback.subset, out.wcr};
  return out;
}

} // namespace

std::optional<std::int64_t> constantUpperBound(const ir::Expr &e) {
  if (auto c = e.asConstant())
    return c;
  switch (e.kind()) {
  case ir::ExprKind::Min: {
    auto a = constantUpperBound(e.operands()[0]);
    auto b = constantUpperBound(e.operands()[1]);
    if (a && b)
      return std::min(*a, *b);
    return a ? a : b;
  }
  case ir::ExprKind::FloorDiv: {
    auto a = constantUpperBound(e.operands()[0]);
    auto d = e.operands()[1].asConstant();
    if (!a || !d || *d <= 0)
      return std::nullopt;
    return *a >= 0 ? *a / *d : -((-*a + *d - 1) / *d);
  }
  case ir::ExprKind::Add: {
    // Replace one min() term by either side; e = min(x, y) + rest is at
    // most x + rest and at most y + rest.
    const std::vector<Expr> &ops = e.operands();
    for (std::size_t k = 0; k < ops.size(); ++k) {
      if (ops[k].kind() != ir::ExprKind::Min)
        continue;
      Expr rest(0);
      for (std::size_t j = 0; j < ops.size(); ++j)
        if (j != k)
          rest = rest + ops[j];
      auto a = constantUpperBound(ops[k].operands()[0] + rest);
      auto b = constantUpperBound(ops[k].operands()[1] + rest);
      if (a && b)
        return std::min(*a, *b);
      if (a || b)
        return a ? a : b;
    }
    return std::nullopt;
  }
  default:
    return std::nullopt;
  }
}

namespace {

class MapTiling : public PlannedTransformation<Plan> {
public:
  MapTiling();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

MapTiling::MapTiling()
    : PlannedTransformation({
          .id = "map-tiling",
          .tier = Tier::Movement,
          .summary = "Split a map into an outer map over tiles and an inner "
                     "map over one tile",
          .description =
              "A map over parameters p with ranges [b, e) step s becomes an "
              "outer map over tile origins o = b, b + T·s, ... (step T·s) "
              "whose body is the original map iterating [o, min(o + T·s, e)) "
              "step s. `tile` gives T for every dimension; `tiles` "
              "([16, 0, 8]) one per dimension, 0 or 1 leaving a dimension "
              "alone; a dimension whose constant range fits in one tile is "
              "left alone. The inner map keeps its parameters, schedule (a "
              "cpu-parallel map's schedule moves to the outer map), tasklets "
              "and memlets; the memlets between the scopes cover one tile (the "
              "box the inner memlets reach over the tile, or the whole map's "
              "subset when an index is not affine). Iterations run tile by "
              "tile, so the order changes: refused when two iterations may "
              "write one element (a WCR or an overwrite) and more than one of "
              "the parameters the written index does not pin is tiled, or the "
              "first of them is not; refused when the map reads an array it "
              "writes other than element by element. Exact: every element "
              "receives its writes in the original order.",
          .params =
              {{"tile", ParamSpec::Kind::Int, std::int64_t{32},
                "tile size (in iterations) for every dimension; 0 or 1 = leave "
                "it alone",
                0.0, double(1 << 20)},
               {"tiles", ParamSpec::Kind::IntList, IntList(),
                "tile sizes, one per map dimension (0 or 1 = leave that "
                "dimension alone); overrides `tile` when not empty",
                0.0, double(1 << 20)}},
          .pattern = Pattern().node("map", ir::NodeKind::MapEntry),
      }) {}

Planned<Plan> MapTiling::plan(const ir::Program &program, const Match &match,
                              const Params &params) const {
  Planned<Plan> out;
  out.verdict = planTiling(program, match, params, out.plan);
  return out;
}

ApplyResult MapTiling::rewrite(const ir::Program &program, const Match &match,
                               const Params &params, const Plan &plan) const {
  ApplyResult r{program, {}};
  ir::Program &p = r.program;
  ir::State &s = stateNamed(p, match.state);
  const ir::Node original = *s.findNode(plan.entry);
  const ir::Node originalExit = *s.findNode(plan.exit);
  const ir::MapData &m = original.map();

  ir::MapData outer, inner = m;
  outer.schedule = m.schedule;
  if (m.schedule == ir::Schedule::CpuParallel)
    inner.schedule = ir::Schedule::Sequential;
  std::map<std::string, Span> spans;
  for (std::size_t d = 0, k = 0; d < m.params.size(); ++d) {
    const Range &rg = m.ranges[d];
    Expr last = rg.begin + (rg.size() - Expr(1)) * rg.step;
    if (!plan.tiles[d]) {
      spans[m.params[d]] = {rg.begin, last};
      continue;
    }
    Expr t(plan.tiles[d]);
    Expr o = Expr::symbol(plan.outerParams[k++]);
    outer.params.push_back(o.symbolName());
    outer.ranges.emplace_back(rg.begin, rg.end, t * rg.step);
    // The min() stays even when T·s divides the range: validation bounds
    // an outer parameter by [b, e - 1] without its step, so o + T·s alone
    // would look out of bounds.
    inner.ranges[d] = Range(o, ir::min(o + t * rg.step, rg.end), rg.step);
    spans[m.params[d]] = {o, ir::min(o + (t - Expr(1)) * rg.step, last)};
  }

  ir::Node oe, ox;
  oe.id = p.newNodeId();
  ox.id = p.newNodeId();
  oe.kind = ir::NodeKind::MapEntry;
  ox.kind = ir::NodeKind::MapExit;
  oe.label = ox.label = original.label + "_tiles";
  for (const ir::Connector &c : original.inputs) {
    oe.inputs.push_back(c);
    oe.outputs.push_back({ir::scopePartner(c.name), c.dtype});
  }
  for (const ir::Connector &c : originalExit.outputs) {
    ox.inputs.push_back({ir::scopePartner(c.name), c.dtype});
    ox.outputs.push_back(c);
  }
  ir::MapData oxData = outer;
  outer.partner = ox.id;
  oxData.partner = oe.id;
  oe.payload = outer;
  ox.payload = oxData;
  for (NodeId id : {plan.entry, plan.exit}) {
    ir::MapData &d = s.findNode(id)->map();
    NodeId partner = d.partner;
    d = inner;
    d.partner = partner;
  }

  // Memlets between the scopes: what one tile reads and writes.
  std::vector<ir::Edge> added;
  auto edge = [&](NodeId src, std::string sc, NodeId dst, std::string dc,
                  ir::Memlet memlet) {
    added.push_back(ir::Edge{p.newEdgeId(), src, std::move(sc), dst,
                             std::move(dc), std::move(memlet)});
  };
  std::map<std::string, std::vector<const ir::Edge *>> innerReads, innerWrites;
  for (const ir::Edge &e : s.edges) {
    if (e.src == plan.entry && !e.srcConn.empty())
      innerReads[ir::scopeSuffix(e.srcConn)].push_back(&e);
    if (e.dst == plan.exit && !e.dstConn.empty())
      innerWrites[ir::scopeSuffix(e.dstConn)].push_back(&e);
  }
  bool entryFed = false, exitDrained = false;
  for (ir::Edge &e : s.edges.editable()) {
    if (e.dst == plan.entry) {
      e.dst = oe.id;
      if (e.dstConn.empty())
        continue;
      std::string x = ir::scopeSuffix(e.dstConn);
      edge(oe.id, ir::scopeOut(x), plan.entry, e.dstConn,
           tileMemlet(innerReads[x], m.params, spans, e.memlet));
      entryFed = true;
    } else if (e.src == plan.exit) {
      e.src = ox.id;
      if (e.srcConn.empty())
        continue;
      std::string x = ir::scopeSuffix(e.srcConn);
      std::string in = ir::scopeIn(x);
      // One edge per connector, even when the exit fans out.
      if (std::any_of(added.begin(), added.end(), [&](const ir::Edge &a) {
            return a.dst == ox.id && a.dstConn == in;
          }))
        continue;
      edge(plan.exit, e.srcConn, ox.id, in,
           tileMemlet(innerWrites[x], m.params, spans, e.memlet));
      exitDrained = true;
    }
  }
  if (!entryFed)
    edge(oe.id, "", plan.entry, "", ir::Memlet{});
  if (!exitDrained)
    edge(plan.exit, "", ox.id, "", ir::Memlet{});
  s.edges.insert(s.edges.end(), added.begin(), added.end());

  auto at = [&](NodeId id) {
    return std::find_if(s.nodes.begin(), s.nodes.end(),
                        [&](const ir::Node &n) { return n.id == id; });
  };
  s.nodes.insert(at(plan.entry), std::move(oe));
  s.nodes.insert(std::next(at(plan.exit)), std::move(ox));
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<MapTiling>()};

} // namespace weir::transforms
