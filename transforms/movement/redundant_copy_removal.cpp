/// \file
/// `redundant-copy-removal` (DaCe's RedundantArray and RedundantSecondArray):
/// a plain copy — an access-to-access edge, or a map whose one tasklet is
/// `y = x` reading A at its parameters plus constants and writing B at its
/// parameters plus other constants (Concat, Pad, Slice and Split expand to
/// these) — between an array that exists only for the copy and another
/// one. Either the source A, written only before the copy and read only by
/// it, disappears and its producers write straight into B's slice (memlet
/// subsets shifted by the copy's offset), or the destination B, written
/// only by the copy, disappears and its readers read A's sub-box.
///
/// Ids: the copy map's nodes (entry, tasklet, exit) disappear; every other
/// node keeps its id.

#include "ir/error.h"
#include "ir/scope.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <algorithm>
#include <set>
#include <variant>

namespace weir::transforms {

namespace {

using ir::Expr;
using ir::NodeId;

std::string nodeText(const ir::Node &n) {
  return std::string(ir::nodeKindName(n.kind)) +
         (n.label.empty() ? "" : " '" + n.label + "'") + " (%" +
         std::to_string(n.id) + ")";
}

/// A tasklet whose body is `out = in` with equal connector types.
bool isIdentityTasklet(const ir::Node &n) {
  if (n.kind != ir::NodeKind::Tasklet || n.inputs.size() != 1 ||
      n.outputs.size() != 1 || n.inputs[0].dtype != n.outputs[0].dtype)
    return false;
  std::string_view body = n.tasklet().source;
  while (!body.empty() && (body.back() == '\n' || body.back() == ' '))
    body.remove_suffix(1);
  return body == n.outputs[0].name + " = " + n.inputs[0].name;
}

/// The pattern's condition: written by an access node or by a map exit fed
/// by an identity tasklet.
bool writtenByCopy(const ir::Program &, const StateGraph &g,
                   const ir::Node &n) {
  for (const ir::Edge *e : g.in(n.id)) {
    // A combining write (a reduction's `v = x` with sum) is no copy.
    if (e->memlet.empty() || e->memlet.wcr)
      continue;
    const ir::Node *src = g.node(e->src);
    if (src->kind == ir::NodeKind::Access)
      return true;
    if (src->kind == ir::NodeKind::MapExit)
      for (const ir::Edge *in : g.in(src->id))
        if (isIdentityTasklet(*g.node(in->src)))
          return true;
  }
  return false;
}

/// A plain copy into the matched access node.
struct Copy {
  NodeId source = 0, target = 0;           ///< access nodes of A and B
  NodeId entry = 0, tasklet = 0, exit = 0; ///< the copy map; 0 for an edge
  ir::EdgeId edge = 0;                     ///< the copy edge
  std::string a, b;
  std::vector<ir::Range> box; ///< the part of A copied
  std::vector<Expr> offset;   ///< B index = A index + offset
};

bool rowMajor(const ir::Container &c) {
  return c.strides.empty() || c.strides == ir::rowMajorStrides(c.shape);
}

bool mentions(const Expr &e, const std::vector<std::string> &params) {
  for (const std::string &s : e.freeSymbols())
    if (std::find(params.begin(), params.end(), s) != params.end())
      return true;
  return false;
}

std::variant<Copy, std::string> findCopy(const ir::Program &p,
                                         const StateGraph &g, NodeId target) {
  Copy c;
  c.target = target;
  c.b = g.node(target)->access().container;
  const ir::Edge *write = nullptr;
  for (const ir::Edge *e : g.in(target)) {
    if (e->memlet.empty())
      continue;
    if (write)
      return "'" + c.b + "' (%" + std::to_string(target) +
             ") is written by more than one edge";
    write = e;
  }
  if (!write)
    return "'" + c.b + "' (%" + std::to_string(target) + ") is not written";
  c.edge = write->id;
  if (write->memlet.wcr)
    return "the copy into '" + c.b + "' combines (" +
           std::string(ir::wcrName(*write->memlet.wcr)) +
           ") with what is there";
  const ir::Node &src = *g.node(write->src);
  if (src.kind == ir::NodeKind::Access) {
    c.source = src.id;
    c.a = src.access().container;
    const ir::Container &a = p.container(c.a), &b = p.container(c.b);
    if (a.shape != b.shape)
      return "the copy edge from '" + c.a + "' to '" + c.b +
             "' reshapes; only copies between equal shapes are handled";
    c.box = write->memlet.subset.dims;
    c.offset.assign(c.box.size(), Expr(0));
    return c;
  }
  if (src.kind != ir::NodeKind::MapExit)
    return "'" + c.b + "' is written by " + nodeText(src) + ", not by a copy";
  c.exit = src.id;
  c.entry = src.map().partner;
  const ir::Node &entry = *g.node(c.entry);
  const ir::MapData &m = entry.map();
  const std::string map = nodeText(entry);
  StateGraph::Edges body = g.out(c.entry);
  if (body.size() != 1 || !isIdentityTasklet(*g.node(body[0]->dst)))
    return map + " holds more than one `y = x` tasklet";
  c.tasklet = body[0]->dst;
  StateGraph::Edges tin = g.in(c.tasklet), tout = g.out(c.tasklet);
  if (tin.size() != 1 || tout.size() != 1 || tout[0]->dst != c.exit ||
      g.out(c.exit).size() != 1 || g.in(c.exit).size() != 1)
    return map + " is not one copy from one array to another";
  if (tout[0]->memlet.wcr)
    return map + " combines its copy into '" + c.b + "'";
  const ir::Edge *read = nullptr;
  for (const ir::Edge *e : g.in(c.entry))
    if (!e->memlet.empty()) {
      if (read || g.node(e->src)->kind != ir::NodeKind::Access)
        return map + " reads more than one array";
      read = e;
    }
  if (!read)
    return map + " reads no array";
  c.source = read->src;
  c.a = g.node(c.source)->access().container;
  const ir::Subset &in = tin[0]->memlet.subset, &out = tout[0]->memlet.subset;
  if (in.dims.size() != m.params.size() || out.dims.size() != m.params.size())
    return map + " copies between arrays whose rank differs from its own";
  for (std::size_t d = 0; d < m.params.size(); ++d) {
    const ir::Range &r = m.ranges[d];
    if (!in.dims[d].isPoint() || !out.dims[d].isPoint() || r.step != Expr(1))
      return map + " does not copy one element per iteration with unit steps";
    Expr param = Expr::symbol(m.params[d]);
    Expr da = in.dims[d].begin - param, db = out.dims[d].begin - param;
    if (mentions(da, m.params) || mentions(db, m.params))
      return map + " does not copy " + c.a + "[" + in.str() + "] to " + c.b +
             "[" + out.str() + "] at its parameters plus constants";
    c.box.emplace_back(r.begin + da, r.end + da);
    c.offset.push_back(db - da);
  }
  return c;
}

ir::Subset shifted(const ir::Subset &s, const std::vector<Expr> &offset,
                   int sign) {
  ir::Subset out = s;
  for (std::size_t d = 0; d < out.dims.size(); ++d) {
    Expr o = sign > 0 ? offset[d] : Expr(0) - offset[d];
    out.dims[d] =
        ir::Range(out.dims[d].begin + o, out.dims[d].end + o, out.dims[d].step);
  }
  return out;
}

/// Whether there is a path from `from` to `to` (or they are equal).
bool reaches(const StateGraph &g, NodeId from, NodeId to) {
  std::vector<NodeId> stack{from};
  std::set<NodeId> seen{from};
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    if (n == to)
      return true;
    for (const ir::Edge *e : g.out(n))
      if (seen.insert(e->dst).second)
        stack.push_back(e->dst);
  }
  return false;
}

std::vector<NodeId> accessNodes(const ir::State &s, const std::string &c) {
  std::vector<NodeId> out;
  for (const ir::Node &n : s.nodes)
    if (n.kind == ir::NodeKind::Access && n.access().container == c)
      out.push_back(n.id);
  return out;
}

/// Why `c` is used in a state other than `state`, or nullopt.
std::optional<std::string> usedElsewhere(const ir::Program &p,
                                         const std::string &c,
                                         const std::string &state) {
  for (const ir::State &s : p.states) {
    if (s.name == state)
      continue;
    ir::Program one;
    one.states.push_back(s);
    if (containerUsed(one, c))
      return "'" + c + "' is also used in state '" + s.name + "'";
  }
  return std::nullopt;
}

/// Why a node that touches `c` through `e` is one a shifted subset would
/// not steer (a library node or primitive addresses memory itself).
std::optional<std::string> unsteerable(const StateGraph &g, const ir::Edge &e,
                                       const std::string &c) {
  for (NodeId id : {e.src, e.dst}) {
    const ir::Node &n = *g.node(id);
    if (n.kind == ir::NodeKind::Library || n.kind == ir::NodeKind::Primitive)
      return "'" + c + "' is accessed by " + nodeText(n) +
             ", which addresses memory by its own strides, not by the memlet";
  }
  return std::nullopt;
}

enum class Removed { Source, Target };

struct Plan {
  Copy copy;
  Removed removed = Removed::Source;
  std::vector<std::pair<NodeId, NodeId>> order; ///< ordering edges to add
};

/// The top-level node whose execution performs a write into access node
/// `into` through `e`.
NodeId writer(const StateGraph &g, const ir::Edge &e, NodeId into) {
  const ir::Node &n = *g.node(e.src);
  if (n.kind == ir::NodeKind::MapExit)
    return n.map().partner;
  if (n.kind == ir::NodeKind::Access)
    return into; // an access-to-access copy runs at its destination
  return n.id;
}

std::optional<std::string> commonChecks(const ir::Program &p, const Copy &c,
                                        const std::string &state) {
  if (c.a == c.b)
    return "the copy reads and writes '" + c.a + "'";
  const ir::Container &a = p.container(c.a), &b = p.container(c.b);
  if (a.dtype != b.dtype)
    return "'" + c.a + "' and '" + c.b + "' differ in dtype";
  for (const ir::Container *x : {&a, &b})
    if (!rowMajor(*x))
      return "'" + x->name + "' is not row-major; the layouts differ";
  (void)state;
  return std::nullopt;
}

/// A, read only by the copy, goes; its producers write B's slice.
std::optional<std::string> planSource(const ir::Program &p, const StateGraph &g,
                                      const std::string &state, Plan &plan) {
  const Copy &c = plan.copy;
  if (auto why = notPlainTransient(p, c.a))
    return why;
  if (auto why = usedElsewhere(p, c.a, state))
    return why;
  const ir::Container &a = p.container(c.a);
  for (std::size_t d = 0; d < c.box.size(); ++d)
    if (c.box[d] != ir::Range(Expr(0), a.shape[d]))
      return "the copy reads " + c.a + "[" + ir::Subset{c.box}.str() +
             "], not all of '" + c.a + "'";
  auto parents = ir::scopeParents(g.state());
  std::vector<NodeId> writers;
  bool fullWrite = false;
  for (const ir::Edge &e : g.state().edges) {
    if (e.memlet.container != c.a)
      continue;
    if (auto why = unsteerable(g, e, c.a))
      return why;
  }
  for (NodeId n : accessNodes(g.state(), c.a)) {
    if (parents[n] != 0)
      return "'" + c.a + "' has an access node (%" + std::to_string(n) +
             ") inside a map";
    if (!reaches(g, n, c.source))
      return "'" + c.a + "' (%" + std::to_string(n) +
             ") is not ordered before the copy";
    for (const ir::Edge *e : g.out(n))
      if (!e->memlet.empty() && e->id != (c.entry ? 0 : c.edge) &&
          !(c.entry && e->dst == c.entry && n == c.source))
        return "'" + c.a + "' is read by " + nodeText(*g.node(e->dst)) +
               " besides the copy";
    for (const ir::Edge *e : g.in(n)) {
      if (e->memlet.empty())
        continue;
      writers.push_back(writer(g, *e, n));
      fullWrite |=
          !e->memlet.wcr && e->memlet.subset == ir::Subset::full(a.shape);
    }
  }
  if (!fullWrite)
    return "no single write covers all of '" + c.a +
           "'; its unwritten elements would not reach '" + c.b + "'";
  // B's other accesses, through views of it too, must stay on their side
  // of the producers.
  NodeId start = c.entry ? c.entry : c.target;
  std::vector<NodeId> others = accessNodes(g.state(), c.b);
  for (const auto &[name, v] : p.containers)
    if (v.viewOf == c.b)
      for (NodeId x : accessNodes(g.state(), name))
        others.push_back(x);
  for (NodeId x : others) {
    if (x == c.target)
      continue;
    if (parents[x] != 0)
      return "'" + c.b + "' has an access node (%" + std::to_string(x) +
             ") inside a map";
    if (reaches(g, x, start)) {
      for (const ir::Edge *e : g.out(x))
        if (!e->memlet.empty())
          return "'" + c.b + "' is read by " + nodeText(*g.node(e->dst)) +
                 " before the copy; writing its slice earlier would change "
                 "what it reads";
      for (NodeId w : writers) {
        if (w != x && reaches(g, w, x))
          return "'" + c.b + "' (%" + std::to_string(x) +
                 ") is written after " + nodeText(*g.node(w)) +
                 ", which writes '" + c.a +
                 "', but before the copy; it would overwrite the slice";
        plan.order.emplace_back(x, w);
      }
    } else if (!reaches(g, c.target, x)) {
      return "'" + c.b + "' (%" + std::to_string(x) +
             ") is accessed unordered with the copy";
    }
  }
  plan.removed = Removed::Source;
  return std::nullopt;
}

/// B, written only by the copy, goes; its readers read A's sub-box.
std::optional<std::string> planTarget(const ir::Program &p, const StateGraph &g,
                                      const std::string &state, Plan &plan) {
  const Copy &c = plan.copy;
  if (auto why = notPlainTransient(p, c.b))
    return why;
  if (auto why = usedElsewhere(p, c.b, state))
    return why;
  const ir::Container &b = p.container(c.b);
  for (std::size_t d = 0; d < c.box.size(); ++d)
    if (c.box[d].begin + c.offset[d] != Expr(0) ||
        c.box[d].end + c.offset[d] != b.shape[d] || c.box[d].step != Expr(1))
      return "the copy writes only part of '" + c.b + "'";
  auto parents = ir::scopeParents(g.state());
  for (const ir::Edge &e : g.state().edges)
    if (e.memlet.container == c.b)
      if (auto why = unsteerable(g, e, c.b))
        return why;
  for (NodeId x : accessNodes(g.state(), c.b)) {
    if (parents[x] != 0)
      return "'" + c.b + "' has an access node (%" + std::to_string(x) +
             ") inside a map";
    for (const ir::Edge *e : g.in(x))
      if (!e->memlet.empty() && e->id != c.edge)
        return "'" + c.b + "' is also written by " + nodeText(*g.node(e->src));
    if (x != c.target && !reaches(g, c.target, x))
      for (const ir::Edge *e : g.out(x))
        if (!e->memlet.empty())
          return "'" + c.b + "' is read by " + nodeText(*g.node(e->dst)) +
                 " not after the copy";
  }
  // What B's readers would read instead must not change after the copy.
  std::vector<std::string> roots{c.a};
  if (p.container(c.a).isView())
    roots.push_back(p.container(c.a).viewOf);
  for (const std::string &r : roots)
    for (NodeId y : accessNodes(g.state(), r))
      for (const ir::Edge *e : g.in(y))
        if (!e->memlet.empty() && !reaches(g, y, c.source))
          return "'" + r + "' is written at %" + std::to_string(y) +
                 " after the copy or unordered with it; '" + c.b +
                 "''s readers would see the new values";
  plan.removed = Removed::Target;
  return std::nullopt;
}

CheckResult planCopyRemoval(const ir::Program &p, const Match &match,
                            Plan &plan) {
  const ir::State &s = stateNamed(p, match.state);
  std::shared_ptr<const StateGraph> shared = sharedStateGraph(s);
  const StateGraph &g = *shared;
  NodeId target = match.node("target");
  auto found = findCopy(p, g, target);
  if (auto *why = std::get_if<std::string>(&found))
    return CheckResult::failure(*why, {target});
  plan.copy = std::get<Copy>(found);
  const Copy &c = plan.copy;
  std::vector<NodeId> nodes{c.source, c.target};
  if (c.entry)
    nodes.push_back(c.entry);
  if (auto why = commonChecks(p, c, s.name))
    return CheckResult::failure(*why, nodes);
  auto source = planSource(p, g, s.name, plan);
  if (!source)
    return CheckResult::success();
  plan.order.clear();
  auto dest = planTarget(p, g, s.name, plan);
  if (!dest)
    return CheckResult::success();
  return CheckResult::failure(
      "cannot remove the source '" + c.a + "': " + *source +
          "; cannot remove the destination '" + c.b + "': " + *dest,
      nodes);
}

void addOrdering(ir::Program &p, ir::State &s, NodeId from, NodeId to) {
  for (const ir::Edge &e : s.edges)
    if (e.src == from && e.dst == to && e.memlet.empty())
      return;
  ir::addEdge(p, s, from, "", to, "", ir::Memlet{});
}

} // namespace

