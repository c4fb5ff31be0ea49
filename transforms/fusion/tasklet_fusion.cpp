/// \file
/// `tasklet-fusion`: a tasklet that hands a value directly to another
/// tasklet in the same scope (an empty memlet between their connectors, as
/// map-fusion leaves them) becomes one tasklet running the first body, then
/// the second (DaCe's TaskletFusion).
///
/// Ids: the fused tasklet keeps the first tasklet's id; the id map sends
/// the second to it, so every other match listed before the fusion (the next
/// link of a chain a → b → c, in either order) still names existing nodes.

#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "ir/tasklet_types.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <algorithm>
#include <deque>
#include <set>

namespace weir::transforms {

namespace {

using ir::EdgeId;
using ir::NodeId;
namespace tl = ir::tasklet;
using Names = std::map<std::string, std::string, std::less<>>;

std::string nodeName(const ir::State &s, NodeId id) {
  const ir::Node *n = s.findNode(id);
  if (!n)
    return "node %" + std::to_string(id);
  return ir::describe(*n);
}

std::string edgeName(const ir::Edge &e) {
  return "edge " + std::to_string(e.id) + " (" + e.memlet.str() + ")";
}

bool isOrdering(const ir::Edge &e) {
  return e.memlet.empty() && !e.memlet.wcr && e.srcConn.empty() &&
         e.dstConn.empty();
}

bool sameMemlet(const ir::Memlet &a, const ir::Memlet &b) {
  return a.container == b.container && a.subset == b.subset && a.wcr == b.wcr;
}

const std::string &renamed(const Names &names, const std::string &name) {
  auto it = names.find(name);
  return it == names.end() ? name : it->second;
}

/// A fresh copy of `e` with its variables renamed. Always a copy: the fused
/// body must share no node with either original (types are settled per
/// node, and both tasklets may share one parsed body).
tl::ExprPtr copyRenamed(const tl::Expr &e, const Names &names) {
  auto copy = std::make_shared<tl::Expr>(e);
  if (e.kind == tl::ExprKind::Var)
    copy->name = renamed(names, e.name);
  for (tl::ExprPtr &op : copy->operands)
    op = copyRenamed(*op, names);
  return copy;
}

tl::ConnectorTypes typesOf(const std::vector<ir::Connector> &conns) {
  tl::ConnectorTypes t;
  for (const ir::Connector &c : conns)
    t[c.name] = c.dtype;
  return t;
}

/// Whether `b` (settled in `tb`), a renamed copy of `a` (settled in `ta`),
/// computes in the same type at every node.
bool sameTypes(const tl::Expr &a, const tl::SettledTypes &ta, const tl::Expr &b,
               const tl::SettledTypes &tb) {
  auto at = ta.type.find(&a), bt = tb.type.find(&b);
  if (at == ta.type.end() || bt == tb.type.end() || at->second != bt->second)
    return false;
  auto ao = ta.operandType.find(&a), bo = tb.operandType.find(&b);
  if ((ao == ta.operandType.end()) != (bo == tb.operandType.end()) ||
      (ao != ta.operandType.end() && ao->second != bo->second))
    return false;
  for (std::size_t k = 0; k < a.operands.size(); ++k)
    if (!sameTypes(*a.operands[k], ta, *b.operands[k], tb))
      return false;
  return true;
}

/// What check() establishes and apply() rewrites.
struct Plan {
  NodeId first = 0, second = 0;
  std::set<EdgeId> between;  ///< every edge first -> second; they go
  std::set<EdgeId> shared;   ///< edges into second that first already reads
  Names secondIn, secondOut; ///< second's connectors -> the fused one's
  ir::Node fused;            ///< first's id and place, both bodies
};

/// Establishes a Plan, one group of preconditions at a time; each failure
/// names the nodes involved.
class Planner {
public:
  Planner(const ir::Program &p, const Match &match, bool keepOutputs,
          Plan &plan)
      : s_(stateNamed(p, match.state)), graph_(sharedStateGraph(s_)),
        g_(*graph_), keepOutputs_(keepOutputs), plan_(plan) {
    plan.first = match.node("first");
    plan.second = match.node("second");
    a_ = s_.findNode(plan.first);
    b_ = s_.findNode(plan.second);
  }

