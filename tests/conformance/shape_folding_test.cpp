// Shape specialization at load (onnx/passes/shape_folding.h), two ways:
// - against ONNX's own expected outputs: each node test of an operator the
//   folding evaluates is rewritten so that its inputs are initializers and
//   its outputs feed an Identity; where the import folds the node, the
//   constant it made must equal the test's expected output, bit for bit;
// - on models written the way exporters write shape arithmetic
//   (ShuffleNet's channel split, a Transformer's head split): they import
//   with every size settled and compute the right values on the
//   interpreter.

#include "conformance/node_families.h"
#include "core/interp/interpreter.h"
#include "core/runtime/tensor_pb.h"
#include "ir/error.h"
#include "onnx/import.h"
#include "transforms/operators/expansion.h"
#include "workspace/temp_dir.h"

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <tuple>

using namespace weir;
using namespace weir::testing_support;
using weir::workspace_testing::TempDir;
namespace fs = std::filesystem;

namespace {

/// The operators shape specialization evaluates (onnx/passes/shape_values.h).
const std::set<std::string> kFoldedOps{
    "Shape",   "Size",      "Identity",       "Cast",    "Neg",
    "Abs",     "Floor",     "Ceil",           "Sqrt",    "Not",
    "Add",     "Sub",       "Mul",            "Div",     "Mod",
    "Min",     "Max",       "Equal",          "Less",    "Greater",
    "LessOrEqual", "GreaterOrEqual", "And",   "Or",      "Xor",
    "Where",   "Gather",    "Concat",         "Unsqueeze", "Squeeze",
    "Slice",   "Reshape",   "Expand",         "Range",   "ConstantOfShape"};

void save(const onnx::ModelProto &m, const fs::path &path) {
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&out)) << path;
}

onnx::TensorProto readProto(const fs::path &path) {
  onnx::TensorProto t;
  std::ifstream in(path, std::ios::binary);
  if (!t.ParseFromIstream(&in))
    throw Error("cannot read " + path.string());
  return t;
}

bool folded(const onnx_import::ImportResult &r) {
  for (const std::string &note : r.report.notes)
    if (note.rfind("shapes specialized:", 0) == 0)
      return true;
  return false;
}

/// "" when the constant `name` of `program` holds `want` exactly.
std::string compareConstant(const ir::Program &program, const std::string &name,
                            const runtime::Tensor &want) {
  const ir::Container *c = program.findContainer(name);
  if (!c || !c->isConstant())
    return "no constant '" + name + "'";
  if (c->dtype != want.dtype())
    return "dtype " + std::string(ir::dtypeName(c->dtype)) + " vs " +
           want.describe();
  std::vector<std::int64_t> dims;
  for (const ir::Expr &d : c->shape)
    dims.push_back(d.asConstant().value_or(-1));
  if (dims != want.shape())
    return "shape differs from " + want.describe();
  // An empty tensor may have no buffer at all: memcmp only a non-empty one.
  if (c->constant->size() != want.byteSize() ||
      (want.byteSize() > 0 &&
       std::memcmp(c->constant->data(), want.data(), want.byteSize()) != 0))
    return "contents differ from the expected " + want.describe();
  return "";
}

