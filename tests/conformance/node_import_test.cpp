// Imports every ONNX backend node-test model Debian ships
// (/usr/share/libonnx-testdata/data/node): each either imports with no
// unsupported operator or belongs to a family Weir leaves out (sequence,
// optional, string and training operators). Every imported program
// validates without errors and round-trips through JSON exactly.

#include "ir/error.h"
#include "ir/hash.h"
#include "ir/json.h"
#include "ir/validate.h"
#include "onnx/import.h"

#include "conformance/node_families.h"

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <set>

using namespace weir;
namespace fs = std::filesystem;

using namespace weir::testing_support;

namespace {

TEST(NodeTests, ImportCoverageAndRoundTrip) {
  if (!fs::exists(kNodeTests))
    GTEST_FAIL() << kNodeTests << " is missing: install libonnx-testdata "
                 << "(scripts/install-deps.sh does)";
  std::vector<fs::path> dirs;
  for (const auto &entry : fs::directory_iterator(kNodeTests))
    if (fs::exists(entry.path() / "model.onnx"))
      dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  ASSERT_GE(dirs.size(), 900u);

  int excluded = 0, considered = 0, clean = 0, excludedImported = 0;
  std::vector<std::string> notClean;
  for (const fs::path &dir : dirs) {
    const std::string name = dir.filename().string();
    onnx::ModelProto proto;
    {
      std::ifstream in(dir / "model.onnx", std::ios::binary);
      ASSERT_TRUE(proto.ParseFromIstream(&in)) << name;
    }
    const std::string family = excludedFamily(proto.graph());
    std::optional<onnx_import::ImportResult> result;
    std::string error;
    try {
      result = onnx_import::importModel(dir / "model.onnx");
    } catch (const Error &e) {
      error = e.what();
      EXPECT_NE(error.find("model.onnx"), std::string::npos)
          << "error does not name the file: " << error;
    }
    if (!family.empty()) {
      ++excluded;
      excludedImported += result.has_value();
    } else {
      ++considered;
      if (result && result->report.unsupportedOps.empty()) {
        ++clean;
      } else {
        std::string why =
            result ? "unsupported " + result->report.unsupportedOps.front()
                   : error;
        notClean.push_back(name + ": " + why);
      }
    }
    if (!result)
      continue;
    for (const ir::Diagnostic &d : ir::validate(result->program))
      EXPECT_NE(d.severity, ir::Severity::Error) << name << ": " << d.str();
    ir::SerializedProgram first = ir::serialize(result->program);
    ir::Program back = ir::deserialize(first.json, first.binary);
    EXPECT_EQ(first.json, ir::serialize(back).json) << name;
    EXPECT_EQ(ir::structuralHash(result->program), ir::structuralHash(back))
        << name;
  }
  for (const std::string &s : notClean)
    std::printf("  not clean: %s\n", s.c_str());
  std::printf("node tests: %zu models, %d in excluded families (%d of them "
              "still import), %d/%d of the rest import with no unsupported "
              "op (%.1f%%)\n",
              dirs.size(), excluded, excludedImported, clean, considered,
              100.0 * clean / considered);
  RecordProperty("clean", clean);
  RecordProperty("considered", considered);
  EXPECT_GE(clean * 100, considered * 95)
      << "fewer than 95% of the node tests import cleanly";
}

} // namespace
