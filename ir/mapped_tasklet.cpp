#include "ir/mapped_tasklet.h"

#include "ir/affine.h"
#include "ir/error.h"
#include "ir/scope.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace weir::ir {
namespace {

Memlet fullMemlet(const Container &c, std::optional<Wcr> wcr = std::nullopt) {
  Memlet m;
  m.container = c.name;
  m.subset = Subset::full(c.shape);
  m.wcr = wcr;
  return m;
}

/// The access node a new write to `container` goes to. A node nothing has
/// written yet is reused; after a write, the new write gets a fresh node (so
/// readers of the first value keep reading it and the graph stays acyclic),
/// and `scope` (the writing map's entry or tasklet) is ordered after the
/// earlier write by an empty edge.
NodeId writeAccess(Program &p, State &s, AccessNodes &access,
                   const std::string &container, NodeId scope) {
  auto it = access.find(container);
  if (it == access.end())
    return accessFor(p, s, access, container);
  NodeId prior = it->second;
  if (s.inEdges(prior).empty())
    return prior;
  bool ordered = false;
  for (const Edge *e : s.outEdges(prior))
    ordered |= e->dst == scope;
  if (!ordered)
    addEdge(p, s, prior, "", scope, "", Memlet{});
  NodeId fresh = addAccess(p, s, container);
  it->second = fresh;
  return fresh;
}

} // namespace

NodeId accessFor(Program &p, State &s, AccessNodes &access,
                 const std::string &container) {
  auto it = access.find(container);
  if (it != access.end())
    return it->second;
  NodeId id = addAccess(p, s, container);
  access.emplace(container, id);
  return id;
}

namespace {

/// One side of a mapped node: a connector and the subset it moves.
struct Region {
  std::string connector;
  std::string container;
  Subset subset;
  std::optional<Wcr> wcr;
};

/// The box that the point subset `index` sweeps over the map's ranges: per
/// dimension, an index affine in the parameters (unit-step ranges) spans
/// from its lowest to its highest value, with the gcd of its coefficients
/// as the step (2·tx + 1 sweeps 1, 3, 5, ...); any other index, the whole
/// dimension.
Subset sweptBox(const Subset &index, const std::vector<std::string> &params,
                const std::vector<Range> &ranges,
                const std::vector<Expr> &shape) {
  Subset box;
  for (std::size_t d = 0; d < index.dims.size(); ++d) {
    std::optional<Affine> a = affineIn(index.dims[d].begin, params);
    bool ok = a.has_value();
    Expr lo = ok ? a->constant : Expr(0), hi = lo;
    std::int64_t step = 0;
    for (std::size_t k = 0; ok && k < params.size(); ++k) {
      auto coef = a->coef.find(params[k]);
      if (coef == a->coef.end() || coef->second == 0)
        continue;
      ok = ranges[k].step == Expr(1);
      step = std::gcd(step, coef->second);
      Expr first = ranges[k].begin, last = ranges[k].end - Expr(1);
      Expr f(coef->second);
      lo = lo + f * (coef->second > 0 ? first : last);
      hi = hi + f * (coef->second > 0 ? last : first);
    }
    box.dims.push_back(
        ok ? Range(lo, hi + Expr(1), Expr(std::max<std::int64_t>(step, 1)))
           : Range(Expr(0), shape[d]));
  }
  return box;
}

/// The scope, the node `makeNode(inputs, outputs)` creates and the memlets
/// (see addMappedTasklet). With no params the node is added at the top
/// level.
MappedTaskletIds addMappedNode(
    Program &p, State &s, const std::string &label,
    const std::vector<std::string> &params, const std::vector<Range> &ranges,
    const std::vector<Region> &inputs, const std::vector<Region> &outputs,
    AccessNodes &access, Schedule schedule,
    const std::function<NodeId(std::vector<Connector>, std::vector<Connector>)>
        &makeNode) {
  if (params.size() != ranges.size())
    throw Error("mapped node '" + label + "' has " +
                std::to_string(params.size()) + " parameters but " +
                std::to_string(ranges.size()) + " ranges");
  auto checked = [&](const Region &r) -> const Container & {
    const Container *c = p.findContainer(r.container);
    if (!c)
      throw Error("mapped node '" + label + "' names unknown container '" +
                  r.container + "'");
    if (c->shape.size() != r.subset.dims.size())
      throw Error("mapped node '" + label + "' indexes '" + r.container +
                  "' (rank " + std::to_string(c->shape.size()) + ") with " +
                  std::to_string(r.subset.dims.size()) + " indices");
    return *c;
  };
  std::vector<Connector> in, out;
  for (const Region &r : inputs)
    in.push_back({r.connector, checked(r).dtype});
  for (const Region &r : outputs)
    out.push_back({r.connector, checked(r).dtype});
  auto memlet = [](const Region &r) {
    return Memlet{r.container, r.subset, r.wcr};
  };

  MappedTaskletIds ids;
  // Resolve input access nodes before adding the scope so ids follow the
  // data flow.
  std::vector<NodeId> inAccess;
  for (const Region &r : inputs)
    inAccess.push_back(accessFor(p, s, access, r.container));
  if (params.empty()) {
    ids.tasklet = makeNode(in, out);
    for (std::size_t k = 0; k < inputs.size(); ++k)
      addEdge(p, s, inAccess[k], "", ids.tasklet, inputs[k].connector,
              memlet(inputs[k]));
    for (const Region &r : outputs)
      addEdge(p, s, ids.tasklet, r.connector,
              writeAccess(p, s, access, r.container, ids.tasklet), "",
              memlet(r));
    return ids;
  }
  auto [entry, exit] = addMap(p, s, label, params, ranges, schedule);
  ids.entry = entry;
  ids.exit = exit;
  ids.tasklet = makeNode(in, out);
  // One IN_/OUT_ pair per distinct container on each side of the scope.
  std::map<std::string, bool> entryConn;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Region &r = inputs[k];
    const Container &c = p.container(r.container);
    if (!entryConn.count(r.container)) {
      entryConn[r.container] = true;
      Node *e = s.findNode(entry);
      e->inputs.push_back({scopeIn(r.container), c.dtype});
      e->outputs.push_back({scopeOut(r.container), c.dtype});
      addEdge(p, s, inAccess[k], "", entry, scopeIn(r.container),
              fullMemlet(c));
    }
    addEdge(p, s, entry, scopeOut(r.container), ids.tasklet, r.connector,
            memlet(r));
  }
  if (inputs.empty()) // keep the node inside the scope
    addEdge(p, s, entry, "", ids.tasklet, "", Memlet{});
  // One IN_/OUT_ pair per output: a connector has one incoming edge. A
  // container written once gets the whole container as its outer memlet; one
  // written by several outputs (a tasklet that writes a whole tile) gets one
  // pair per output, named after the output's connector, each with the box
  // its index sweeps, so the outer memlets add up to what the map writes.
  std::map<std::string, int> writes;
  for (const Region &r : outputs)
    ++writes[r.container];
  std::map<std::string, NodeId> written;
  for (const Region &r : outputs) {
    const Container &c = p.container(r.container);
    bool shared = writes[r.container] > 1;
    std::string suffix = shared ? r.container + "." + r.connector : r.container;
    addEdge(p, s, ids.tasklet, r.connector, exit, scopeIn(suffix), memlet(r));
    Node *x = s.findNode(exit);
    x->inputs.push_back({scopeIn(suffix), c.dtype});
    x->outputs.push_back({scopeOut(suffix), c.dtype});
    auto target = written.find(r.container);
    if (target == written.end())
      target = written
                   .emplace(r.container,
                            writeAccess(p, s, access, r.container, entry))
                   .first;
    Memlet outer = fullMemlet(c, r.wcr);
    if (shared)
      outer.subset = sweptBox(r.subset, params, ranges, c.shape);
    addEdge(p, s, exit, scopeOut(suffix), target->second, "", outer);
  }
  return ids;
}

