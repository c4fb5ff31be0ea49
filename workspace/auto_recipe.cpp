#include "workspace/auto_recipe.h"

#include "ir/error.h"
#include "transforms/pattern.h"

#include <algorithm>
#include <set>

namespace weir::workspace {
namespace {

/// Applies `id` at `m` with `params` when its check accepts, telling
/// `listener`; returns how many steps that made (1 or 0).
int step(Workspace &ws, const char *id, const transforms::Match &m,
         const transforms::Params &params, const StepListener &listener) {
  std::size_t before = ws.current();
  if (!ws.tryApply(id, m, params))
    return 0;
  if (listener)
    listener(ws.versions()[before], ws.versions()[ws.current()]);
  return 1;
}

/// Applies `id` until no match passes its check: each pass lists the
/// matches once and applies, in order, every one that still passes on the
/// current version (transformations keep the ids of what they do not
/// remove, so a later match either still names the right nodes or fails its
/// check); passes repeat while one applied something. Validates the result
/// once at the end (the recipe defers validation).
int exhaust(Workspace &ws, const char *id, const StepListener &listener,
            bool (*skip)(const ir::Program &,
                         const transforms::Match &) = nullptr) {
  int applied = 0;
  for (;;) {
    int pass = 0;
    for (const transforms::Match &m : ws.matches(id))
      if (!skip || !ws.ask([&](const ir::Program &p) { return skip(p, m); }))
        pass += step(ws, id, m, {}, listener);
    if (pass == 0) {
      ws.validatePending();
      return applied;
    }
    applied += pass;
  }
}

/// The state a match names.
const ir::State *stateOf(const ir::Program &p, const transforms::Match &m) {
  for (const ir::State &st : p.states)
    if (st.name == m.state)
      return &st;
  return nullptr;
}

/// The Winograd variant that pays on the Conv a match of `expand` names, or
/// "" for im2col: none below 2^24 multiply-adds (the tile transforms cost
/// what the saved multiplications gain) or on outputs under 14 wide (the
/// transforms' inner loops run over a row of tiles; on ResNet's 7x7 layers
/// the sixteen products, 16 × [512×512]·[512×16], ran slower than im2col's
/// one); F(4x4, 3x3) where the output is whole 4x4 tiles at least 28 wide
/// (each product then has at least 49 columns), F(2x2, 3x3) elsewhere.
/// Whether it applies at all (3x3, unit strides, constant filters) is the
/// expansion's check.
std::string winogradVariant(const ir::Program &p, const ir::State *s,
                            const transforms::Match &m) {
  ir::NodeId id = m.node("node");
  auto shapeOf = [&](bool output,
                     const char *conn) -> std::vector<std::int64_t> {
    for (const ir::Edge &e : s->edges)
      if ((output ? e.src : e.dst) == id &&
          (output ? e.srcConn : e.dstConn) == conn && !e.memlet.empty()) {
        std::vector<std::int64_t> dims;
        for (const ir::Expr &d : p.container(e.memlet.container).shape) {
          auto v = d.asConstant();
          if (!v)
            return {};
          dims.push_back(*v);
        }
        return dims;
      }
    return {};
  };
  std::vector<std::int64_t> w = shapeOf(false, "W"), y = shapeOf(true, "Y");
  if (w.size() != 4 || y.size() != 4)
    return "";
  std::int64_t macs = y[0] * y[1] * y[2] * y[3] * w[1] * w[2] * w[3];
  std::int64_t narrow = std::min(y[2], y[3]);
  if (macs < (std::int64_t(1) << 24) || narrow < 14)
    return "";
  if (narrow >= 28 && y[2] % 4 == 0 && y[3] % 4 == 0)
    return "winograd4";
  return "winograd";
}

/// The implementation the auto recipe prefers for the library node a match
/// of `expand` names, or "" for its default: Winograd for the Convs where
/// it pays, `window` for every MaxPool (one vectorized map; the expansion's
/// check says whether the window geometry allows it).
std::string preferredImplementation(const ir::Program &p,
                                    const transforms::Match &m) {
  const ir::State *s = stateOf(p, m);
  const ir::Node *n = s ? s->findNode(m.node("node")) : nullptr;
  if (!n || n->kind != ir::NodeKind::Library)
    return "";
  if (n->library().op == "Conv")
    return winogradVariant(p, s, m);
  if (n->library().op == "MaxPool")
    return "window";
  return "";
}

/// Whether the map a match of `map-interchange` names reduces over its last
/// parameter into elements its second-to-last parameter indexes (a
/// softmax's row sums, `s[i] += exp(x[i, j] - m[i])`): every write leaving
/// the map combines (a write-conflict resolution), comes from a tasklet
/// that calls exp, erf or sigmoid, names the second-to-last parameter and
/// not the last, and the second-to-last runs at least 16 iterations.
/// Swapping the two makes the innermost loop run over rows, which
/// vectorizes (the CPU backend's exp is vector arithmetic), while each row
/// still sums in its own order. The loads become strided gathers, which a
/// sum of plain loads does not repay (LayerNorm's means: 0.04 -> 0.09 ms).
bool reducesOverLast(const ir::Program &p, const transforms::Match &m) {
  const ir::State *s = stateOf(p, m);
  const ir::Node *entry = s ? s->findNode(m.node("map")) : nullptr;
  if (!entry || entry->kind != ir::NodeKind::MapEntry)
    return false;
  const ir::MapData &map = entry->map();
  std::size_t n = map.params.size();
  if (n < 2)
    return false;
  auto rows = map.ranges[n - 2].size().asConstant();
  if (!rows || *rows < 16)
    return false;
  int writes = 0;
  const std::shared_ptr<const transforms::StateGraph> graph =
      transforms::sharedStateGraph(*s);
  for (const ir::Edge *edge : graph->in(map.partner)) {
    const ir::Edge &e = *edge;
    if (e.memlet.empty())
      continue;
    bool row = false, column = false;
    for (const ir::Range &r : e.memlet.subset.dims)
      for (const std::string &v : r.begin.freeSymbols()) {
        row = row || v == map.params[n - 2];
        column = column || v == map.params[n - 1];
      }
    const ir::Node *src = s->findNode(e.src);
    bool costly = false;
    if (src && src->kind == ir::NodeKind::Tasklet)
      for (const char *f : {"exp(", "erf(", "sigmoid("})
        costly = costly || src->tasklet().source.find(f) != std::string::npos;
    if (!e.memlet.wcr || !row || column || !costly)
      return false;
    ++writes;
  }
  return writes > 0;
}

/// Whether tasklet code calls a function the CPU backend computes as vector
/// arithmetic, which is worth a vectorized loop.
bool costly(const std::string &code) {
  for (const char *f : {"exp(", "erf(", "sigmoid(", "tanh("})
    if (code.find(f) != std::string::npos)
      return true;
  return false;
}

/// Whether fusing the maps a match of `map-fusion` names would move costly
/// elementwise work into a map that reduces over its last parameter: the
/// consumer combines (a write-conflict resolution) into elements its last
/// parameter does not index, so its innermost loop accumulates into one
/// element at a time and cannot vectorize (f32 sums are not reassociated),
/// and the producer's exp or sigmoid would run scalar inside it.
/// EfficientNet-B0's SiLU maps fused into their squeeze-and-excitation
/// average pools took 42 ms of maps at 1 thread, 13.5 ms unfused.
bool devectorizesCostlyWork(const ir::Program &p, const transforms::Match &m) {
  const ir::State *s = stateOf(p, m);
  const ir::Node *first = s ? s->findNode(m.node("first_exit")) : nullptr;
  const ir::Node *second = s ? s->findNode(m.node("second_entry")) : nullptr;
  if (!first || !second || second->kind != ir::NodeKind::MapEntry)
    return false;
  const ir::MapData &consumer = second->map();
  if (consumer.params.empty())
    return false;
  const std::string &last = consumer.params.back();
  const std::shared_ptr<const transforms::StateGraph> graph =
      transforms::sharedStateGraph(*s);
  bool reducesOverLast = false;
  for (const ir::Edge *e : graph->in(consumer.partner)) {
    if (e->memlet.empty() || !e->memlet.wcr)
      continue;
    bool indexed = false;
    for (const ir::Range &r : e->memlet.subset.dims)
      for (const std::string &v : r.begin.freeSymbols())
        indexed = indexed || v == last;
    reducesOverLast = reducesOverLast || !indexed;
  }
  if (!reducesOverLast)
    return false;
  // The producer's tasklets: back from its exit to its entry.
  bool expensive = false;
  std::vector<ir::NodeId> work{first->id};
  std::set<ir::NodeId> seen{first->id};
  while (!work.empty() && !expensive) {
    ir::NodeId at = work.back();
    work.pop_back();
    for (const ir::Edge *e : graph->in(at)) {
      const ir::Node *src = graph->node(e->src);
      if (!src || src->kind == ir::NodeKind::MapEntry ||
          !seen.insert(src->id).second)
        continue;
      if (src->kind == ir::NodeKind::Tasklet)
        expensive = expensive || costly(src->tasklet().source);
      work.push_back(src->id);
    }
  }
  return expensive;
}

} // namespace

int applyAutoRecipe(Workspace &ws, const std::string &target,
                    const StepListener &listener) {
  if (target != "cpu")
    throw Error("the auto recipe knows the target 'cpu', not '" + target + "'");
  // Validated once per transformation rather than after each of the
  // hundreds of steps (a third of DenseNet-121's recipe).
  Workspace::DeferredValidation defer(ws);
  int applied = 0;
  for (const char *id : {"fold-constants", "remove-identity", "fold-batchnorm",
                         "reshape-to-view"})
    applied += exhaust(ws, id, listener);
  // Large 3x3 convolutions with unit strides as Winograd F(4x4, 3x3) or
  // F(2x2, 3x3) (4x or 2.25x fewer multiplications) and MaxPools as
  // whole-window maps, each its own step; expand-all takes the rest with
  // the default implementations.
  for (const transforms::Match &m : ws.matches("expand")) {
    std::string impl = preferredImplementation(ws.program(), m);
    const transforms::Params params{{"implementation", impl}};
    if (!impl.empty())
      applied += step(ws, "expand", m, params, listener);
  }
  applied += step(ws, "expand-all", {}, {}, listener);
  ws.validatePending();
  // Tier 2. GEMMs first: the bias fills of Gemm and Conv and the
  // elementwise maps right after them (bias, activation, residual add)
  // become epilogues, before map-fusion joins those maps to others and
  // they no longer line up with a GEMM's output alone. Then the maps the
  // expansion made (producer into consumer, diamonds included), cheap
  // values recomputed in the reductions that read them (layer norm's
  // x - mean), the tasklets that fusion put next to each other, and the
  // epilogues that fusion completed (a whole GELU once it is one map).
  // sibling-map-fusion is left to recipes: on the bench models it only
  // joins the maps around two gemms, which the analysis counts as a gain
  // the gemms do not see.
  // map-fusion leaves alone a pair whose fusion would put an exp or a
  // sigmoid into a loop that cannot vectorize (devectorizesCostlyWork).
  for (const char *id :
       {"init-fusion", "epilogue-fusion", "map-fusion", "reduction-fusion",
        "tasklet-fusion", "epilogue-fusion"})
    applied +=
        exhaust(ws, id, listener,
                std::string_view(id) == "map-fusion" ? devectorizesCostlyWork
                                                     : nullptr);
  // Tier 3: transposing copies folded into their readers, then maps that
  // may write over the input they consume.
  for (const char *id : {"view-elimination", "in-place"})
    applied += exhaust(ws, id, listener);
  // Reductions over a map's last parameter into rows its second-to-last
  // indexes get those two swapped (map-interchange keeps every element's
  // sum in order, or refuses): the innermost loop then runs over rows and
  // vectorizes (BERT's softmax sums, with their exp, 0.8 -> 0.12 ms).
  for (const transforms::Match &m : ws.matches("map-interchange")) {
    if (!ws.ask([&](const ir::Program &p) { return reducesOverLast(p, m); }))
      continue;
    const ir::Node *e = stateOf(ws.program(), m)->findNode(m.node("map"));
    auto last = std::int64_t(e->map().params.size()) - 1;
    const transforms::Params swap{{"first", last - 1}, {"second", last}};
    applied += step(ws, "map-interchange", m, swap, listener);
  }
  ws.validatePending();
  // Last, once nothing asks any more whether an intermediate is read
  // elsewhere: transients of one shape with disjoint lifetimes share a
  // buffer (ordering edges added where only the backend's order kept
  // them apart, as for the padding fills that have no inputs).
  const transforms::Params order{{"order", true}};
  applied += step(ws, "buffer-reuse", {}, order, listener);
  ws.validatePending();
  return applied;
}

} // namespace weir::workspace
