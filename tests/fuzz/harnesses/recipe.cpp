/// \file
/// Fuzz harness: recipe JSON, read and then replayed on the bundled CNN the
/// way `weir optimize --recipe FILE` does. A replay is all or nothing: when
/// it fails, the workspace is as it was.

#include "workspace/recipe.h"
#include "ir/hash.h"
#include "ir/validate.h"
#include "tests/fuzz/harness.h"
#include "workspace/session.h"
#include "workspace/workspace.h"

using namespace weir;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  static const std::unique_ptr<workspace::Workspace> model =
      workspace::openModel(fuzz::bundledModel("cnn.onnx"));
  workspace::Recipe recipe;
  try {
    recipe =
        workspace::Recipe::parse(std::string(fuzz::text(data, size)), "recipe");
  } catch (const Error &) {
    return 0;
  }
  (void)recipe.dump();
  workspace::Workspace ws(model->program());
  std::uint64_t before = ws.hash();
  try {
    ws.replay(recipe);
  } catch (const Error &) {
    fuzz::require(ws.hash() == before && ws.versions().size() == 1,
                  "a failed replay left the workspace changed");
    return 0;
  }
  fuzz::require(!ir::hasErrors(ir::validate(ws.program())),
                "a replayed recipe left an invalid program");
  // The recipe the workspace records replays to the same program.
  workspace::Workspace again(model->program());
  again.replay(ws.recipe());
  fuzz::require(again.hash() == ws.hash(),
                "the recorded recipe does not replay to the same program");
  return 0;
}