TEST(ShapeFolding, AgreesWithTheNodeTestsExpectedOutputs) {
  ASSERT_TRUE(fs::exists(kNodeTests)) << kNodeTests << " is missing";
  TempDir scratch("weir-shape-folding");
  std::map<std::string, int> foldedByOp;
  int candidates = 0;
  for (const auto &entry : fs::directory_iterator(kNodeTests)) {
    const fs::path dir = entry.path();
    onnx::ModelProto m;
    {
      std::ifstream in(dir / "model.onnx", std::ios::binary);
      if (!m.ParseFromIstream(&in))
        continue;
    }
    onnx::GraphProto &g = *m.mutable_graph();
    if (g.node_size() != 1 || !kFoldedOps.count(g.node(0).op_type()) ||
        !excludedFamily(g).empty() ||
        !fs::exists(dir / "test_data_set_0" / "input_0.pb"))
      continue;
    const std::string name = dir.filename().string();
    // Inputs become initializers; each output feeds an Identity, so the
    // node itself is not a graph output and may fold.
    bool complete = true;
    for (int i = 0; i < g.input_size(); ++i)
      complete = complete && fs::exists(dir / "test_data_set_0" /
                                        ("input_" + std::to_string(i) + ".pb"));
    if (!complete)
      continue;
    for (int i = 0; i < g.input_size(); ++i) {
      onnx::TensorProto t = readProto(dir / "test_data_set_0" /
                                      ("input_" + std::to_string(i) + ".pb"));
      t.set_name(g.input(i).name());
      *g.add_initializer() = t;
    }
    g.clear_input();
    std::vector<std::string> outputs;
    for (onnx::ValueInfoProto &out : *g.mutable_output()) {
      outputs.push_back(out.name());
      onnx::NodeProto &id = *g.add_node();
      id.set_op_type("Identity");
      id.add_input(out.name());
      id.add_output(out.name() + "__out");
      out.set_name(out.name() + "__out");
    }
    ++candidates;
    save(m, scratch / "model.onnx");
    onnx_import::ImportResult r;
    try {
      // Every constant computation, not only those from a Shape: the node
      // tests give each operator constant inputs of its own.
      onnx_import::ImportOptions options;
      options.foldConstants = true;
      r = onnx_import::importModel(scratch / "model.onnx", options);
    } catch (const Error &e) {
      ADD_FAILURE() << name << ": " << e.what();
      continue;
    }
    if (!folded(r))
      continue; // a type or case the folding leaves to run
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      runtime::Tensor want = runtime::readTensorPb(
          dir / "test_data_set_0" / ("output_" + std::to_string(j) + ".pb"));
      std::string diff = compareConstant(r.program, outputs[j], want);
      EXPECT_EQ(diff, "") << name << ", output " << outputs[j];
    }
    ++foldedByOp[g.node(0).op_type()];
  }
  // Every operator the folding claims is exercised by at least one test
  // that folds, so a check here cannot pass by folding nothing.
  for (const char *op :
       {"Shape", "Size", "Cast", "Neg", "Floor", "Sqrt", "Not", "Add", "Sub",
        "Mul", "Div", "Mod", "Min", "Max", "Equal", "Less", "Greater", "And",
        "Where", "Gather", "Concat", "Unsqueeze", "Squeeze", "Slice",
        "Reshape", "Expand", "Range", "ConstantOfShape"})
    EXPECT_GT(foldedByOp[op], 0) << op << ": no node test folded";
  int total = 0;
  for (const auto &[op, n] : foldedByOp)
    total += n;
  std::printf("shape folding: %d of %d single-operator node tests folded\n",
              total, candidates);
}

// -- models as exporters write them -----------------------------------------

/// A graph under construction, opset 13.
struct Builder {
  onnx::ModelProto model;
  onnx::GraphProto &g = *model.mutable_graph();

  Builder() {
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    g.set_name("g");
  }
  void input(const std::string &name, std::vector<std::string> dims,
             int type = onnx::TensorProto::FLOAT) {
    onnx::ValueInfoProto &v = *g.add_input();
    v.set_name(name);
    auto &t = *v.mutable_type()->mutable_tensor_type();
    t.set_elem_type(type);
    for (const std::string &d : dims) {
      auto &dim = *t.mutable_shape()->add_dim();
      if (std::isdigit(static_cast<unsigned char>(d[0])))
        dim.set_dim_value(std::stoll(d));
      else
        dim.set_dim_param(d);
    }
  }
  void output(const std::string &name) {
    onnx::ValueInfoProto &v = *g.add_output();
    v.set_name(name);
    v.mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
  }
  onnx::NodeProto &node(const std::string &op, std::vector<std::string> in,
                        const std::string &out) {
    onnx::NodeProto &n = *g.add_node();
    n.set_op_type(op);
    n.set_name(out + "_node");
    for (const std::string &i : in)
      n.add_input(i);
    n.add_output(out);
    return n;
  }
  /// A Constant node of int64 `values` (a scalar when `scalar`).
  void ints(const std::string &out, std::vector<std::int64_t> values,
            bool scalar = false) {
    onnx::AttributeProto &a = *node("Constant", {}, out).add_attribute();
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto &t = *a.mutable_t();
    t.set_data_type(onnx::TensorProto::INT64);
    if (!scalar)
      t.add_dims(std::int64_t(values.size()));
    for (std::int64_t v : values)
      t.add_int64_data(v);
  }
  void intAttribute(onnx::NodeProto &n, const std::string &name,
                    std::int64_t v) {
    onnx::AttributeProto &a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v);
  }
};