  CheckResult run() {
    for (auto step : {&Planner::bodies, &Planner::handOvers, &Planner::scope,
                      &Planner::readers, &Planner::ordering, &Planner::fuse})
      if (CheckResult r = (this->*step)(); !r)
        return r;
    return CheckResult::success();
  }

private:
  CheckResult fail(std::string why) const {
    return CheckResult::failure(std::move(why), {plan_.first, plan_.second});
  }

  /// Parsed, well-typed bodies with distinct connector names.
  CheckResult bodies() {
    for (const ir::Node *n : {a_, b_}) {
      if (!std::holds_alternative<ir::TaskletData>(n->payload) ||
          !n->tasklet().code)
        return fail(ir::describe(*n, "tasklet") + " has no parsed body");
      std::set<std::string> names;
      for (const auto *conns : {&n->inputs, &n->outputs})
        for (const ir::Connector &c : *conns)
          if (!names.insert(c.name).second)
            return fail(ir::describe(*n, "tasklet") +
                        " has two connectors named '" + c.name + "'");
      std::vector<tl::TypeIssue> issues = tl::typeCheck(
          *n->tasklet().code, typesOf(n->inputs), typesOf(n->outputs));
      if (!issues.empty())
        return fail(ir::describe(*n, "tasklet") +
                    " does not type check: " + issues[0].message);
    }
    return CheckResult::success();
  }

  /// Every edge between the two is an ordering edge or hands an output of
  /// the first to an input of the second, in one dtype, on an empty memlet.
  CheckResult handOvers() {
    for (const ir::Edge *e : g_.out(plan_.first)) {
      if (e->dst != plan_.second)
        continue;
      plan_.between.insert(e->id);
      if (isOrdering(*e))
        continue;
      if (e->memlet.wcr)
        return fail(edgeName(*e) + " from " + ir::describe(*a_, "tasklet") +
                    " to " + ir::describe(*b_, "tasklet") +
                    " has a write-conflict resolution (" +
                    std::string(ir::wcrName(*e->memlet.wcr)) + ")");
      if (!e->memlet.empty())
        return fail(edgeName(*e) + " from " + ir::describe(*a_, "tasklet") +
                    " to " + ir::describe(*b_, "tasklet") +
                    " names a container; only a value handed over on an "
                    "empty memlet fuses");
      const ir::Connector *out = a_->findOutput(e->srcConn);
      const ir::Connector *in = b_->findInput(e->dstConn);
      if (!out || !in)
        return fail(edgeName(*e) + " does not connect an output of " +
                    ir::describe(*a_, "tasklet") + " to an input of " +
                    ir::describe(*b_, "tasklet"));
      if (out->dtype != in->dtype)
        return fail(ir::describe(*a_, "tasklet") + " hands '" + out->name +
                    "' over as " + std::string(ir::dtypeName(out->dtype)) +
                    " but " + ir::describe(*b_, "tasklet") + " takes it as '" +
                    in->name + "': " + std::string(ir::dtypeName(in->dtype)));
      handed_.insert(out->name);
      takes_[in->name] = out->name;
    }
    if (handed_.empty())
      return fail(ir::describe(*a_, "tasklet") + " and " +
                  ir::describe(*b_, "tasklet") +
                  " are only ordered; no value is handed over");
    return CheckResult::success();
  }

  /// One map scope (or both at the top level): the fused tasklet runs as
  /// often as each did.
  CheckResult scope() {
    ir::ScopeParents parents = ir::scopeParents(s_);
    NodeId pa = parents[plan_.first], pb = parents[plan_.second];
    if (pa == pb)
      return CheckResult::success();
    auto where = [&](NodeId scope) {
      const ir::Node *entry = s_.findNode(scope);
      return scope == 0 || !entry ? std::string("at the top level")
                                  : "in map '" + entry->label + "' (%" +
                                        std::to_string(scope) + ")";
    };
    return fail(ir::describe(*a_, "tasklet") + " is " + where(pa) + " and " +
                ir::describe(*b_, "tasklet") + " " + where(pb) +
                "; only tasklets in the same scope fuse");
  }

