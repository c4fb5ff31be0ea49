// The Workspace: undo/redo/revert without re-running, failure atomicity,
// observers, recipes that replay to the same hash and byte-identical LLVM
// IR, shared weights between versions, incremental matching, and random
// sequences of apply/undo/redo/revert.

#include "codegen/cpu/compile.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/validate.h"
#include "onnx/import.h"
#include "transforms/graph_builder.h"
#include "transforms/registry.h"
#include "workspace/auto_recipe.h"
#include "workspace/session.h"
#include "workspace/workspace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace weir::workspace {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

ir::Program model(const std::string &name) {
  return onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                  "/resources/models/" + name)
      .program;
}

bool valid(const ir::Program &p) { return !ir::hasErrors(ir::validate(p)); }

// Transformations that misbehave, to check the workspace survives them.
class Misbehaving : public transforms::Transformation {
public:
  enum class How { ThrowsWeir, ThrowsStd, Invalid };
  explicit Misbehaving(How how)
      : Transformation({.id = how == How::ThrowsWeir  ? "test-throws"
                              : how == How::ThrowsStd ? "test-throws-std"
                                                      : "test-invalid",
                        .tier = transforms::Tier::Fusion,
                        .summary = "misbehaves for tests",
                        .description = "misbehaves"}),
        how_(how) {}
  transforms::CheckResult check(const ir::Program &, const Match &,
                                const transforms::Params &) const override {
    return transforms::CheckResult::success();
  }
  transforms::ApplyResult apply(const ir::Program &program, const Match &,
                                const transforms::Params &) const override {
    if (how_ == How::ThrowsWeir)
      throw Error("deliberate failure");
    if (how_ == How::ThrowsStd)
      throw std::runtime_error("deliberate std failure");
    transforms::ApplyResult r{program, {}};
    // An edge to a node that does not exist.
    r.program.states.front().edges.push_back(
        {r.program.newEdgeId(), 1, "", 999999, "", {}});
    return r;
  }

private:
  How how_;
};

class WorkspaceTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    for (auto how : {Misbehaving::How::ThrowsWeir, Misbehaving::How::ThrowsStd,
                     Misbehaving::How::Invalid})
      if (!transforms::findTransformation(Misbehaving(how).id()))
        transforms::registerTransformation(std::make_shared<Misbehaving>(how));
  }
  static void TearDownTestSuite() {
    for (const char *id : {"test-throws", "test-throws-std", "test-invalid"})
      transforms::unregisterTransformation(id);
  }
};

TEST_F(WorkspaceTest, UndoRedoRevertRestoreVersionsWithoutRerunning) {
  Workspace ws(model("cnn.onnx"));
  std::uint64_t h0 = ws.hash();
  EXPECT_EQ(h0, ir::structuralHash(ws.program()));
  std::vector<Match> bn = ws.matches("fold-batchnorm");
  ASSERT_EQ(bn.size(), 2u);
  const Version &v1 = ws.apply("fold-batchnorm", bn[0]);
  std::uint64_t h1 = v1.hash();
  EXPECT_NE(h1, h0);
  ws.apply("expand-all");
  std::uint64_t h2 = ws.hash();
  const ir::Program *p2 = &ws.program();
  ws.undo();
  EXPECT_EQ(ws.hash(), h1);
  EXPECT_EQ(ir::structuralHash(ws.program()), h1);
  ws.undo();
  EXPECT_EQ(ir::structuralHash(ws.program()), h0);
  EXPECT_FALSE(ws.canUndo());
  EXPECT_THROW(ws.undo(), Error);
  ws.redo();
  ws.redo();
  EXPECT_EQ(ws.hash(), h2);
  EXPECT_EQ(&ws.program(), p2); // the same version object: nothing re-ran
  EXPECT_THROW(ws.redo(), Error);
  ws.revert(1);
  EXPECT_EQ(ir::structuralHash(ws.program()), h1);
  EXPECT_TRUE(ws.canRedo());
  EXPECT_THROW(ws.revert(7), Error);
  // A new apply drops the redo tail.
  ws.apply("fold-batchnorm", ws.matches("fold-batchnorm").at(0));
  EXPECT_FALSE(ws.canRedo());
  EXPECT_EQ(ws.versions().size(), 3u);
  EXPECT_EQ(ws.recipe().steps.size(), 2u);
}

