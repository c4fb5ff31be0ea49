/// \file
/// `reduction-fusion`: a cheap one-to-one value that a map writes into a
/// transient is recomputed inside every map that reads it, reductions
/// included, and the transient disappears. This is what stitches a
/// reduction to its elementwise neighbours: softmax's scaled scores, read
/// by the max pass, the exp-sum pass and the normalisation, or layer-norm's
/// centred values, read by the variance pass and the normalisation, are
/// no longer stored once and loaded several times (docs/fusion.md).
///
/// Ids: every node that stays keeps its id; the array's access node goes,
/// and so does the producer map when nothing else is left in it. The
/// recomputed tasklets are new nodes (they stand for no old one).

#include "ir/analysis.h"
#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "ir/tasklet_types.h"
#include "transforms/map_scope.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"
#include "transforms/transformation.h"

#include <algorithm>
#include <deque>
#include <set>

namespace weir::transforms {

namespace {

using ir::EdgeId;
using ir::NodeId;
namespace tl = ir::tasklet;
using namespace map_scope;

void varsOf(const tl::Expr &e, std::set<std::string> &into) {
  if (e.kind == tl::ExprKind::Var)
    into.insert(e.name);
  for (const tl::ExprPtr &op : e.operands)
    varsOf(*op, into);
}

/// The statements of `code` that the outputs `keep` need, in order (a
/// backward liveness pass; temporaries may be assigned more than once).
tl::Code sliceFor(const tl::Code &code, const std::vector<std::string> &keep) {
  std::set<std::string> live(keep.begin(), keep.end());
  std::vector<tl::Assignment> kept;
  for (auto it = code.statements.rbegin(); it != code.statements.rend(); ++it) {
    if (!live.erase(it->target))
      continue;
    varsOf(*it->value, live);
    kept.push_back(*it);
  }
  tl::Code out;
  out.statements.assign(kept.rbegin(), kept.rend());
  return out;
}

tl::ConnectorTypes typesOf(const std::vector<ir::Connector> &conns,
                           const std::vector<std::string> &only = {}) {
  tl::ConnectorTypes t;
  for (const ir::Connector &c : conns)
    if (only.empty() ||
        std::find(only.begin(), only.end(), c.name) != only.end())
      t[c.name] = c.dtype;
  return t;
}

/// Whether `slice`, statements of the body of `t` that compute only the
/// outputs `keep`, type checks and computes every subexpression in the
/// type it had (a temporary's type is that of its first value, which a
/// slice could drop). The slice shares its expressions with the body.
bool keepsTypes(const ir::Node &t, const tl::Code &slice,
                const std::vector<std::string> &keep) {
  tl::ConnectorTypes in = typesOf(t.inputs), out = typesOf(t.outputs, keep);
  if (!tl::typeCheck(slice, in, out).empty())
    return false;
  tl::SettledTypes before =
      tl::settleTypes(*t.tasklet().code, in, typesOf(t.outputs));
  tl::SettledTypes after = tl::settleTypes(slice, in, out);
  for (const auto *m : {&after.type, &after.operandType})
    for (const auto &[expr, type] : *m) {
      const auto &was = m == &after.type ? before.type : before.operandType;
      auto it = was.find(expr);
      if (it == was.end() || it->second != type)
        return false;
    }
  return true;
}

/// The input connectors of `t` that `code` reads, in connector order.
std::vector<std::string> sliceInputs(const tl::Code &code, const ir::Node &t) {
  std::set<std::string> vars;
  for (const tl::Assignment &a : code.statements)
    varsOf(*a.value, vars);
  std::vector<std::string> out;
  for (const ir::Connector &c : t.inputs)
    if (vars.count(c.name))
      out.push_back(c.name);
  return out;
}

/// One input of the recomputed statements: the producer's connector, the
/// edge that brings it inside the producer map, and the outer edge.
struct Input {
  std::string conn;
  ir::Memlet inner;  ///< producer params
  NodeId source = 0; ///< the access node it comes from
  ir::Memlet outerMemlet;
  ir::DType dtype = ir::DType::F32;
};

/// One consumer map and the reads it makes of the array.
struct Consumer {
  NodeId entry = 0;
  EdgeId outerRead = 0;
  std::string entryConn; ///< x of IN_x / OUT_x carrying the array
  /// Distinct read subsets (consumer params) and the edges reading each.
  std::vector<std::pair<ir::Subset, std::vector<EdgeId>>> reads;
};

struct Plan {
  NodeId producerEntry = 0, producerExit = 0, array = 0, producer = 0;
  std::string container, producerConn, exitConn;
  EdgeId write = 0;
  std::vector<std::string> params; ///< producer params in write-index order
  Rename fixed;                    ///< producer params not in the index
  tl::Code slice;                  ///< statements computing producerConn
  std::vector<Input> inputs;
  std::vector<Consumer> consumers;
  std::vector<EdgeId> orderingOut; ///< ordering edges leaving the array
  ir::DType dtype = ir::DType::F32;
};

class Planner {
public:
  Planner(const ir::Program &p, const Match &match, const Params &params,
          Plan &plan)
      : p_(p), s_(stateNamed(p, match.state)), graph_(sharedStateGraph(s_)),
        g_(*graph_), plan_(plan), maxOps_(intParam(params, "max_ops")),
        broadcast_(boolParam(params, "broadcast")) {
    plan.producerExit = match.node("producer_exit");
    plan.array = match.node("array");
    exit_ = s_.findNode(plan.producerExit);
    array_ = s_.findNode(plan.array);
    plan.producerEntry = exit_->map().partner;
    entry_ = s_.findNode(plan.producerEntry);
  }

