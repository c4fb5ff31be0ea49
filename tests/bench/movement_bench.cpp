// Data-movement benchmark (not part of the pass/fail suite): buffer-reuse
// and redundant-copy-removal on the bench models after the auto recipe,
// printing transient memory, bytes moved, what was removed and what is
// still refused, with the same checks as the suite's tests on the bundled
// models. The models come from tests/bench/export_models.py (build/bench/
// models); a missing one fails. About a minute; WEIR_MOVEMENT_BENCH_VERIFY=1
// also compiles and runs every model to verify the steps (several minutes).
//
//   build/default/tests/weir_movement_bench

#include "ir/memory.h"
#include "onnx/import.h"
#include "transforms/auto_then_reuse.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"
#include "workspace/auto_recipe.h"
#include "workspace/verify.h"
#include "workspace/workspace.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

namespace weir::transforms_testing {
namespace {

const transforms::Transformation &reuse() {
  return *transforms::requireTransformation("buffer-reuse");
}
const transforms::Transformation &rcr() {
  return *transforms::requireTransformation("redundant-copy-removal");
}

bool verifying() {
  const char *v = std::getenv("WEIR_MOVEMENT_BENCH_VERIFY");
  return v && std::string(v) == "1";
}

const std::filesystem::path kModels =
    std::filesystem::path(WEIR_SOURCE_DIR) / "build/bench/models";

/// Whether the bench model `name` is there; a failure when it is not.
bool present(const char *name) {
  if (std::filesystem::exists(kModels / name))
    return true;
  ADD_FAILURE() << (kModels / name) << " is missing: run "
                << "tests/bench/export_models.py --out build/bench/models";
  return false;
}

TEST(BufferReuse, BenchModelsAfterAuto) {
  bool verify = verifying();
  for (const char *name :
       {"resnet18.onnx", "mobilenet_v2.onnx", "resnet50.onnx", "bert.onnx"}) {
    if (!present(name))
      continue;
    const std::filesystem::path &dir = kModels;
    SCOPED_TRACE(name);
    for (bool order : {false, true})
      autoThenReuse((dir / name).string(), verify, order);
    // The plain expansion, for comparison (memory only).
    ir::Program expanded =
        transforms::applyChecked(
            onnx_import::importModel(dir / name).program,
            *transforms::requireTransformation("expand-all"), {})
            .program;
    ir::MemoryReport m0 = ir::transientMemory(expanded);
    for (bool order : {false, true}) {
      auto start = std::chrono::steady_clock::now();
      ir::Program after =
          transforms::applyChecked(expanded, reuse(), {}, {{"order", order}})
              .program;
      ir::MemoryReport m1 = ir::transientMemory(after);
      std::cout << "[ buffer-reuse ] " << name << " expanded, order=" << order
                << ": allocated " << m0.allocated << " -> " << m1.allocated
                << " bytes (" << m0.buffers << " -> " << m1.buffers
                << " buffers), peak " << m0.peak << " -> " << m1.peak
                << " bytes; "
                << std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count()
                << " s to plan, apply and validate\n";
      EXPECT_LT(m1.allocated, m0.allocated);
    }
  }
}

TEST(RedundantCopyRemoval, BenchModelsAfterAuto) {
  for (const char *name : {"resnet18.onnx", "mobilenet_v2.onnx", "bert.onnx"}) {
    if (!present(name))
      continue;
    const std::filesystem::path &dir = kModels;
    SCOPED_TRACE(name);
    workspace::Workspace ws(onnx_import::importModel(dir / name).program);
    workspace::applyAutoRecipe(ws, "cpu");
    ir::Program before = ws.program(), after = before;
    int applied = toFixedPoint(after, rcr());
    expectValid(after);
    std::cout << "[ redundant-copy-removal ] " << name
              << " after auto: " << applied << " copies removed, bytes moved "
              << bytesMoved(before) << " -> " << bytesMoved(after)
              << ", transients " << ir::transientMemory(before).str() << " -> "
              << ir::transientMemory(after).str() << "\n";
    std::string why = refusals(after, rcr());
    std::cout << "  still refused:\n" << why;
    if (applied > 0) {
      workspace::VerifyReport v = workspace::verifyPrograms(
          before, after, rcr().exactness(), {.seed = 11});
      EXPECT_TRUE(v.ok) << v.str();
      std::cout << "  verify: " << v.str() << "\n";
    }
  }
}

} // namespace
} // namespace weir::transforms_testing
