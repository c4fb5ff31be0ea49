/// \file
/// `local-storage` (DaCe's InLocalStorage/OutLocalStorage, TVM's
/// cache_read/cache_write): in a tiled nest — an outer map whose body holds
/// an inner map — the part of one array the inner map reads in one tile is
/// copied into a small transient buffer before the inner map runs, and the
/// inner map reads the buffer (index minus the tile's origin). With
/// `direction = out` the inner map writes the buffer instead and a copy
/// after it stores the tile into the array.
///
/// Ids: every node keeps its id; the buffer's access node and the copy
/// map's entry, tasklet and exit are new.

#include "ir/affine.h"
#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/movement/map_tiling.h"
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

/// How one dimension of the array is accessed: Σ coef·p + base + k with k
/// in [kmin, kmax] over the accesses.
struct Dim {
  std::map<std::string, std::int64_t> coef;
  Expr base;
  std::int64_t kmin = 0, kmax = 0;
  Expr lo, hi;             ///< the box in this dimension, [lo, hi)
  std::int64_t extent = 1; ///< constant bound of hi - lo
};

struct Plan {
  bool in = true;
  NodeId outer = 0, inner = 0, innerExit = 0, outerExit = 0;
  std::string array;
  std::vector<const ir::Edge *> accesses; ///< tasklet memlets of the array
  std::vector<Dim> dims;
};

/// Fills plan.dims from the accesses, or says why the box is unusable.
std::optional<std::string> analyzeBox(const ir::Program &p,
                                      const ir::MapData &m, Plan &plan) {
  const ir::Container &c = p.container(plan.array);
  plan.dims.assign(c.shape.size(), Dim{});
  std::map<std::string, std::int64_t> span; // constant bound of end - begin
  for (std::size_t k = 0; k < m.params.size(); ++k) {
    const Range &r = m.ranges[k];
    for (const Expr *e : {&r.begin, &r.end, &r.step})
      for (const std::string &v : e->freeSymbols())
        if (std::find(m.params.begin(), m.params.end(), v) != m.params.end())
          return "range " + m.params[k] + " = " + r.str() +
                 " depends on a parameter of the inner map";
    // The first and last index a tile takes lie at most span - 1 apart.
    auto count = constantUpperBound(r.size());
    auto step = r.step.asConstant();
    if (count && step)
      span[m.params[k]] = std::max<std::int64_t>((*count - 1) * *step + 1, 1);
    else if (auto b = constantUpperBound(r.end - r.begin))
      span[m.params[k]] = std::max<std::int64_t>(*b, 1);
  }
  for (std::size_t a = 0; a < plan.accesses.size(); ++a) {
    const ir::Memlet &mem = plan.accesses[a]->memlet;
    for (std::size_t d = 0; d < plan.dims.size(); ++d) {
      const Range &r = mem.subset.dims[d];
      if (!r.isPoint())
        return mem.str() + " is not a single element";
      auto f = ir::affineIn(r.begin, m.params);
      if (!f)
        return mem.str() + " is not affine in the inner parameters";
      std::erase_if(f->coef, [](const auto &kv) { return kv.second == 0; });
      for (const auto &[v, co] : f->coef)
        if (co < 0)
          return mem.str() + " decreases with " + v;
      Dim &dim = plan.dims[d];
      if (a == 0) {
        dim.coef = f->coef;
        dim.base = f->constant;
        continue;
      }
      auto delta = (f->constant - dim.base).asConstant();
      if (f->coef != dim.coef || !delta)
        return mem.str() + " and " + plan.accesses[0]->memlet.str() +
               " are not a constant offset apart";
      dim.kmin = std::min(dim.kmin, *delta);
      dim.kmax = std::max(dim.kmax, *delta);
    }
  }
  for (Dim &dim : plan.dims) {
    Expr lo = dim.base + Expr(dim.kmin), hi = dim.base + Expr(dim.kmax + 1);
    std::int64_t extent = dim.kmax - dim.kmin + 1;
    for (const auto &[v, co] : dim.coef) {
      std::size_t k =
          std::find(m.params.begin(), m.params.end(), v) - m.params.begin();
      const Range &r = m.ranges[k];
      if (!span.count(v))
        return "the tile's extent in " + v + " = " + r.str() +
               " has no constant bound";
      lo = lo + Expr(co) * r.begin;
      // The last index taken is at most both; a validated map reads in
      // bounds at end - 1, and validation can bound a min() of the two.
      Expr last = r.end - Expr(1);
      if (r.step != Expr(1))
        last = ir::min(last, r.begin + Expr(span[v] - 1));
      hi = hi + Expr(co) * last;
      extent += co * (span[v] - 1);
    }
    dim.lo = lo;
    dim.hi = hi;
    dim.extent = extent;
  }
  return std::nullopt;
}