  CheckResult run() {
    for (auto step : {&Planner::intermediate, &Planner::producer,
                      &Planner::consumers, &Planner::inputs})
      if (CheckResult r = (this->*step)(); !r)
        return r;
    return CheckResult::success();
  }

private:
  CheckResult fail(std::string why, std::vector<NodeId> more = {}) const {
    std::vector<NodeId> nodes{plan_.producerExit, plan_.array};
    nodes.insert(nodes.end(), more.begin(), more.end());
    return CheckResult::failure(std::move(why), std::move(nodes));
  }

  /// A plain transient with this one access node, written only here.
  CheckResult intermediate() {
    if (!entry_ || entry_->kind != ir::NodeKind::MapEntry)
      return fail("the map scope of " + ir::describe(*exit_, "map") +
                  " is not paired");
    const std::string &name = array_->access().container;
    plan_.container = name;
    const ir::Container *c = p_.findContainer(name);
    if (!c)
      return fail("container '" + name + "' does not exist");
    if (!c->transient || isArgument(p_, name))
      return fail("'" + name +
                  "' is not transient (a program argument must stay in "
                  "memory)");
    if (c->isConstant())
      return fail("'" + name + "' is a constant");
    if (c->isView())
      return fail("'" + name + "' is a view of '" + c->viewOf + "'");
    for (const auto &[other, oc] : p_.containers)
      if (oc.viewOf == name)
        return fail("'" + name + "' is viewed by '" + other + "'");
    if (ContainerUses u = containerUses(p_, name); u.accessNodes != 1)
      return fail("'" + name + "' has " + std::to_string(u.accessNodes) +
                  " access nodes; every reader must be reached from this one");
    plan_.dtype = c->dtype;
    if (g_.in(plan_.array).size() != 1)
      return fail("access node '" + name + "' (%" +
                  std::to_string(plan_.array) + ") has " +
                  std::to_string(g_.in(plan_.array).size()) +
                  " incoming edges; only " + ir::describe(*exit_, "map") +
                  " may write it");
    const ir::Edge &w = *g_.in(plan_.array)[0];
    auto conn = ir::scopeOutSuffix(w.srcConn);
    if (!conn || w.memlet.container != name || w.memlet.wcr)
      return fail(ir::describe(*exit_, "map") + " does not write '" + name +
                  "' plainly (without a write-conflict resolution)");
    for (const ir::Edge *e : g_.out(plan_.producerExit))
      if (e->srcConn == w.srcConn && e->id != w.id)
        return fail(ir::describe(*exit_, "map") + " writes '" + name +
                    "' through more than one edge");
    plan_.exitConn = *conn;
    return CheckResult::success();
  }