TEST_F(WorkspaceTest, DeferredValidationFindsTheStepThatBrokeTheProgram) {
  Workspace ws(model("cnn.onnx"));
  std::vector<Match> folds = ws.matches("fold-batchnorm");
  ASSERT_GE(folds.size(), 2u);
  std::vector<Change> changes;
  ws.addObserver(
      [&](const Workspace &, const Change &c) { changes.push_back(c); });
  {
    Workspace::DeferredValidation defer(ws);
    ws.apply("fold-batchnorm", folds[0]);
    // Accepted without validation, and a step applied after it.
    ws.apply("test-invalid");
    EXPECT_FALSE(valid(ws.program()));
    ws.apply("fold-batchnorm", folds[1]);
    ASSERT_EQ(ws.current(), 3u);
    try {
      ws.validatePending();
      FAIL() << "the invalid step was not found";
    } catch (const Error &e) {
      EXPECT_THAT(e.what(),
                  HasSubstr("test-invalid at program produced an invalid "
                            "program"));
    }
    // Back to the version before it, the broken step and those after it
    // gone.
    EXPECT_EQ(ws.current(), 1u);
    EXPECT_EQ(ws.versions().size(), 2u);
    EXPECT_FALSE(ws.canRedo());
    EXPECT_TRUE(valid(ws.program()));
    ASSERT_FALSE(changes.empty());
    EXPECT_EQ(changes.back().kind, ChangeKind::Reverted);
    EXPECT_EQ(changes.back().from, 3u);
    EXPECT_EQ(changes.back().to, 1u);
    // Deferred steps that validate: validated once, then nothing pending.
    ws.apply("fold-batchnorm", folds[1]);
    EXPECT_TRUE(ws.validatePending());
    EXPECT_FALSE(ws.validatePending());
    EXPECT_EQ(ws.versions().size(), 3u);
  }
  // Undeferred, the broken step is refused as it is applied.
  EXPECT_THROW(ws.apply("test-invalid"), Error);
  // A deferred step left unvalidated counts as not known to validate: the
  // next step's result is validated in full, and inherits its problem.
  {
    Workspace::DeferredValidation defer(ws);
    ws.apply("test-invalid");
  }
  std::size_t before = ws.versions().size();
  try {
    ws.apply("expand", ws.matches("expand").at(0));
    FAIL() << "a step on an unvalidated, invalid version was not refused";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("produced an invalid program"));
  }
  EXPECT_EQ(ws.versions().size(), before);
}

TEST_F(WorkspaceTest, FailedApplyLeavesWorkspaceUntouched) {
  Workspace ws(model("cnn.onnx"));
  ws.apply("fold-batchnorm", ws.matches("fold-batchnorm").at(0));
  int events = 0;
  ws.addObserver([&](const Workspace &, const Change &) { ++events; });
  std::uint64_t hash = ws.hash();
  std::size_t versions = ws.versions().size(), current = ws.current();
  auto expectUnchanged = [&] {
    EXPECT_EQ(ws.hash(), hash);
    EXPECT_EQ(ir::structuralHash(ws.program()), hash);
    EXPECT_EQ(ws.versions().size(), versions);
    EXPECT_EQ(ws.current(), current);
    EXPECT_EQ(events, 0);
  };
  try {
    ws.apply("test-throws");
    FAIL();
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("deliberate failure"));
  }
  expectUnchanged();
  try {
    ws.apply("test-throws-std");
    FAIL();
  } catch (const Error &e) {
    EXPECT_THAT(
        e.what(),
        HasSubstr("test-throws-std at program failed: deliberate std failure"));
  }
  expectUnchanged();
  try {
    ws.apply("test-invalid");
    FAIL();
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("produced an invalid program"));
  }
  expectUnchanged();
  // A rejected check and an unknown transformation.
  Match used = ws.recipe().steps[0].match;
  EXPECT_THROW(ws.apply("fold-batchnorm", used), Error);
  EXPECT_THROW(ws.apply("no-such-transformation"), Error);
  EXPECT_THROW(ws.apply("expand", Match{"main", {{"node", 1}}}), Error);
  EXPECT_THROW(
      ws.apply("fold-constants", Match{}, {{"max_bytes", std::string("x")}}),
      Error);
  expectUnchanged();
  EXPECT_FALSE(ws.check("fold-batchnorm", used).ok);
  // tryApply answers a refusal with nullptr and the reason, and still
  // throws for what is not a refusal.
  transforms::CheckResult why;
  EXPECT_EQ(ws.tryApply("fold-batchnorm", used, {}, &why), nullptr);
  EXPECT_FALSE(why.ok);
  EXPECT_EQ(why.reason, ws.check("fold-batchnorm", used).reason);
  EXPECT_THROW(ws.tryApply("test-invalid"), Error);
  EXPECT_THROW(ws.tryApply("no-such-transformation"), Error);
  expectUnchanged();
  // And an accepted step is the same version apply() makes.
  Match next = ws.matches("fold-batchnorm").at(0);
  const Version *v = ws.tryApply("fold-batchnorm", next);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v, &ws.versions()[ws.current()]);
  EXPECT_EQ(events, 1);
  std::uint64_t tried = ws.hash();
  ws.undo();
  ws.apply("fold-batchnorm", next);
  EXPECT_EQ(ws.hash(), tried);
}