/// Why `array` cannot be staged, or nullopt with `plan` filled.
std::optional<std::string> planArray(const ir::Program &p, const ir::State &s,
                                     const std::string &array, Plan &plan) {
  plan.array = array;
  plan.accesses.clear();
  const ir::Node &inner = *s.findNode(plan.inner);
  const ir::Node &outer = *s.findNode(plan.outer);
  std::string a = "'" + array + "'";
  int feeds = 0;
  for (const ir::Edge &e : s.edges) {
    bool innerSide = plan.in ? e.src == plan.inner : e.dst == plan.innerExit;
    if (e.memlet.container != array)
      continue;
    if (innerSide) {
      NodeId other = plan.in ? e.dst : e.src;
      const ir::Node *n = s.findNode(other);
      if (n->kind != ir::NodeKind::Tasklet)
        return a + " is " + (plan.in ? "read" : "written") + " by " +
               ir::describe(*n) + " inside the inner map, not by a tasklet";
      if (e.memlet.wcr)
        return a + " is written with WCR " +
               std::string(ir::wcrName(*e.memlet.wcr)) + " by " +
               ir::describe(*n) + "; the buffer would not hold " + a +
               "'s old values";
      plan.accesses.push_back(&e);
    }
    if (plan.in) {
      if (e.dst == plan.inner)
        feeds += e.src == plan.outer ? 1 : 2;
      if (e.dst == plan.innerExit || e.dst == plan.outerExit)
        return a + " is written inside the nest of " +
               ir::describe(outer, "map") + "; a staged copy would go stale";
    } else {
      if (e.src == plan.innerExit)
        feeds += e.dst == plan.outerExit ? 1 : 2;
      if (e.src == plan.inner || e.src == plan.outer)
        return a + " is read inside the nest of " + ir::describe(outer, "map") +
               "; it would see the tile before it is stored";
      if (e.dst == plan.outerExit && e.src != plan.innerExit)
        return a + " is also written by " + ir::describe(*s.findNode(e.src)) +
               " inside the nest of " + ir::describe(outer, "map");
    }
  }
  if (feeds != 1)
    return "the inner " + ir::describe(inner, "map") +
           (plan.in ? " reads " : " writes ") + a +
           " other than through exactly one edge " +
           (plan.in ? "from " : "to ") + "the outer " +
           ir::describe(outer, "map");
  if (plan.accesses.empty())
    return "no tasklet of the inner " + ir::describe(inner, "map") +
           (plan.in ? " reads " : " writes ") + a;
  if (auto why = analyzeBox(p, inner.map(), plan))
    return "the tile of " + a + " is not a box the buffer can hold: " + *why;
  if (!plan.in) {
    // The copy stores the whole box, so the writes must cover it exactly.
    std::set<std::string> used;
    const ir::MapData &m = inner.map();
    for (const Dim &d : plan.dims) {
      bool unit =
          d.coef.size() == 1 && d.coef.begin()->second == 1 && d.kmin == d.kmax;
      if (unit) {
        const std::string &v = d.coef.begin()->first;
        std::size_t k =
            std::find(m.params.begin(), m.params.end(), v) - m.params.begin();
        unit = m.ranges[k].step == Expr(1) && used.insert(v).second;
      }
      if (!unit)
        return "the writes " + plan.accesses[0]->memlet.str() + " of " + a +
               " do not cover their box exactly (one distinct unit-step "
               "parameter per dimension, one index), so storing the buffer "
               "would write elements the map never wrote";
    }
  }
  return std::nullopt;
}