  /// Other readers of a handed-over value keep it as an output (or refuse);
  /// none combines it with a write-conflict resolution. Every connector of
  /// the second has its one edge.
  CheckResult readers() {
    for (const ir::Edge *e : g_.out(plan_.first)) {
      if (plan_.between.count(e->id) || !handed_.count(e->srcConn))
        continue;
      if (e->memlet.wcr)
        return CheckResult::failure(
            ir::describe(*a_, "tasklet") + " also writes '" + e->srcConn +
                "' as " + e->memlet.str() + " into " + nodeName(s_, e->dst) +
                " with a write-conflict resolution (" +
                std::string(ir::wcrName(*e->memlet.wcr)) +
                "); a value handed over must not be one",
            {plan_.first, plan_.second, e->dst});
      if (!keepOutputs_)
        return CheckResult::failure(
            "output '" + e->srcConn + "' of " + ir::describe(*a_, "tasklet") +
                " is also read by " + nodeName(s_, e->dst) +
                " (keep_outputs is false)",
            {plan_.first, plan_.second, e->dst});
      kept_.insert(e->srcConn);
    }
    for (const ir::Connector &c : b_->inputs) {
      auto n = std::count_if(
          g_.in(plan_.second).begin(), g_.in(plan_.second).end(),
          [&](const ir::Edge *e) { return e->dstConn == c.name; });
      if (n != 1)
        return fail("input '" + c.name + "' of " +
                    ir::describe(*b_, "tasklet") + " has " + std::to_string(n) +
                    " incoming edges");
    }
    for (const ir::Edge *e : g_.in(plan_.second))
      if (!e->dstConn.empty() && !b_->findInput(e->dstConn))
        return fail(edgeName(*e) + " enters " + ir::describe(*b_, "tasklet") +
                    " through '" + e->dstConn + "', which it lacks");
    for (const ir::Edge *e : g_.out(plan_.second))
      if (!e->srcConn.empty() && !b_->findOutput(e->srcConn))
        return fail(edgeName(*e) + " leaves " + ir::describe(*b_, "tasklet") +
                    " through '" + e->srcConn + "', which it lacks");
    return CheckResult::success();
  }

  /// No other path from the first to the second: fused, the tasklet would
  /// depend on itself.
  CheckResult ordering() {
    std::map<NodeId, NodeId> from{{plan_.first, plan_.first}};
    std::deque<NodeId> todo{plan_.first};
    while (!todo.empty() && !from.count(plan_.second)) {
      NodeId at = todo.front();
      todo.pop_front();
      for (const ir::Edge *e : g_.out(at))
        if (!plan_.between.count(e->id) && from.emplace(e->dst, at).second)
          todo.push_back(e->dst);
    }
    if (!from.count(plan_.second))
      return CheckResult::success();
    NodeId via = from.at(plan_.second);
    return CheckResult::failure(
        ir::describe(*b_, "tasklet") + " also depends on " +
            ir::describe(*a_, "tasklet") + " through " + nodeName(s_, via) +
            "; fused, the tasklet would depend on itself",
        {plan_.first, via, plan_.second});
  }

