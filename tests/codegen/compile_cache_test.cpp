/// \file
/// The compile cache on disk (codegen/cpu/object_cache.h): a hit returns
/// the code a miss made; corrupt, truncated or foreign entries are rebuilt,
/// never trusted; writers racing on one folder leave only whole entries;
/// the size limit evicts the least recently used. (Two processes filling
/// one cache: tests/cli/compile_cache_test.cmake.)

#include "codegen/cpu/compile.h"
#include "codegen/cpu/object_cache.h"
#include "codegen/cpu/piece_compiler.h"
#include "core/interp/interpreter.h"
#include "onnx/import.h"
#include "transforms/operators/expansion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <unistd.h>

namespace weir {
namespace {

namespace fs = std::filesystem;
using codegen::cpu::CachedObject;
using codegen::cpu::CompiledPiece;
using codegen::cpu::ObjectCache;

/// A fresh folder under the system's temporary directory, removed after.
class TempFolder {
public:
  TempFolder() {
    path_ = fs::temp_directory_path() /
            ("weir-cache-test-" + std::to_string(::getpid()) + "-" +
             std::to_string(counter_++));
    fs::remove_all(path_);
  }
  ~TempFolder() { fs::remove_all(path_); }
  const fs::path &path() const { return path_; }

private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::vector<fs::path> entries(const fs::path &folder) {
  std::vector<fs::path> out;
  for (const auto &e : fs::directory_iterator(folder))
    if (e.path().extension() == ".wobj")
      out.push_back(e.path());
  return out;
}

std::string readAll(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void writeAll(const fs::path &p, const std::string &bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

ir::Program expandedCnn() {
  ir::Program p = onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                           "/resources/models/cnn.onnx")
                      .program;
  operators::expandAll(p);
  return p;
}

std::vector<CompiledPiece> compileCnn(const ObjectCache &cache) {
  codegen::LoopFunction f = codegen::lower(expandedCnn());
  codegen::cpu::PieceCompileOptions o;
  o.cache = &cache;
  o.keepIR = true;
  return codegen::cpu::compilePieces(codegen::cpu::cutIntoPieces(f).pieces,
                                     o);
}

// ----------------------------------------------------------- the store --

TEST(ObjectCache, RoundTripsAnEntry) {
  TempFolder dir;
  ObjectCache cache(dir.path(), 1 << 20);
  EXPECT_FALSE(cache.load("k1"));
  const std::string object("object bytes\0with a zero", 24);
  cache.store("k1", {object, "ir"});
  std::optional<CachedObject> hit = cache.load("k1");
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->object, object);
  EXPECT_EQ(hit->optimizedIR, "ir");
  EXPECT_FALSE(cache.load("k2"));
}

TEST(ObjectCache, IgnoresDamagedEntries) {
  TempFolder dir;
  ObjectCache cache(dir.path(), 1 << 20);
  cache.store("k", {std::string(1000, 'x'), ""});
  fs::path file = entries(dir.path()).at(0);
  const std::string good = readAll(file);
  // Truncated anywhere, one byte flipped anywhere, or another key's entry
  // under this name: never a hit.
  for (std::size_t cut : {std::size_t(0), std::size_t(5), std::size_t(24),
                          good.size() / 2, good.size() - 1}) {
    writeAll(file, good.substr(0, cut));
    EXPECT_FALSE(cache.load("k")) << "truncated to " << cut;
  }
  for (std::size_t at : {std::size_t(3), std::size_t(10), std::size_t(20),
                         std::size_t(40), good.size() - 1}) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x20);
    writeAll(file, bad);
    EXPECT_FALSE(cache.load("k")) << "byte " << at << " flipped";
  }
  writeAll(file, good + "trailing");
  EXPECT_FALSE(cache.load("k"));
  cache.store("other", {"y", ""});
  fs::copy_file(dir.path() / "other.wobj", file,
                fs::copy_options::overwrite_existing);
  EXPECT_FALSE(cache.load("k")) << "an entry stored for another key";
  writeAll(file, good);
  EXPECT_TRUE(cache.load("k"));
}

TEST(ObjectCache, RacingWritersLeaveOnlyWholeEntries) {
  TempFolder dir;
  ObjectCache cache(dir.path(), 1 << 30);
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        // Same key, different (valid) contents of different lengths.
        cache.store("shared", {std::string(1000 + 97 * t, char('a' + t)), ""});
        std::optional<CachedObject> e = cache.load("shared");
        ASSERT_TRUE(e);
        ASSERT_GE(e->object.size(), 1000u);
        ASSERT_EQ(e->object, std::string(e->object.size(), e->object[0]));
      }
    });
  for (std::thread &t : writers)
    t.join();
  EXPECT_EQ(entries(dir.path()).size(), 1u);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto &e : fs::directory_iterator(dir.path()))
    ++files;
  EXPECT_EQ(files, 1u) << "no temporary file is left behind";
}

