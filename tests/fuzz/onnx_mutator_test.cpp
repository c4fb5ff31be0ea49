/// \file
/// The structure-aware ONNX mutator, run as a short fuzz in the suite:
/// mutations of every bundled model parse back as models, and go through
/// import, expand-all and the interpreter (onnx_pipeline.h) without a
/// crash or a sanitizer report in the ASan suite.

#include "tests/fuzz/harness.h"
#include "tests/fuzz/onnx_mutator.h"
#include "tests/fuzz/onnx_pipeline.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace weir::fuzz {
namespace {

std::string readModel(std::string_view name) {
  std::ifstream in(bundledModel(name), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(OnnxMutator, RefusesWhatIsNotAModel) {
  EXPECT_FALSE(mutateModel("\xff\xff\xff\xff not a model", 1));
}

TEST(OnnxMutator, ChangesAModelAndKeepsItParseable) {
  std::string model = readModel("cnn.onnx");
  int changed = 0;
  for (std::uint32_t seed = 0; seed < 50; ++seed) {
    std::optional<std::string> m = mutateModel(model, seed);
    ASSERT_TRUE(m);
    onnx::ModelProto parsed;
    EXPECT_TRUE(parsed.ParseFromString(*m)) << "seed " << seed;
    changed += *m != model;
  }
  EXPECT_GE(changed, 45); // a mutation that finds nothing to change is rare
}

/// Chains of mutations (each mutates the last) of every bundled model run
/// through the interpreter's pipeline.
TEST(OnnxMutator, MutatedModelsRunOrAreRefused) {
  const char *env = std::getenv("WEIR_MUTATIONS");
  const int perModel = env ? std::atoi(env) : 60;
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    std::string model = readModel(name);
    std::string current = model;
    for (int i = 0; i < perModel; ++i) {
      // A chain of up to four mutations, then back to the original.
      if (i % 4 == 0)
        current = model;
      current = *mutateModel(current, static_cast<std::uint32_t>(i * 7919));
      runOnnx(reinterpret_cast<const std::uint8_t *>(current.data()),
              current.size(), OnnxBackend::Interpreter);
    }
  }
}

} // namespace
} // namespace weir::fuzz
