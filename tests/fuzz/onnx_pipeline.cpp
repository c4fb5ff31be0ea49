#include "tests/fuzz/onnx_pipeline.h"

#include "codegen/cpu/compile.h"
#include "core/interp/interpreter.h"
#include "core/runtime/compare.h"
#include "core/runtime/random_tensor.h"
#include "ir/analysis.h"
#include "ir/limits.h"
#include "ir/print.h"
#include "ir/validate.h"
#include "onnx/import.h"
#include "tests/fuzz/harness.h"
#include "transforms/operators/expansion.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>

namespace weir::fuzz {
namespace {

/// Small enough that one input runs in well under a second: a mutated
/// dimension makes tensors large long before it makes them wrong.
ir::RunLimits fuzzLimits() {
  ir::RunLimits l;
  l.maxTensorBytes = std::int64_t(16) << 20;
  l.maxTransientBytes = std::int64_t(64) << 20;
  l.maxSymbolValue = 4096;
  return l;
}
/// Beyond this many FLOPs the input is not run (the interpreter manages a
/// few tens of millions a second).
constexpr double kMaxFlops = 2e7;
/// The interpreter stops after the top-level node that passes this.
constexpr std::chrono::milliseconds kInterpretBudget(1000);
/// Beyond this many nodes the JIT harness does not compile.
constexpr std::size_t kMaxJitNodes = 400;

/// With WEIR_FUZZ_VERBOSE set, says where an input stopped and why: a
/// replay then shows what its inputs reach.
void stopped(const char *stage, const std::string &why) {
  static const bool verbose = std::getenv("WEIR_FUZZ_VERBOSE") != nullptr;
  if (verbose)
    std::fprintf(stderr, "  stopped at %s: %s\n", stage, why.c_str());
}

bool outOfBounds(const std::string &message) {
  return message.find("out of bounds") != std::string::npos;
}

std::size_t nodeCount(const ir::Program &p) {
  std::size_t n = 0;
  for (const ir::State &s : p.states)
    n += s.nodes.size();
  return n;
}

} // namespace

void runOnnx(const std::uint8_t *data, std::size_t size, OnnxBackend backend) {
  std::filesystem::path path = scratchFile("model.onnx", text(data, size));
  ir::Program program;
  try {
    program = onnx_import::importModel(path).program;
  } catch (const Error &e) {
    stopped("import", e.what());
    return;
  }
  // What a user sees before running: the text form, the diagnostics, the
  // analysis. None of these may fail on a program import produced.
  (void)ir::print(program);
  (void)ir::validate(program);
  refusable([&] { (void)ir::analyze(program); });

  try {
    operators::ExpandAllReport expanded = operators::expandAll(program);
    if (!expanded.skipped.empty()) {
      stopped("expansion", expanded.skipped.front());
      return;
    }
    ir::requireRunnable(program);
  } catch (const Error &e) {
    stopped("expansion", e.what());
    return;
  }
  const ir::RunLimits limits = fuzzLimits();
  interp::TensorMap inputs;
  try {
    ir::checkRunLimits(program, {}, limits);
    ir::Bindings ones;
    for (const std::string &s : program.symbols)
      ones[s] = 1;
    // A count that needs a map's own parameter (a clipped pooling window)
    // does not evaluate; the buffer limits bound those programs instead.
    std::optional<double> flops;
    try {
      flops = static_cast<double>(ir::analyze(program).flops.evaluate(ones));
    } catch (const Error &) {
    }
    if (flops && *flops > kMaxFlops) {
      stopped("the FLOP cap", std::to_string(*flops) + " FLOPs");
      return;
    }
    std::mt19937_64 rng(7);
    for (const std::string &name : program.inputs)
      inputs[name] =
          runtime::randomTensor(program.container(name), ones, rng, "--dim");
  } catch (const Error &e) {
    stopped("inputs", e.what());
    return;
  }

  interp::InterpretOptions io;
  io.limits = limits;
  // Within a time budget, which the interpreter also checks inside a long
  // map: a few loops over a large range are cheap to describe and slow to
  // interpret.
  io.deadline = std::chrono::steady_clock::now() + kInterpretBudget;
  std::optional<interp::TensorMap> reference;
  std::string referenceError;
  try {
    reference = interp::interpret(program, inputs, io);
  } catch (const interp::DeadlinePassed &) {
    stopped("the interpreter's time budget", "");
    return;
  } catch (const Error &e) {
    referenceError = e.what();
    stopped("the interpreter", referenceError);
  }
  if (backend == OnnxBackend::Interpreter)
    return;
  if (nodeCount(program) > kMaxJitNodes) {
    stopped("the JIT's node cap", std::to_string(nodeCount(program)));
    return;
  }

  codegen::CompileOptions co;
  co.threads = 1;
  co.compileThreads = 1;
  co.useCache = false;
  co.keepLLVMIR = false;
  co.limits = limits;
  codegen::RunOptions ro;
  ro.limits = limits;
  interp::TensorMap outputs;
  try {
    outputs = codegen::compile(program, co).run(inputs, ro);
  } catch (const Error &e) {
    stopped("the JIT", e.what());
    // The JIT may refuse what the interpreter refused, and may refuse to
    // compile; it may not fail a run the interpreter finished.
    require(!reference || !outOfBounds(e.what()),
            std::string("the JIT's bounds guard fired where the interpreter "
                        "found every access in bounds: ") +
                e.what());
    return;
  }
  // The interpreter checks every access; when it found one out of bounds,
  // a JIT run that finished skipped a guard the proof should have kept.
  require(!outOfBounds(referenceError),
          "the interpreter found an access out of bounds, the JIT ran "
          "anyway: " +
              referenceError);
  if (!reference)
    return;
  for (const std::string &name : program.outputs) {
    runtime::Comparison c = runtime::compareTensors(
        outputs.at(name), reference->at(name), 1e-2, 1e-3);
    require(c.ok,
            "output '" + name +
                "' of the JIT differs from the "
                "interpreter's: " +
                (c.problem.empty()
                     ? std::to_string(c.mismatches) + " elements, worst " +
                           std::to_string(c.worstGot) + " vs " +
                           std::to_string(c.worstWant)
                     : c.problem));
  }
}

} // namespace weir::fuzz
