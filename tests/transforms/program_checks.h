#pragma once
/// \file
/// Checks the transformation tests share: validity, node counts, bytes
/// moved, bit-identical outputs, a transformation applied to a fixed point,
/// and the bundled models after expand-all.

#include "core/interp/interpreter.h"
#include "core/runtime/random_tensor.h"
#include "ir/analysis.h"
#include "ir/validate.h"
#include "onnx/import.h"
#include "transforms/registry.h"
#include "transforms/transformation.h"
#include "workspace/verify.h"

#include <gtest/gtest.h>

#include <cstring>
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

/// Both programs, expanded, give bit-identical outputs on the reference
/// interpreter and on the CPU JIT (verifyPrograms within `exactness`).
inline void expectEquivalent(const ir::Program &before,
                             const ir::Program &after,
                             const transforms::Exactness &exactness,
                             std::uint64_t seed = 7) {
  workspace::VerifyReport v =
      workspace::verifyPrograms(before, after, exactness, {.seed = seed});
  EXPECT_TRUE(v.ok) << v.str();
  ir::Program a = before, b = after;
  for (ir::Program *q : {&a, &b})
    if (countNodes(*q, ir::NodeKind::Library) > 0)
      *q = transforms::applyChecked(
               *q, *transforms::requireTransformation("expand-all"), {})
               .program;
  interp::TensorMap in = runtime::randomInputs(a, seed, {{"N", 2}});
  interp::TensorMap x = interp::interpret(a, in), y = interp::interpret(b, in);
  for (const auto &[name, t] : x) {
    ASSERT_EQ(t.byteSize(), y.at(name).byteSize()) << name;
    EXPECT_EQ(std::memcmp(t.data(), y.at(name).data(), t.byteSize()), 0)
        << name;
  }
}

/// `p` with every operator expanded (expand-all).
inline ir::Program expandAll(const ir::Program &p) {
  return transforms::applyChecked(
             p, *transforms::requireTransformation("expand-all"), {})
      .program;
}

/// The matches of `t` in `p` that pass its check.
inline std::vector<transforms::Match>
passing(const ir::Program &p, const transforms::Transformation &t) {
  std::vector<transforms::Match> out;
  for (const transforms::Match &m : transforms::findMatches(p, t))
    if (transforms::checkMatch(p, t, m))
      out.push_back(m);
  return out;
}

/// The reasons of the matches of `t` in `p` that fail, one per line.
inline std::string refusals(const ir::Program &p,
                            const transforms::Transformation &t) {
  std::string out;
  for (const transforms::Match &m : transforms::findMatches(p, t))
    if (transforms::CheckResult c = transforms::checkMatch(p, t, m); !c)
      out += c.reason + "\n";
  return out;
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
