/// \file
/// `map-interchange` (DaCe's MapInterchange, TVM's reorder): reorder the
/// parameters of one map — two of them (`first`, `second`) or a whole
/// `permutation` — or, with `nested`, swap an outer map with the one map
/// its scope holds. Exact: refused when the new order would change the
/// order in which two iterations touch one element (a sum over two
/// reordered parameters, a read of what another iteration writes).
///
/// Ids: unchanged (a nested swap keeps both entries and exits in place and
/// exchanges their parameters and ranges).

#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/map_nest.h"
#include "transforms/map_scope.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <algorithm>
#include <sstream>

namespace weir::transforms {

namespace {

using ir::NodeId;

struct Plan {
  std::vector<std::size_t> order; ///< flat: new position k takes old order[k]
  map_nest::MapNest nest;         ///< nested: the two maps
  bool nested = false;
};

CheckResult fail(std::string why, std::vector<NodeId> nodes) {
  return CheckResult::failure(std::move(why), std::move(nodes));
}

/// `list` as a permutation of 0..n-1, or why it is not one.
std::optional<std::vector<std::size_t>>
checkPermutation(const IntList &list, std::size_t n, std::string &why) {
  std::vector<std::size_t> out(list.begin(), list.end());
  std::vector<std::size_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t k = 0; k < sorted.size(); ++k)
    if (sorted.size() != n || sorted[k] != k) {
      why = "permutation " + paramValueText(list) +
            " is not a permutation of 0.." + std::to_string(n - 1);
      return std::nullopt;
    }
  if (sorted.empty())
    why = "permutation [] is not a permutation of 0.." + std::to_string(n - 1);
  return sorted.empty() ? std::nullopt : std::optional(out);
}

/// Whether the free parameters of each conflict keep their relative order
/// when `before` becomes `after`.
std::optional<std::string>
orderChange(const std::vector<map_nest::Conflict> &cs,
            const std::vector<std::string> &before,
            const std::vector<std::string> &after) {
  for (const map_nest::Conflict &c : cs) {
    if (c.free.size() < 2)
      continue;
    std::vector<std::string> a, b;
    for (const std::string &p : before)
      if (std::find(c.free.begin(), c.free.end(), p) != c.free.end())
        a.push_back(p);
    for (const std::string &p : after)
      if (std::find(c.free.begin(), c.free.end(), p) != c.free.end())
        b.push_back(p);
    if (a != b)
      return map_nest::describe(c) +
             "; reordering them changes the order of those accesses" +
             (c.wcr ? " (the sum would reassociate)" : "");
  }
  return std::nullopt;
}

CheckResult planInterchange(const ir::Program &p, const Match &match,
                            const Params &params, Plan &out) {
  const ir::State &s = stateNamed(p, match.state);
  NodeId entry = match.node("map");
  const ir::Node &n = *s.findNode(entry);
  const ir::MapData &m = n.map();
  auto parents = ir::scopeParents(s);
  std::string name = ir::describe(n, "map");

  if (boolParam(params, "nested")) {
    std::string why;
    auto nest = map_nest::findNest(s, parents, entry, why);
    if (!nest)
      return fail(why, {entry});
    out.nested = true;
    out.nest = *nest;
    const ir::Node &inner = *s.findNode(nest->innerEntry);
    const ir::MapData &im = inner.map();
    for (const std::string &q : im.params)
      if (std::find(m.params.begin(), m.params.end(), q) != m.params.end())
        return fail("the inner " + ir::describe(inner, "map") + " binds '" + q +
                        "' again",
                    {entry, inner.id});
    if (auto dep = map_nest::rangeNaming(im, m.params))
      return fail("in the inner " + ir::describe(inner, "map") + ", " + *dep +
                      " of the outer " + name,
                  {entry, inner.id});
    std::vector<std::string> all = m.params, swapped = im.params;
    std::vector<ir::Range> ranges = m.ranges;
    all.insert(all.end(), im.params.begin(), im.params.end());
    ranges.insert(ranges.end(), im.ranges.begin(), im.ranges.end());
    swapped.insert(swapped.end(), m.params.begin(), m.params.end());
    map_nest::ScopeInfo scope = map_nest::scopeInfo(p, s, parents, entry);
    std::set<std::string> deeper;
    for (NodeId id : scope.innerMaps)
      if (id != inner.id)
        for (const std::string &q : s.findNode(id)->map().params)
          deeper.insert(q);
    scope.innerParams = deeper;
    if (auto why =
            orderChange(map_nest::conflicts(scope, all, ranges), all, swapped))
      return fail(*why, {entry, inner.id});
    return CheckResult::success();
  }

  std::size_t dims = m.params.size();
  if (dims < 2)
    return fail(name + " has one dimension; nothing to reorder (nested swaps "
                       "two maps)",
                {entry});
  const IntList &perm = intListParam(params, "permutation");
  if (!perm.empty()) {
    std::string why;
    auto order = checkPermutation(perm, dims, why);
    if (!order)
      return fail(why + " for " + name, {entry});
    out.order = *order;
  } else {
    auto a = static_cast<std::size_t>(intParam(params, "first"));
    auto b = static_cast<std::size_t>(intParam(params, "second"));
    if (a >= dims || b >= dims)
      return fail(name + " has " + std::to_string(dims) +
                      " dimensions; first and second must be below it",
                  {entry});
    if (a == b)
      return fail("first and second both name dimension " + std::to_string(a) +
                      " of " + name,
                  {entry});
    for (std::size_t k = 0; k < dims; ++k)
      out.order.push_back(k);
    std::swap(out.order[a], out.order[b]);
  }
  bool identity = true;
  for (std::size_t k = 0; k < dims; ++k)
    identity = identity && out.order[k] == k;
  if (identity)
    return fail("the permutation leaves " + name + " as it is", {entry});
  // Each range may only name parameters bound before it in the new order.
  for (std::size_t k = 0; k < dims; ++k) {
    std::vector<std::string> later;
    for (std::size_t j = k; j < dims; ++j)
      later.push_back(m.params[out.order[j]]);
    ir::MapData one;
    one.params = {m.params[out.order[k]]};
    one.ranges = {m.ranges[out.order[k]]};
    if (auto dep = map_nest::rangeNaming(one, later))
      return fail("in " + name + ", " + *dep +
                      ", which would no longer be "
                      "bound before it",
                  {entry});
  }
  std::vector<std::string> after;
  for (std::size_t k : out.order)
    after.push_back(m.params[k]);
  map_nest::ScopeInfo scope = map_nest::scopeInfo(p, s, parents, entry);
  if (auto why = orderChange(map_nest::conflicts(scope, m.params, m.ranges),
                             m.params, after))
    return fail("in " + name + ", " + *why, {entry});
  return CheckResult::success();
}

void setMap(ir::State &s, NodeId entry, std::vector<std::string> params,
            std::vector<ir::Range> ranges) {
  ir::Node &e = *s.findNode(entry);
  ir::Node &x = *s.findNode(e.map().partner);
  for (ir::Node *n : {&e, &x}) {
    n->map().params = params;
    n->map().ranges = ranges;
  }
}

/// The memlets between two nested maps after they swapped: for a fixed
/// iteration of the (new) outer map, what the (new) inner map touches.
void rederive(const ir::Program &before, ir::State &s,
              const map_nest::MapNest &nest, const ir::MapData &newInner) {
  const ir::State &old = stateNamed(before, s.name);
  auto outerSubset = [&](const ir::Edge &middle, bool entrySide) {
    // The memlet outside the nest on the matching connector.
    std::string conn = entrySide ? ir::scopePartner(middle.srcConn)
                                 : ir::scopePartner(middle.dstConn);
    for (const ir::Edge &e : old.edges)
      if (entrySide ? (e.dst == nest.outerEntry && e.dstConn == conn)
                    : (e.src == nest.outerExit && e.srcConn == conn))
        return e.memlet.subset;
    return middle.memlet.subset;
  };
  for (ir::Edge &middle : s.edges.editable()) {
    bool entrySide = middle.src == nest.outerEntry && !middle.memlet.empty();
    bool exitSide = middle.dst == nest.outerExit && !middle.memlet.empty();
    if (!entrySide && !exitSide)
      continue;
    std::optional<ir::Subset> box;
    bool agree = true;
    for (const ir::Edge &e : old.edges) {
      bool feeds = entrySide
                       ? e.src == nest.innerEntry &&
                             e.srcConn == ir::scopePartner(middle.dstConn)
                       : e.dst == nest.innerExit &&
                             e.dstConn == ir::scopePartner(middle.srcConn);
      if (!feeds || e.memlet.empty())
        continue;
      auto img =
          map_nest::image(e.memlet.subset, newInner.params, newInner.ranges);
      if (!img || (box && *box != *img))
        agree = false;
      else
        box = img;
    }
    middle.memlet.subset = agree && box ? *box : outerSubset(middle, entrySide);
  }
}

} // namespace