CheckResult planStorage(const ir::Program &p, const Match &match,
                        const Params &params, Plan &plan) {
  const ir::State &s = stateNamed(p, match.state);
  plan.outer = match.node("outer");
  plan.inner = match.node("inner");
  plan.in = stringParam(params, "direction") == "in";
  const ir::Node &outer = *s.findNode(plan.outer);
  const ir::Node &inner = *s.findNode(plan.inner);
  plan.outerExit = outer.map().partner;
  plan.innerExit = inner.map().partner;
  auto fail = [&](std::string why) {
    return CheckResult::failure(std::move(why), {plan.outer, plan.inner});
  };
  ir::ScopeParents parents = ir::scopeParents(s);
  if (parents[plan.inner] != plan.outer)
    return fail(ir::describe(inner, "map") + " is not directly inside " +
                ir::describe(outer, "map"));
  // A map that only copies into a buffer inside the nest (this
  // transformation's own load map) would be staged again, forever.
  std::vector<const ir::Node *> body;
  for (NodeId id : parents.childrenOf(plan.inner))
    if (id != plan.innerExit)
      body.push_back(s.findNode(id));
  auto isCopy = [](const ir::Node &n) {
    if (n.kind != ir::NodeKind::Tasklet || n.inputs.size() != 1 ||
        n.outputs.size() != 1)
      return false;
    std::string code = n.tasklet().source;
    std::erase_if(code,
                  [](char c) { return c == ' ' || c == ';' || c == '\n'; });
    return code == n.outputs[0].name + "=" + n.inputs[0].name;
  };
  bool intoNest = false;
  for (const ir::Edge &e : s.edges)
    if (e.src == plan.innerExit)
      intoNest |= e.dst != plan.outerExit;
  if (body.size() == 1 && isCopy(*body[0]) && intoNest)
    return fail(ir::describe(inner, "map") +
                " only copies into a buffer inside "
                "the nest; staging its data would copy it again");
  // Candidates: the arrays moving between the two scopes on this side.
  std::vector<std::string> candidates;
  for (const ir::Edge &e : s.edges) {
    bool between = plan.in ? e.src == plan.outer && e.dst == plan.inner
                           : e.src == plan.innerExit && e.dst == plan.outerExit;
    if (between && !e.memlet.empty() &&
        std::find(candidates.begin(), candidates.end(), e.memlet.container) ==
            candidates.end())
      candidates.push_back(e.memlet.container);
  }
  const std::string &wanted = stringParam(params, "array");
  std::string side = plan.in ? "reads" : "writes";
  if (!wanted.empty()) {
    if (std::find(candidates.begin(), candidates.end(), wanted) ==
        candidates.end())
      return fail("the inner " + ir::describe(inner, "map") + " " + side +
                  " no '" + wanted + "' through the outer " +
                  ir::describe(outer, "map"));
    if (auto why = planArray(p, s, wanted, plan))
      return fail(*why);
    return CheckResult::success();
  }
  std::string reasons;
  for (const std::string &c : candidates) {
    auto why = planArray(p, s, c, plan);
    if (!why)
      return CheckResult::success();
    reasons += (reasons.empty() ? "" : "; ") + *why;
  }
  if (candidates.empty())
    return fail("the inner " + ir::describe(inner, "map") + " " + side +
                " no array through the outer " + ir::describe(outer, "map"));
  return fail(reasons);
}

} // namespace

