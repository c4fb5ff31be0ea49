#pragma once
/// \file
/// Checks the transformation tests share: validity, node counts, bytes
/// moved, a transformation applied to a fixed point, and the bundled models
/// after expand-all.

#include "core/onnx/import.h"
#include "ir/analysis.h"
#include "ir/validate.h"
#include "transforms/registry.h"
#include "transforms/transformation.h"

#include <gtest/gtest.h>

#include <string>

namespace weir::transforms_testing {

/// No validation error (warnings are fine).
inline void expectValid(const ir::Program &p) {
  for (const ir::Diagnostic &d : ir::validate(p))
    EXPECT_NE(d.severity, ir::Severity::Error) << d.str();
}

inline int countNodes(const ir::Program &p, ir::NodeKind kind) {
  int n = 0;
  for (const ir::State &s : p.states)
    for (const ir::Node &node : s.nodes)
      n += node.kind == kind;
  return n;
}

/// Bytes moved (analysis) with a batch size N of 1.
inline std::int64_t bytesMoved(const ir::Program &p) {
  return ir::analyze(p).bytesMoved.evaluate({{"N", 1}});
}

/// Applies `t` until no match passes its check, recomputing the matches
/// after every step; returns the number of steps.
inline int toFixedPoint(ir::Program &p, const transforms::Transformation &t) {
  int applied = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (const transforms::Match &m : transforms::findMatches(p, t))
      if (transforms::checkMatch(p, t, m)) {
        p = transforms::applyChecked(p, t, m).program;
        ++applied;
        progress = true;
        break;
      }
  }
  return applied;
}

/// A bundled model (resources/models/NAME) with every operator expanded.
inline ir::Program expandedModel(const char *name) {
  ir::Program p = onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                           "/resources/models/" + name)
                      .program;
  return transforms::applyChecked(
             p, *transforms::requireTransformation("expand-all"), {})
      .program;
}

} // namespace weir::transforms_testing
