// Runs the ONNX node tests through import -> expand-all -> the reference
// interpreter. A model whose every operator expands must reproduce the
// expected outputs of each of its test data sets (rtol 1e-3, atol 1e-4, NaN
// matching NaN); a model with an operator that has no expansion yet is
// counted, not failed. The printed totals track tier-1 coverage.

#include "conformance/node_families.h"
#include "core/interp/interpreter.h"
#include "core/runtime/tensor_pb.h"
#include "ir/error.h"
#include "core/runtime/compare_samples.h"
#include "onnx/import.h"
#include "onnx/op_catalog.h"
#include "transforms/operators/expansion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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

/// ONNX stores bfloat16 test data as uint16 bit patterns (numpy has no
/// bfloat16); read such a file as the bf16 tensor it stands for.
runtime::Tensor asDeclared(runtime::Tensor t, ir::DType declared) {
  if (declared != ir::DType::BF16 || t.dtype() != ir::DType::U16)
    return t;
  runtime::Tensor bf(ir::DType::BF16, t.shape());
  std::memcpy(bf.mutableData(), t.data(), t.byteSize());
  return bf;
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

/// What differs between the program's outputs and one test data set's
/// expected outputs; empty when everything matches. The data set gives
/// `graphInputs` in order; those the program no longer takes (fixed at
/// load) are left out.
std::vector<std::string> runDataSet(const ir::Program &program,
                                    const std::vector<std::string> &graphInputs,
                                    const fs::path &set, bool random) {
  std::vector<std::string> problems;
  try {
    interp::TensorMap inputs;
    for (std::size_t i = 0; i < graphInputs.size(); ++i)
      if (std::find(program.inputs.begin(), program.inputs.end(),
                    graphInputs[i]) != program.inputs.end())
        inputs[graphInputs[i]] = asDeclared(
            runtime::readTensorPb(set / ("input_" + std::to_string(i) + ".pb")),
            program.container(graphInputs[i]).dtype);
    interp::TensorMap outputs = interp::interpret(program, inputs);
    for (std::size_t i = 0; i < program.outputs.size(); ++i) {
      runtime::Tensor want = asDeclared(
          runtime::readTensorPb(set / ("output_" + std::to_string(i) + ".pb")),
          program.container(program.outputs[i]).dtype);
      std::string diff =
          random ? runtime::compareSamples(outputs.at(program.outputs[i]), want)
                 : compare(outputs.at(program.outputs[i]), want);
      if (!diff.empty())
        problems.push_back("output " + program.outputs[i] + ": " + diff);
    }
  } catch (const Error &e) {
    problems.push_back(e.what());
  }
  return problems;
}

/// name -> reason, from node_run_known_differences.txt.
std::map<std::string, std::string> knownDifferences() {
  std::map<std::string, std::string> known;
  std::ifstream in(std::string(WEIR_SOURCE_DIR) +
                   "/tests/conformance/node_run_known_differences.txt");
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (line.empty() || line[0] == '#' || colon == std::string::npos)
      continue;
    known[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return known;
}

TEST(NodeTests, ExpandedModelsMatchTheirTestData) {
  const std::map<std::string, std::string> known = knownDifferences();
  ASSERT_FALSE(known.empty()) << "node_run_known_differences.txt not found";
  ASSERT_TRUE(fs::exists(kNodeTests)) << kNodeTests << " is missing";
  std::vector<fs::path> dirs;
  for (const auto &entry : fs::directory_iterator(kNodeTests))
    if (fs::exists(entry.path() / "model.onnx"))
      dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());

  int considered = 0, expanded = 0, passed = 0, knownCount = 0;
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
    // A model whose inputs decide sizes is loaded once per data set, with
    // that set's values of them fixed (onnx/shape_inputs.h).
    const std::vector<std::string> graphInputs = imported.program.inputs;
    std::vector<std::pair<fs::path, ir::Program>> runs;
    for (const fs::path &set : dataSets(dir)) {
      onnx_import::ImportOptions options;
      for (const onnx_import::ShapeInput &s : imported.report.shapeInputs) {
        auto at = std::find(graphInputs.begin(), graphInputs.end(), s.name);
        options.values[s.name] =
            runtime::readTensorPb(set / ("input_" +
                                         std::to_string(at - graphInputs.begin()) +
                                         ".pb"))
                .value();
      }
      try {
        runs.emplace_back(set, options.values.empty()
                                   ? imported.program
                                   : onnx_import::importModel(
                                         dir / "model.onnx", options)
                                         .program);
      } catch (const Error &e) {
        ADD_FAILURE() << name << ": import with its shape inputs fixed failed: "
                      << e.what();
      }
    }
    bool expandable = !runs.empty();
    // Random generators' outputs are judged as samples.
    const bool random =
        !runs.empty() && onnx_import::drawsRandomNumbers(runs.front().second);
    for (auto &[set, program] : runs) {
      operators::ExpandAllReport report = operators::expandAll(program);
      if (!report.skipped.empty()) {
        for (const ir::State &s : program.states)
          for (const ir::Node &n : s.nodes)
            if (n.kind == ir::NodeKind::Library)
              ++blockers[n.library().op];
        expandable = false;
        break;
      }
    }
    if (!expandable)
      continue;
    ++expanded;
    std::vector<std::string> problems;
    for (const auto &[set, program] : runs)
      for (const std::string &p : runDataSet(program, graphInputs, set, random))
        problems.push_back(set.filename().string() + ": " + p);
    if (known.count(name)) {
      // A known difference must still differ; counted apart.
      EXPECT_FALSE(problems.empty()) << name << " now matches: remove it from "
                                     << "node_run_known_differences.txt";
      ++knownCount;
      continue;
    }
    for (const std::string &p : problems)
      ADD_FAILURE() << name << "/" << p;
    passed += problems.empty();
  }
  std::vector<std::pair<int, std::string>> top;
  for (const auto &[op, count] : blockers)
    top.emplace_back(count, op);
  std::sort(top.rbegin(), top.rend());
  std::printf("ops blocking most models:");
  for (std::size_t i = 0; i < top.size() && i < 15; ++i)
    std::printf(" %s(%d)", top[i].second.c_str(), top[i].first);
  std::printf("\nnode tests on the interpreter: %d considered, %d fully "
              "expanded, %d match their test data, %d known differences "
              "(node_run_known_differences.txt)\n",
              considered, expanded, passed, knownCount);
  EXPECT_EQ(passed + knownCount, expanded);
}

} // namespace
