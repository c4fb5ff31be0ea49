/// \file
/// `fold-constants`: an operator whose inputs are all constant (or a Shape
/// of a statically shaped value) is computed now, and so is every operator
/// downstream that becomes constant in turn — whole Shape→Gather→Concat
/// chains fold in one step.

#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "transforms/operators/expansion.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"
#include "transforms/transformation.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace weir::transforms {

namespace {

bool hasPure(const std::string &op) {
  for (const operators::Implementation *i : operators::implementationsOf(op))
    if (i->name == "pure")
      return true;
  return false;
}

bool staticShape(const ir::Container &c) {
  return std::all_of(c.shape.begin(), c.shape.end(),
                     [](const ir::Expr &d) { return d.isConstant(); });
}

/// Why the node cannot fold, or "" when it can (its inputs constant, its
/// outputs plain transients of static shape).
std::string whyNot(const ir::Program &program, const StateGraph &graph,
                   const ir::Node &n) {
  const ir::LibraryData &lib = n.library();
  static const std::set<std::string, std::less<>> kNondeterministic = {
      "RandomNormal",      "RandomNormalLike", "RandomUniform",
      "RandomUniformLike", "Bernoulli",        "Multinomial"};
  if (lib.unknown || kNondeterministic.count(lib.op))
    return lib.op + " cannot be computed ahead of time";
  if (lib.op != "Shape" && !hasPure(lib.op))
    return lib.op + " has no pure expansion to compute it with";
  for (const ir::Edge *e : graph.in(n.id)) {
    if (e->memlet.empty())
      continue;
    const ir::Container *c = program.findContainer(e->memlet.container);
    if (!c)
      return "input '" + e->memlet.container + "' does not exist";
    if (lib.op == "Shape" ? !staticShape(*c) : !c->isConstant())
      return "input '" + c->name + "' is not constant";
  }
  int outputs = 0;
  for (const ir::Edge *e : graph.out(n.id)) {
    const ir::Container *c = program.findContainer(e->memlet.container);
    if (!c || isArgument(program, c->name) || !c->transient ||
        c->isConstant() || !staticShape(*c))
      return "output '" + e->memlet.container +
             "' is a program output, constant or not statically shaped";
    ++outputs;
  }
  return outputs ? "" : "it has no outputs";
}

ir::Blob blobOf(const runtime::Tensor &t) {
  auto bytes = std::make_shared<std::vector<std::byte>>(t.byteSize());
  if (!bytes->empty())
    std::memcpy(bytes->data(), t.data(), bytes->size());
  return bytes;
}

/// Shape's value: the dimensions of its input from `start` to `end`.
ir::Blob shapeValue(const ir::Node &n, const ir::Container &x) {
  auto attr = [&](const char *name, std::int64_t fallback) {
    auto it = n.library().attributes.find(name);
    return it != n.library().attributes.end() &&
                   std::holds_alternative<std::int64_t>(it->second)
               ? std::get<std::int64_t>(it->second)
               : fallback;
  };
  std::int64_t rank = std::int64_t(x.shape.size());
  auto clampAxis = [&](std::int64_t a) {
    return std::clamp(a < 0 ? a + rank : a, std::int64_t(0), rank);
  };
  std::int64_t start = clampAxis(attr("start", 0)),
               end = clampAxis(attr("end", rank));
  auto bytes = std::make_shared<std::vector<std::byte>>();
  for (std::int64_t i = start; i < end; ++i) {
    std::int64_t d = *x.shape[i].asConstant();
    const auto *p = reinterpret_cast<const std::byte *>(&d);
    bytes->insert(bytes->end(), p, p + 8);
  }
  return bytes;
}

/// The node's outputs, computed by the interpreter on a one-node program.
std::map<std::string, ir::Blob> evaluate(const ir::Program &program,
                                         const ir::State &state,
                                         const ir::Node &n) {
  std::map<std::string, ir::Blob> out;
  if (n.library().op == "Shape") {
    for (const ir::Edge &e : state.edges)
      if (e.dst == n.id && !e.memlet.empty())
        for (const ir::Edge &o : state.edges)
          if (o.src == n.id)
            out[o.memlet.container] =
                shapeValue(n, program.container(e.memlet.container));
    return out;
  }
  ir::Program mini;
  mini.name = "fold";
  mini.setNextIds(program.nextNodeId(), program.nextEdgeId());
  ir::State s;
  s.name = "main";
  s.nodes.push_back(n);
  for (const ir::Edge &e : state.edges) {
    if (e.dst != n.id && e.src != n.id)
      continue;
    ir::NodeId other = e.dst == n.id ? e.src : e.dst;
    if (!s.findNode(other))
      s.nodes.push_back(*state.findNode(other));
    s.edges.push_back(e);
    if (e.memlet.empty() || mini.findContainer(e.memlet.container))
      continue;
    ir::Container c = program.container(e.memlet.container);
    if (e.src == n.id) {
      c.transient = false;
      mini.outputs.push_back(c.name);
    }
    mini.addContainer(std::move(c));
  }
  mini.states.push_back(std::move(s));
  operators::expandNode(mini, n.id, "pure");
  interp::TensorMap values = interp::interpret(mini, {});
  for (const auto &[name, t] : values)
    out[name] = blobOf(t);
  return out;
}

} // namespace

