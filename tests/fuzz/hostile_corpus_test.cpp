// Runs the importer on every case of the hostile-input corpus (built by
// make_hostile_corpus.py into the build tree before this test runs): each must
// be rejected with a weir::Error whose message names the problem. Under the
// asan preset this also proves none of them crashes or leaks.

#include "ir/error.h"
#include "ir/validate.h"
#include "onnx/import.h"
#include "transforms/operators/expansion.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace weir;
namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

TEST(HostileCorpus, EveryCaseIsRejectedWithAMessage) {
  fs::path dir = WEIR_HOSTILE_CORPUS_DIR;
  std::ifstream in(dir / "cases.json");
  ASSERT_TRUE(in) << "no corpus at " << dir
                  << " (the hostile_corpus_build fixture makes it)";
  nlohmann::json cases = nlohmann::json::parse(in);
  ASSERT_GE(cases.size(), 25u);
  int rejected = 0;
  for (const auto &c : cases) {
    const std::string name = c.at("name");
    const std::string want = c.at("message");
    try {
      ir::Program p =
          onnx_import::importModel(dir / c.at("model").get<std::string>())
              .program;
      // A model whose shapes could not be verified opens, and does not run.
      if (c.at("expect") == "unrunnable")
        ir::requireRunnable(p);
      // A damaged node opens, and its expansion refuses it by name.
      if (c.at("expect") == "unexpandable") {
        operators::ExpandAllReport r = operators::expandAll(p);
        if (!r.skipped.empty())
          throw Error(r.skipped.front());
      }
      ADD_FAILURE() << name << ": accepted, expected a rejection mentioning '"
                    << want << "'";
    } catch (const Error &e) {
      std::string msg = lower(e.what());
      EXPECT_NE(msg.find(want), std::string::npos)
          << name << ": message lacks '" << want << "': " << e.what();
      if (c.contains("detail")) {
        const std::string detail = c.at("detail");
        EXPECT_NE(msg.find(detail), std::string::npos)
            << name << ": message lacks '" << detail << "': " << e.what();
      }
      ++rejected;
    }
  }
  std::printf("hostile corpus: %d/%zu rejected with a message\n", rejected,
              cases.size());
}

TEST(HostileCorpus, ValidExternalDataStillLoads) {
  // The positive control: a well-formed external-data model in the same
  // corpus folder loads, so the rejections above are for the stated reasons.
  fs::path model =
      fs::path(WEIR_HOSTILE_CORPUS_DIR) / "control_external" / "model.onnx";
  ASSERT_TRUE(fs::exists(model));
  onnx_import::ImportResult r = onnx_import::importModel(model);
  const ir::Container &w = r.program.container("W");
  ASSERT_TRUE(w.isConstant());
  EXPECT_EQ(w.constant->size(), 16u);
  float first;
  std::memcpy(&first, w.constant->data(), 4);
  EXPECT_EQ(first, 1.0f);
}

/// ONNX's passes run in a child process with a time limit
/// (onnx/onnx_passes.h): past it, the child is stopped and the model
/// refused, naming the pass. With no time at all, even the control is.
TEST(HostileCorpus, OnnxPassesPastTheirTimeLimitAreStopped) {
  fs::path model =
      fs::path(WEIR_HOSTILE_CORPUS_DIR) / "control_external" / "model.onnx";
  onnx_import::ImportOptions options;
  options.passSeconds = 0;
  try {
    onnx_import::importModel(model, options);
    FAIL() << "imported without its passes";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("did not finish in 0 s"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