Subset pointSubset(const std::vector<Expr> &index) {
  Subset subset;
  for (const Expr &i : index)
    subset.dims.push_back(Range::point(i));
  return subset;
}

} // namespace

MappedTaskletIds addMappedTasklet(Program &p, State &s,
                                  const std::string &label,
                                  const std::vector<std::string> &params,
                                  const std::vector<Range> &ranges,
                                  const std::vector<MappedInput> &inputs,
                                  std::string_view code,
                                  const std::vector<MappedOutput> &outputs,
                                  AccessNodes &access, Schedule schedule) {
  std::vector<Region> in, out;
  for (const MappedInput &i : inputs)
    in.push_back({i.connector, i.container, pointSubset(i.index), {}});
  for (const MappedOutput &o : outputs)
    out.push_back({o.connector, o.container, pointSubset(o.index), o.wcr});
  return addMappedNode(
      p, s, label, params, ranges, in, out, access, schedule,
      [&](std::vector<Connector> ic, std::vector<Connector> oc) {
        return addTasklet(p, s, label, std::move(ic), std::move(oc), code);
      });
}

MappedTaskletIds addMappedPrimitive(
    Program &p, State &s, const std::string &label,
    const std::vector<std::string> &params, const std::vector<Range> &ranges,
    const std::string &primitive, Attributes attributes,
    const std::vector<MappedRegion> &inputs,
    const std::vector<MappedRegion> &outputs, AccessNodes &access) {
  std::vector<Region> in, out;
  for (const MappedRegion &r : inputs)
    in.push_back({r.connector, r.container, r.subset, {}});
  for (const MappedRegion &r : outputs)
    out.push_back({r.connector, r.container, r.subset, r.wcr});
  return addMappedNode(
      p, s, label, params, ranges, in, out, access, Schedule::Sequential,
      [&](std::vector<Connector> ic, std::vector<Connector> oc) {
        Node n;
        n.id = p.newNodeId();
        n.kind = NodeKind::Primitive;
        n.label = label;
        n.inputs = std::move(ic);
        n.outputs = std::move(oc);
        n.payload = PrimitiveData{primitive, std::move(attributes)};
        s.nodes.push_back(std::move(n));
        return s.nodes.back().id;
      });
}

std::string addTransient(Program &p, const std::string &base, DType dtype,
                         std::vector<Expr> shape) {
  std::string name = base;
  for (int n = 1; p.findContainer(name); ++n)
    name = base + "_" + std::to_string(n);
  Container c;
  c.name = name;
  c.dtype = dtype;
  c.shape = std::move(shape);
  c.transient = true;
  p.addContainer(std::move(c));
  return name;
}

} // namespace weir::ir
