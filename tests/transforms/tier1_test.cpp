// Tier-1 transformations: golden before/after text, one negative test per
// precondition (matching its reason), and equivalence on real data.

#include "core/interp/interpreter.h"
#include "core/onnx/import.h"
#include "core/runtime/random_tensor.h"
#include "transforms/expansion/expansion.h"
#include "core/workspace/verify.h"
#include "ir/error.h"
#include "ir/analysis.h"
#include "ir/hash.h"
#include "ir/json.h"
#include "ir/validate.h"
#include "transforms/graph_builder.h"
#include "transforms/golden.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

namespace weir::transforms_testing {
namespace {

using transforms::Match;
using transforms::Params;
using ::testing::HasSubstr;

ir::Program model(const char *name) {
  return onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                  "/resources/models/" + name)
      .program;
}

const transforms::Transformation &T(const char *id) {
  return *transforms::requireTransformation(id);
}

std::vector<Match> matchesOf(const ir::Program &p, const char *id) {
  return transforms::findMatches(p, T(id));
}

void expectValid(const ir::Program &p) {
  for (const ir::Diagnostic &d : ir::validate(p))
    EXPECT_NE(d.severity, ir::Severity::Error) << d.str();
}

/// Applies, validates, compares with the golden text and checks that the
/// outputs agree on seeded inputs within the declared tolerance (exact
/// transformations bit for bit).
ir::Program applyGoldenVerified(const std::string &golden, const ir::Program &p,
                                const char *id, const Match &m,
                                const Params &params = {}, bool runnable = true) {
  transforms::ApplyResult r = transforms::applyChecked(p, T(id), m, params);
  expectValid(r.program);
  expectGolden(golden, p, r.program);
  if (runnable) {
    workspace::VerifyReport v =
        workspace::verifyPrograms(p, r.program, T(id).exactness(), {.seed = 7});
    EXPECT_TRUE(v.ok) << v.str();
  }
  return r.program;
}

std::string reason(const ir::Program &p, const char *id, const Match &m,
                   const Params &params = {}) {
  transforms::CheckResult c = transforms::checkMatch(p, T(id), m, params);
  EXPECT_FALSE(c.ok);
  return c.reason;
}

// --- expand ------------------------------------------------------------------

TEST(Expand, GoldenAndEquivalentOnCnn) {
  ir::Program p = model("cnn.onnx");
  std::vector<Match> ms = matchesOf(p, "expand");
  ASSERT_FALSE(ms.empty());
  // The first Conv, with the pure implementation.
  Match conv;
  for (const Match &m : ms)
    if (transforms::stateNamed(p, m.state).findNode(m.node("node"))->library().op == "Conv") {
      conv = m;
      break;
    }
  ASSERT_FALSE(conv.roles.empty());
  ir::Program after = applyGoldenVerified("expand_conv_pure", p, "expand", conv,
                                          {{"implementation", std::string("pure")}});
  EXPECT_EQ(transforms::stateNamed(after, "main").findNode(conv.node("node")), nullptr);
}

TEST(Expand, Negative) {
  ir::Program p = model("cnn.onnx");
  Match m = matchesOf(p, "expand").front();
  EXPECT_THAT(reason(p, "expand", m, {{"implementation", std::string("magic")}}),
              HasSubstr("has no implementation 'magic'"));
  EXPECT_THAT(reason(p, "expand", m, {{"implementation", std::int64_t(3)}}),
              HasSubstr("must be string"));
  EXPECT_THAT(reason(p, "expand", m, {{"nonsense", true}}),
              HasSubstr("'nonsense' is unknown"));
  // An access node is not a library node.
  Match wrong{m.state, {{"node", 1}}};
  EXPECT_THAT(reason(p, "expand", wrong), HasSubstr("is not a library"));
  EXPECT_THAT(reason(p, "expand", Match{"nowhere", {{"node", 1}}}),
              HasSubstr("no state 'nowhere'"));
  EXPECT_THAT(reason(p, "expand", Match{m.state, {{"op", m.node("node")}}}),
              HasSubstr("must bind the roles node"));
  // An implementation that does not apply: im2col needs group 1.
  GraphBuilder g("grouped");
  g.input("x", {1, 4, 5, 5}).output("y", {1, 4, 3, 3});
  g.constantF32("w", {4, 2, 3, 3}, std::vector<float>(72, 0.5f));
  ir::NodeId conv = g.op("Conv", "conv", {{"X", "x"}, {"W", "w"}}, {{"Y", "y"}},
                         {{"group", std::int64_t(2)}});
  EXPECT_THAT(reason(g.p, "expand", Match{"main", {{"node", conv}}},
                     {{"implementation", std::string("im2col")}}),
              HasSubstr("group"));
}

// --- expand-all --------------------------------------------------------------

TEST(ExpandAll, GoldenAndEquivalentOnMlp) {
  ir::Program p = model("mlp.onnx");
  ir::Program after = applyGoldenVerified("expand_all_mlp", p, "expand-all", Match{});
  for (const ir::State &s : after.states)
    for (const ir::Node &n : s.nodes)
      EXPECT_NE(n.kind, ir::NodeKind::Library) << n.label;
}

TEST(ExpandAll, Negative) {
  ir::Program p = model("mlp.onnx");
  EXPECT_THAT(reason(p, "expand-all", Match{},
                     {{"implementations", std::string("Gemm")}}),
              HasSubstr("is not OP=IMPL"));
  EXPECT_THAT(reason(p, "expand-all", Match{},
                     {{"implementations", std::string("Gemm=magic")}}),
              HasSubstr("Gemm has no implementation 'magic'"));
  ir::Program done = transforms::applyChecked(p, T("expand-all"), Match{}).program;
  EXPECT_THAT(reason(done, "expand-all", Match{}),
              HasSubstr("no expandable operator left"));
  EXPECT_THAT(reason(p, "expand-all", Match{"main", {{"node", 1}}}),
              HasSubstr("whole program"));
}

// --- fold-batchnorm ----------------------------------------------------------

TEST(FoldBatchNorm, GoldenAndEquivalentOnCnn) {
  ir::Program p = model("cnn.onnx");
  std::vector<Match> ms = matchesOf(p, "fold-batchnorm");
  ASSERT_EQ(ms.size(), 2u);
  ir::Program after = applyGoldenVerified("fold_batchnorm_cnn", p, "fold-batchnorm", ms[0]);
  EXPECT_EQ(matchesOf(after, "fold-batchnorm").size(), 1u);
}

/// x -> Conv(w, b) -> mid -> BatchNormalization -> y, 2 channels.
GraphBuilder convBn(bool constWeights = true, std::size_t statCount = 2,
                    std::int64_t training = 0) {
  GraphBuilder g("convbn");
  g.input("x", {1, 3, 4, 4}).output("y", {1, 2, 4, 4}).transient("mid", {1, 2, 4, 4});
  if (constWeights)
    g.constantF32("w", {2, 3, 1, 1}, {0.5f, -1, 2, 0.25f, 1, -0.5f});
  else
    g.input("w", {2, 3, 1, 1});
  g.constantF32("b", {2}, {0.1f, -0.2f});
  std::vector<float> stat(statCount, 0.7f);
  g.constantF32("scale", {std::int64_t(statCount)}, stat)
      .constantF32("shift", {std::int64_t(statCount)}, stat)
      .constantF32("mean", {std::int64_t(statCount)}, stat)
      .constantF32("var", {std::int64_t(statCount)}, stat);
  g.op("Conv", "conv", {{"X", "x"}, {"W", "w"}, {"B", "b"}}, {{"Y", "mid"}});
  ir::Attributes a = {{"epsilon", 1e-5}};
  if (training)
    a["training_mode"] = training;
  g.op("BatchNormalization", "bn",
       {{"X", "mid"}, {"scale", "scale"}, {"B", "shift"}, {"mean", "mean"}, {"var", "var"}},
       {{"Y", "y"}}, a);
  return g;
}

TEST(FoldBatchNorm, NegativeAndSynthetic) {
  GraphBuilder ok = convBn();
  std::vector<Match> ms = matchesOf(ok.p, "fold-batchnorm");
  ASSERT_EQ(ms.size(), 1u);
  applyGoldenVerified("fold_batchnorm_synthetic", ok.p, "fold-batchnorm", ms[0]);

  GraphBuilder input = convBn(false);
  EXPECT_THAT(reason(input.p, "fold-batchnorm", matchesOf(input.p, "fold-batchnorm")[0]),
              HasSubstr("weights are not an f32 constant"));
  GraphBuilder count = convBn(true, 3);
  EXPECT_THAT(reason(count.p, "fold-batchnorm", matchesOf(count.p, "fold-batchnorm")[0]),
              HasSubstr("one value per Conv output channel"));
  GraphBuilder train = convBn(true, 2, 1);
  EXPECT_THAT(reason(train.p, "fold-batchnorm", matchesOf(train.p, "fold-batchnorm")[0]),
              HasSubstr("training mode"));
  // The Conv's output is also read elsewhere.
  GraphBuilder shared = convBn();
  shared.output("z", {1, 2, 4, 4});
  shared.op("Relu", "relu", {{"X", "mid"}}, {{"Y", "z"}});
  EXPECT_THAT(reason(shared.p, "fold-batchnorm", matchesOf(shared.p, "fold-batchnorm")[0]),
              HasSubstr("used by more than the BatchNormalization"));
}

TEST(FoldBatchNorm, MoreNegatives) {
  // A bias that is not constant.
  GraphBuilder g = convBn();
  g.p.containers.at("b").constant = nullptr;
  g.p.containers.at("b").transient = false;
  g.p.inputs.push_back("b");
  EXPECT_THAT(reason(g.p, "fold-batchnorm", matchesOf(g.p, "fold-batchnorm").at(0)),
              HasSubstr("bias is not an f32 constant"));
  // A statistic that is not constant.
  GraphBuilder s = convBn();
  s.p.containers.at("var").constant = nullptr;
  s.p.containers.at("var").transient = false;
  s.p.inputs.push_back("var");
  EXPECT_THAT(reason(s.p, "fold-batchnorm", matchesOf(s.p, "fold-batchnorm").at(0)),
              HasSubstr("input_var is not an f32 constant"));
  // The running statistics are outputs someone reads.
  GraphBuilder r("convbn_running");
  r.input("x", {1, 3, 4, 4}).output("y", {1, 2, 4, 4}).transient("mid", {1, 2, 4, 4})
      .output("rm", {2});
  r.constantF32("w", {2, 3, 1, 1}, {0.5f, -1, 2, 0.25f, 1, -0.5f});
  for (const char *n : {"scale", "shift", "mean", "var"})
    r.constantF32(n, {2}, {0.7f, 0.7f});
  r.op("Conv", "conv", {{"X", "x"}, {"W", "w"}}, {{"Y", "mid"}});
  r.op("BatchNormalization", "bn",
       {{"X", "mid"}, {"scale", "scale"}, {"B", "shift"}, {"mean", "mean"}, {"var", "var"}},
       {{"Y", "y"}, {"running_mean", "rm"}});
  EXPECT_THAT(reason(r.p, "fold-batchnorm", matchesOf(r.p, "fold-batchnorm").at(0)),
              HasSubstr("running_mean output is used"));
}

// --- remove-identity ---------------------------------------------------------

TEST(RemoveIdentity, InteriorCopyIsExact) {
  GraphBuilder g("identity");
  g.input("x", {2, 3}).transient("t", {2, 3}).transient("u", {2, 3}).output("y", {2, 3});
  g.op("Relu", "relu1", {{"X", "x"}}, {{"Y", "t"}});
  g.op("Identity", "copy", {{"input", "t"}}, {{"output", "u"}});
  g.op("Neg", "neg", {{"X", "u"}}, {{"Y", "y"}});
  std::vector<Match> ms = matchesOf(g.p, "remove-identity");
  ASSERT_EQ(ms.size(), 1u);
  ir::Program after = applyGoldenVerified("remove_identity_interior", g.p, "remove-identity", ms[0]);
  EXPECT_EQ(after.findContainer("u"), nullptr);
  EXPECT_TRUE(T("remove-identity").exactness().exact);
}

TEST(RemoveIdentity, OutputCopyRenamesProducer) {
  GraphBuilder g("identity_out");
  g.input("x", {4}).transient("t", {4}).output("y", {4});
  g.op("Relu", "relu", {{"X", "x"}}, {{"Y", "t"}});
  g.op("Identity", "copy", {{"input", "t"}}, {{"output", "y"}});
  ir::Program after = applyGoldenVerified("remove_identity_output", g.p, "remove-identity",
                                          matchesOf(g.p, "remove-identity").at(0));
  EXPECT_EQ(after.findContainer("t"), nullptr);
  ASSERT_NE(after.findContainer("y"), nullptr);
}

TEST(RemoveIdentity, DropoutAndNegative) {
  GraphBuilder g("dropout");
  g.input("x", {4}).transient("t", {4}).transient("mask", {4}, ir::DType::Bool).output("y", {4});
  g.op("Dropout", "drop", {{"data", "x"}}, {{"output", "t"}, {"mask", "mask"}});
  g.op("Relu", "relu", {{"X", "t"}}, {{"Y", "y"}});
  applyGoldenVerified("remove_dropout", g.p, "remove-identity",
                      matchesOf(g.p, "remove-identity").at(0));

  GraphBuilder training("dropout_training");
  training.input("x", {4}).transient("t", {4}).output("y", {4});
  training.constant("on", {}, std::vector<std::uint8_t>{1}, ir::DType::Bool);
  training.op("Dropout", "drop", {{"data", "x"}, {"training_mode", "on"}}, {{"output", "t"}});
  training.op("Relu", "relu", {{"X", "t"}}, {{"Y", "y"}});
  EXPECT_THAT(reason(training.p, "remove-identity",
                     matchesOf(training.p, "remove-identity").at(0)),
              HasSubstr("training_mode is not a constant false"));

  GraphBuilder mask("dropout_mask");
  mask.input("x", {4}).transient("t", {4}).output("m", {4}, ir::DType::Bool).output("y", {4});
  mask.op("Dropout", "drop", {{"data", "x"}}, {{"output", "t"}, {"mask", "m"}});
  mask.op("Relu", "relu", {{"X", "t"}}, {{"Y", "y"}});
  EXPECT_THAT(reason(mask.p, "remove-identity", matchesOf(mask.p, "remove-identity").at(0)),
              HasSubstr("mask output 'm' is used"));

  GraphBuilder passthrough("passthrough");
  passthrough.input("x", {4}).output("y", {4});
  passthrough.op("Identity", "copy", {{"input", "x"}}, {{"output", "y"}});
  EXPECT_THAT(reason(passthrough.p, "remove-identity",
                     matchesOf(passthrough.p, "remove-identity").at(0)),
              HasSubstr("the copy is needed"));
}

TEST(RemoveIdentity, MoreNegatives) {
  // The copy's output is written again afterwards.
  GraphBuilder g("identity_twice");
  g.input("x", {4}).input("z", {4}).transient("t", {4}).transient("u", {4}).output("y", {4});
  g.op("Relu", "relu", {{"X", "x"}}, {{"Y", "t"}});
  g.op("Identity", "copy", {{"input", "t"}}, {{"output", "u"}});
  g.op("Neg", "neg", {{"X", "z"}}, {{"Y", "u"}});
  g.op("Relu", "relu2", {{"X", "u"}}, {{"Y", "y"}});
  EXPECT_THAT(reason(g.p, "remove-identity", matchesOf(g.p, "remove-identity").at(0)),
              HasSubstr("is written 2 times"));
  // Shapes that differ (a malformed model).
  GraphBuilder s("identity_shapes");
  s.input("x", {4}).transient("u", {2, 2}).output("y", {2, 2});
  s.op("Identity", "copy", {{"input", "x"}}, {{"output", "u"}});
  s.op("Relu", "relu", {{"X", "u"}}, {{"Y", "y"}});
  EXPECT_THAT(reason(s.p, "remove-identity", matchesOf(s.p, "remove-identity").at(0)),
              HasSubstr("differ in dtype or rank"));
}

// --- fold-constants ----------------------------------------------------------

TEST(FoldConstants, ChainFoldsInOneStep) {
  GraphBuilder g("consts");
  g.input("x", {3}).output("y", {3}).transient("n", {3}).transient("m", {3});
  g.constantF32("c", {3}, {1, -2, 3}).constantF32("k", {3}, {0.5f, 0.25f, 2});
  g.op("Neg", "neg", {{"X", "c"}}, {{"Y", "n"}});
  g.op("Mul", "mul", {{"A", "n"}, {"B", "k"}}, {{"C", "m"}});
  g.op("Add", "add", {{"A", "x"}, {"B", "m"}}, {{"C", "y"}});
  std::vector<Match> ms = matchesOf(g.p, "fold-constants");
  ASSERT_EQ(ms.size(), 1u); // only Neg's inputs are constant yet
  ir::Program after = applyGoldenVerified("fold_constants_chain", g.p, "fold-constants", ms[0]);
  const ir::Container &m = after.container("m");
  ASSERT_TRUE(m.isConstant());
  float v[3];
  std::memcpy(v, m.constant->data(), 12);
  EXPECT_EQ(v[0], -0.5f);
  EXPECT_EQ(v[1], 0.5f);
  EXPECT_EQ(v[2], -6.0f);
  EXPECT_TRUE(matchesOf(after, "fold-constants").empty());
}

TEST(FoldConstants, ShapeOfStaticValue) {
  GraphBuilder g("shape");
  g.input("x", {2, 3, 4}).output("y", {2, 12}).transient("s", {2}, ir::DType::I64);
  g.op("Shape", "shape", {{"data", "x"}}, {{"shape", "s"}}, {{"end", std::int64_t(2)}});
  g.transient("target", {2}, ir::DType::I64);
  g.constant("twelve", {1}, std::vector<std::int64_t>{12}, ir::DType::I64);
  g.transient("first", {1}, ir::DType::I64);
  g.constant("zero", {1}, std::vector<std::int64_t>{0}, ir::DType::I64);
  g.op("Gather", "gather", {{"data", "s"}, {"indices", "zero"}}, {{"output", "first"}});
  g.op("Concat", "concat", {{"inputs_0", "first"}, {"inputs_1", "twelve"}},
       {{"concat_result", "target"}}, {{"axis", std::int64_t(0)}});
  g.op("Reshape", "reshape", {{"data", "x"}, {"shape", "target"}}, {{"reshaped", "y"}});
  Match shape = matchesOf(g.p, "fold-constants").at(0);
  // Before folding the Reshape's target is not a constant, so the program
  // cannot run; after, it can.
  ir::Program after = applyGoldenVerified("fold_constants_shape_chain", g.p, "fold-constants",
                                          shape, {}, /*runnable=*/false);
  const ir::Container &target = after.container("target");
  ASSERT_TRUE(target.isConstant());
  std::int64_t v[2];
  std::memcpy(v, target.constant->data(), 16);
  EXPECT_EQ(v[0], 2);
  EXPECT_EQ(v[1], 12);
  ir::Program expanded = transforms::applyChecked(after, T("expand-all"), Match{}).program;
  expectValid(expanded);
}

TEST(FoldConstants, Negative) {
  GraphBuilder g("consts_neg");
  g.input("x", {3}).output("y", {3}).transient("big", {3});
  g.constantF32("c", {3}, {1, 2, 3});
  ir::NodeId neg = g.op("Neg", "neg", {{"X", "c"}}, {{"Y", "big"}});
  ir::NodeId add = g.op("Add", "add", {{"A", "x"}, {"B", "big"}}, {{"C", "y"}});
  EXPECT_THAT(reason(g.p, "fold-constants", Match{"main", {{"node", neg}}},
                     {{"max_bytes", std::int64_t(8)}}),
              HasSubstr("more than max_bytes = 8"));
  EXPECT_THAT(reason(g.p, "fold-constants", Match{"main", {{"node", neg}}},
                     {{"max_bytes", std::int64_t(-1)}}),
              HasSubstr("outside"));
  EXPECT_THAT(reason(g.p, "fold-constants", Match{"main", {{"node", add}}}),
              HasSubstr("input 'x' is not constant"));
  GraphBuilder out("consts_out");
  out.output("y", {3});
  out.constantF32("c", {3}, {1, 2, 3});
  ir::NodeId n2 = out.op("Neg", "neg", {{"X", "c"}}, {{"Y", "y"}});
  EXPECT_THAT(reason(out.p, "fold-constants", Match{"main", {{"node", n2}}}),
              HasSubstr("program output"));
}

// --- reshape-to-view -----------------------------------------------------------

/// Expanded, the program runs the same on the interpreter as on the JIT
/// (verifyPrograms covers the JIT); views must work on both.
void expectInterpreterAgrees(const ir::Program &before, const ir::Program &after) {
  ir::Program a = before, b = after;
  expansion::expandAll(a);
  expansion::expandAll(b);
  interp::TensorMap in = runtime::randomInputs(a, 3, {{"N", 2}});
  interp::TensorMap x = interp::interpret(a, in), y = interp::interpret(b, in);
  for (const auto &[name, t] : x) {
    ASSERT_EQ(t.byteSize(), y.at(name).byteSize());
    EXPECT_EQ(std::memcmp(t.data(), y.at(name).data(), t.byteSize()), 0) << name;
  }
}

TEST(ReshapeToView, FlattenInCnnIsExact) {
  ir::Program p = model("cnn.onnx");
  std::vector<Match> ms = matchesOf(p, "reshape-to-view");
  ASSERT_EQ(ms.size(), 1u);
  ir::Program after = applyGoldenVerified("reshape_to_view_cnn", p, "reshape-to-view", ms[0]);
  EXPECT_TRUE(T("reshape-to-view").exactness().exact);
  int views = 0;
  for (const auto &[name, c] : after.containers)
    views += c.isView();
  EXPECT_EQ(views, 1);
  ir::SerializedProgram saved = ir::serialize(after);
  EXPECT_EQ(ir::structuralHash(ir::deserialize(saved.json, saved.binary)),
            ir::structuralHash(after));
  expectInterpreterAgrees(p, after);
  // Fewer bytes move: the copy is gone.
  ir::Program e1 = transforms::applyChecked(p, T("expand-all"), Match{}).program;
  ir::Program e2 = transforms::applyChecked(after, T("expand-all"), Match{}).program;
  EXPECT_LT(*ir::analyze(e2).bytesMoved.asConstant(), *ir::analyze(e1).bytesMoved.asConstant());
}

TEST(ReshapeToView, EveryReshapeOfTheTransformer) {
  ir::Program p = model("transformer.onnx");
  int applied = 0;
  for (;;) {
    bool progress = false;
    for (const Match &m : matchesOf(p, "reshape-to-view"))
      if (transforms::checkMatch(p, T("reshape-to-view"), m)) {
        ir::Program next = transforms::applyChecked(p, T("reshape-to-view"), m).program;
        expectValid(next);
        workspace::VerifyReport v =
            workspace::verifyPrograms(p, next, T("reshape-to-view").exactness(), {.seed = 1});
        ASSERT_TRUE(v.ok) << v.str();
        p = std::move(next);
        ++applied;
        progress = true;
        break;
      }
    if (!progress)
      break;
  }
  EXPECT_GE(applied, 4);
  expectInterpreterAgrees(model("transformer.onnx"), p);
}

TEST(ReshapeToView, Negative) {
  GraphBuilder g("reshape_out");
  g.input("x", {2, 6}).output("y", {3, 4});
  g.constant("shape", {2}, std::vector<std::int64_t>{3, 4}, ir::DType::I64);
  g.op("Reshape", "reshape", {{"data", "x"}, {"shape", "shape"}}, {{"reshaped", "y"}});
  EXPECT_THAT(reason(g.p, "reshape-to-view", matchesOf(g.p, "reshape-to-view").at(0)),
              HasSubstr("program argument"));
  // The input is written twice (an accumulation), so a view could see the
  // later value.
  GraphBuilder twice("reshape_twice");
  twice.input("x", {2, 6}).input("z", {2, 6}).transient("t", {2, 6}).transient("u", {3, 4})
      .output("y", {3, 4});
  twice.constant("shape", {2}, std::vector<std::int64_t>{3, 4}, ir::DType::I64);
  twice.op("Relu", "relu", {{"X", "x"}}, {{"Y", "t"}});
  twice.op("Reshape", "reshape", {{"data", "t"}, {"shape", "shape"}}, {{"reshaped", "u"}});
  twice.op("Neg", "neg", {{"X", "z"}}, {{"Y", "t"}});
  twice.op("Relu", "relu2", {{"X", "u"}}, {{"Y", "y"}});
  EXPECT_THAT(reason(twice.p, "reshape-to-view", matchesOf(twice.p, "reshape-to-view").at(0)),
              HasSubstr("written more than once"));
  // The data input is the shape, not the tensor: the match is not this one.
  GraphBuilder ok("reshape_ok");
  ok.input("x", {2, 6}).transient("u", {3, 4}).output("y", {3, 4});
  ok.constant("shape", {2}, std::vector<std::int64_t>{3, 4}, ir::DType::I64);
  ok.op("Reshape", "reshape", {{"data", "x"}, {"shape", "shape"}}, {{"reshaped", "u"}});
  ok.op("Relu", "relu", {{"X", "u"}}, {{"Y", "y"}});
  std::vector<Match> ms = matchesOf(ok.p, "reshape-to-view");
  ASSERT_EQ(ms.size(), 2u); // input = x, and input = shape
  EXPECT_TRUE(transforms::checkMatch(ok.p, T("reshape-to-view"), ms[0]).ok);
  EXPECT_THAT(reason(ok.p, "reshape-to-view", ms[1]), HasSubstr("not the operator's data input"));
  // A view is read-only: validation rejects a write into one.
  ir::Program viewed = transforms::applyChecked(ok.p, T("reshape-to-view"), ms[0]).program;
  viewed.containers.at("u").viewOf = "nothing";
  EXPECT_TRUE(ir::hasErrors(ir::validate(viewed)));
}

TEST(Tier1, AutoRecipeIsEquivalentOnEveryBundledModel) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    ir::Program p = model(name);
    ir::Program q = p;
    int steps = 0;
    for (const char *id : {"fold-constants", "remove-identity", "fold-batchnorm",
                           "reshape-to-view"})
      for (bool progress = true; progress;) {
        progress = false;
        for (const Match &m : matchesOf(q, id))
          if (transforms::checkMatch(q, T(id), m)) {
            q = transforms::applyChecked(q, T(id), m).program;
            expectValid(q);
            ++steps;
            progress = true;
            break;
          }
      }
    q = transforms::applyChecked(q, T("expand-all"), Match{}).program;
    workspace::VerifyReport v = workspace::verifyPrograms(p, q, {false, 1e-3, 1e-4},
                                                          {.seed = 11, .dims = {{"N", 3}}});
    EXPECT_TRUE(v.ok) << name << ": " << v.str();
    // The MLP (Gemm, Relu) has nothing for tier 1 but expansion.
    EXPECT_EQ(steps > 0, std::string(name) != "mlp.onnx") << name;
  }
}