  /// Builds the fused tasklet and checks that every statement computes in
  /// the types it did.
  CheckResult fuse() {
    const ir::Node &a = *a_, &b = *b_;
    std::set<std::string> taken;
    auto claim = [&](const std::string &want) {
      std::string name = want;
      for (int k = 1; taken.count(name); ++k)
        name = want + "_" + std::to_string(k);
      taken.insert(name);
      return name;
    };
    ir::Node &fused = plan_.fused;
    fused = a;
    fused.label = a.label + "+" + b.label;
    fused.outputs.clear();
    for (const ir::Connector &c : a.inputs)
      taken.insert(c.name);
    for (const ir::Connector &c : a.outputs)
      if (!handed_.count(c.name) || kept_.count(c.name)) {
        taken.insert(c.name);
        fused.outputs.push_back(c);
      }

    Names renA, renB;
    for (const ir::Connector &c : b.inputs) {
      if (takes_.count(c.name))
        continue;
      if (const ir::Edge *same = sharedInput(c)) {
        renB[c.name] = plan_.secondIn[c.name] = same->dstConn;
        plan_.shared.insert(inEdge(plan_.second, c.name)->id);
        continue;
      }
      renB[c.name] = plan_.secondIn[c.name] = claim(c.name);
      fused.inputs.push_back({renB[c.name], c.dtype});
    }
    for (const ir::Connector &c : b.outputs) {
      renB[c.name] = plan_.secondOut[c.name] = claim(c.name);
      fused.outputs.push_back({renB[c.name], c.dtype});
    }
    // The first's handed-over outputs and temporaries become temporaries.
    for (const ir::Connector &c : a.outputs)
      if (handed_.count(c.name))
        renA[c.name] = claim(c.name);
    const tl::Code &codeA = *a.tasklet().code, &codeB = *b.tasklet().code;
    for (const tl::Assignment &s : codeA.statements)
      if (!a.findOutput(s.target) && !renA.count(s.target))
        renA[s.target] = claim(s.target);
    for (const tl::Assignment &s : codeB.statements)
      if (!b.findOutput(s.target) && !renB.count(s.target))
        renB[s.target] = claim(s.target);
    for (const auto &[in, out] : takes_)
      renB[in] = renA.at(out);

    tl::Code code;
    for (const tl::Assignment &s : codeA.statements)
      code.statements.push_back(
          {renamed(renA, s.target), copyRenamed(*s.value, renA)});
    std::size_t copies = 0;
    for (const ir::Connector &c : a.outputs)
      if (kept_.count(c.name)) {
        auto var = std::make_shared<tl::Expr>(tl::Expr{tl::ExprKind::Var});
        var->name = renA.at(c.name);
        code.statements.push_back({c.name, std::move(var)});
        ++copies;
      }
    for (const tl::Assignment &s : codeB.statements)
      code.statements.push_back(
          {renamed(renB, s.target), copyRenamed(*s.value, renB)});

    // Renaming changes no type but that of a handed-over output, which
    // becomes a temporary: an output has its connector's type, a temporary
    // the type of its first value. The first's statements are judged
    // alone (with only its remaining outputs), then the whole body.
    std::size_t countA = codeA.statements.size();
    tl::Code partA;
    partA.statements.assign(code.statements.begin(),
                            code.statements.begin() +
                                static_cast<std::ptrdiff_t>(countA));
    tl::ConnectorTypes in = typesOf(fused.inputs), outA;
    for (const ir::Connector &c : a.outputs)
      if (!handed_.count(c.name))
        outA[c.name] = c.dtype;
    if (CheckResult r = sameTypesAs(a, partA, 0, in, outA); !r)
      return r;
    if (CheckResult r =
            sameTypesAs(b, code, countA + copies, in, typesOf(fused.outputs));
        !r)
      return r;
    fused.payload = ir::TaskletData{
        tl::print(code), std::make_shared<const tl::Code>(std::move(code))};
    return CheckResult::success();
  }

  /// Whether the statements of `n`, at `offset` in `code`, are well typed
  /// and compute in the types they did in `n`.
  CheckResult sameTypesAs(const ir::Node &n, const tl::Code &code,
                          std::size_t offset, const tl::ConnectorTypes &in,
                          const tl::ConnectorTypes &out) const {
    static const std::string kWhy =
        " (a temporary takes the type of its first value, and a bare "
        "literal has none of its own)";
    if (std::vector<tl::TypeIssue> issues = tl::typeCheck(code, in, out);
        !issues.empty())
      return fail("fused, the body of " + ir::describe(n, "tasklet") +
                  " would not type check: " + issues[0].message + kWhy);
    tl::SettledTypes types = tl::settleTypes(code, in, out);
    const tl::Code &original = *n.tasklet().code;
    tl::SettledTypes before =
        tl::settleTypes(original, typesOf(n.inputs), typesOf(n.outputs));
    for (std::size_t k = 0; k < original.statements.size(); ++k) {
      const tl::Assignment &s = original.statements[k];
      const tl::Assignment &f = code.statements[offset + k];
      if (before.targetType[k] != types.targetType[offset + k] ||
          !sameTypes(*s.value, before, *f.value, types))
        return fail("fused, statement " + std::to_string(k + 1) + " of " +
                    ir::describe(n, "tasklet") + " ('" + s.target + " = " +
                    tl::print(*s.value) + "') would compute in another type" +
                    kWhy);
    }
    return CheckResult::success();
  }

  const ir::Edge *inEdge(NodeId node, const std::string &conn) const {
    for (const ir::Edge *e : g_.in(node))
      if (e->dstConn == conn)
        return e;
    return nullptr;
  }

