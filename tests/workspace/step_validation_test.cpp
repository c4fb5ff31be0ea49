// A workspace validates each step's result against the step's input,
// re-checking only what the step changed (ir/validation_baseline.h). On
// every step of the auto recipe over the bundled models, that must report
// exactly what validating the result alone reports; and a step whose input
// does not validate is checked in full.

#include "ir/validate.h"
#include "onnx/import.h"
#include "transforms/registry.h"
#include "workspace/auto_recipe.h"
#include "workspace/workspace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace weir::workspace {
namespace {

std::string dump(const std::vector<ir::Diagnostic> &ds) {
  std::string s;
  for (const ir::Diagnostic &d : ds)
    s += d.str() + "\n";
  return s;
}

class StepValidation : public ::testing::TestWithParam<std::string> {};

TEST_P(StepValidation, EveryAutoRecipeStepAgreesWithAFullValidation) {
  Workspace ws(onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                        "/resources/models/" + GetParam())
                   .program);
  int steps = applyAutoRecipe(ws, "cpu");
  ASSERT_GT(steps, 5);
  ASSERT_EQ(ws.versions().size(), std::size_t(steps) + 1);
  for (std::size_t i = 1; i < ws.versions().size(); ++i) {
    std::shared_ptr<const ir::Program> before = ws.versions()[i - 1].program();
    std::shared_ptr<const ir::Program> after = ws.versions()[i].program();
    std::vector<ir::Diagnostic> full = ir::validate(*after);
    EXPECT_FALSE(ir::hasErrors(full)) << "step " << i << "\n" << dump(full);
    EXPECT_EQ(dump(ir::validate(*after, *before)), dump(full))
        << "step " << i << " (" << ws.versions()[i].step->transformation << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Models, StepValidation,
                         ::testing::Values("cnn.onnx", "mlp.onnx",
                                           "transformer.onnx"));

/// Makes one tasklet's code ill-typed, the way a faulty plugin could.
class BreakTasklet : public transforms::Transformation {
public:
  BreakTasklet()
      : Transformation({.id = "test-break-tasklet",
                        .tier = transforms::Tier::Fusion,
                        .summary = "makes a tasklet ill-typed, for tests",
                        .description = "makes a tasklet ill-typed"}) {}
  transforms::CheckResult check(const ir::Program &, const transforms::Match &,
                                const transforms::Params &) const override {
    return transforms::CheckResult::success();
  }
  transforms::ApplyResult apply(const ir::Program &program,
                                const transforms::Match &,
                                const transforms::Params &) const override {
    transforms::ApplyResult r{program, {}};
    for (ir::Node &n : r.program.states[0].nodes.editable())
      if (n.kind == ir::NodeKind::Tasklet) {
        auto code = std::make_shared<const ir::tasklet::Code>(
            ir::tasklet::parse("c = a && b"));
        n.payload = ir::TaskletData{ir::tasklet::print(*code), code};
        break;
      }
    return r;
  }
};

TEST(StepValidationInput, AStepThatBreaksAnUnchangedProgramIsRefused) {
  transforms::registerTransformation(std::make_shared<BreakTasklet>());
  struct Unregister {
    ~Unregister() {
      transforms::unregisterTransformation("test-break-tasklet");
    }
  } unregister;
  Workspace ws(onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                        "/resources/models/cnn.onnx")
                   .program);
  ws.apply("expand-all");
  std::size_t before = ws.versions().size();
  EXPECT_THROW(
      {
        try {
          ws.apply("test-break-tasklet");
        } catch (const Error &e) {
          EXPECT_THAT(e.what(), ::testing::HasSubstr("invalid program"));
          throw;
        }
      },
      Error);
  EXPECT_EQ(ws.versions().size(), before);
}

} // namespace
} // namespace weir::workspace