TEST_F(WorkspaceTest, ObserversHearEveryChange) {
  Workspace ws(model("cnn.onnx"));
  std::vector<std::tuple<ChangeKind, std::size_t, std::size_t>> seen;
  int id = ws.addObserver([&](const Workspace &w, const Change &c) {
    seen.emplace_back(c.kind, c.from, c.to);
    EXPECT_EQ(w.current(), c.to);
  });
  ws.addObserver([](const Workspace &, const Change &) {
    throw std::runtime_error("a broken listener");
  });
  ws.apply("expand-all");
  ws.undo();
  ws.redo();
  ws.revert(0);
  using K = ChangeKind;
  EXPECT_EQ(seen, (std::vector<std::tuple<K, std::size_t, std::size_t>>{
                      {K::Applied, 0, 1},
                      {K::Undone, 1, 0},
                      {K::Redone, 0, 1},
                      {K::Reverted, 1, 0}}));
  ws.removeObserver(id);
  ws.redo();
  EXPECT_EQ(seen.size(), 4u);
}

TEST_F(WorkspaceTest, RecipeReplaysToSameHashAndIdenticalLLVMIR) {
  auto opened =
      openModel(std::string(WEIR_SOURCE_DIR) + "/resources/models/cnn.onnx");
  Workspace &a = *opened;
  applyAutoRecipe(a, "cpu");
  ASSERT_GE(a.recipe().steps.size(), 3u);
  Recipe saved = Recipe::parse(a.recipe().dump(), "recipe");
  Workspace b(model("cnn.onnx"));
  b.replay(saved);
  EXPECT_EQ(b.hash(), a.hash());
  EXPECT_EQ(b.versions().size(), a.versions().size());
  codegen::CompileOptions options;
  options.useCache = false;
  std::string irA = codegen::compile(a.program(), options).llvmIR();
  std::string irB = codegen::compile(b.program(), options).llvmIR();
  EXPECT_FALSE(irA.empty());
  EXPECT_EQ(irA, irB);
  EXPECT_TRUE(b.verify().ok);
  // The same through a session file: save, open (re-import and replay).
  std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("weir-replay-" + std::to_string(::getpid()) + ".weir");
  saveSession(a, file);
  auto c = openSession(file);
  std::filesystem::remove(file);
  EXPECT_EQ(c->hash(), a.hash());
  EXPECT_EQ(codegen::compile(c->program(), options).llvmIR(), irA);
}

TEST_F(WorkspaceTest, AutoRecipeTurnsSoftmaxSumsToVectorizeOverRows) {
  // transformer.onnx's softmax sums exp(x - max) over each row; the auto
  // recipe swaps the map's last two parameters so the innermost loop runs
  // over rows (vectorized) while each row still sums in order. Its layer
  // norms' plain sums stay as they are.
  Workspace ws(model("transformer.onnx"));
  applyAutoRecipe(ws, "cpu");
  int swaps = 0;
  for (const Version &v : ws.versions())
    swaps += v.step && v.step->transformation == "map-interchange";
  EXPECT_EQ(swaps, 1);
  codegen::CompileOptions options;
  options.useCache = false;
  std::string ir = codegen::compile(ws.program(), options).loopIR();
  std::istringstream lines(ir);
  std::string inner;
  for (std::string line; std::getline(lines, line);)
    if (line.ends_with("Softmax.sumexp") &&
        line.find("for ") != std::string::npos)
      inner = line.substr(line.find_first_not_of(' '));
  EXPECT_EQ(inner.rfind("vectorized for i2", 0), 0u) << ir;
  VerifyReport v = ws.verify();
  EXPECT_TRUE(v.ok) << v.str();
}