TEST(ObjectCache, TrimsTheLeastRecentlyUsed) {
  TempFolder dir;
  ObjectCache cache(dir.path(), 2500);
  for (const char *k : {"a", "b", "c"})
    cache.store(k, {std::string(1000, 'x'), ""});
  auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(dir.path() / "a.wobj", old - std::chrono::minutes(2));
  fs::last_write_time(dir.path() / "b.wobj", old - std::chrono::minutes(1));
  fs::last_write_time(dir.path() / "c.wobj", old);
  EXPECT_TRUE(cache.load("a")); // a hit makes "a" the most recent
  cache.trim();
  EXPECT_TRUE(cache.load("a"));
  EXPECT_FALSE(cache.load("b"));
  EXPECT_TRUE(cache.load("c"));
}

TEST(ObjectCache, CommandsTrimAtMostEveryTenMinutes) {
  TempFolder dir;
  ObjectCache cache(dir.path(), 2500);
  for (const char *k : {"a", "b", "c"})
    cache.store(k, {std::string(1000, 'x'), ""});
  cache.trimIfDue(); // no stamp yet: trims
  EXPECT_EQ(entries(dir.path()).size(), 2u);
  ASSERT_TRUE(fs::exists(dir.path() / "trim.stamp"));
  for (const char *k : {"d", "e"})
    cache.store(k, {std::string(1000, 'x'), ""});
  cache.trimIfDue(); // trimmed a moment ago: not yet
  EXPECT_EQ(entries(dir.path()).size(), 4u);
  fs::last_write_time(dir.path() / "trim.stamp",
                      fs::file_time_type::clock::now() -
                          ObjectCache::kTrimEvery - std::chrono::minutes(1));
  cache.trimIfDue();
  EXPECT_EQ(entries(dir.path()).size(), 2u);
}

// ------------------------------------------------- compiled pieces in it --

TEST(CompileCache, AHitReturnsTheCodeAMissMade) {
  TempFolder dir;
  ObjectCache cache(dir.path(), 1ull << 30);
  std::vector<CompiledPiece> miss = compileCnn(cache);
  std::vector<CompiledPiece> hit = compileCnn(cache);
  ASSERT_EQ(miss.size(), hit.size());
  ASSERT_GT(miss.size(), 1u);
  for (std::size_t i = 0; i < miss.size(); ++i) {
    EXPECT_FALSE(miss[i].fromCache);
    EXPECT_TRUE(hit[i].fromCache) << "piece " << i;
    EXPECT_EQ(hit[i].symbol, miss[i].symbol);
    EXPECT_EQ(hit[i].object, miss[i].object) << "piece " << i;
    EXPECT_EQ(hit[i].optimizedIR, miss[i].optimizedIR);
  }
  // And a program compiled from cached pieces computes what the
  // interpreter does.
  ::setenv("WEIR_CACHE_DIR", dir.path().c_str(), 1);
  codegen::forgetCompilations();
  ir::Program p = expandedCnn();
  codegen::Executable exe = codegen::compile(p);
  EXPECT_EQ(exe.cachedPieceCount(), exe.pieceCount());
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> real(-1, 1);
  interp::TensorMap in;
  for (const std::string &name : p.inputs) {
    std::vector<std::int64_t> shape;
    for (const ir::Expr &d : p.container(name).shape)
      shape.push_back(d.evaluate());
    runtime::Tensor t(ir::DType::F32, shape);
    for (std::int64_t i = 0; i < t.elementCount(); ++i)
      t.setFromDouble(i, real(rng));
    in[name] = t;
  }
  // OpenBLAS sums in its own order: equal to rounding.
  interp::TensorMap got = exe.run(in), want = interp::interpret(p, in);
  for (const auto &[name, w] : want)
    for (std::int64_t i = 0; i < w.elementCount(); ++i)
      ASSERT_NEAR(got.at(name).getAsDouble(i), w.getAsDouble(i),
                  1e-4 * (1 + std::abs(w.getAsDouble(i))))
          << name << "[" << i << "]";
}

TEST(CompileCache, CorruptOrTruncatedEntriesAreRebuilt) {
  TempFolder dir;
  ObjectCache cache(dir.path(), 1ull << 30);
  std::vector<CompiledPiece> first = compileCnn(cache);
  std::vector<fs::path> files = entries(dir.path());
  ASSERT_EQ(files.size(), first.size());
  // Damage every other entry: truncate one, scribble over the next.
  for (std::size_t i = 0; i < files.size(); i += 2) {
    std::string bytes = readAll(files[i]);
    if (i % 4 == 0)
      writeAll(files[i], bytes.substr(0, bytes.size() / 3));
    else
      writeAll(files[i], std::string(bytes.size(), '\x7f'));
  }
  std::vector<CompiledPiece> again = compileCnn(cache);
  int rebuilt = 0;
  for (std::size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i].object, first[i].object) << "piece " << i;
    rebuilt += again[i].fromCache ? 0 : 1;
  }
  EXPECT_EQ(rebuilt, static_cast<int>((files.size() + 1) / 2));
  // Rebuilt entries were stored again, whole.
  for (const CompiledPiece &p : compileCnn(cache))
    EXPECT_TRUE(p.fromCache);
}

} // namespace
} // namespace weir