  /// One tasklet directly in the map writes each element exactly once, at
  /// an index made of the map's parameters, covering the whole array, from
  /// statements cheap enough to repeat.
  CheckResult producer() {
    const std::string &name = plan_.container;
    std::vector<const ir::Edge *> writes;
    for (const ir::Edge *e : g_.in(plan_.producerExit))
      if (e->dstConn == ir::scopeIn(plan_.exitConn))
        writes.push_back(e);
    if (writes.size() != 1)
      return fail(ir::describe(*exit_, "map") + " collects '" + name +
                  "' from " + std::to_string(writes.size()) +
                  " edges inside the map");
    const ir::Edge &w = *writes[0];
    parents_ = ir::sharedScopeParents(s_);
    const ir::Node &t = *s_.findNode(w.src);
    if (t.kind != ir::NodeKind::Tasklet ||
        ir::parentOf(*parents_, t.id) != plan_.producerEntry ||
        !t.tasklet().code)
      return fail("'" + name +
                  "' is not written by a tasklet directly inside " +
                  ir::describe(*entry_, "map"));
    if (w.memlet.wcr || w.memlet.container != name)
      return fail(ir::describe(t) + " writes '" + name +
                  "' with a write-conflict resolution");
    plan_.producer = t.id;
    plan_.producerConn = w.srcConn;
    plan_.write = w.id;

    const ir::MapData &m = entry_->map();
    const ir::Container &c = p_.container(name);
    if (w.memlet.subset.dims.size() != c.shape.size())
      return fail(ir::describe(t) + " writes " + w.memlet.str() +
                  ", not one element per dimension");
    std::set<std::string> used;
    for (std::size_t d = 0; d < c.shape.size(); ++d) {
      const ir::Range &r = w.memlet.subset.dims[d];
      auto k =
          std::find(m.params.begin(), m.params.end(),
                    r.begin.kind() == ir::ExprKind::Sym ? r.begin.symbolName()
                                                        : std::string());
      if (r.size() != ir::Expr(1) || k == m.params.end() ||
          !used.insert(*k).second)
        return fail(ir::describe(*entry_, "map") + " writes " + w.memlet.str() +
                    "; only an index made of distinct map parameters can be "
                    "recomputed elsewhere");
      const ir::Range &range = m.ranges[k - m.params.begin()];
      if (range.begin != ir::Expr(0) || range.end != c.shape[d] ||
          range.step != ir::Expr(1))
        return fail(ir::describe(*entry_, "map") + " writes '" + name +
                    "' at " + w.memlet.str() + " over " + *k + " = " +
                    range.str() + ", not the whole dimension " +
                    std::to_string(d) + " (" + c.shape[d].str() + ")");
      plan_.params.push_back(*k);
    }
    for (std::size_t k = 0; k < m.params.size(); ++k) {
      if (used.count(m.params[k]))
        continue;
      if (m.ranges[k].size() != ir::Expr(1))
        return fail(ir::describe(*entry_, "map") + " writes each element of '" +
                    name + "' once for every value of '" + m.params[k] + "'");
      plan_.fixed[m.params[k]] = m.ranges[k].begin;
    }

    plan_.slice = sliceFor(*t.tasklet().code, {plan_.producerConn});
    std::vector<std::string> rest;
    for (const ir::Connector &o : t.outputs)
      if (o.name != plan_.producerConn)
        rest.push_back(o.name);
    if (!keepsTypes(t, plan_.slice, {plan_.producerConn}) ||
        (!rest.empty() &&
         !keepsTypes(t, sliceFor(*t.tasklet().code, rest), rest)))
      return fail("separated from the rest of the body of " + ir::describe(t) +
                  ", the statements computing '" + plan_.producerConn +
                  "' would compute in other types (a temporary takes the "
                  "type of its first value)");
    std::int64_t ops = tl::countOps(plan_.slice);
    if (ops > maxOps_)
      return fail("'" + name + "' costs " + std::to_string(ops) +
                  " operations per element in " + ir::describe(t) +
                  "; max_ops is " + std::to_string(maxOps_));
    return CheckResult::success();
  }

