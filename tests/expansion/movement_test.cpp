// Pure expansions of data-movement and position-dependent operators:
// structure, validation, and runs on the reference interpreter against
// values computed here.

#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "ir/validate.h"
#include "transforms/operators/expansion.h"
#include "unit/ir_builders.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace weir;
using namespace weir::ir;
using namespace weir::ir::builders;

#include "expansion/single_op.h"

using namespace weir::expansion_testing;

namespace {

runtime::Tensor iotaTensor(std::vector<std::int64_t> shape,
                           DType dtype = DType::F32) {
  runtime::Tensor t(dtype, std::move(shape));
  for (std::int64_t i = 0; i < t.elementCount(); ++i)
    t.setFromDouble(i, static_cast<double>(i));
  return t;
}

std::vector<double> values(const runtime::Tensor &t) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < t.elementCount(); ++i)
    v.push_back(t.getAsDouble(i));
  return v;
}

/// Expands everything, checks validation, runs on `inputs`, returns output
/// `name`.
runtime::Tensor run(Program &p, const interp::TensorMap &inputs,
                    const std::string &name = "Y") {
  auto report = operators::expandAll(p);
  EXPECT_TRUE(report.skipped.empty())
      << (report.skipped.empty() ? "" : report.skipped.front());
  expectValid(p);
  return interp::interpret(p, inputs).at(name);
}

std::string refusal(Program p) {
  auto report = operators::expandAll(p);
  EXPECT_EQ(count(p, NodeKind::Library), 1);
  return report.skipped.empty() ? "" : report.skipped.front();
}

TEST(MovementExpansion, ReshapeIsOneCopyMapInRowMajorOrder) {
  Program p = single(
      "Reshape", {},
      {{"data", "X", {2, 3, 4}}, {"shape", "S", {2}, DType::I64, {4, 6}}},
      {{"reshaped", "Y", {4, 6}}});
  runtime::Tensor y = run(p, {{"X", iotaTensor({2, 3, 4})}});
  EXPECT_EQ(count(p, NodeKind::MapEntry), 1);
  EXPECT_EQ(values(y), values(iotaTensor({24})));
}

TEST(MovementExpansion, TransposePermutesIndices) {
  Program p =
      single("Transpose", {{"perm", std::vector<std::int64_t>{2, 0, 1}}},
             {{"data", "X", {2, 3, 4}}}, {{"transposed", "Y", {4, 2, 3}}});
  runtime::Tensor y = run(p, {{"X", iotaTensor({2, 3, 4})}});
  std::vector<double> want;
  for (int c = 0; c < 4; ++c)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 3; ++b)
        want.push_back(a * 12 + b * 4 + c);
  EXPECT_EQ(values(y), want);
}

TEST(MovementExpansion, ConcatWritesEachInputsSlice) {
  Program p = single("Concat", {{"axis", std::int64_t(-1)}},
                     {{"inputs_0", "A", {2, 3}}, {"inputs_1", "B", {2, 1}}},
                     {{"concat_result", "Y", {2, 4}}});
  runtime::Tensor b(DType::F32, {2, 1});
  b.setFromDouble(0, 100);
  b.setFromDouble(1, 200);
  runtime::Tensor y = run(p, {{"A", iotaTensor({2, 3})}, {"B", b}});
  EXPECT_EQ(count(p, NodeKind::MapEntry), 2);
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 2, 100, 3, 4, 5, 200}));
}

TEST(MovementExpansion, SliceWithNegativeStepAndClamping) {
  // starts 8, ends -100 (clamped), step -3: 8, 5, 2; second axis -100..100
  // clamps to the whole axis.
  Program p = single("Slice", {},
                     {{"data", "X", {10, 2}},
                      {"starts", "S", {2}, DType::I64, {8, -100}},
                      {"ends", "E", {2}, DType::I64, {-100, 100}},
                      {"axes", "A", {2}, DType::I64, {0, -1}},
                      {"steps", "T", {2}, DType::I64, {-3, 1}}},
                     {{"output", "Y", {3, 2}}});
  runtime::Tensor y = run(p, {{"X", iotaTensor({10, 2})}});
  EXPECT_EQ(values(y), (std::vector<double>{16, 17, 10, 11, 4, 5}));
}

TEST(MovementExpansion, SliceWithDataStartsIsAOneHotContraction) {
  // The same slice as above, with starts, axes and steps read as data.
  Program p = single("Slice", {},
                     {{"data", "X", {10, 2}},
                      {"starts", "S", {2}, DType::I64},
                      {"ends", "E", {2}, DType::I64},
                      {"axes", "A", {2}, DType::I64},
                      {"steps", "T", {2}, DType::I64}},
                     {{"output", "Y", {3, 2}}});
  runtime::Tensor starts(DType::I64, {2}), ends(DType::I64, {2}),
      steps(DType::I64, {2});
  starts.setFromDouble(0, 8);
  starts.setFromDouble(1, -100);
  ends.setFromDouble(0, -100);
  ends.setFromDouble(1, 100);
  steps.setFromDouble(0, -3);
  steps.setFromDouble(1, 1);
  runtime::Tensor axes(DType::I64, {2});
  axes.setFromDouble(0, -2); // the same axes as above, written differently
  axes.setFromDouble(1, 1);
  runtime::Tensor y = run(p, {{"X", iotaTensor({10, 2})},
                              {"S", starts},
                              {"E", ends},
                              {"A", axes},
                              {"T", steps}});
  EXPECT_EQ(values(y), (std::vector<double>{16, 17, 10, 11, 4, 5}));
}

