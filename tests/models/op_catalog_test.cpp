// The operator catalog: coverage of the models users bring first, and the
// FLOP formulas checked by hand.

#include "onnx/op_catalog.h"

#include <gtest/gtest.h>

using namespace weir;
using namespace weir::onnx_import;

namespace {

// Operator sets of torchvision's ResNet-18/50 and MobileNetV2 and of a
// BERT-base encoder as torch.onnx (1.13, opset 13-14) exports them.
const char *const kResNet[] = {
    "Conv", "BatchNormalization", "Relu",    "MaxPool",
    "Add",  "GlobalAveragePool",  "Flatten", "Gemm"};
const char *const kMobileNetV2[] = {"Conv",
                                    "BatchNormalization",
                                    "Clip",
                                    "Add",
                                    "GlobalAveragePool",
                                    "Flatten",
                                    "Gemm",
                                    "Dropout",
                                    "Constant"};
const char *const kBert[] = {"Gather",     "Add",
                             "ReduceMean", "Sub",
                             "Pow",        "Sqrt",
                             "Div",        "Mul",
                             "MatMul",     "Reshape",
                             "Transpose",  "Softmax",
                             "Erf",        "Shape",
                             "Unsqueeze",  "Concat",
                             "Cast",       "Slice",
                             "Where",      "Equal",
                             "Expand",     "ConstantOfShape",
                             "Constant",   "Tanh",
                             "Squeeze",    "Range",
                             "Neg",        "Less",
                             "Identity",   "Gemm"};

TEST(OpCatalog, CoversTorchvisionAndBertExports) {
  for (const char *op : kResNet)
    EXPECT_TRUE(findOp("", op)) << "ResNet op " << op;
  for (const char *op : kMobileNetV2)
    EXPECT_TRUE(findOp("", op)) << "MobileNetV2 op " << op;
  for (const char *op : kBert)
    EXPECT_TRUE(findOp("", op)) << "BERT op " << op;
}

TEST(OpCatalog, UnknownOpsAndDomains) {
  EXPECT_FALSE(findOp("", "NotAnOperator"));
  EXPECT_FALSE(findOp("com.microsoft", "FusedConv"));
  EXPECT_FALSE(findOp("", "SequenceInsert"));
  EXPECT_TRUE(findOp("ai.onnx", "Relu"));
  EXPECT_EQ(opClassName(findOp("", "Transpose")->cls), "shuffle");
  EXPECT_EQ(opClassName(findOp("", "Relu")->cls), "one-to-one");
  auto ops = knownOps();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
}

ir::Container tensor(std::vector<std::int64_t> shape) {
  ir::Container c;
  for (std::int64_t d : shape)
    c.shape.push_back(ir::Expr(d));
  return c;
}

TEST(OpCatalog, ConvFlops) {
  ir::Container x = tensor({1, 3, 32, 32}), w = tensor({16, 3, 3, 3}),
                y = tensor({1, 16, 32, 32});
  ir::Attributes attrs;
  auto flops = estimateFlops(*findOp("", "Conv"), {{&x, &w}, {&y}, &attrs});
  ASSERT_TRUE(flops);
  EXPECT_EQ(*flops, ir::Expr(2 * 16 * 32 * 32 * 3 * 3 * 3));
}

TEST(OpCatalog, GemmAndMatMulFlops) {
  ir::Container a = tensor({8, 32}), b = tensor({10, 32}), c = tensor({10}),
                y = tensor({8, 10});
  ir::Attributes attrs{{"transB", std::int64_t(1)}};
  auto gemm = estimateFlops(*findOp("", "Gemm"), {{&a, &b, &c}, {&y}, &attrs});
  ASSERT_TRUE(gemm);
  EXPECT_EQ(*gemm, ir::Expr(2 * 8 * 10 * 32 + 8 * 10));

  ir::Container a3 = tensor({4, 8, 32}), b3 = tensor({4, 32, 16}),
                y3 = tensor({4, 8, 16});
  auto mm = estimateFlops(*findOp("", "MatMul"), {{&a3, &b3}, {&y3}, nullptr});
  ASSERT_TRUE(mm);
  EXPECT_EQ(*mm, ir::Expr(2 * 4 * 8 * 16 * 32));
}

TEST(OpCatalog, SymbolicAndDataDependentFlops) {
  ir::Container x, y;
  x.shape = {ir::Expr::symbol("N"), ir::Expr(64)};
  y.shape = x.shape;
  auto relu = estimateFlops(*findOp("", "Relu"), {{&x}, {&y}, nullptr});
  ASSERT_TRUE(relu);
  EXPECT_EQ(relu->evaluate({{"N", 3}}), 3 * 64);
  EXPECT_EQ(*estimateFlops(*findOp("", "Reshape"), {{&x}, {&y}, nullptr}),
            ir::Expr(0));
  EXPECT_FALSE(
      estimateFlops(*findOp("", "NonMaxSuppression"), {{&x}, {&y}, nullptr}));
}

} // namespace