namespace {

class RedundantCopyRemoval : public PlannedTransformation<Plan> {
public:
  RedundantCopyRemoval();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

RedundantCopyRemoval::RedundantCopyRemoval()
    : PlannedTransformation({
          .id = "redundant-copy-removal",
          .tier = Tier::Movement,
          .summary =
              "Remove an array that only feeds, or only receives, a plain copy",
          .description =
              "A plain copy from array A to array B — an access-to-access edge "
              "between equal shapes, or a map whose one tasklet is `y = x`, "
              "reading A at its parameters plus constants and writing B at its "
              "parameters plus other constants, as Concat, Pad, Slice and "
              "Split expand — loses one of the two arrays. Source removal "
              "(tried first): A is a plain transient of this state, the copy "
              "reads all of it, nothing else reads it, every write of it comes "
              "before the copy, one of them writes all of it, and only maps "
              "and tasklets write it; its producers then write B's slice "
              "directly (subsets shifted by the copy's offset), after whatever "
              "wrote B before the copy. Destination removal: B is a plain "
              "transient written only by the copy, which writes all of it, "
              "read only by maps and tasklets after the copy, and A is not "
              "written after the copy; B's readers then read A's sub-box. "
              "Refused, naming the arrays and nodes, for arguments, constants "
              "and views in the removed role, other readers or writers, "
              "layouts that are not row-major, different dtypes, partial "
              "copies, and orderings the rewrite would break. Exact.",
          .pattern =
              Pattern().node("target", ir::NodeKind::Access, {}, writtenByCopy),
      }) {}

Planned<Plan> RedundantCopyRemoval::plan(const ir::Program &program,
                                         const Match &match,
                                         const Params &params) const {
  Planned<Plan> out;
  out.verdict = planCopyRemoval(program, match, out.plan);
  return out;
}

ApplyResult RedundantCopyRemoval::rewrite(const ir::Program &program,
                                          const Match &match,
                                          const Params &params,
                                          const Plan &plan) const {
  const Copy &c = plan.copy;
  ApplyResult r{program, {}};
  ir::State &s = stateNamed(r.program, match.state);
  // Ordering the copy had (edges into its map) now orders its target.
  std::vector<NodeId> before;
  if (c.entry)
    for (const ir::Edge &e : s.edges)
      if (e.dst == c.entry && e.src != c.source)
        before.push_back(e.src);
  if (c.entry) {
    for (NodeId n : {c.entry, c.tasklet, c.exit})
      removeNode(s, n, &r.idMap);
  } else {
    s.edges.eraseIf([&](const ir::Edge &e) { return e.id == c.edge; });
  }
  const std::string &gone = plan.removed == Removed::Source ? c.a : c.b;
  const std::string &kept = plan.removed == Removed::Source ? c.b : c.a;
  int sign = plan.removed == Removed::Source ? 1 : -1;
  s.edges.editWhere(
      [&](const ir::Edge &e) { return e.memlet.container == gone; },
      [&](ir::Edge &e) {
        e.memlet.subset = shifted(e.memlet.subset, c.offset, sign);
      });
  renameContainerUses(r.program, gone, kept);
  for (NodeId n : before)
    addOrdering(r.program, s, n, c.target);
  addOrdering(r.program, s, c.source, c.target);
  for (auto [x, w] : plan.order)
    addOrdering(r.program, s, x, w);
  r.program.containers.erase(gone);
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<RedundantCopyRemoval>()};

} // namespace weir::transforms