// --- the registry and parameters -----------------------------------------------

TEST(Registry, ListsTierOneWithDeclarations) {
  std::vector<std::string> ids;
  for (const auto &t : transforms::transformations()) {
    ids.push_back(std::string(t->id()));
    EXPECT_TRUE(transforms::isKebabCase(t->id()));
    EXPECT_FALSE(t->summary().empty());
    EXPECT_FALSE(t->description().empty());
  }
  for (const char *id : {"expand", "expand-all", "fold-batchnorm", "fold-constants",
                         "remove-identity", "reshape-to-view"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  EXPECT_THROW(transforms::requireTransformation("no-such"), weir::Error);
  EXPECT_FALSE(transforms::isKebabCase("Map_Fusion"));
  EXPECT_FALSE(transforms::isKebabCase("map--fusion"));
  EXPECT_TRUE(transforms::isKebabCase("map-fusion2"));
}

TEST(Params, ResolveChecksKindsRangesAndChoices) {
  Params p = transforms::resolveParams(T("fold-constants"), {});
  EXPECT_EQ(transforms::intParam(p, "max_bytes"), 64 << 20);
  EXPECT_THROW(transforms::resolveParams(T("fold-constants"),
                                         {{"max_bytes", std::string("x")}}),
               weir::Error);
  EXPECT_THROW(transforms::resolveParams(T("fold-constants"), {{"other", true}}), weir::Error);
}

} // namespace
} // namespace weir::transforms_testing
