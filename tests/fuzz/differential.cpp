/// \file
/// Differential fuzzing: random subjects through random sequences of
/// transformations, undo, redo and revert in a workspace. A subject is, in
/// turn, a random ONNX model (random_model.h) as imported, the same with
/// every operator expanded, or a random dataflow program of maps and
/// tasklets (tests/codegen/random_program.h).
///
///   weir_differential_fuzz [SEQUENCES=1000] [STEPS=20] [SEED=1]
///
/// At every step: the program validates; after an undo, redo or revert its
/// hash is the one that version had. For every version the sequence
/// reaches (each distinct hash once): the JIT agrees with the reference
/// interpreter on seeded inputs, and Workspace::verify finds the version
/// equivalent to the imported model within the tolerance its steps declare.
/// Prints what it did; on a failure prints the model's seed and the recipe
/// that led there, and exits 1.

#include "codegen/cpu/compile.h"
#include "core/interp/interpreter.h"
#include "core/runtime/compare.h"
#include "core/runtime/random_tensor.h"
#include "ir/hash.h"
#include "ir/validate.h"
#include "onnx/import.h"
#include "tests/codegen/random_program.h"
#include "tests/fuzz/harness.h"
#include "tests/fuzz/random_model.h"
#include "transforms/operators/expansion.h"
#include "transforms/registry.h"
#include "workspace/recipe.h"
#include "workspace/workspace.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace weir;

namespace {

struct Counts {
  int applied = 0, refused = 0, undone = 0, redone = 0, reverted = 0;
  int versions = 0, bitIdentical = 0;
  std::map<std::string, int> byTransformation; ///< applied steps
};

/// What a sequence starts from, and the inputs every version runs on.
struct Subject {
  std::string what; ///< how to make it again, for a failure's message
  ir::Program program;
  interp::TensorMap inputs;
  /// Symbols the inputs' shapes do not bind (random programs have some).
  ir::Bindings symbols;
};

Subject subject(int seq, std::uint64_t seed) {
  if (seq % 3 == 2) {
    Subject s{"randprog::randomProgram(" + std::to_string(seed) + ")",
              randprog::randomProgram(seed),
              {}};
    s.inputs = randprog::randomInputs(s.program, 11);
    s.symbols = randprog::symbolsOf(s.program);
    return s;
  }
  Subject s{"randomModel(" + std::to_string(seed) + ")",
            onnx_import::importModel(
                fuzz::scratchFile("random.onnx", fuzz::randomModel(seed)))
                .program,
            {}};
  // Every other model starts expanded, so that its steps reach the fusion
  // and data-movement tiers, not only expansion.
  if (seq % 3 == 1) {
    operators::expandAll(s.program);
    s.what += ", expanded";
  }
  s.inputs = runtime::randomInputs(s.program, 11);
  return s;
}

[[noreturn]] void fail(const Subject &subject, const workspace::Workspace &ws,
                       const std::string &what) {
  std::fprintf(stderr,
               "differential fuzz: %s\n  subject: %s\n  recipe to this "
               "version:\n%s\n",
               what.c_str(), subject.what.c_str(), ws.recipe().dump().c_str());
  std::exit(1);
}

/// The JIT against the interpreter, then the version against the subject.
void checkVersion(const Subject &subject, const workspace::Workspace &ws,
                  Counts &counts) {
  ir::Program program = ws.program();
  operators::ExpandAllReport expanded = operators::expandAll(program);
  if (!expanded.skipped.empty())
    fail(subject, ws, "cannot expand: " + expanded.skipped.front());
  interp::InterpretOptions io;
  io.symbols = subject.symbols;
  interp::TensorMap reference = interp::interpret(program, subject.inputs, io);
  codegen::CompileOptions options;
  options.threads = 1;
  options.compileThreads = 1;
  options.keepLLVMIR = false;
  codegen::RunOptions ro;
  ro.symbols = subject.symbols;
  interp::TensorMap outputs =
      codegen::compile(program, options).run(subject.inputs, ro);
  bool identical = true;
  for (const std::string &name : program.outputs) {
    runtime::Comparison c = runtime::compareTensors(
        outputs.at(name), reference.at(name), 1e-3, 1e-4);
    if (!c.ok)
      fail(subject, ws,
           "the JIT and the interpreter differ on output '" + name + "': " +
               (c.problem.empty()
                    ? std::to_string(c.mismatches) +
                          " elements, max abs error " + std::to_string(c.maxAbs)
                    : c.problem));
    identical &= c.maxAbs == 0;
  }
  workspace::VerifyOptions vo;
  vo.threads = 1;
  vo.inputs = subject.inputs;
  vo.dims = subject.symbols;
  workspace::VerifyReport report = ws.verify(vo);
  if (!report.ok)
    fail(subject, ws, "the version differs from the subject: " + report.str());
  ++counts.versions;
  counts.bitIdentical += identical;
}

} // namespace