namespace {

class FoldConstants : public Transformation {
public:
  FoldConstants();
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace

FoldConstants::FoldConstants()
    : Transformation({
          .id = "fold-constants",
          .tier = Tier::Expansion,
          .summary = "Compute operators whose inputs are constant, and the "
                     "constant subgraph they start",
          .description =
              "Exporters compute shapes at run time (Shape → Gather → "
              "Unsqueeze → Concat → Reshape) and leave small arithmetic on "
              "weights. When an operator's inputs are all constant — or it is "
              "a Shape of a value whose shape is known — its result is "
              "computed once, here, by the reference interpreter on its pure "
              "expansion, and stored as a constant; operators that then have "
              "only constant inputs fold too. Later passes see real constants "
              "(a Reshape's target shape, a Clip's bounds). Results larger "
              "than `max_bytes` are left alone.",
          .params = {{"max_bytes", ParamSpec::Kind::Int, std::int64_t(64 << 20),
                      "largest folded result to store, in bytes", 0.0,
                      std::nullopt}},
          .exactness = {false, 1e-5, 1e-6},
          .pattern =
              Pattern().node("node", ir::NodeKind::Library, {},
                             [](const ir::Program &program,
                                const StateGraph &graph, const ir::Node &n) {
                               return whyNot(program, graph, n).empty();
                             }),
      }) {}

CheckResult FoldConstants::check(const ir::Program &program, const Match &match,
                                 const Params &params) const {
  const ir::State &state = stateNamed(program, match.state);
  StateGraph graph(state);
  ir::NodeId id = match.node("node");
  if (std::string why = whyNot(program, graph, *state.findNode(id));
      !why.empty())
    return CheckResult::failure(why, {id});
  std::int64_t limit = intParam(params, "max_bytes");
  for (const ir::Edge *e : graph.out(id)) {
    std::int64_t bytes = program.container(e->memlet.container)
                             .byteSize()
                             .asConstant()
                             .value_or(-1);
    if (bytes < 0 || bytes > limit)
      return CheckResult::failure(
          "output '" + e->memlet.container + "' would take " +
              std::to_string(bytes) +
              " bytes, more than max_bytes = " + std::to_string(limit),
          {id});
  }
  return CheckResult::success();
}

ApplyResult FoldConstants::apply(const ir::Program &program, const Match &match,
                                 const Params &params) const {
  ApplyResult r{program, {}};
  ir::Program &p = r.program;
  ir::State &state = stateNamed(p, match.state);
  std::vector<ir::NodeId> work = {match.node("node")};
  std::set<ir::NodeId> seen(work.begin(), work.end());
  while (!work.empty()) {
    ir::NodeId id = work.front();
    work.erase(work.begin());
    const ir::Node *n = state.findNode(id);
    if (!n)
      continue;
    // Later nodes of the chain are folded only if they pass the same check.
    if (id != match.node("node") &&
        !check(p, Match{match.state, {{"node", id}}}, params))
      continue;
    std::map<std::string, ir::Blob> values = evaluate(p, state, *n);
    std::set<ir::NodeId> accesses;
    for (auto &[name, blob] : values) {
      p.containers.at(name).constant = blob;
      for (const ir::Node &a : state.nodes)
        if (a.kind == ir::NodeKind::Access && a.access().container == name)
          accesses.insert(a.id);
    }
    removeNode(state, id, &r.idMap);
    // Operators reading the new constants may fold in turn.
    for (const ir::Edge &e : state.edges)
      if (accesses.count(e.src) &&
          state.findNode(e.dst)->kind == ir::NodeKind::Library &&
          seen.insert(e.dst).second)
        work.push_back(e.dst);
  }
  removeUnused(p, &r.idMap);
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<FoldConstants>()};

} // namespace weir::transforms
