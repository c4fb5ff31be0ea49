// The bundled sample models import completely, validate cleanly, round-trip
// through JSON exactly, and report the costs their structure implies.

#include "ir/analysis.h"
#include "ir/hash.h"
#include "ir/json.h"
#include "ir/print.h"
#include "ir/validate.h"
#include "onnx/import.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <unistd.h>

using namespace weir;

namespace {

std::string modelPath(const std::string &name) {
  return std::string(WEIR_SOURCE_DIR) + "/resources/models/" + name;
}

std::map<std::string, int> opCounts(const ir::Program &p) {
  std::map<std::string, int> ops;
  for (const ir::State &s : p.states)
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Library)
        ++ops[n.library().op];
  return ops;
}

class BundledModel : public ::testing::TestWithParam<std::string> {};

TEST_P(BundledModel, ImportsValidatesAndRoundTrips) {
  onnx_import::ImportResult r = onnx_import::importModel(modelPath(GetParam()));
  EXPECT_TRUE(r.report.unsupportedOps.empty());
  // Nothing to report but shape specialization (the transformer's).
  for (const std::string &note : r.report.notes)
    EXPECT_EQ(note.rfind("shapes specialized:", 0), 0u) << note;
  std::vector<ir::Diagnostic> diags = ir::validate(r.program);
  for (const ir::Diagnostic &d : diags)
    ADD_FAILURE() << d.str();

  ir::SerializedProgram first = ir::serialize(r.program);
  ir::Program back = ir::deserialize(first.json, first.binary);
  ir::SerializedProgram second = ir::serialize(back);
  EXPECT_EQ(first.json, second.json);
  EXPECT_EQ(first.binary, second.binary);
  EXPECT_EQ(ir::structuralHash(r.program), ir::structuralHash(back));
  EXPECT_EQ(ir::print(r.program), ir::print(back));

  // Through files, the constants streamed to the binary sidecar, with and
  // without flushing to disk (sessions and caches).
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("weir-bundled-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (Durability d : {Durability::Synced, Durability::Unsynced}) {
    std::filesystem::path file = dir / (GetParam() + ".json");
    ir::saveProgram(r.program, file, d);
    ir::Program loaded = ir::loadProgram(file);
    EXPECT_EQ(ir::structuralHash(loaded), ir::structuralHash(r.program));
    EXPECT_EQ(ir::serialize(loaded).binary, first.binary);
  }
  std::filesystem::remove_all(dir);

  ir::ProgramAnalysis full = ir::analyze(r.program);
  ir::ProgramAnalysis totals =
      ir::analyze(r.program, ir::AnalysisDetail::Totals);
  EXPECT_EQ(totals.flops, full.flops);
  EXPECT_EQ(totals.bytesMoved, full.bytesMoved);

  // Shape inference leaves no unknown dimension: the only symbol is the
  // MLP's declared batch size.
  for (const std::string &sym : r.program.symbols)
    EXPECT_EQ(sym, "N");
  for (const auto &[name, c] : r.program.containers) {
    if (c.isConstant() || r.program.symbols.empty()) {
      EXPECT_TRUE(c.elementCount().isConstant()) << name;
    }
  }
}

TEST_P(BundledModel, ImportIsDeterministic) {
  auto a = onnx_import::importModel(modelPath(GetParam()));
  auto b = onnx_import::importModel(modelPath(GetParam()));
  EXPECT_EQ(ir::structuralHash(a.program), ir::structuralHash(b.program));
}

INSTANTIATE_TEST_SUITE_P(Models, BundledModel,
                         ::testing::Values("cnn.onnx", "mlp.onnx",
                                           "transformer.onnx"));

TEST(BundledModels, CnnStructureAndCost) {
  auto r = onnx_import::importModel(modelPath("cnn.onnx"));
  const ir::Program &p = r.program;
  std::map<std::string, int> expected{
      {"Add", 1},  {"BatchNormalization", 2}, {"Conv", 3},    {"Flatten", 1},
      {"Gemm", 1}, {"GlobalAveragePool", 1},  {"MaxPool", 1}, {"Relu", 2}};
  EXPECT_EQ(opCounts(p), expected);
  ASSERT_EQ(p.inputs, std::vector<std::string>{"input"});
  ASSERT_EQ(p.outputs, std::vector<std::string>{"logits"});
  EXPECT_EQ(p.container("logits").shape,
            (std::vector<ir::Expr>{ir::Expr(1), ir::Expr(10)}));

  // Conv FLOPs by hand: 2 * output elements * C_in * kh * kw.
  ir::Expr total(0);
  for (const ir::Node &n : p.states[0].nodes) {
    if (n.kind != ir::NodeKind::Library || n.library().op != "Conv")
      continue;
    ASSERT_TRUE(n.library().flops.has_value()) << n.label;
    const ir::Edge *w = nullptr;
    for (const ir::Edge *e : p.states[0].inEdges(n.id))
      if (e->dstConn == "W")
        w = e;
    ASSERT_NE(w, nullptr) << n.label;
    const ir::Container &weight = p.container(w->memlet.container);
    const ir::Edge *y = p.states[0].outEdges(n.id).front();
    ir::Expr expected = ir::Expr(2) *
                        p.container(y->memlet.container).elementCount() *
                        weight.shape[1] * weight.shape[2] * weight.shape[3];
    EXPECT_EQ(*n.library().flops, expected) << n.label;
    total = total + expected;
  }
  ir::ProgramAnalysis a = ir::analyze(p);
  ASSERT_TRUE(a.flops.isConstant());
  EXPECT_GT(*a.flops.asConstant(), *total.asConstant());
  EXPECT_GT(*a.bytesMoved.asConstant(), 0);
}

TEST(BundledModels, MlpKeepsTheSymbolicBatch) {
  auto r = onnx_import::importModel(modelPath("mlp.onnx"));
  EXPECT_EQ(r.program.symbols, std::vector<std::string>{"N"});
  ir::ProgramAnalysis a = ir::analyze(r.program);
  EXPECT_FALSE(a.flops.isConstant());
  // MatMul FLOPs grow linearly in N: 2 * N * (64*128 + 128*128 + 128*10).
  ir::Bindings one{{"N", 1}}, two{{"N", 2}};
  std::int64_t perSample = a.flops.evaluate(two) - a.flops.evaluate(one);
  EXPECT_GE(perSample, 2 * (64 * 128 + 128 * 128 + 128 * 10));
}

TEST(BundledModels, TransformerHasTheExportersOps) {
  auto r = onnx_import::importModel(modelPath("transformer.onnx"));
  std::map<std::string, int> ops = opCounts(r.program);
  for (const char *op : {"MatMul", "Softmax", "Erf", "ReduceMean", "Pow",
                         "Sqrt", "Transpose", "Reshape", "Unsqueeze"})
    EXPECT_GT(ops[op], 0) << op;
  // Its head split's shape arithmetic (Shape -> Gather -> Concat of the
  // new shape) is folded at load: the input's shape is fixed.
  for (const char *op : {"Shape", "Gather", "Concat"})
    EXPECT_EQ(ops[op], 0) << op;
  ASSERT_EQ(r.report.notes.size(), 1u);
  EXPECT_NE(r.report.notes.front().find("shape computations folded"),
            std::string::npos)
      << r.report.notes.front();
}

} // namespace
