/// \file
/// `elementwise-chain`: a whole chain of maps, each reading the previous
/// one's output element by element (a chain of elementwise operators after
/// expansion: bias, GELU's dozen steps, a residual add), becomes one map
/// with one tasklet in a single step. It is `map-fusion` down the chain
/// from its head until no fusion passes, then `tasklet-fusion` inside the
/// fused map until none passes — the same rewrites the auto recipe runs
/// one by one, as one undoable step.
///
/// Matches only a chain's head (a map no map-fusion feeds); a map further
/// down is refused naming the map that is fused into it.
///
/// Ids: those of map-fusion and tasklet-fusion, composed: the head's
/// MapEntry and the last map's MapExit stay.

#include "ir/error.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"
#include "transforms/transformation.h"

#include <optional>

namespace weir::transforms {

namespace {

using ir::NodeId;

const Transformation &mapFusion() {
  return *requireTransformation("map-fusion");
}
const Transformation &taskletFusion() {
  return *requireTransformation("tasklet-fusion");
}

/// Their parameters at their defaults.
const Params &defaults(const Transformation &t) {
  static const Params fusion = resolveParams(mapFusion(), {});
  static const Params tasklets = resolveParams(taskletFusion(), {});
  return &t == &mapFusion() ? fusion : tasklets;
}

/// The first map-fusion match that passes its check through `node`: as
/// the producer (`downstream`, node = its MapExit) or as the consumer
/// (node = its MapEntry). Built from the neighbours, not by listing every
/// match of the program.
std::optional<Match> fusionAt(const ir::Program &p, const std::string &state,
                              NodeId node, bool downstream) {
  const ir::State &s = stateNamed(p, state);
  auto kindOf = [&](NodeId id) { return s.findNode(id)->kind; };
  auto tryMatch = [&](NodeId exit, NodeId array,
                      NodeId entry) -> std::optional<Match> {
    Match m{state,
            {{"first_exit", exit}, {"array", array}, {"second_entry", entry}}};
    if (mapFusion().check(p, m, defaults(mapFusion())))
      return m;
    return std::nullopt;
  };
  if (downstream) {
    for (const ir::Edge *a : s.outEdges(node))
      if (kindOf(a->dst) == ir::NodeKind::Access)
        for (const ir::Edge *e : s.outEdges(a->dst))
          if (kindOf(e->dst) == ir::NodeKind::MapEntry)
            if (auto m = tryMatch(node, a->dst, e->dst))
              return m;
  } else {
    for (const ir::Edge *a : s.inEdges(node))
      if (kindOf(a->src) == ir::NodeKind::Access)
        for (const ir::Edge *x : s.inEdges(a->src))
          if (kindOf(x->src) == ir::NodeKind::MapExit)
            if (auto m = tryMatch(x->src, a->src, node))
              return m;
  }
  return std::nullopt;
}

CheckResult checkHead(const ir::Program &p, const Match &match) {
  NodeId entry = match.node("map");
  const ir::State &s = stateNamed(p, match.state);
  if (auto up = fusionAt(p, match.state, entry, false)) {
    const ir::Node *before = s.findNode(up->node("first_exit"));
    return CheckResult::failure(
        "map '" + s.findNode(entry)->label + "' is inside a chain: map '" +
            (before ? before->label : std::string("?")) +
            "' fuses into it; apply at the chain's head",
        {entry, up->node("first_exit")});
  }
  NodeId exit = s.findNode(entry)->map().partner;
  if (!fusionAt(p, match.state, exit, true))
    return CheckResult::failure("no map reads the output of map '" +
                                    s.findNode(entry)->label +
                                    "' element by element in a way "
                                    "map-fusion accepts",
                                {entry});
  return CheckResult::success();
}

} // namespace

namespace {

class ElementwiseChain : public Transformation {
public:
  ElementwiseChain();
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace

ElementwiseChain::ElementwiseChain()
    : Transformation({
          .id = "elementwise-chain",
          .tier = Tier::Fusion,
          .summary =
              "Fuse a whole chain of elementwise maps into one map and tasklet",
          .description =
              "Starting at a map no map-fusion feeds (the head of a chain), "
              "fuses the next map that reads its output element by element "
              "(map-fusion), again and again down the chain, then merges the "
              "fused map's tasklets into one (tasklet-fusion). One step in the "
              "history for what map-fusion and tasklet-fusion do one pair at a "
              "time; every intermediate no one else reads disappears. Refused "
              "for a map inside a chain (the reason names the map before it) "
              "and for a map nothing can be fused with. Exact.",
          .pattern = Pattern().node("map", ir::NodeKind::MapEntry),
      }) {}

CheckResult ElementwiseChain::check(const ir::Program &program,
                                    const Match &match, const Params &) const {
  return checkHead(program, match);
}

ApplyResult ElementwiseChain::apply(const ir::Program &program,
                                    const Match &match, const Params &) const {
  if (CheckResult c = checkHead(program, match); !c)
    throw Error("elementwise-chain at " + match.str() + ": " + c.reason);
  ApplyResult r{program, {}};
  NodeId entry = match.node("map");
  const ir::State *s = &stateNamed(r.program, match.state);
  // Down the chain: the fused map keeps the head's entry and takes the
  // consumer's exit.
  for (std::optional<Match> m;
       (m = fusionAt(r.program, match.state, s->findNode(entry)->map().partner,
                     true));) {
    ApplyResult step = mapFusion().apply(r.program, *m, defaults(mapFusion()));
    r.idMap.then(step.idMap);
    r.program = std::move(step.program);
    s = &stateNamed(r.program, match.state);
  }
  // Then the tasklets inside the fused map, pair by pair.
  for (bool again = true; again;) {
    again = false;
    const ir::State &st = stateNamed(r.program, match.state);
    auto inScope = [&](NodeId t) {
      for (const ir::Edge *e : st.inEdges(t))
        if (e->src == entry)
          return true;
      return false;
    };
    for (const ir::Edge &e : st.edges) {
      const ir::Node *a = st.findNode(e.src), *b = st.findNode(e.dst);
      if (a->kind != ir::NodeKind::Tasklet ||
          b->kind != ir::NodeKind::Tasklet ||
          !(inScope(e.src) || inScope(e.dst)))
        continue;
      Match m{match.state, {{"first", e.src}, {"second", e.dst}}};
      if (!taskletFusion().check(r.program, m, defaults(taskletFusion())))
        continue;
      ApplyResult step =
          taskletFusion().apply(r.program, m, defaults(taskletFusion()));
      r.idMap.then(step.idMap);
      r.program = std::move(step.program);
      again = true;
      break;
    }
  }
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<ElementwiseChain>()};

} // namespace weir::transforms