namespace {

class LocalStorage : public PlannedTransformation<Plan> {
public:
  LocalStorage();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

LocalStorage::LocalStorage()
    : PlannedTransformation({
          .id = "local-storage",
          .tier = Tier::Movement,
          .summary = "Stage the tile an inner map reads (or writes) in a small "
                     "local buffer",
          .description =
              "On a tiled nest (an outer map whose body holds the inner map; "
              "map-tiling makes one), `direction = in` copies the box of array "
              "A that the inner map's tasklets read in one tile into a new "
              "transient buffer (host storage, shape = the box's largest "
              "extent) with a copy map between the two map entries, and the "
              "tasklets read the buffer at their index minus the box's origin. "
              "`direction = out` lets the tasklets write the buffer and a copy "
              "map after the inner map stores the tile into A. `array` names A "
              "(empty = the first array that qualifies). Every access must be "
              "a tasklet's point memlet whose index is affine in the inner "
              "parameters with non-negative coefficients, equal ones across "
              "accesses and constant offsets between them; each inner range's "
              "extent needs a constant bound (min(o + 16, e) - o <= 16). "
              "Refused when A is written inside the nest (in) or read there "
              "(out), when the writes do not cover their box exactly (out: one "
              "distinct unit-step parameter per dimension, one index) and for "
              "WCR writes (out: the buffer does not hold A's old values). The "
              "buffer index is clamped into the buffer (a no-op, so "
              "validation's interval check sees it in bounds). Exact.",
          .params =
              {{"array", ParamSpec::Kind::String, std::string(),
                "the array to stage; empty = the first one that qualifies",
                std::nullopt, std::nullopt},
               {"direction",
                ParamSpec::Kind::String,
                std::string("in"),
                "in: stage what the inner map reads; out: what it writes",
                std::nullopt,
                std::nullopt,
                {"in", "out"}}},
          .pattern = Pattern()
                         .node("outer", ir::NodeKind::MapEntry)
                         .node("inner", ir::NodeKind::MapEntry)
                         .edge("outer", "inner"),
      }) {}

Planned<Plan> LocalStorage::plan(const ir::Program &program, const Match &match,
                                 const Params &params) const {
  Planned<Plan> out;
  out.verdict = planStorage(program, match, params, out.plan);
  return out;
}

ApplyResult LocalStorage::rewrite(const ir::Program &program,
                                  const Match &match, const Params &params,
                                  const Plan &plan) const {
  ApplyResult r{program, {}};
  ir::Program &p = r.program;
  ir::State &s = stateNamed(p, match.state);
  const ir::Container &src = p.container(plan.array);
  const std::string a = plan.array;
  std::vector<ir::EdgeId> accessIds;
  for (const ir::Edge *e : plan.accesses)
    accessIds.push_back(e->id);

  ir::Container local;
  local.name = freshContainerName(p, a + "_local");
  local.dtype = src.dtype;
  for (const Dim &d : plan.dims)
    local.shape.push_back(Expr(d.extent));
  local.strides = ir::rowMajorStrides(local.shape);
  local.storage = ir::Storage::Host;
  local.transient = true;
  const std::string l = local.name;
  p.addContainer(local);

  // Buffer index of an array index: minus the box's origin, clamped (a
  // no-op) so validation's interval arithmetic sees it inside the buffer.
  auto localIndex = [&](const ir::Subset &arrayIndex) {
    ir::Subset out;
    for (std::size_t d = 0; d < plan.dims.size(); ++d) {
      Expr rel = arrayIndex.dims[d].begin - plan.dims[d].lo;
      if (rel.asConstant())
        out.dims.push_back(Range::point(rel));
      else
        out.dims.push_back(Range::point(
            ir::min(ir::max(rel, Expr(0)), Expr(plan.dims[d].extent - 1))));
    }
    return out;
  };
  ir::Subset box, whole = ir::Subset::full(local.shape);
  for (const Dim &d : plan.dims)
    box.dims.emplace_back(d.lo, d.hi);

  // Redirect the tasklets' memlets and the inner scope's connectors. The
  // connectors are found from the edges (an expansion or a fusion may have
  // named them after something other than the container).
  std::set<std::string> bodyConns; // the scope's side facing the tasklets
  std::string feedConn;            // the side facing the outer map
  for (const ir::Edge &e : s.edges)
    if (e.memlet.container == a &&
        (plan.in ? e.src == plan.outer && e.dst == plan.inner
                 : e.src == plan.innerExit && e.dst == plan.outerExit))
      feedConn = plan.in ? e.dstConn : e.srcConn;
  for (ir::EdgeId id : accessIds) {
    ir::Edge &e = edgeWithId(s, id);
    std::string &conn = plan.in ? e.srcConn : e.dstConn;
    bodyConns.insert(conn);
    e.memlet = ir::Memlet{l, localIndex(e.memlet.subset), std::nullopt};
    conn = (plan.in ? ir::scopeOut(l) : ir::scopeIn(l));
  }
  ir::Node &scope = *s.findNode(plan.in ? plan.inner : plan.innerExit);
  auto &outerSide = plan.in ? scope.inputs : scope.outputs;
  auto &bodySide = plan.in ? scope.outputs : scope.inputs;
  for (ir::Connector &c : outerSide)
    if (c.name == feedConn)
      c.name = (plan.in ? ir::scopeIn(l) : ir::scopeOut(l));
  std::erase_if(bodySide, [&](const ir::Connector &c) {
    return bodyConns.count(c.name) > 0;
  });
  bodySide.push_back({(plan.in ? ir::scopeOut(l) : ir::scopeIn(l)), src.dtype});

  std::size_t firstNew = s.nodes.size();
  NodeId access = ir::addAccess(p, s, l);
  std::set<std::string> taken(p.symbols.begin(), p.symbols.end());
  for (const ir::Node &n : s.nodes)
    if (n.kind == ir::NodeKind::MapEntry)
      taken.insert(n.map().params.begin(), n.map().params.end());
  std::vector<std::string> copyParams;
  std::vector<Range> ranges;
  ir::Subset point;
  for (std::size_t d = 0; d < plan.dims.size(); ++d) {
    std::string v = "s" + std::to_string(d);
    for (int k = 1; taken.count(v); ++k)
      v = "s" + std::to_string(d) + "_" + std::to_string(k);
    copyParams.push_back(v);
    ranges.push_back(box.dims[d]);
    point.dims.push_back(Range::point(Expr::symbol(v)));
  }
  auto [ce, cx] =
      ir::addMap(p, s, (plan.in ? "load_" : "store_") + a, copyParams, ranges);
  NodeId copy = ir::addTasklet(p, s, (plan.in ? "load_" : "store_") + a,
                               {{"v", src.dtype}}, {{"w", src.dtype}}, "w = v");
  const std::string from = plan.in ? a : l, to = plan.in ? l : a;
  s.findNode(ce)->inputs.push_back({ir::scopeIn(from), src.dtype});
  s.findNode(ce)->outputs.push_back({ir::scopeOut(from), src.dtype});
  s.findNode(cx)->inputs.push_back({ir::scopeIn(to), src.dtype});
  s.findNode(cx)->outputs.push_back({ir::scopeOut(to), src.dtype});
  ir::Subset fromPoint = plan.in ? point : localIndex(point);
  ir::Subset toPoint = plan.in ? localIndex(point) : point;
  ir::addEdge(p, s, ce, ir::scopeOut(from), copy, "v",
              ir::Memlet{from, fromPoint, std::nullopt});
  ir::addEdge(p, s, copy, "w", cx, ir::scopeIn(to),
              ir::Memlet{to, toPoint, std::nullopt});

  if (plan.in) {
    // outer -> load map -> buffer -> inner.
    s.edges.editWhere(
        [&](const ir::Edge &e) {
          return e.src == plan.outer && e.dst == plan.inner &&
                 e.memlet.container == a;
        },
        [&](ir::Edge &e) {
          e.dst = ce;
          e.dstConn = ir::scopeIn(a);
          e.memlet.subset = box;
        });
    ir::addEdge(p, s, cx, ir::scopeOut(l), access, "",
                ir::Memlet{l, whole, {}});
    ir::addEdge(p, s, access, "", plan.inner, ir::scopeIn(l),
                ir::Memlet{l, whole, {}});
    // Keep the nest visible as one (an ordering edge) when the inner map
    // read nothing else through the outer one.
    if (std::none_of(s.edges.begin(), s.edges.end(), [&](const ir::Edge &e) {
          return e.src == plan.outer && e.dst == plan.inner;
        }))
      ir::addEdge(p, s, plan.outer, "", plan.inner, "", ir::Memlet{});
  } else {
    // inner exit -> buffer -> store map -> outer exit.
    s.edges.editWhere(
        [&](const ir::Edge &e) {
          return e.src == plan.innerExit && e.dst == plan.outerExit &&
                 e.memlet.container == a;
        },
        [&](ir::Edge &e) {
          e.src = cx;
          e.srcConn = ir::scopeOut(a);
          e.memlet.subset = box;
        });
    ir::addEdge(p, s, plan.innerExit, ir::scopeOut(l), access, "",
                ir::Memlet{l, whole, {}});
    ir::addEdge(p, s, access, "", ce, ir::scopeIn(l), ir::Memlet{l, whole, {}});
  }

  // The new nodes sit just before the inner map (in) or after its exit.
  auto pos = [&](NodeId id) {
    return std::find_if(s.nodes.begin(), s.nodes.end(),
                        [&](const ir::Node &n) { return n.id == id; });
  };
  auto at = plan.in ? pos(plan.inner) : std::next(pos(plan.innerExit));
  s.nodes.rotate(at, s.nodes.begin() + static_cast<std::ptrdiff_t>(firstNew),
                 s.nodes.end());
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<LocalStorage>()};

} // namespace weir::transforms