  /// Every input of the statements comes from a container the map reads,
  /// at one element, and nothing writes that container after the producer
  /// has read it.
  CheckResult inputs() {
    const ir::Node &t = *s_.findNode(plan_.producer);
    for (const std::string &var : sliceInputs(plan_.slice, t)) {
      const ir::Edge *in = nullptr;
      for (const ir::Edge *e : g_.in(plan_.producer))
        if (e->dstConn == var)
          in = e;
      if (!in)
        return fail("input '" + var + "' of " + ir::describe(t) +
                    " has no edge");
      auto x = ir::scopeOutSuffix(in->srcConn);
      if (in->src != plan_.producerEntry || !x || in->memlet.empty())
        return fail(ir::describe(t) + " takes '" + var + "' from " +
                        ir::describe(*s_.findNode(in->src)) +
                        ", not from a container the map reads",
                    {in->src});
      if (in->memlet.wcr || in->memlet.subset.volume() != ir::Expr(1))
        return fail(ir::describe(t) + " reads " + in->memlet.str() +
                    "; only single elements are recomputed");
      const ir::Edge *outer = nullptr;
      for (const ir::Edge *e : g_.in(plan_.producerEntry))
        if (e->dstConn == ir::scopeIn(*x))
          outer = e;
      const ir::Node *src = outer ? s_.findNode(outer->src) : nullptr;
      if (!src || src->kind != ir::NodeKind::Access)
        return fail(ir::describe(*entry_, "map") + " does not read '" +
                    in->memlet.container + "' from an access node");
      if (CheckResult r = notWrittenAfter(rootOf(p_, in->memlet.container)); !r)
        return r;
      Input input{var, in->memlet, src->id, outer->memlet,
                  t.findInput(var)->dtype};
      plan_.inputs.push_back(std::move(input));
    }
    return CheckResult::success();
  }

  /// Every writer of `root` (or of a view of it) in this state precedes
  /// the producer map, or follows every consumer (which do not write it
  /// themselves), so the consumers read what the producer read.
  CheckResult notWrittenAfter(const std::string &root) {
    std::set<NodeId> before = ancestors(plan_.producerEntry, true);
    std::vector<std::pair<NodeId, std::set<NodeId>>> after;
    for (const Consumer &c : plan_.consumers) {
      NodeId exit = s_.findNode(c.entry)->map().partner;
      after.push_back({c.entry, ancestors(exit, false)});
    }
    for (const ir::Node &n : s_.nodes) {
      if (n.kind != ir::NodeKind::Access ||
          rootOf(p_, n.access().container) != root || before.count(n.id))
        continue;
      for (const ir::Edge *e : g_.in(n.id)) {
        if (e->memlet.empty())
          continue;
        for (const auto &[entry, later] : after) {
          const ir::Node &c = *s_.findNode(entry);
          if (e->src == c.map().partner)
            return fail("'" + root + "' is written by " +
                            ir::describe(c, "map") +
                            ", which would then read it too",
                        {entry});
          if (!later.count(n.id))
            return fail("'" + root + "' is written at access node %" +
                            std::to_string(n.id) + ", after " +
                            ir::describe(*entry_, "map") +
                            " reads it but not after " +
                            ir::describe(c, "map") +
                            ", which would read it recomputing",
                        {n.id, entry});
        }
      }
    }
    return CheckResult::success();
  }