TEST_F(WorkspaceTest, ReplayIsAllOrNothingAndChecksLabels) {
  Workspace a(model("cnn.onnx"));
  applyAutoRecipe(a, "cpu");
  Recipe r = a.recipe();
  Workspace b(model("cnn.onnx"));
  std::uint64_t h = b.hash();
  Recipe relabelled = r;
  relabelled.steps[0].labels.begin()->second = "somebody-else";
  try {
    b.replay(relabelled);
    FAIL();
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("recipe step 1"));
    EXPECT_THAT(e.what(), HasSubstr("the recipe expects 'somebody-else'"));
  }
  Recipe broken = r;
  broken.steps.back().transformation = "no-such";
  EXPECT_THROW(b.replay(broken), Error);
  EXPECT_EQ(b.hash(), h);
  EXPECT_EQ(b.versions().size(), 1u);
  // On another model, the recipe's nodes are not there.
  Workspace c(model("mlp.onnx"));
  EXPECT_THROW(c.replay(r), Error);
  EXPECT_EQ(c.versions().size(), 1u);
}

TEST_F(WorkspaceTest, VersionsShareWeights) {
  Workspace ws(model("cnn.onnx"));
  ws.apply("expand-all");
  const ir::Program &first = *ws.versions()[0].program();
  const ir::Program &last = ws.program();
  int shared = 0;
  for (const auto &[name, c] : first.containers)
    if (c.isConstant())
      if (const ir::Container *d = last.findContainer(name)) {
        EXPECT_EQ(c.constant.get(), d->constant.get()) << name;
        ++shared;
      }
  EXPECT_GT(shared, 3);
}

TEST_F(WorkspaceTest, VerifyFindsAWrongTransformation) {
  // A "transformation" that changes a weight must fail verification.
  Workspace ws(model("cnn.onnx"));
  ir::Program changed = ws.program();
  for (auto &[name, c] : changed.containers)
    if (c.isConstant() && c.dtype == ir::DType::F32) {
      auto bytes = std::make_shared<std::vector<std::byte>>(*c.constant);
      (*bytes)[0] = std::byte(std::uint8_t((*bytes)[0]) ^ 0x40);
      (*bytes)[3] = std::byte(std::uint8_t((*bytes)[3]) ^ 0x20);
      c.constant = bytes;
      break;
    }
  VerifyReport r = verifyPrograms(ws.program(), changed, {true, 0, 0});
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.str(), HasSubstr("MISMATCH"));
  EXPECT_TRUE(verifyPrograms(ws.program(), ws.program(), {true, 0, 0}).ok);
}

TEST_F(WorkspaceTest, MatchingIsIncrementalPerState) {
  // Two states; a change in one re-matches only that one.
  transforms_testing::GraphBuilder g("two_states");
  g.input("x", {4}).transient("t", {4}).transient("u", {4}).output("y", {4});
  g.op("Identity", "copy1", {{"input", "x"}}, {{"output", "t"}});
  g.op("Relu", "relu", {{"X", "t"}}, {{"Y", "u"}});
  ir::Program p = g.p;
  ir::State second;
  second.name = "second";
  ir::NodeId a = ir::addAccess(p, second, "u");
  ir::LibraryData neg;
  neg.op = "Neg";
  neg.opsetVersion = 13;
  ir::NodeId n = ir::builders::addLibrary(
      p, second, "neg", neg, {{"X", ir::DType::F32}}, {{"Y", ir::DType::F32}});
  ir::NodeId y = ir::addAccess(p, second, "y");
  ir::addEdge(p, second, a, "", n, "X",
              {"u", ir::Subset::full(p.container("u").shape)});
  ir::addEdge(p, second, n, "Y", y, "",
              {"y", ir::Subset::full(p.container("y").shape)});
  p.states.push_back(second);
  ASSERT_TRUE(valid(p));
  Workspace ws(p);
  EXPECT_EQ(ws.matches("expand").size(), 3u); // Identity, Relu, Neg
  auto before = ws.matchCache().stats();
  EXPECT_EQ(ws.matches("expand").size(), 3u);
  auto again = ws.matchCache().stats();
  EXPECT_EQ(again.statesMatched, before.statesMatched);
  EXPECT_EQ(again.statesReused, before.statesReused + 2);
  // Expanding Neg changes only the second state.
  Match negMatch;
  for (const Match &m : ws.matches("expand"))
    if (m.state == "second")
      negMatch = m;
  ws.apply("expand", negMatch);
  auto mid = ws.matchCache().stats();
  std::vector<Match> now = ws.matches("expand");
  EXPECT_EQ(now.size(), 2u);
  EXPECT_EQ(ws.matchCache().stats().statesMatched, mid.statesMatched + 1);
  EXPECT_EQ(ws.matchCache().stats().statesReused, mid.statesReused + 1);
  // The cached matches equal a fresh, uncached listing.
  EXPECT_EQ(now,
            transforms::findMatches(
                ws.program(), *transforms::requireTransformation("expand")));
}