TEST(MovementExpansion, ConstantPadFillsThenCopiesAndCropsNegativePads) {
  // One row of zeros before, one column cropped at the end.
  Program p = single(
      "Pad", {},
      {{"data", "X", {2, 3}}, {"pads", "P", {4}, DType::I64, {1, 0, 0, -1}}},
      {{"output", "Y", {3, 2}}});
  runtime::Tensor y = run(p, {{"X", iotaTensor({2, 3})}});
  EXPECT_EQ(count(p, NodeKind::MapEntry), 2);
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 0, 1, 3, 4}));
}

TEST(MovementExpansion, ReflectPadMirrorsWithoutTheEdge) {
  Program p =
      single("Pad", {{"mode", std::string("reflect")}},
             {{"data", "X", {4}}, {"pads", "P", {2}, DType::I64, {2, 3}}},
             {{"output", "Y", {9}}});
  runtime::Tensor y = run(p, {{"X", iotaTensor({4})}});
  EXPECT_EQ(values(y), (std::vector<double>{2, 1, 0, 1, 2, 3, 2, 1, 0}));
}

TEST(MovementExpansion, GatherSelectsByDataIndicesIncludingNegative) {
  Program p = single("Gather", {{"axis", std::int64_t(1)}},
                     {{"data", "X", {2, 4}}, {"indices", "I", {3}, DType::I64}},
                     {{"output", "Y", {2, 3}}});
  runtime::Tensor x = iotaTensor({2, 4});
  x.setFromDouble(3, -0.0);
  runtime::Tensor i(DType::I64, {3});
  i.setFromDouble(0, 3);
  i.setFromDouble(1, -4);
  i.setFromDouble(2, 2);
  runtime::Tensor y = run(p, {{"X", x}, {"I", i}});
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 2, 7, 4, 6}));
  // Adding -0.0 keeps the sign of a gathered negative zero.
  EXPECT_TRUE(std::signbit(y.getAsDouble(0)));
}

TEST(MovementExpansion, GatherWithAConstantScalarIndexIsACopy) {
  Program p =
      single("Gather", {},
             {{"data", "X", {3, 2}}, {"indices", "I", {}, DType::I64, {-1}}},
             {{"output", "Y", {2}}});
  runtime::Tensor y = run(p, {{"X", iotaTensor({3, 2})}});
  EXPECT_EQ(count(p, NodeKind::MapEntry), 1);
  EXPECT_EQ(values(y), (std::vector<double>{4, 5}));
}

TEST(MovementExpansion, GatherElementsSelectsAlongTheAxis) {
  Program p =
      single("GatherElements", {{"axis", std::int64_t(1)}},
             {{"data", "X", {2, 3}}, {"indices", "I", {2, 2}, DType::I32}},
             {{"output", "Y", {2, 2}}});
  runtime::Tensor i(DType::I32, {2, 2});
  for (int k = 0; k < 4; ++k)
    i.setFromDouble(k, std::vector<double>{2, -3, 1, 1}[k]);
  runtime::Tensor y = run(p, {{"X", iotaTensor({2, 3})}, {"I", i}});
  EXPECT_EQ(values(y), (std::vector<double>{2, 0, 4, 4}));
}

TEST(MovementExpansion, TriluKeepsTheUpperTriangleFromK) {
  Program p = single("Trilu", {},
                     {{"input", "X", {3, 3}}, {"k", "K", {}, DType::I64, {1}}},
                     {{"output", "Y", {3, 3}}});
  runtime::Tensor y = run(p, {{"X", iotaTensor({3, 3})}});
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 2, 0, 0, 5, 0, 0, 0}));
}

TEST(MovementExpansion, DepthToSpaceDcr) {
  Program p =
      single("DepthToSpace", {{"blocksize", std::int64_t(2)}},
             {{"input", "X", {1, 4, 1, 1}}}, {{"output", "Y", {1, 1, 2, 2}}});
  runtime::Tensor y = run(p, {{"X", iotaTensor({1, 4, 1, 1})}});
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 2, 3}));
}

TEST(MovementExpansion, RefusedCasesLeaveTheNodeAndSayWhy) {
  EXPECT_NE(refusal(single("Slice", {},
                           {{"data", "X", {4}, DType::Bool},
                            {"starts", "S", {1}, DType::I64},
                            {"ends", "E", {1}, DType::I64, {2}}},
                           {{"output", "Y", {2}, DType::Bool}}))
                .find("bool"),
            std::string::npos);
  EXPECT_NE(refusal(single("Pad", {{"mode", std::string("mirror")}},
                           {{"data", "X", {4}},
                            {"pads", "P", {2}, DType::I64, {1, 1}}},
                           {{"output", "Y", {6}}}))
                .find("mirror"),
            std::string::npos);
  EXPECT_NE(refusal(single("Gather", {},
                           {{"data", "X", {4}, DType::Bool},
                            {"indices", "I", {2}, DType::I64}},
                           {{"output", "Y", {2}, DType::Bool}}))
                .find("bool"),
            std::string::npos);
  EXPECT_NE(
      refusal(single("Reshape", {},
                     {{"data", "X", {4}}, {"shape", "S", {1}, DType::I64, {5}}},
                     {{"reshaped", "Y", {5}}}))
          .find("elements"),
      std::string::npos);
}

} // namespace