  /// The nodes before `of` (backwards) or after it (forwards).
  std::set<NodeId> ancestors(NodeId of, bool backwards) const {
    std::set<NodeId> seen;
    std::deque<NodeId> todo{of};
    while (!todo.empty()) {
      NodeId at = todo.front();
      todo.pop_front();
      for (const ir::Edge *e : backwards ? g_.in(at) : g_.out(at))
        if (seen.insert(backwards ? e->src : e->dst).second)
          todo.push_back(backwards ? e->src : e->dst);
    }
    return seen;
  }
  /// Every reader is a map in the producer's scope whose tasklets, directly
  /// inside, read one element each, each element once (unless broadcast).
  CheckResult consumers() {
    const std::string &name = plan_.container;
    NodeId scope = ir::parentOf(*parents_, plan_.producerEntry);
    for (const ir::Edge *e : g_.out(plan_.array)) {
      if (isOrdering(*e)) {
        plan_.orderingOut.push_back(e->id);
        continue;
      }
      const ir::Node &n = *s_.findNode(e->dst);
      auto x = ir::scopeInSuffix(e->dstConn);
      if (n.kind != ir::NodeKind::MapEntry || !x || e->memlet.wcr)
        return fail("'" + name + "' is read by " + ir::describe(n) +
                        ", which cannot recompute it (only maps can)",
                    {n.id});
      if (ir::parentOf(*parents_, n.id) != scope)
        return fail(ir::describe(n, "map") + " is in another scope than " +
                        ir::describe(*entry_, "map"),
                    {n.id});
      if (std::any_of(plan_.consumers.begin(), plan_.consumers.end(),
                      [&](const Consumer &c) { return c.entry == n.id; }))
        return fail(ir::describe(n, "map") + " reads '" + name +
                        "' through two edges",
                    {n.id});
      Consumer c{n.id, e->id, *x, {}};
      for (const ir::Edge *r : g_.out(n.id)) {
        if (r->srcConn != ir::scopeOut(*x))
          continue;
        const ir::Node &t = *s_.findNode(r->dst);
        if (t.kind != ir::NodeKind::Tasklet ||
            ir::parentOf(*parents_, t.id) != n.id)
          return fail(ir::describe(n, "map") + " reads '" + name + "' in " +
                          ir::describe(t) +
                          ", not a tasklet directly inside it",
                      {n.id, t.id});
        const ir::Connector *wanted = t.findInput(r->dstConn);
        if (r->memlet.wcr || r->memlet.container != name || !wanted ||
            wanted->dtype != plan_.dtype ||
            r->memlet.subset.volume() != ir::Expr(1))
          return fail(ir::describe(t) + " reads " + r->memlet.str() + " as '" +
                          r->dstConn +
                          "'; only single elements of the array's dtype are "
                          "recomputed",
                      {n.id, t.id});
        if (!broadcast_ && !distinctPerIteration(r->memlet.subset, n.map()))
          return fail(ir::describe(n, "map") + " reads " + r->memlet.str() +
                          ", the same element in several iterations; "
                          "recomputing it there repeats the work (broadcast "
                          "is false)",
                      {n.id});
        auto same =
            std::find_if(c.reads.begin(), c.reads.end(), [&](const auto &rd) {
              return rd.first == r->memlet.subset;
            });
        if (same == c.reads.end())
          c.reads.push_back({r->memlet.subset, {r->id}});
        else
          same->second.push_back(r->id);
      }
      if (c.reads.empty())
        return fail(ir::describe(n, "map") + " takes '" + name +
                        "' in but no node inside reads it",
                    {n.id});
      for (const ir::Connector &in : n.inputs)
        if (in.name == ir::scopeIn(*x) && !n.findOutput(ir::scopeOut(*x)))
          return fail(ir::describe(n, "map") + " has no OUT_" + *x, {n.id});
      plan_.consumers.push_back(std::move(c));
    }
    if (plan_.consumers.empty())
      return fail("no map reads '" + name + "'");
    return CheckResult::success();
  }

