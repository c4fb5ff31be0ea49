#pragma once
// autoThenReuse: a model through the auto recipe, then buffer-reuse, with
// the transient memory before and after printed and checked (shared by
// buffer_reuse_test.cpp and tests/bench/movement_bench.cpp).

#include "ir/memory.h"
#include "onnx/import.h"
#include "workspace/auto_recipe.h"
#include "workspace/workspace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

namespace weir::transforms_testing {

/// Memory before and after buffer-reuse at the end of the auto recipe,
/// checked by the workspace's verify (expand, JIT, bit-identical).
inline void autoThenReuse(const std::string &path, bool verify, bool order) {
  auto start = std::chrono::steady_clock::now();
  workspace::Workspace ws(onnx_import::importModel(path).program);
  workspace::applyAutoRecipe(ws, "cpu");
  ir::MemoryReport before = ir::transientMemory(ws.program());
  transforms::Params params{{"order", order}};
  transforms::CheckResult c = ws.check("buffer-reuse", {}, params);
  if (!c.ok) {
    // Nothing left to share (after fusion a small model may keep only
    // transients of different shapes): say what is there.
    std::cout << "[ buffer-reuse ] "
              << std::filesystem::path(path).filename().string()
              << " after auto, order=" << order << ": " << before.str() << "; "
              << c.reason << ":";
    for (const ir::TransientLifetime &l : before.transients) {
      std::cout << " " << l.container << "[";
      for (const ir::Expr &e : ws.program().container(l.container).shape)
        std::cout << e.str() << ",";
      std::cout << "]@" << l.first << ".." << l.last;
    }
    std::cout << "\n";
    EXPECT_THAT(c.reason, ::testing::HasSubstr("no two transients"));
    return;
  }
  ws.apply("buffer-reuse", {}, params);
  ir::MemoryReport after = ir::transientMemory(ws.program());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::cout << "[ buffer-reuse ] "
            << std::filesystem::path(path).filename().string()
            << " after auto, order=" << order << ": allocated "
            << before.allocated << " -> " << after.allocated << " bytes ("
            << before.buffers << " -> " << after.buffers << " buffers), peak "
            << before.peak << " -> " << after.peak << " bytes; "
            << ws.program().metadata.at("buffer-reuse") << "; " << seconds
            << " s\n";
  EXPECT_LT(after.allocated, before.allocated);
  EXPECT_GE(after.allocated, after.peak);
  // A shared buffer counts as live from its first use to its last.
  EXPECT_GE(after.peak, before.peak);
  if (verify) {
    // The whole recipe within its tolerance, and the buffer-reuse step
    // alone bit for bit.
    workspace::VerifyReport v = ws.verify({.seed = 3});
    EXPECT_TRUE(v.ok) << v.str();
    workspace::VerifyReport step = ws.verifyStep(ws.current(), {.seed = 5});
    EXPECT_TRUE(step.ok) << step.str();
    EXPECT_TRUE(step.tolerance.exact);
    std::cout << "[ buffer-reuse ]   verify: " << v.str()
              << "; buffer-reuse step: " << step.str() << "\n";
  }
}

} // namespace weir::transforms_testing