/// Random sequences of apply, undo, redo and revert. After an undo the
/// hash equals the hash before the apply; redo reproduces the hash; the
/// program validates at every step.
TEST_F(WorkspaceTest, RandomSequences) {
  const char *env = std::getenv("WEIR_RANDOM_SEQUENCES");
  const int sequences = env ? std::atoi(env) : 1000, steps = 20;
  std::vector<ir::Program> models = {model("cnn.onnx"), model("mlp.onnx"),
                                     model("transformer.onnx")};
  std::vector<std::string> ids;
  for (const auto &t : transforms::transformations())
    if (t->id().rfind("test-", 0) != 0)
      ids.push_back(std::string(t->id()));
  std::mt19937_64 rng(2026);
  int applied = 0, rejected = 0, undone = 0, redone = 0, reverted = 0;
  for (int seq = 0; seq < sequences; ++seq) {
    Workspace ws(models[seq % models.size()]);
    std::vector<std::uint64_t> hashes = {ws.hash()}; // mirror of versions
    std::size_t current = 0;
    for (int step = 0; step < steps; ++step) {
      int action = int(rng() % 10);
      if (action < 5) {
        const std::string &id = ids[rng() % ids.size()];
        std::vector<Match> ms = ws.matches(id);
        if (ms.empty())
          continue;
        Match m = ms[rng() % ms.size()];
        std::uint64_t before = ws.hash();
        if (!ws.check(id, m)) {
          EXPECT_THROW(ws.apply(id, m), Error);
          EXPECT_EQ(ws.hash(), before);
          ++rejected;
          continue;
        }
        ws.apply(id, m);
        hashes.resize(current + 1);
        hashes.push_back(ir::structuralHash(ws.program()));
        ++current;
        ASSERT_EQ(ws.hash(), hashes[current]);
        ASSERT_TRUE(valid(ws.program())) << id << " at " << m.str();
        ++applied;
      } else if (action < 7) {
        if (!ws.canUndo())
          continue;
        ws.undo();
        --current;
        ASSERT_EQ(ir::structuralHash(ws.program()), hashes[current]);
        ++undone;
      } else if (action < 9) {
        if (!ws.canRedo())
          continue;
        ws.redo();
        ++current;
        ASSERT_EQ(ir::structuralHash(ws.program()), hashes[current]);
        ++redone;
      } else {
        std::size_t to = rng() % hashes.size();
        ws.revert(to);
        current = to;
        ASSERT_EQ(ir::structuralHash(ws.program()), hashes[current]);
        ++reverted;
      }
      ASSERT_EQ(ws.current(), current);
      ASSERT_EQ(ws.versions().size(), hashes.size());
      ASSERT_TRUE(valid(ws.program()));
    }
  }
  std::printf("random sequences: %d x %d steps: %d applied, %d rejected, %d "
              "undone, %d redone, %d reverted\n",
              sequences, steps, applied, rejected, undone, redone, reverted);
  EXPECT_GT(applied, sequences);
  EXPECT_GT(undone, sequences / 2);
  EXPECT_GT(redone, sequences / 4);
}

} // namespace
} // namespace weir::workspace
