// Runs the ONNX node tests through import -> expand-all -> the reference
// interpreter. A model whose every operator expands must reproduce the
// expected outputs of each of its test data sets (rtol 1e-3, atol 1e-4, NaN
// matching NaN); a model with an operator that has no expansion yet is
// counted, not failed. The printed totals track tier-1 coverage.

#include "conformance/node_families.h"
#include "core/interp/interpreter.h"
#include "core/onnx/import.h"
#include "core/runtime/tensor_pb.h"
#include "ir/error.h"
#include "transforms/expansion/expansion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

using namespace weir;
using namespace weir::testing_support;
namespace fs = std::filesystem;

namespace {

/// "" when the tensors agree, else what differs.
std::string compare(const runtime::Tensor &got, const runtime::Tensor &want) {
  if (got.shape() != want.shape())
    return "shape " + got.describe() + " vs expected " + want.describe();
  if (got.dtype() != want.dtype())
    return "dtype " + got.describe() + " vs expected " + want.describe();
  bool exact = !ir::isFloat(want.dtype());
  for (std::int64_t i = 0; i < want.elementCount(); ++i) {
    double a = got.getAsDouble(i), b = want.getAsDouble(i);
    if (std::isnan(a) && std::isnan(b))
      continue;
    bool ok = exact
                  ? a == b
                  : (a == b || std::fabs(a - b) <= 1e-4 + 1e-3 * std::fabs(b));
    if (!ok)
      return "element " + std::to_string(i) + ": " + std::to_string(a) +
             " vs expected " + std::to_string(b);
  }
  return "";
}

std::vector<fs::path> dataSets(const fs::path &dir) {
  std::vector<fs::path> sets;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.is_directory() &&
        e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

TEST(NodeTests, ExpandedModelsMatchTheirTestData) {
  ASSERT_TRUE(fs::exists(kNodeTests)) << kNodeTests << " is missing";
  std::vector<fs::path> dirs;
  for (const auto &entry : fs::directory_iterator(kNodeTests))
    if (fs::exists(entry.path() / "model.onnx"))
      dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());

  int considered = 0, expanded = 0, passed = 0;
  std::map<std::string, int> blockers; // op without expansion -> models
  for (const fs::path &dir : dirs) {
    const std::string name = dir.filename().string();
    onnx::ModelProto proto;
    {
      std::ifstream in(dir / "model.onnx", std::ios::binary);
      ASSERT_TRUE(proto.ParseFromIstream(&in)) << name;
    }
    if (!excludedFamily(proto.graph()).empty())
      continue;
    ++considered;
    onnx_import::ImportResult imported;
    try {
      imported = onnx_import::importModel(dir / "model.onnx");
    } catch (const Error &e) {
      ADD_FAILURE() << name << ": import failed: " << e.what();
      continue;
    }
    ir::Program &program = imported.program;
    expansion::ExpandAllReport report = expansion::expandAll(program);
    if (!report.skipped.empty()) {
      for (const ir::State &s : program.states)
        for (const ir::Node &n : s.nodes)
          if (n.kind == ir::NodeKind::Library)
            ++blockers[n.library().op];
      continue;
    }
    ++expanded;
    bool ok = true;
    for (const fs::path &set : dataSets(dir)) {
      try {
        interp::TensorMap inputs;
        for (std::size_t i = 0; i < program.inputs.size(); ++i)
          inputs[program.inputs[i]] = runtime::readTensorPb(
              set / ("input_" + std::to_string(i) + ".pb"));
        interp::TensorMap outputs = interp::interpret(program, inputs);
        for (std::size_t i = 0; i < program.outputs.size(); ++i) {
          runtime::Tensor want = runtime::readTensorPb(
              set / ("output_" + std::to_string(i) + ".pb"));
          std::string diff = compare(outputs.at(program.outputs[i]), want);
          if (!diff.empty()) {
            ADD_FAILURE() << name << "/" << set.filename().string()
                          << " output " << program.outputs[i] << ": " << diff;
            ok = false;
          }
        }
      } catch (const Error &e) {
        ADD_FAILURE() << name << "/" << set.filename().string() << ": "
                      << e.what();
        ok = false;
      }
    }
    passed += ok;
  }
  std::vector<std::pair<int, std::string>> top;
  for (const auto &[op, count] : blockers)
    top.emplace_back(count, op);
  std::sort(top.rbegin(), top.rend());
  std::printf("ops blocking most models:");
  for (std::size_t i = 0; i < top.size() && i < 15; ++i)
    std::printf(" %s(%d)", top[i].second.c_str(), top[i].first);
  std::printf("\nnode tests on the interpreter: %d considered, %d fully "
              "expanded, %d match their test data\n",
              considered, expanded, passed);
  EXPECT_EQ(passed, expanded);
}

} // namespace
