#pragma once
// What the tier-1 transformation tests share: the bundled models, the
// registry's transformations by id, and applying a step with its golden
// text and an equivalence check on seeded inputs.

#include "ir/validate.h"
#include "onnx/import.h"
#include "transforms/golden.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"
#include "workspace/verify.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace weir::transforms_testing {

inline ir::Program model(const char *name) {
  return onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                  "/resources/models/" + name)
      .program;
}

inline const transforms::Transformation &T(const char *id) {
  return *transforms::requireTransformation(id);
}

inline std::vector<transforms::Match> matchesOf(const ir::Program &p,
                                                const char *id) {
  return transforms::findMatches(p, T(id));
}

/// Applies, validates, compares with the golden text and checks that the
/// outputs agree on seeded inputs within the declared tolerance (exact
/// transformations bit for bit).
inline ir::Program applyGoldenVerified(const std::string &golden,
                                       const ir::Program &p, const char *id,
                                       const transforms::Match &m,
                                       const transforms::Params &params = {},
                                       bool runnable = true) {
  transforms::ApplyResult r = transforms::applyChecked(p, T(id), m, params);
  expectValid(r.program);
  expectGolden(golden, p, r.program);
  if (runnable) {
    workspace::VerifyReport v =
        workspace::verifyPrograms(p, r.program, T(id).exactness(), {.seed = 7});
    EXPECT_TRUE(v.ok) << v.str();
  }
  return r.program;
}

/// The reason checkMatch gives (expecting a refusal).
inline std::string reason(const ir::Program &p, const char *id,
                          const transforms::Match &m,
                          const transforms::Params &params = {}) {
  transforms::CheckResult c = transforms::checkMatch(p, T(id), m, params);
  EXPECT_FALSE(c.ok);
  return c.reason;
}

} // namespace weir::transforms_testing