  /// The first's incoming edge that brings the value input `c` of the
  /// second reads: same source, connector, memlet and dtype.
  const ir::Edge *sharedInput(const ir::Connector &c) const {
    const ir::Edge *e = inEdge(plan_.second, c.name);
    for (const ir::Edge *f : g_.in(plan_.first)) {
      const ir::Connector *mine = a_->findInput(f->dstConn);
      if (mine && mine->dtype == c.dtype && f->src == e->src &&
          f->srcConn == e->srcConn && sameMemlet(f->memlet, e->memlet))
        return f;
    }
    return nullptr;
  }

  const ir::State &s_;
  std::shared_ptr<const StateGraph> graph_;
  const StateGraph &g_;
  bool keepOutputs_;
  Plan &plan_;
  const ir::Node *a_, *b_;
  std::set<std::string> handed_, kept_; ///< outputs of the first
  Names takes_; ///< input of the second -> the first's output feeding it
};

} // namespace

namespace {

class TaskletFusion : public PlannedTransformation<Plan> {
public:
  TaskletFusion();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

TaskletFusion::TaskletFusion()
    : PlannedTransformation({
          .id = "tasklet-fusion",
          .tier = Tier::Fusion,
          .summary = "Fuse a tasklet into the tasklet it hands its value to",
          .description =
              "A tasklet that hands a value directly to another tasklet in the "
              "same scope (an empty memlet between their connectors, as "
              "map-fusion leaves them) becomes one tasklet: the first body, "
              "its handed-over outputs and its temporaries renamed to fresh "
              "temporaries, then the second body reading those temporaries. "
              "Inputs of both become inputs of the fused tasklet (one read "
              "through an equal edge from the same source is shared); names "
              "that clash are renamed. A handed-over value that something else "
              "also reads stays an output of the fused tasklet (unless "
              "keep_outputs is false, which refuses the match). The fused "
              "tasklet keeps the first tasklet's id. Exact: the same "
              "operations in the same order and types.",
          .params =
              {{"keep_outputs", ParamSpec::Kind::Bool, true,
                "when a handed-over value is also read elsewhere, keep it as "
                "an output of the fused tasklet (false: refuse the match)",
                std::nullopt, std::nullopt}},
          .pattern = Pattern()
                         .node("first", ir::NodeKind::Tasklet)
                         .node("second", ir::NodeKind::Tasklet)
                         .edge("first", "second"),
      }) {}

Planned<Plan> TaskletFusion::plan(const ir::Program &program,
                                  const Match &match,
                                  const Params &params) const {
  Planned<Plan> out;
  out.verdict =
      Planner(program, match, boolParam(params, "keep_outputs"), out.plan)
          .run();
  return out;
}

ApplyResult TaskletFusion::rewrite(const ir::Program &program,
                                   const Match &match, const Params &params,
                                   const Plan &plan) const {
  ApplyResult r{program, {}};
  ir::State &s = stateNamed(r.program, match.state);

  s.edges.eraseIf([&](const ir::Edge &e) {
    return plan.between.count(e.id) || plan.shared.count(e.id);
  });
  // The second's edges move to the fused tasklet; an ordering edge equal to
  // one already there goes.
  std::set<EdgeId> moved;
  s.edges.editWhere(
      [&](const ir::Edge &e) {
        return e.dst == plan.second || e.src == plan.second;
      },
      [&](ir::Edge &e) {
        if (e.dst == plan.second) {
          e.dst = plan.first;
          if (!e.dstConn.empty())
            e.dstConn = plan.secondIn.at(e.dstConn);
        }
        if (e.src == plan.second) {
          e.src = plan.first;
          if (!e.srcConn.empty())
            e.srcConn = plan.secondOut.at(e.srcConn);
        }
        moved.insert(e.id);
      });
  std::set<std::pair<NodeId, NodeId>> ordered;
  for (const ir::Edge &e : s.edges)
    if (!moved.count(e.id) && isOrdering(e))
      ordered.emplace(e.src, e.dst);
  s.edges.eraseIf([&](const ir::Edge &e) {
    return moved.count(e.id) && isOrdering(e) && ordered.count({e.src, e.dst});
  });
  *s.findNode(plan.first) = plan.fused;
  removeNode(s, plan.second, &r.idMap);
  r.idMap[plan.second] = plan.first;
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<TaskletFusion>()};

} // namespace weir::transforms
