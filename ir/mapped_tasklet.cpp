#include "ir/mapped_tasklet.h"

#include "ir/error.h"

namespace weir::ir {
namespace {

Memlet pointMemlet(const std::string &container, const std::vector<Expr> &index,
                   std::optional<Wcr> wcr = std::nullopt) {
  Memlet m;
  m.container = container;
  for (const Expr &i : index)
    m.subset.dims.push_back(Range::point(i));
  m.wcr = wcr;
  return m;
}

Memlet fullMemlet(const Container &c, std::optional<Wcr> wcr = std::nullopt) {
  Memlet m;
  m.container = c.name;
  m.subset = Subset::full(c.shape);
  m.wcr = wcr;
  return m;
}

const Container &checked(const Program &p, const std::string &label,
                         const std::string &container,
                         const std::vector<Expr> &index) {
  const Container *c = p.findContainer(container);
  if (!c)
    throw Error("mapped tasklet '" + label + "' names unknown container '" +
                container + "'");
  if (c->shape.size() != index.size())
    throw Error("mapped tasklet '" + label + "' indexes '" + container +
                "' (rank " + std::to_string(c->shape.size()) + ") with " +
                std::to_string(index.size()) + " indices");
  return *c;
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

MappedTaskletIds addMappedTasklet(Program &p, State &s,
                                  const std::string &label,
                                  const std::vector<std::string> &params,
                                  const std::vector<Range> &ranges,
                                  const std::vector<MappedInput> &inputs,
                                  std::string_view code,
                                  const std::vector<MappedOutput> &outputs,
                                  AccessNodes &access, Schedule schedule) {
  if (params.size() != ranges.size())
    throw Error("mapped tasklet '" + label + "' has " +
                std::to_string(params.size()) + " parameters but " +
                std::to_string(ranges.size()) + " ranges");
  std::vector<Connector> in, out;
  for (const MappedInput &i : inputs)
    in.push_back({i.connector, checked(p, label, i.container, i.index).dtype});
  for (const MappedOutput &o : outputs)
    out.push_back({o.connector, checked(p, label, o.container, o.index).dtype});

  MappedTaskletIds ids;
  // Resolve input access nodes before adding the scope so ids follow the
  // data flow.
  std::vector<NodeId> inAccess;
  for (const MappedInput &i : inputs)
    inAccess.push_back(accessFor(p, s, access, i.container));

  if (params.empty()) {
    ids.tasklet = addTasklet(p, s, label, in, out, code);
    for (std::size_t k = 0; k < inputs.size(); ++k)
      addEdge(p, s, inAccess[k], "", ids.tasklet, inputs[k].connector,
              pointMemlet(inputs[k].container, inputs[k].index));
    for (const MappedOutput &o : outputs)
      addEdge(p, s, ids.tasklet, o.connector,
              writeAccess(p, s, access, o.container, ids.tasklet), "",
              pointMemlet(o.container, o.index, o.wcr));
    return ids;
  }

  auto [entry, exit] = addMap(p, s, label, params, ranges, schedule);
  ids.entry = entry;
  ids.exit = exit;
  ids.tasklet = addTasklet(p, s, label, in, out, code);
  // One IN_/OUT_ pair per distinct container on each side of the scope.
  std::map<std::string, bool> entryConn, exitConn;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const MappedInput &i = inputs[k];
    const Container &c = p.container(i.container);
    if (!entryConn.count(i.container)) {
      entryConn[i.container] = true;
      Node *e = s.findNode(entry);
      e->inputs.push_back({"IN_" + i.container, c.dtype});
      e->outputs.push_back({"OUT_" + i.container, c.dtype});
      addEdge(p, s, inAccess[k], "", entry, "IN_" + i.container, fullMemlet(c));
    }
    addEdge(p, s, entry, "OUT_" + i.container, ids.tasklet, i.connector,
            pointMemlet(i.container, i.index));
  }
  if (inputs.empty()) // keep the tasklet inside the scope
    addEdge(p, s, entry, "", ids.tasklet, "", Memlet{});
  for (const MappedOutput &o : outputs) {
    const Container &c = p.container(o.container);
    addEdge(p, s, ids.tasklet, o.connector, exit, "IN_" + o.container,
            pointMemlet(o.container, o.index, o.wcr));
    if (!exitConn.count(o.container)) {
      exitConn[o.container] = true;
      Node *x = s.findNode(exit);
      x->inputs.push_back({"IN_" + o.container, c.dtype});
      x->outputs.push_back({"OUT_" + o.container, c.dtype});
      addEdge(p, s, exit, "OUT_" + o.container,
              writeAccess(p, s, access, o.container, entry), "",
              fullMemlet(c, o.wcr));
    }
  }
  return ids;
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
