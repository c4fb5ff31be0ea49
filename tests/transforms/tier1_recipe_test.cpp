// The tier-1 transformations together, as the auto recipe runs them, on every
// bundled model.

#include "transforms/tier1_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace weir::transforms_testing {
namespace {

using transforms::Match;

TEST(Tier1, AutoRecipeIsEquivalentOnEveryBundledModel) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    ir::Program p = model(name);
    ir::Program q = p;
    int steps = 0;
    for (const char *id : {"fold-constants", "remove-identity",
                           "fold-batchnorm", "reshape-to-view"})
      for (bool progress = true; progress;) {
        progress = false;
        for (const Match &m : matchesOf(q, id))
          if (transforms::checkMatch(q, T(id), m)) {
            q = transforms::applyChecked(q, T(id), m).program;
            expectValid(q);
            ++steps;
            progress = true;
            break;
          }
      }
    q = transforms::applyChecked(q, T("expand-all"), Match{}).program;
    workspace::VerifyReport v = workspace::verifyPrograms(
        p, q, {false, 1e-3, 1e-4}, {.seed = 11, .dims = {{"N", 3}}});
    EXPECT_TRUE(v.ok) << name << ": " << v.str();
    // The MLP (Gemm, Relu) has nothing for tier 1 but expansion.
    EXPECT_EQ(steps > 0, std::string(name) != "mlp.onnx") << name;
  }
}

} // namespace
} // namespace weir::transforms_testing
