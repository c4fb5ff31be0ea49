// Which versions keep their programs in memory, and how the others come
// back: a long history keeps the first, every 16th and the recent ones; any
// other version's program is rebuilt by replaying its steps, to the program
// it was; a step that does not replay exactly (a plugin's) keeps its result;
// a step that claims to replay exactly but does not is caught by the hash.

#include "ir/error.h"
#include "ir/hash.h"
#include "onnx/import.h"
#include "transforms/registry.h"
#include "workspace/auto_recipe.h"
#include "workspace/workspace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>

namespace weir::workspace {
namespace {

using ::testing::HasSubstr;

ir::Program transformer() {
  return onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                  "/resources/models/transformer.onnx")
      .program;
}

/// Adds a symbol. Named after a counter, each application makes a
/// different program, and the step is declared as replaying exactly or not;
/// named after how many symbols the program has, it replays exactly (and
/// is cheap, for long histories).
class Stamp : public transforms::Transformation {
public:
  enum class Naming { Counter, SymbolCount };
  Stamp(const char *id, bool exact, Naming naming = Naming::Counter)
      : Transformation({.id = id,
                        .tier = transforms::Tier::Fusion,
                        .summary = "adds a symbol, for tests",
                        .description = "adds a symbol"}),
        exact_(exact), naming_(naming) {}
  transforms::CheckResult check(const ir::Program &, const transforms::Match &,
                                const transforms::Params &) const override {
    return transforms::CheckResult::success();
  }
  transforms::ApplyResult apply(const ir::Program &program,
                                const transforms::Match &,
                                const transforms::Params &) const override {
    transforms::ApplyResult r{program, {}};
    r.program.symbols.push_back(
        naming_ == Naming::Counter
            ? "stamp" + std::to_string(counter_++)
            : "s" + std::to_string(program.symbols.size()));
    return r;
  }
  bool replaysExactly() const override { return exact_; }

private:
  bool exact_;
  Naming naming_;
  mutable std::atomic<int> counter_ = 0;
};

class ResidentVersions : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    transforms::registerTransformation(
        std::make_shared<Stamp>("test-stamp-plugin", false));
    transforms::registerTransformation(
        std::make_shared<Stamp>("test-stamp-claims-exact", true));
    transforms::registerTransformation(std::make_shared<Stamp>(
        "test-count-symbols", true, Stamp::Naming::SymbolCount));
  }
  static void TearDownTestSuite() {
    transforms::unregisterTransformation("test-stamp-plugin");
    transforms::unregisterTransformation("test-stamp-claims-exact");
    transforms::unregisterTransformation("test-count-symbols");
  }

  /// The auto recipe on `ws`, with each new version's hash as it was made.
  static void autoRecipe(Workspace &ws, std::vector<std::uint64_t> &hashes) {
    applyAutoRecipe(ws, "cpu", [&](const Version &, const Version &after) {
      hashes.push_back(after.hash());
    });
  }
};

TEST_F(ResidentVersions, ALongHistoryKeepsFewProgramsAndRebuildsTheRest) {
  Workspace ws(transformer());
  std::vector<std::uint64_t> hashes = {ws.hash()};
  autoRecipe(ws, hashes);
  const std::size_t n = ws.versions().size();
  ASSERT_EQ(hashes.size(), n);
  ASSERT_GE(n, 3 * Workspace::kCheckpointEvery);

  std::size_t resident = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Version &v = ws.versions()[i];
    bool kept = i % ws.checkpointEvery() == 0 ||
                i + Workspace::kRecent >= ws.current();
    EXPECT_EQ(v.resident(), kept) << "version " << i;
    // Nothing else holds a dropped program: it is gone.
    if (!kept) {
      EXPECT_EQ(v.programIfLoaded(), nullptr) << "version " << i;
    }
    resident += v.resident();
  }
  EXPECT_LE(resident, n / Workspace::kCheckpointEvery + Workspace::kRecent + 2);

  // Every version, dropped or not, is the program it was.
  for (std::size_t i = 0; i < n; ++i)
    EXPECT_EQ(ir::structuralHash(*ws.versions()[i].program()), hashes[i])
        << "version " << i;
  // Rebuilding made none of them resident again.
  EXPECT_FALSE(ws.versions()[2 * Workspace::kCheckpointEvery + 1].resident());

  // Moving to a dropped version makes it resident, and moving on drops it.
  std::size_t dropped = Workspace::kCheckpointEvery + 3;
  ASSERT_FALSE(ws.versions()[dropped].resident());
  ws.revert(dropped);
  EXPECT_TRUE(ws.versions()[dropped].resident());
  EXPECT_EQ(ir::structuralHash(ws.program()), hashes[dropped]);
  ws.undo();
  EXPECT_EQ(ir::structuralHash(ws.program()), hashes[dropped - 1]);
  for (int i = 0; i < 3; ++i)
    ws.redo();
  EXPECT_EQ(ir::structuralHash(ws.program()), hashes[dropped + 2]);
  ws.revert(n - 1);
  EXPECT_EQ(ir::structuralHash(ws.program()), hashes[n - 1]);
  EXPECT_FALSE(ws.versions()[dropped].resident());

  // A replayed recipe keeps as few, and ends where the history did.
  Workspace again(transformer());
  again.replay(ws.recipe());
  EXPECT_EQ(again.hash(), hashes[n - 1]);
  std::size_t replayedResident = 0;
  for (const Version &v : again.versions())
    replayedResident += v.resident();
  EXPECT_EQ(replayedResident, resident);
  EXPECT_EQ(ir::structuralHash(*again.versions()[dropped].program()),
            hashes[dropped]);
}