  const ir::Program &p_;
  const ir::State &s_;
  std::shared_ptr<const StateGraph> graph_;
  const StateGraph &g_;
  Plan &plan_;
  std::int64_t maxOps_;
  bool broadcast_;
  const ir::Node *exit_, *array_, *entry_;
  std::shared_ptr<const ir::ScopeParents> parents_;
};

void eraseEdge(ir::State &s, EdgeId id) {
  s.edges.eraseIf([&](const ir::Edge &e) { return e.id == id; });
}

void erasePair(ir::Node &n, const std::string &x) {
  std::erase_if(n.inputs, [&](const ir::Connector &c) {
    return c.name == ir::scopeIn(x);
  });
  std::erase_if(n.outputs, [&](const ir::Connector &c) {
    return c.name == ir::scopeOut(x);
  });
}

/// The scope connector of `entry` through which `input` arrives, added
/// (with its outer edge) when the map does not read it yet.
std::string entryConnFor(ir::Program &p, ir::State &s, NodeId entry,
                         const Input &input) {
  for (const ir::Edge &e : s.edges)
    if (e.dst == entry && e.src == input.source &&
        sameMemlet(e.memlet, input.outerMemlet) &&
        ir::scopeInSuffix(e.dstConn).has_value())
      return ir::scopeSuffix(e.dstConn);
  ir::Node &n = *s.findNode(entry);
  std::string x = freshPair(n, input.outerMemlet.container);
  n.inputs.push_back({ir::scopeIn(x), input.dtype});
  n.outputs.push_back({ir::scopeOut(x), input.dtype});
  ir::addEdge(p, s, input.source, "", entry, ir::scopeIn(x), input.outerMemlet);
  return x;
}

/// Drops the producer's output `conn` (its statements, when nothing else
/// needs them), inputs it no longer reads, scope connectors nothing uses,
/// and the whole map once it computes nothing.
void pruneProducer(ir::Program &p, ir::State &s, const Plan &plan,
                   IdMap &idMap) {
  ir::Node &t = *s.findNode(plan.producer);
  bool stillRead =
      std::any_of(s.edges.begin(), s.edges.end(), [&](const ir::Edge &e) {
        return e.src == t.id && e.srcConn == plan.producerConn;
      });
  if (!stillRead) {
    std::vector<std::string> keep;
    for (const ir::Connector &c : t.outputs)
      if (c.name != plan.producerConn)
        keep.push_back(c.name);
    std::erase_if(t.outputs, [&](const ir::Connector &c) {
      return c.name == plan.producerConn;
    });
    if (keep.empty()) {
      removeNode(s, t.id, &idMap);
    } else {
      tl::Code code = sliceFor(*t.tasklet().code, keep);
      std::set<std::string> reads;
      for (const std::string &v : sliceInputs(code, t))
        reads.insert(v);
      s.edges.eraseIf([&](const ir::Edge &e) {
        return e.dst == t.id && !e.dstConn.empty() && !reads.count(e.dstConn);
      });
      std::erase_if(t.inputs, [&](const ir::Connector &c) {
        return !reads.count(c.name);
      });
      t.payload = ir::TaskletData{
          tl::print(code), std::make_shared<const tl::Code>(std::move(code))};
    }
  }
  // Entry connectors nothing inside reads any more go with their outer edge.
  ir::Node &entry = *s.findNode(plan.producerEntry);
  std::vector<std::string> unused;
  for (const ir::Connector &c : entry.outputs) {
    bool used =
        std::any_of(s.edges.begin(), s.edges.end(), [&](const ir::Edge &e) {
          return e.src == entry.id && e.srcConn == c.name;
        });
    if (!used)
      unused.push_back(ir::scopeSuffix(c.name));
  }
  for (const std::string &x : unused) {
    s.edges.eraseIf([&](const ir::Edge &e) {
      return e.dst == entry.id && e.dstConn == ir::scopeIn(x);
    });
    erasePair(entry, x);
  }
  // A map left computing nothing goes; what was ordered before it stays
  // ordered before what came after it.
  bool computes =
      std::any_of(s.edges.begin(), s.edges.end(), [&](const ir::Edge &e) {
        return e.src == plan.producerExit;
      });
  if (computes)
    return;
  ir::ScopeParents parents = ir::scopeParents(s);
  std::vector<NodeId> inside;
  for (NodeId id : parents.childrenOf(plan.producerEntry))
    if (id != plan.producerExit)
      inside.push_back(id);
  std::vector<NodeId> preds, succs;
  for (const ir::Edge &e : s.edges) {
    if (e.dst == plan.producerEntry && isOrdering(e))
      preds.push_back(e.src);
    if (e.src == plan.producerExit && isOrdering(e))
      succs.push_back(e.dst);
  }
  for (NodeId id : inside)
    removeNode(s, id, &idMap);
  removeNode(s, plan.producerEntry, &idMap);
  removeNode(s, plan.producerExit, &idMap);
  for (NodeId a : preds)
    for (NodeId b : succs)
      ir::addEdge(p, s, a, "", b, "", ir::Memlet{});
}

/// The rewrite, on a copy; check() runs it too when it must weigh the gain.
ApplyResult rewrite(const ir::Program &program, const std::string &state,
                    const Plan &plan) {
  ApplyResult r{program, {}};
  ir::Program &p = r.program;
  ir::State &s = stateNamed(p, state);
  const ir::Node producer = *s.findNode(plan.producer);
  std::vector<ir::Connector> ins;
  for (const Input &in : plan.inputs)
    ins.push_back({in.conn, in.dtype});
  auto code = std::make_shared<const tl::Code>(plan.slice);

  for (const Consumer &c : plan.consumers) {
    for (const auto &[subset, edges] : c.reads) {
      // The producer's iteration that wrote the element read here.
      Rename at = plan.fixed;
      for (std::size_t d = 0; d < plan.params.size(); ++d)
        at[plan.params[d]] = subset.dims[d].begin;
      ir::Node t;
      t.id = p.newNodeId();
      t.kind = ir::NodeKind::Tasklet;
      t.label = producer.label;
      t.inputs = ins;
      t.outputs = {{plan.producerConn, plan.dtype}};
      t.payload = ir::TaskletData{tl::print(*code), code};
      // Placed right after the consumer's entry, where a reader looks.
      NodeId id = t.id;
      auto pos =
          std::find_if(s.nodes.begin(), s.nodes.end(),
                       [&](const ir::Node &n) { return n.id == c.entry; });
      s.nodes.insert(pos == s.nodes.end() ? pos : std::next(pos), std::move(t));
      for (const Input &in : plan.inputs) {
        std::string x = entryConnFor(p, s, c.entry, in);
        ir::Memlet m = in.inner;
        m.subset = renamed(m.subset, at);
        ir::addEdge(p, s, c.entry, ir::scopeOut(x), id, in.conn, m);
      }
      for (EdgeId e : edges) {
        ir::Edge &read = edgeWithId(s, e);
        read.src = id;
        read.srcConn = plan.producerConn;
        read.memlet = ir::Memlet{};
      }
    }
    eraseEdge(s, c.outerRead);
    erasePair(*s.findNode(c.entry), c.entryConn);
  }

  // The array goes; what it ordered, the producer's exit orders.
  for (EdgeId e : plan.orderingOut) {
    ir::Edge &o = edgeWithId(s, e);
    o.src = plan.producerExit;
  }
  eraseEdge(s, plan.write);
  removeNode(s, plan.array, &r.idMap);
  erasePair(*s.findNode(plan.producerExit), plan.exitConn);
  p.containers.erase(plan.container);
  pruneProducer(p, s, plan, r.idMap);

  // Access nodes (and transients) the producer alone read go with it.
  std::set<NodeId> touched;
  for (const ir::Edge &e : s.edges) {
    touched.insert(e.src);
    touched.insert(e.dst);
  }
  std::set<NodeId> sources;
  for (const ir::Edge &e : stateNamed(program, state).edges)
    if (e.dst == plan.producerEntry)
      sources.insert(e.src);
  for (NodeId id : sources) {
    const ir::Node *n = s.findNode(id);
    if (!n || n->kind != ir::NodeKind::Access || touched.count(id))
      continue;
    std::string name = n->access().container;
    removeNode(s, id, &r.idMap);
    const ir::Container *c = p.findContainer(name);
    if (c && c->transient && !isArgument(p, name) && !containerUsed(p, name))
      p.containers.erase(name);
  }
  return r;
}

/// Bytes moved with every free symbol taken as 1.
std::int64_t bytesAtOne(const ir::Program &p) {
  ir::Expr b = ir::analyze(p).bytesMoved;
  ir::Bindings ones;
  for (const std::string &sym : b.freeSymbols())
    ones[sym] = 1;
  return b.evaluate(ones);
}

} // namespace

namespace {

class ReductionFusion : public Transformation {
public:
  ReductionFusion();
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace

ReductionFusion::ReductionFusion()
    : Transformation({
          .id = "reduction-fusion",
          .tier = Tier::Fusion,
          .summary = "Recompute a cheap elementwise value in every map that "
                     "reads it, reductions included, instead of storing it",
          .description =
              "A transient written one element per iteration by a tasklet of a "
              "map, from elements the map reads, is recomputed in every map "
              "that reads it (a reduction's accumulating map too) instead of "
              "being stored and loaded: each consumer reads the producer's "
              "inputs at the substituted index and computes the value in a "
              "copy of the producing statements, handing it to its own "
              "tasklets directly (tasklet-fusion merges them next). The "
              "transient goes; the producer keeps its other outputs, or goes "
              "too when nothing is left of it. This is what joins a one-to-one "
              "producer to the several passes of softmax or layer-norm. "
              "Refused when the value costs more than max_ops operations, a "
              "consumer reads an element more than once (unless broadcast is "
              "true), an input is written after the producer reads it, a "
              "reader is not a tasklet directly in a map, or the analysed "
              "bytes moved would not drop (unless require_gain is false). "
              "Exact: the same operations in the same types on the same "
              "values.",
          .params =
              {{"max_ops", ParamSpec::Kind::Int, std::int64_t{4},
                "the most operations the recomputed value may cost per element "
                "(tasklet countOps of the statements it needs)",
                0.0, 64.0},
               {"broadcast", ParamSpec::Kind::Bool, false,
                "also recompute for a consumer that reads one element in "
                "several iterations (a broadcast read), multiplying its cost",
                std::nullopt, std::nullopt},
               {"require_gain", ParamSpec::Kind::Bool, true,
                "refuse unless the analysed bytes moved drop (symbols taken as "
                "1)",
                std::nullopt, std::nullopt}},
          .pattern = Pattern()
                         .node("producer_exit", ir::NodeKind::MapExit)
                         .node("array", ir::NodeKind::Access)
                         .edge("producer_exit", "array"),
      }) {}

CheckResult ReductionFusion::check(const ir::Program &program,
                                   const Match &match,
                                   const Params &params) const {
  Plan plan;
  if (CheckResult c = Planner(program, match, params, plan).run(); !c)
    return c;
  if (!boolParam(params, "require_gain"))
    return CheckResult::success();
  std::int64_t before = bytesAtOne(program);
  std::int64_t after = bytesAtOne(rewrite(program, match.state, plan).program);
  if (after < before)
    return CheckResult::success();
  return CheckResult::failure(
      "recomputing '" + plan.container + "' moves " + std::to_string(after) +
          " bytes instead of " + std::to_string(before) +
          " (its inputs cost more than it does; require_gain is true)",
      {plan.producerExit, plan.array});
}

ApplyResult ReductionFusion::apply(const ir::Program &program,
                                   const Match &match,
                                   const Params &params) const {
  Plan plan;
  if (CheckResult c = Planner(program, match, params, plan).run(); !c)
    throw Error("reduction-fusion at " + match.str() + ": " + c.reason);
  return rewrite(program, match.state, plan);
}

static const TransformationRegistrar kRegister{
    std::make_shared<ReductionFusion>()};

} // namespace weir::transforms
