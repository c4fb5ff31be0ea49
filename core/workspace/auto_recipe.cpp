#include "core/workspace/auto_recipe.h"

#include "ir/error.h"

namespace weir::workspace {
namespace {

/// Applies the first match of `id` that passes its check, until none does.
/// Matches that fail are skipped; after an apply, matching starts again on
/// the new version (ids of untouched nodes are stable).
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
      break;
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
  return applied;
}

} // namespace weir::workspace