namespace {

class MapInterchange : public PlannedTransformation<Plan> {
public:
  MapInterchange();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

MapInterchange::MapInterchange()
    : PlannedTransformation({
          .id = "map-interchange",
          .tier = Tier::Movement,
          .summary = "Reorder the dimensions of a map, or swap two nested maps "
                     "(loop interchange)",
          .description =
              "Reorders the parameters and ranges of a map: the first "
              "parameter becomes the outermost loop, the last the innermost "
              "(the one the CPU vectorizes). `first` and `second` swap two "
              "positions; `permutation` ([2, 0, 1]: new position k takes old "
              "dimension p[k]) overrides them. With `nested`, the map must "
              "hold exactly one inner map and nothing else, and the two maps "
              "swap their parameter lists; the memlets between them are "
              "re-derived (the bounding box of the innermost memlets over the "
              "new inner map, or the outer memlet when an index is not "
              "affine). Memlets name parameters, not positions, so nothing "
              "else changes. Refused when a range depends on a parameter that "
              "would come after it (or an inner range on an outer parameter), "
              "and when two iterations that touch one element of a written "
              "container would run in another order (their results could "
              "differ: a sum reassociates, a read sees another write). Exact.",
          .params = {{"first",
                      ParamSpec::Kind::Int,
                      std::int64_t{0},
                      "position of one dimension to swap",
                      0.0,
                      {}},
                     {"second",
                      ParamSpec::Kind::Int,
                      std::int64_t{1},
                      "position of the other",
                      0.0,
                      {}},
                     {"permutation",
                      ParamSpec::Kind::IntList,
                      IntList(),
                      "old positions in their new order ([1, 0, 2]); "
                      "overrides first and second when not empty",
                      0.0,
                      {}},
                     {"nested", ParamSpec::Kind::Bool, false,
                      "swap this map with the one map its scope holds"}},
          .pattern = Pattern().node("map", ir::NodeKind::MapEntry),
      }) {}

Planned<Plan> MapInterchange::plan(const ir::Program &program,
                                   const Match &match,
                                   const Params &params) const {
  Planned<Plan> out;
  out.verdict = planInterchange(program, match, params, out.plan);
  return out;
}

ApplyResult MapInterchange::rewrite(const ir::Program &program,
                                    const Match &match, const Params &params,
                                    const Plan &p) const {
  ApplyResult r{program, {}};
  ir::State &s = stateNamed(r.program, match.state);
  const ir::MapData outer = s.findNode(match.node("map"))->map();
  if (p.nested) {
    const ir::MapData inner = s.findNode(p.nest.innerEntry)->map();
    setMap(s, p.nest.outerEntry, inner.params, inner.ranges);
    setMap(s, p.nest.innerEntry, outer.params, outer.ranges);
    rederive(program, s, p.nest, outer);
    return r;
  }
  std::vector<std::string> names;
  std::vector<ir::Range> ranges;
  for (std::size_t k : p.order) {
    names.push_back(outer.params[k]);
    ranges.push_back(outer.ranges[k]);
  }
  setMap(s, match.node("map"), names, ranges);
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<MapInterchange>()};

} // namespace weir::transforms
