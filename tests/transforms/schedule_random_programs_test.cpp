// The scheduling helpers on the code-generation tests' random programs
// (stencils that read ahead of their writes, windows, sums into slices,
// updates in place, symbolic sizes): every match each helper accepts is
// applied alone and must give the interpreter's outputs bit for bit; a
// program with every parallelize (and one with every vectorize) applied
// must also give them on the JIT compiled to run even small maps on two
// threads. This is what tests the independence analysis against programs
// nobody wrote for it.
//
// random_program.cpp belongs to weir_codegen_tests; it is compiled into
// this file so the workspace tests need no second library of test helpers.

#include "codegen/cpu/compile.h"
#include "codegen/random_program.cpp"
#include "core/interp/interpreter.h"
#include "ir/print.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>

namespace weir::transforms_testing {
namespace {

using transforms::Match;
using transforms::Params;

/// The same bits, or both NaN; with `loose`, also both zero (the JIT may
/// give -0 for +0 and another NaN, as the differential tests allow).
std::optional<std::string> difference(const interp::TensorMap &want,
                                      const interp::TensorMap &got,
                                      bool loose) {
  for (const auto &[name, w] : want) {
    const runtime::Tensor &g = got.at(name);
    if (g.byteSize() != w.byteSize())
      return "output '" + name + "' changed size";
    std::size_t size = ir::dtypeSize(w.dtype());
    for (std::int64_t i = 0; i < w.elementCount(); ++i) {
      const std::byte *a = w.data() + i * size, *b = g.data() + i * size;
      if (std::memcmp(a, b, size) == 0)
        continue;
      if (ir::isFloat(w.dtype())) {
        double x = w.getAsDouble(i), y = g.getAsDouble(i);
        if ((std::isnan(x) && std::isnan(y)) || (loose && x == 0 && y == 0))
          continue;
      }
      return "output '" + name + "' differs at flat index " + std::to_string(i);
    }
  }
  return std::nullopt;
}

struct Variant {
  const char *name;
  const char *id;
  Params params;
};

TEST(ScheduleFuzz, RandomProgramsKeepTheirResults) {
  const std::vector<Variant> variants = {
      {"interchange 0,1", "map-interchange", {}},
      {"interchange 0,2", "map-interchange", {{"first", 0}, {"second", 2}}},
      {"interchange 2,1,0",
       "map-interchange",
       {{"permutation", transforms::IntList{2, 1, 0}}}},
      {"interchange nested", "map-interchange", {{"nested", true}}},
      {"collapse", "map-collapse", {}},
      {"parallelize", "parallelize", {}},
      {"parallelize outermost", "parallelize", {{"outermost", true}}},
      {"vectorize", "vectorize", {}}};
  std::map<std::string, int> applied;
  int programs = 0, compiled = 0;
  codegen::CompileOptions eager;
  eager.lower.minParallelIterations = 1;
  eager.threads = 2;
  eager.useCache = false;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    ir::Program p = randprog::randomProgram(seed);
    interp::TensorMap in = randprog::randomInputs(p, seed);
    interp::TensorMap want;
    try {
      want = interp::interpret(p, in);
    } catch (const Error &) {
      continue; // the program itself fails (the differential tests say why)
    }
    ++programs;
    std::string context = "seed " + std::to_string(seed) + "\n" + ir::print(p);
    for (const Variant &v : variants) {
      const transforms::Transformation &t =
          *transforms::requireTransformation(v.id);
      for (const Match &m : transforms::findMatches(p, t)) {
        if (!transforms::checkMatch(p, t, m, v.params))
          continue;
        ir::Program q = transforms::applyChecked(p, t, m, v.params).program;
        ++applied[v.name];
        auto diff = difference(want, interp::interpret(q, in), false);
        EXPECT_FALSE(diff) << v.name << " at " << m.str() << ": " << *diff
                           << "\n"
                           << context << "after:\n"
                           << ir::print(q);
      }
    }
    // Every map parallelized (then vectorized) at once, on the JIT.
    for (const char *id : {"parallelize", "vectorize"}) {
      const transforms::Transformation &t =
          *transforms::requireTransformation(id);
      ir::Program q = p;
      int steps = 0;
      for (const Params &params : {Params{}, std::string(id) == "parallelize"
                                                 ? Params{{"outermost", true}}
                                                 : Params{}})
        for (const Match &m : transforms::findMatches(q, t))
          if (transforms::checkMatch(q, t, m, params)) {
            q = transforms::applyChecked(q, t, m, params).program;
            ++steps;
          }
      if (steps == 0)
        continue;
      ++compiled;
      codegen::Executable exe = codegen::compile(q, eager);
      auto diff = difference(want, exe.run(in), true);
      EXPECT_FALSE(diff) << id << " everywhere (" << steps
                         << " maps): " << *diff << "\n"
                         << context << "loop IR:\n"
                         << exe.loopIR();
    }
  }
  std::cout << "[ schedule fuzz ] " << programs << " random programs, "
            << compiled << " compiled after parallelize/vectorize;";
  for (const auto &[what, n] : applied)
    std::cout << " " << what << " " << n << ";";
  std::cout << "\n";
  EXPECT_GT(programs, 100);
  EXPECT_GT(applied.size(), 5u);
}

} // namespace
} // namespace weir::transforms_testing
