// IncrementalTotals over a whole recipe: after every step of the auto
// recipe on the bundled models, the totals it counts are analyze()'s, and
// most steps count a small part of the program again.

#include "ir/analysis.h"
#include "ir/incremental_totals.h"
#include "onnx/import.h"
#include "workspace/auto_recipe.h"
#include "workspace/workspace.h"

#include <gtest/gtest.h>

#include <string>

namespace weir::workspace {
namespace {

/// Both totals under bindings of every symbol (the forms of two symbolic
/// sums may differ; their values may not).
void expectSameValue(const ir::Expr &a, const ir::Expr &b,
                     const std::vector<std::string> &symbols, int step) {
  ir::Bindings bind;
  for (std::size_t i = 0; i < symbols.size(); ++i)
    bind[symbols[i]] = 3 + static_cast<std::int64_t>(i);
  EXPECT_EQ(a.evaluate(bind), b.evaluate(bind)) << "step " << step;
}

class IncrementalTotalsRecipe : public ::testing::TestWithParam<const char *> {};

TEST_P(IncrementalTotalsRecipe, EveryStepCountsWhatAnalyzeCounts) {
  Workspace ws(onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                        "/resources/models/" + GetParam())
                   .program);
  ir::IncrementalTotals totals;
  int steps = 0;
  std::size_t recounted = 0, units = 0;
  auto compare = [&](const Version &v) {
    std::shared_ptr<const ir::Program> p = v.program();
    ir::IncrementalTotals::Totals t = totals(p);
    ir::ProgramAnalysis a = ir::analyze(*p, ir::AnalysisDetail::Totals);
    expectSameValue(t.flops, a.flops, p->symbols, steps);
    expectSameValue(t.bytesMoved, a.bytesMoved, p->symbols, steps);
    if (steps > 0) {
      recounted += totals.recounted();
      units += totals.units();
    }
  };
  compare(ws.versions()[0]);
  applyAutoRecipe(ws, "cpu", [&](const Version &, const Version &after) {
    ++steps;
    compare(after);
  });
  ASSERT_GE(steps, 10);
  // A step changes a few units: over the recipe, far fewer are counted
  // again than there are.
  EXPECT_LT(recounted * 4, units) << recounted << " of " << units;
}

INSTANTIATE_TEST_SUITE_P(BundledModels, IncrementalTotalsRecipe,
                         ::testing::Values("cnn.onnx",
                                           "transformer.onnx"),
                         [](const auto &info) {
                           std::string name = info.param;
                           return name.substr(0, name.find('.'));
                         });

} // namespace
} // namespace weir::workspace
