// in-place: golden before/after text, negative tests matching their
// reasons, and equivalence on the interpreter and the CPU JIT.

#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

const transforms::Transformation &inPlace() {
  return *transforms::requireTransformation("in-place");
}

int transients(const ir::Program &p) {
  int n = 0;
  for (const auto &[name, c] : p.containers)
    n += c.transient && !c.isConstant();
  return n;
}

TEST(InPlace, ChainGolden) {
  GraphBuilder g("chain");
  g.input("x", {4, 6}).transient("t", {4, 6}).transient("u", {4, 6});
  g.output("y", {4, 6});
  g.op("Neg", "neg", {{"X", "x"}}, {{"Y", "t"}});
  g.op("Relu", "relu", {{"X", "t"}}, {{"Y", "u"}});
  g.op("Sigmoid", "sigmoid", {{"X", "u"}}, {{"Y", "y"}});
  ir::Program before = expandAll(g.p);
  ir::Program after = before;
  EXPECT_EQ(toFixedPoint(after, inPlace()), 1);
  expectValid(after);
  expectGolden("in_place_chain", before, after);
  EXPECT_EQ(transients(after), transients(before) - 1);
  EXPECT_EQ(bytesMoved(after), bytesMoved(before));
  expectEquivalent(before, after, inPlace().exactness());
}

TEST(InPlace, RefusesALiveInputAMovedElementAndArguments) {
  GraphBuilder g("refusals");
  g.input("x", {4, 4}).transient("t", {4, 4}).transient("u", {4, 4});
  g.transient("v", {4, 4}).output("y", {4, 4}).output("z", {4, 4});
  g.op("Neg", "neg", {{"X", "x"}}, {{"Y", "t"}});
  // t is read twice: by the transpose and by the sum below.
  g.op("Transpose", "tr", {{"data", "t"}}, {{"transposed", "u"}});
  g.op("Add", "sum", {{"A", "t"}, {"B", "u"}}, {{"C", "v"}});
  g.op("Exp", "exp", {{"input", "v"}}, {{"output", "y"}});
  g.op("Abs", "abs", {{"X", "x"}}, {{"Y", "z"}});
  ir::Program p = expandAll(g.p);
  // Only the sum may write over what it consumes (u, read by it alone).
  EXPECT_EQ(toFixedPoint(p, inPlace()), 1);
  std::string why = refusals(p, inPlace());
  EXPECT_THAT(why, HasSubstr("'t' is read or written elsewhere"));
  EXPECT_THAT(why, HasSubstr("'y' is not a plain transient"));
  EXPECT_THAT(why, HasSubstr("'x' is not a plain transient"));

  // A transpose between two transients of one shape moves elements.
  GraphBuilder h("moved");
  h.input("x", {4, 4}).transient("t", {4, 4}).transient("u", {4, 4});
  h.output("y", {4, 4});
  h.op("Neg", "neg", {{"X", "x"}}, {{"Y", "t"}});
  h.op("Transpose", "tr", {{"data", "t"}}, {{"transposed", "u"}});
  h.op("Exp", "exp", {{"input", "u"}}, {{"output", "y"}});
  p = expandAll(h.p);
  EXPECT_EQ(toFixedPoint(p, inPlace()), 0);
  EXPECT_THAT(refusals(p, inPlace()),
              HasSubstr("an iteration could overwrite what another "
                        "still reads"));
}

TEST(InPlace, BundledModelsToAFixedPoint) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name);
    ir::Program after = before;
    int applied = toFixedPoint(after, inPlace());
    expectValid(after);
    std::cout << "[ in-place ] " << name << ": " << applied << " maps write "
              << "over their input\n";
    EXPECT_EQ(transients(after), transients(before) - applied);
    if (applied > 0)
      expectEquivalent(before, after, inPlace().exactness(), 17);
  }
}

} // namespace
} // namespace weir::transforms_testing