int main(int argc, char **argv) {
  const int sequences = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
  const std::uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  std::vector<std::string> ids;
  for (const auto &t : transforms::transformations())
    if (t->id().rfind("test-", 0) != 0)
      ids.push_back(std::string(t->id()));
  std::mt19937_64 rng(seed);
  Counts counts;
  auto began = std::chrono::steady_clock::now();
  for (int seq = 0; seq < sequences; ++seq) {
    const Subject start = subject(seq, seed * 1000003 + seq);
    workspace::Workspace ws(start.program);
    std::vector<std::uint64_t> hashes = {ws.hash()}; // mirror of versions
    std::size_t current = 0;
    std::set<std::uint64_t> checked;
    auto visit = [&] {
      if (ir::hasErrors(ir::validate(ws.program())))
        fail(start, ws, "the program does not validate");
      if (ws.hash() != hashes[current] ||
          ir::structuralHash(ws.program()) != hashes[current])
        fail(start, ws, "the version's hash is not the one it had");
      if (checked.insert(ws.hash()).second) {
        try {
          checkVersion(start, ws, counts);
        } catch (const Error &e) {
          fail(start, ws,
               std::string("running the version failed: ") + e.what());
        }
      }
    };
    visit();
    for (int step = 0; step < steps; ++step) {
      int action = static_cast<int>(rng() % 10);
      if (action < 6) {
        // A transformation that has somewhere to apply (the workspace
        // caches matches, so asking all of them is cheap).
        std::vector<std::string> applicable;
        for (const std::string &id : ids)
          if (!ws.matches(id).empty())
            applicable.push_back(id);
        if (applicable.empty())
          continue;
        const std::string &id = applicable[rng() % applicable.size()];
        std::vector<transforms::Match> matches = ws.matches(id);
        const transforms::Match m = matches[rng() % matches.size()];
        std::uint64_t before = ws.hash();
        const workspace::Version *applied = nullptr;
        try {
          applied = ws.tryApply(id, m);
        } catch (const Error &e) {
          fail(start, ws, id + " at " + m.str() + " failed: " + e.what());
        }
        if (!applied) {
          if (ws.hash() != before)
            fail(start, ws, "a refused " + id + " changed the program");
          ++counts.refused;
          continue;
        }
        hashes.resize(current + 1);
        hashes.push_back(ir::structuralHash(ws.program()));
        ++current;
        ++counts.applied;
        ++counts.byTransformation[id];
      } else if (action < 8) {
        if (!ws.canUndo())
          continue;
        ws.undo();
        --current;
        ++counts.undone;
      } else if (action < 9) {
        if (!ws.canRedo())
          continue;
        ws.redo();
        ++current;
        ++counts.redone;
      } else {
        current = rng() % hashes.size();
        ws.revert(current);
        ++counts.reverted;
      }
      visit();
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began)
          .count();
  std::printf("differential fuzz: %d sequences of %d steps (seed %llu) in "
              "%.0f s: %d applied, %d refused, %d undone, %d redone, %d "
              "reverted; %d versions run by the interpreter and the JIT (%d "
              "bit-identical) and verified against their model: 0 "
              "mismatches\n",
              sequences, steps, static_cast<unsigned long long>(seed), seconds,
              counts.applied, counts.refused, counts.undone, counts.redone,
              counts.reverted, counts.versions, counts.bitIdentical);
  std::printf("applied:");
  for (const auto &[id, n] : counts.byTransformation)
    std::printf(" %s %d", id.c_str(), n);
  std::printf("\n");
  return 0;
}