/// ShuffleNetV2's channel split as torch.onnx writes it: the half of the
/// channel count from Shape -> Gather -> Div, and two Slices; here
/// concatenated back in swapped order.
Builder channelSplit(const std::string &batch) {
  Builder b;
  b.input("x", {batch, "8", "2", "2"});
  b.node("Shape", {"x"}, "shape");
  b.ints("one", {1}, /*scalar=*/true);
  b.intAttribute(b.node("Gather", {"shape", "one"}, "channels"), "axis", 0);
  b.ints("two", {2}, /*scalar=*/true);
  b.node("Div", {"channels", "two"}, "half");
  b.ints("axis0", {0});
  b.node("Unsqueeze", {"half", "axis0"}, "half1");
  b.ints("zero", {0});
  b.ints("end", {std::numeric_limits<std::int64_t>::max()});
  b.ints("axis1", {1});
  b.node("Slice", {"x", "zero", "half1", "axis1"}, "first");
  b.node("Slice", {"x", "half1", "end", "axis1"}, "second");
  b.intAttribute(b.node("Concat", {"second", "first"}, "y"), "axis", 1);
  b.output("y");
  return b;
}

/// A Transformer's head split: [2, 6] reshaped to [2, 3, 6 / 3] from the
/// input's own shape, then transposed.
Builder headSplit() {
  Builder b;
  b.input("x", {"2", "6"});
  b.node("Shape", {"x"}, "shape");
  b.ints("i0", {0}, true);
  b.ints("i1", {1}, true);
  b.intAttribute(b.node("Gather", {"shape", "i0"}, "rows"), "axis", 0);
  b.intAttribute(b.node("Gather", {"shape", "i1"}, "width"), "axis", 0);
  b.ints("heads", {3}, true);
  b.node("Div", {"width", "heads"}, "per");
  b.ints("axes", {0});
  b.node("Unsqueeze", {"rows", "axes"}, "rows1");
  b.node("Unsqueeze", {"per", "axes"}, "per1");
  b.ints("heads1", {3});
  b.intAttribute(b.node("Concat", {"rows1", "heads1", "per1"}, "split"),
                 "axis", 0);
  b.node("Reshape", {"x", "split"}, "r");
  onnx::AttributeProto &perm =
      *b.node("Transpose", {"r"}, "y").add_attribute();
  perm.set_name("perm");
  perm.set_type(onnx::AttributeProto::INTS);
  for (int p : {0, 2, 1})
    perm.add_ints(p);
  b.output("y");
  return b;
}

onnx_import::ImportResult
importBuilt(const Builder &b, const onnx_import::ImportOptions &options = {}) {
  TempDir scratch("weir-shape-folding");
  save(b.model, scratch / "m.onnx");
  return onnx_import::importModel(scratch / "m.onnx", options);
}

/// The program's output on x = 0, 1, 2, ... after expand-all.
std::vector<float> runOnCounting(ir::Program program,
                                 std::vector<std::int64_t> shape) {
  operators::ExpandAllReport report = operators::expandAll(program);
  EXPECT_TRUE(report.skipped.empty());
  runtime::Tensor x(ir::DType::F32, shape);
  for (std::int64_t i = 0; i < x.elementCount(); ++i)
    x.setFromDouble(i, double(i));
  interp::TensorMap out = interp::interpret(program, {{"x", x}});
  const runtime::Tensor &y = out.at("y");
  std::vector<float> values;
  for (std::int64_t i = 0; i < y.elementCount(); ++i)
    values.push_back(float(y.getAsDouble(i)));
  return values;
}

TEST(ShapeFolding, ChannelSplitSettlesAndRuns) {
  onnx_import::ImportResult r = importBuilt(channelSplit("1"));
  EXPECT_TRUE(folded(r));
  EXPECT_EQ(r.report.unverifiedShapes, "");
  const ir::Container &first = r.program.container("first");
  ASSERT_EQ(first.shape.size(), 4u);
  EXPECT_EQ(first.shape[1].asConstant(), 4);
  std::vector<float> y = runOnCounting(r.program, {1, 8, 2, 2});
  ASSERT_EQ(y.size(), 32u);
  for (int i = 0; i < 32; ++i) // channels 4..7, then 0..3
    EXPECT_EQ(y[std::size_t(i)], float((i + 16) % 32)) << i;
}