TEST_F(ResidentVersions, AVeryLongHistorySpacesItsCheckpointsFurther) {
  Workspace ws(transformer());
  EXPECT_EQ(ws.checkpointEvery(), Workspace::kCheckpointEvery);
  // Past kCheckpointEvery × kMaxCheckpoints versions, twice as far apart.
  const std::size_t steps =
      2 * Workspace::kCheckpointEvery * Workspace::kMaxCheckpoints + 40;
  std::vector<std::uint64_t> hashes = {ws.hash()};
  for (std::size_t i = 0; i < steps; ++i)
    hashes.push_back(ws.apply("test-count-symbols").hash());
  const std::size_t every = ws.checkpointEvery();
  EXPECT_EQ(every, 4 * Workspace::kCheckpointEvery);
  std::size_t resident = 0;
  for (std::size_t i = 0; i < ws.versions().size(); ++i) {
    const Version &v = ws.versions()[i];
    bool kept = i % every == 0 || i + Workspace::kRecent >= ws.current();
    EXPECT_EQ(v.resident(), kept) << "version " << i;
    resident += v.resident();
  }
  EXPECT_LE(resident, Workspace::kMaxCheckpoints + Workspace::kRecent + 2);
  // Any version still comes back as it was, from the nearest checkpoint.
  for (std::size_t i : {std::size_t(17), every - 1, every + 1, steps - 10})
    EXPECT_EQ(ir::structuralHash(*ws.versions()[i].program()), hashes[i])
        << "version " << i;
  // Undoing to a dropped version brings it back, and only it.
  ws.revert(every + 1);
  EXPECT_EQ(ir::structuralHash(ws.program()), hashes[every + 1]);
  EXPECT_FALSE(ws.versions()[every + 7].resident());
}

TEST_F(ResidentVersions, AStepThatDoesNotReplayExactlyKeepsItsResult) {
  Workspace ws(transformer());
  ws.apply("test-stamp-plugin");
  std::vector<std::uint64_t> hashes = {ws.versions()[0].hash(), ws.hash()};
  autoRecipe(ws, hashes);
  ASSERT_GT(ws.versions().size(), 2 * Workspace::kCheckpointEvery);
  // Version 1 is neither a checkpoint nor recent, and stays.
  EXPECT_TRUE(ws.versions()[1].resident());
  // Those after it are rebuilt from it, not by stamping again.
  for (std::size_t i : {std::size_t(2), std::size_t(5), std::size_t(12)}) {
    ASSERT_FALSE(ws.versions()[i].resident());
    EXPECT_EQ(ir::structuralHash(*ws.versions()[i].program()), hashes[i]);
  }
}

TEST_F(ResidentVersions, AStepThatComesBackDifferentIsAnError) {
  Workspace ws(transformer());
  ws.apply("test-stamp-claims-exact");
  std::vector<std::uint64_t> hashes = {ws.versions()[0].hash(), ws.hash()};
  autoRecipe(ws, hashes);
  ASSERT_FALSE(ws.versions()[1].resident());
  try {
    ws.versions()[1].program();
    FAIL() << "a different program came back unnoticed";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("version 1 (test-stamp-claims-exact) "
                                    "came back different"));
  }
  // Moving there fails the same way and changes nothing.
  const std::size_t current = ws.current();
  EXPECT_THROW(ws.revert(1), Error);
  EXPECT_EQ(ws.current(), current);
  EXPECT_EQ(ir::structuralHash(ws.program()), hashes.back());
  ws.undo();
  EXPECT_EQ(ir::structuralHash(ws.program()), hashes[current - 1]);
}

} // namespace
} // namespace weir::workspace
