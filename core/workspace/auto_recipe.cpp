#include "core/workspace/auto_recipe.h"

#include "ir/error.h"

namespace weir::workspace {
namespace {

/// Applies `id` until no match passes its check: each pass lists the
/// matches once and applies, in order, every one that still passes on the
/// current version (transformations keep the ids of what they do not
/// remove, so a later match either still names the right nodes or fails its
/// check); passes repeat while one applied something.
int exhaust(Workspace &ws, const char *id, const StepListener &listener) {
  int applied = 0;
  for (;;) {
    bool progress = false;
    for (const transforms::Match &m : ws.matches(id)) {
      if (!ws.check(id, m))
        continue;
      std::size_t before = ws.current();
      ws.apply(id, m);
      if (listener)
        listener(ws.versions()[before], ws.versions()[ws.current()]);
      ++applied;
      progress = true;
    }
    if (!progress)
      return applied;
  }
}

} // namespace

int applyAutoRecipe(Workspace &ws, const std::string &target,
                    const StepListener &listener) {
  if (target != "cpu")
    throw Error("the auto recipe knows the target 'cpu', not '" + target + "'");
  int applied = 0;
  for (const char *id : {"fold-constants", "remove-identity", "fold-batchnorm",
                         "reshape-to-view"})
    applied += exhaust(ws, id, listener);
  if (ws.check("expand-all")) {
    std::size_t before = ws.current();
    ws.apply("expand-all");
    if (listener)
      listener(ws.versions()[before], ws.versions()[ws.current()]);
    ++applied;
  }
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
  for (const char *id : {"init-fusion", "epilogue-fusion", "map-fusion",
                         "reduction-fusion", "tasklet-fusion",
                         "epilogue-fusion"})
    applied += exhaust(ws, id, listener);
  // Tier 3: transposing copies folded into their readers, then maps that
  // may write over the input they consume.
  for (const char *id : {"view-elimination", "in-place"})
    applied += exhaust(ws, id, listener);
  // Last, once nothing asks any more whether an intermediate is read
  // elsewhere: transients of one shape with disjoint lifetimes share a
  // buffer (ordering edges added where only the backend's order kept
  // them apart, as for the padding fills that have no inputs).
  const transforms::Params order{{"order", true}};
  if (ws.check("buffer-reuse", {}, order)) {
    std::size_t before = ws.current();
    ws.apply("buffer-reuse", {}, order);
    if (listener)
      listener(ws.versions()[before], ws.versions()[ws.current()]);
    ++applied;
  }
  return applied;
}

} // namespace weir::workspace