TEST(ShapeFolding, HeadSplitSettlesAndRuns) {
  onnx_import::ImportResult r = importBuilt(headSplit());
  EXPECT_TRUE(folded(r));
  EXPECT_EQ(r.report.unverifiedShapes, "");
  std::vector<float> y = runOnCounting(r.program, {2, 6});
  // x[b, h * 2 + k] lands at y[b, k, h].
  ASSERT_EQ(y.size(), 12u);
  for (int b = 0; b < 2; ++b)
    for (int k = 0; k < 2; ++k)
      for (int h = 0; h < 3; ++h)
        EXPECT_EQ(y[std::size_t(b * 6 + k * 3 + h)], float(b * 6 + h * 2 + k));
}

TEST(ShapeFolding, ChannelSplitUnderASymbolicBatch) {
  // Shape(x) with a symbolic batch still gives the channel count: the
  // Gather of a static dimension folds, the batch stays a symbol, and the
  // program runs at any batch.
  onnx_import::ImportResult r = importBuilt(channelSplit("N"));
  EXPECT_TRUE(folded(r));
  EXPECT_EQ(r.program.symbols, std::vector<std::string>{"N"});
  const ir::Container &first = r.program.container("first");
  ASSERT_EQ(first.shape.size(), 4u);
  EXPECT_FALSE(first.shape[0].isConstant());
  EXPECT_EQ(first.shape[1].asConstant(), 4);
  std::vector<float> y = runOnCounting(r.program, {3, 8, 2, 2});
  ASSERT_EQ(y.size(), 96u);
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 32; ++i)
      EXPECT_EQ(y[std::size_t(b * 32 + i)], float(b * 32 + (i + 16) % 32));
}

TEST(ShapeFolding, LeavesTheSymbolicBatchAlone) {
  // x.view(x.size(0), -1) under a symbolic batch: Gather(Shape(x), 0) is
  // not a constant, so nothing folds and Shape stays a node.
  Builder b;
  b.input("x", {"N", "2", "4"});
  b.node("Shape", {"x"}, "shape");
  b.ints("i0", {0}, true);
  b.intAttribute(b.node("Gather", {"shape", "i0"}, "batch"), "axis", 0);
  b.ints("axes", {0});
  b.node("Unsqueeze", {"batch", "axes"}, "batch1");
  b.ints("rest", {-1});
  b.intAttribute(b.node("Concat", {"batch1", "rest"}, "flat"), "axis", 0);
  b.node("Reshape", {"x", "flat"}, "y");
  b.output("y");
  onnx_import::ImportResult r = importBuilt(b);
  EXPECT_FALSE(folded(r));
  bool shapeKept = false;
  for (const ir::Node &n : r.program.states.at(0).nodes)
    shapeKept = shapeKept || (n.kind == ir::NodeKind::Library &&
                              n.library().op == "Shape");
  EXPECT_TRUE(shapeKept);
}

TEST(ShapeFolding, ConstantsWithoutShapesStayUnlessAsked) {
  // An Identity of a bias and arithmetic on Constant nodes are not shape
  // computations: the program keeps them (and the node ids of a model that
  // imported before shape specialization existed), unless foldConstants.
  Builder b;
  b.input("x", {"2", "3"});
  onnx::TensorProto &bias = *b.g.add_initializer();
  bias.set_name("bias");
  bias.set_data_type(onnx::TensorProto::FLOAT);
  bias.add_dims(3);
  for (float v : {1.0f, 2.0f, 3.0f})
    bias.add_float_data(v);
  b.node("Identity", {"bias"}, "bias2");
  b.node("Add", {"x", "bias2"}, "y");
  b.output("y");
  onnx_import::ImportResult plain = importBuilt(b);
  EXPECT_FALSE(folded(plain));
  onnx_import::ImportOptions all;
  all.foldConstants = true;
  onnx_import::ImportResult everything = importBuilt(b, all);
  EXPECT_TRUE(folded(everything));
  ASSERT_NE(everything.program.findContainer("bias2"), nullptr);
  EXPECT_TRUE(everything.program.container("bias2").isConstant());
  std::vector<float> y = runOnCounting(everything.program, {2, 3});
  EXPECT_EQ(y, (std::vector<float>{1, 3, 5, 4, 6, 8}));
}

TEST(ShapeFolding, IndexArithmeticOnConstantsFolds) {
  // A ViT's class token, `token.expand(n, -1, -1)` with n known, as
  // torch.onnx writes it: the Expand's target is integer arithmetic on
  // constants alone (ConstantOfShape, Mul, Equal, Where), with no Shape in
  // sight. It folds, so the Concat after it has a settled size.
  Builder b;
  b.input("x", {"1", "4", "2"});
  onnx::TensorProto &token = *b.g.add_initializer();
  token.set_name("token");
  token.set_data_type(onnx::TensorProto::FLOAT);
  for (int d : {1, 1, 2})
    token.add_dims(d);
  for (float v : {-1.0f, -2.0f})
    token.add_float_data(v);
  b.ints("target", {1, -1, -1});
  b.ints("three", {3});
  onnx::AttributeProto &one =
      *b.node("ConstantOfShape", {"three"}, "ones").add_attribute();
  one.set_name("value");
  one.set_type(onnx::AttributeProto::TENSOR);
  one.mutable_t()->set_data_type(onnx::TensorProto::INT64);
  one.mutable_t()->add_dims(1);
  one.mutable_t()->add_int64_data(1);
  b.ints("minus", {-1}, true);
  b.node("Mul", {"ones", "minus"}, "minuses");
  b.node("Equal", {"target", "minuses"}, "keep");
  b.node("Where", {"keep", "ones", "target"}, "shape");
  b.node("Expand", {"token", "shape"}, "tokens");
  b.intAttribute(b.node("Concat", {"tokens", "x"}, "y"), "axis", 1);
  b.output("y");
  onnx_import::ImportResult r = importBuilt(b);
  EXPECT_TRUE(folded(r));
  EXPECT_EQ(r.report.unverifiedShapes, "");
  std::vector<float> y = runOnCounting(r.program, {1, 4, 2});
  EXPECT_EQ(y, (std::vector<float>{-1, -2, 0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(ShapeFolding, DimensionsFixedAtLoadFold) {
  // `weir run --dim N=1`: the symbolic batch is fixed before inference, so
  // the same channel split settles and runs.
  onnx_import::ImportOptions options;
  options.dims = {{"N", 1}, {"unused", 7}};
  onnx_import::ImportResult r = importBuilt(channelSplit("N"), options);
  EXPECT_TRUE(folded(r));
  EXPECT_TRUE(r.program.symbols.empty());
  EXPECT_EQ(r.report.unverifiedShapes, "");
  std::vector<float> y = runOnCounting(r.program, {1, 8, 2, 2});
  ASSERT_EQ(y.size(), 32u);
  EXPECT_EQ(y[0], 16.0f);
}

// -- inputs that decide sizes (onnx/shape_inputs.h) --------------------------

/// y = ReduceSum(x, axes) with keepdims=0, x [2, 3, 4], and z = Range(0, n,
/// 1) cast to float with n computed from input `count` (Cast, Add): the
/// window functions' ONNX definitions compute their Range the same way.
Builder decidedByInputs() {
  Builder b;
  b.input("x", {"2", "3", "4"});
  b.input("axes", {"1"}, onnx::TensorProto::INT64);
  b.input("count", {}, onnx::TensorProto::INT64);
  b.intAttribute(b.node("ReduceSum", {"x", "axes"}, "y"), "keepdims", 0);
  b.output("y");
  b.ints("one", {1}, /*scalar=*/true);
  b.node("Add", {"count", "one"}, "n");
  b.ints("zero", {0}, true);
  b.node("Range", {"zero", "n", "one"}, "r");
  b.intAttribute(b.node("Cast", {"r"}, "z"), "to", onnx::TensorProto::FLOAT);
  b.output("z");
  // x's shape feeds a Reshape through Shape: that does not make x decide.
  b.node("Shape", {"x"}, "xs");
  b.node("Reshape", {"x", "xs"}, "w");
  b.output("w");
  return b;
}

ir::TensorValue int64Value(std::vector<std::int64_t> values,
                           std::vector<std::int64_t> shape) {
  runtime::Tensor t(ir::DType::I64, shape);
  for (std::size_t i = 0; i < values.size(); ++i)
    t.setFromDouble(std::int64_t(i), double(values[i]));
  return t.value();
}

TEST(ShapeInputs, FoundThroughArithmeticNotThroughShape) {
  onnx_import::ImportResult r = importBuilt(decidedByInputs());
  ASSERT_EQ(r.report.shapeInputs.size(), 2u);
  EXPECT_EQ(r.report.shapeInputs[0].name, "axes");
  EXPECT_EQ(r.report.shapeInputs[0].decides,
            "the axes of node 'y_node' (ReduceSum)");
  EXPECT_EQ(r.report.shapeInputs[1].name, "count");
  EXPECT_EQ(r.report.shapeInputs[1].decides,
            "the limit of node 'r_node' (Range)");
  EXPECT_EQ(r.program.inputs,
            (std::vector<std::string>{"x", "axes", "count"}));
}

TEST(ShapeInputs, FixedAtLoadTheyBecomeConstantsAndTheProgramRuns) {
  onnx_import::ImportOptions options;
  options.values["axes"] = int64Value({-1}, {1});
  options.values["count"] = int64Value({4}, {});
  onnx_import::ImportResult r = importBuilt(decidedByInputs(), options);
  EXPECT_TRUE(r.report.shapeInputs.empty());
  EXPECT_EQ(r.report.unverifiedShapes, "");
  EXPECT_EQ(r.program.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(r.program.metadata.at("fixed_inputs"), "axes=[-1], count=4");
  bool noted = false;
  for (const std::string &n : r.report.notes)
    noted |= n == "input 'axes' fixed at load to [-1] (it decides the axes of "
                  "node 'y_node' (ReduceSum))";
  EXPECT_TRUE(noted);

  ir::Program program = r.program;
  operators::ExpandAllReport report = operators::expandAll(program);
  ASSERT_TRUE(report.skipped.empty()) << report.skipped.front();
  runtime::Tensor x(ir::DType::F32, {2, 3, 4});
  for (std::int64_t i = 0; i < x.elementCount(); ++i)
    x.setFromDouble(i, double(i));
  interp::TensorMap out = interp::interpret(program, {{"x", x}});
  const runtime::Tensor &y = out.at("y");
  ASSERT_EQ(y.shape(), (std::vector<std::int64_t>{2, 3}));
  for (std::int64_t i = 0; i < 6; ++i) // sum of 4 consecutive from 4i
    EXPECT_EQ(y.getAsDouble(i), double(16 * i + 6)) << i;
  const runtime::Tensor &z = out.at("z");
  ASSERT_EQ(z.shape(), std::vector<std::int64_t>{5});
  for (std::int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(z.getAsDouble(i), double(i));
}

TEST(ShapeInputs, AValueThatDoesNotFitItsInputIsRefused) {
  auto refusal = [](const std::string &input, ir::TensorValue v) {
    onnx_import::ImportOptions options;
    options.values[input] = std::move(v);
    try {
      importBuilt(decidedByInputs(), options);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string("imported");
  };
  EXPECT_NE(refusal("nothing", int64Value({1}, {1}))
                .find("a value was given for 'nothing', which is not one of "
                      "the model's inputs"),
            std::string::npos);
  runtime::Tensor f(ir::DType::F32, {1});
  EXPECT_NE(refusal("axes", f.value())
                .find("the value given for input 'axes' is f32; the model "
                      "declares i64"),
            std::string::npos);
  EXPECT_NE(refusal("axes", int64Value({0, 1}, {2}))
                .find("the value given for input 'axes' has shape [2]; the "
                      "model declares [1]"),
            std::string::npos);
}

TEST(ShapeInputs, NodeTestWithDataAxesRunsWithEachDataSetsAxes) {
  // ONNX's own test: ReduceSum's axes is a graph input.
  const fs::path dir = fs::path(kNodeTests) / "test_reduce_sum_keepdims_random";
  ASSERT_TRUE(fs::exists(dir / "model.onnx")) << dir;
  onnx_import::ImportResult plain = onnx_import::importModel(dir / "model.onnx");
  ASSERT_EQ(plain.report.shapeInputs.size(), 1u);
  EXPECT_EQ(plain.report.shapeInputs[0].name, "axes");
  const fs::path set = dir / "test_data_set_0";
  onnx_import::ImportOptions options;
  options.values["axes"] =
      runtime::readTensorPb(set / "input_1.pb").value();
  ir::Program program =
      onnx_import::importModel(dir / "model.onnx", options).program;
  ASSERT_TRUE(operators::expandAll(program).skipped.empty());
  interp::TensorMap out = interp::interpret(
      program, {{"data", runtime::readTensorPb(set / "input_0.pb")}});
  runtime::Tensor want = runtime::readTensorPb(set / "output_0.pb");
  const runtime::Tensor &got = out.at(program.outputs[0]);
  ASSERT_EQ(got.shape(), want.shape());
  for (std::int64_t i = 0; i < want.elementCount(); ++i)
    EXPECT_NEAR(got.getAsDouble(i), want.getAsDouble(i),
                1e-4 + 1e-3 * std::fabs(want.getAsDouble(i)));
}

// -- If on a constant condition (onnx/passes/inline_if.h) --------------------

/// y = If(cond, then: Relu(x), else: Neg(x)) for x [2, 3]; `cond` either
/// Greater(x.size(0), 1), true once shapes are fixed, or a graph input.
/// With `clash`, the then branch defines a name the graph already uses.
Builder branching(bool condFromShape, bool clash = false) {
  Builder b;
  b.input("x", {"2", "3"});
  if (condFromShape) {
    b.node("Shape", {"x"}, "xs");
    b.ints("zero", {0}, /*scalar=*/true);
    b.intAttribute(b.node("Gather", {"xs", "zero"}, "rows"), "axis", 0);
    b.ints("one", {1}, true);
    b.node("Greater", {"rows", "one"}, "cond");
  } else {
    b.input("cond", {}, onnx::TensorProto::BOOL);
  }
  onnx::NodeProto &n = b.node("If", {"cond"}, "y");
  for (const auto &[name, op, out] :
       {std::tuple{"then_branch", "Relu", clash ? "cond" : "then_y"},
        std::tuple{"else_branch", "Neg", "else_y"}}) {
    onnx::AttributeProto &a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto &g = *a.mutable_g();
    g.set_name(std::string(name));
    onnx::NodeProto &inner = *g.add_node();
    inner.set_op_type(op);
    inner.add_input("x");
    inner.add_output(out);
    onnx::ValueInfoProto &v = *g.add_output();
    v.set_name(out);
    v.mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
  }
  b.output("y");
  return b;
}

bool hasIf(const ir::Program &p) {
  for (const ir::State &s : p.states)
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Library && n.library().op == "If")
        return true;
  return false;
}

TEST(InlineIf, AConditionSettledByShapesRunsItsBranch) {
  onnx_import::ImportResult r = importBuilt(branching(true));
  EXPECT_FALSE(hasIf(r.program));
  // Relu of -2.5, -1.5, ...: the then branch.
  ir::Program program = r.program;
  ASSERT_TRUE(operators::expandAll(program).skipped.empty());
  runtime::Tensor x(ir::DType::F32, {2, 3});
  for (std::int64_t i = 0; i < 6; ++i)
    x.setFromDouble(i, double(i) - 2.5);
  runtime::Tensor y = interp::interpret(program, {{"x", x}}).at("y");
  for (std::int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(y.getAsDouble(i), std::max(0.0, double(i) - 2.5)) << i;
}

TEST(InlineIf, AConditionGivenAsAnInputIsFixedAtLoad) {
  onnx_import::ImportResult plain = importBuilt(branching(false));
  ASSERT_EQ(plain.report.shapeInputs.size(), 1u);
  EXPECT_EQ(plain.report.shapeInputs[0].decides,
            "the cond of node 'y_node' (If)");
  EXPECT_TRUE(hasIf(plain.program));
  onnx_import::ImportOptions options;
  runtime::Tensor no(ir::DType::Bool, {});
  options.values["cond"] = no.value();
  onnx_import::ImportResult r = importBuilt(branching(false), options);
  EXPECT_FALSE(hasIf(r.program));
  ir::Program program = r.program;
  ASSERT_TRUE(operators::expandAll(program).skipped.empty());
  runtime::Tensor x(ir::DType::F32, {2, 3});
  x.setFromDouble(4, 7.0);
  runtime::Tensor y = interp::interpret(program, {{"x", x}}).at("y");
  EXPECT_EQ(y.getAsDouble(4), -7.0); // Neg: the else branch
}

TEST(InlineIf, ABranchThatReusesANameStays) {
  EXPECT_TRUE(hasIf(importBuilt(branching(true, /*clash=*/true)).program));
}

} // namespace
