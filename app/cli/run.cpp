/// \file
/// `weir run MODEL [options]`: import, expand every operator, compile for the
/// CPU (or run on the reference interpreter), compare with expected outputs
/// and, with --check, with the interpreter.

#include "app/cli/commands.h"
#include "app/cli/load.h"
#include "app/cli/options.h"
#include "app/cli/progress.h"
#include "codegen/cpu/compile.h"
#include "core/interp/interpreter.h"
#include "core/runtime/compare.h"
#include "core/runtime/npy.h"
#include "core/runtime/random_tensor.h"
#include "ir/limits.h"
#include "core/runtime/tensor_pb.h"
#include "ir/atomic_file.h"
#include "ir/error.h"
#include "transforms/operators/expansion.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <random>

namespace weir::cli {
namespace {

using runtime::compareTensors;
using runtime::Comparison;

struct RunOptions {
  std::string model;
  std::map<std::string, std::string> inputs;   ///< name -> file
  std::map<std::string, std::string> expected; ///< name -> file
  std::map<std::string, std::string> impl;     ///< op -> implementation
  ir::Bindings dims;
  std::uint64_t seed = 0;
  double rtol = 1e-3, atol = 1e-4;
  std::string saveDir;
  int threads = 0;
  std::string loopIRFile; ///< --loop-ir: where to write the loop IR
  codegen::cpu::GemmEngine gemm = codegen::cpu::GemmEngine::Auto;
  int repeat = 1;
  bool interpreter = false; ///< run on the reference interpreter only
  bool check = false;       ///< also run the interpreter and compare
  bool profile = false;     ///< time each loop nest; print the slowest
  bool checked = false;     ///< bounds-check every access in generated code
};

} // namespace

const CommandSpec &runSpec() {
  using K = OptionKind;
  static const CommandSpec spec{
      "run",
      "MODEL",
      "expand every operator, compile the model for the CPU (LLVM JIT) and "
      "run it",
      {{"--inputs", K::Pairs, "NAME=FILE ...",
        "input tensors (.npy or ONNX .pb); the others are seeded random", "", 0,
        true},
       {"--random", K::Count, "SEED", "the seed of the random inputs (0)", "",
        0, false, std::numeric_limits<std::int64_t>::max()},
       {"--expected", K::Pairs, "NAME=FILE ...",
        "compare outputs; exit 1 when one differs by more than --atol A + "
        "--rtol R * |expected|",
        "", 0, true},
       {"--rtol", K::Number, "R", "relative tolerance (1e-3)"},
       {"--atol", K::Number, "A", "absolute tolerance (1e-4)"},
       {"--dim", K::Pair, "NAME=N",
        "value of a symbolic dimension (batch size; repeatable); an ONNX "
        "model's shape computations are specialized to it at load",
        "", 0, true},
       {"--impl", K::Pair, "OP=IMPL",
        "choose an operator's expansion (repeatable)", "", 0, true},
       {"--save-outputs", K::Text, "DIR", "write each output as DIR/NAME.npy"},
       {"--threads", K::Count, "N",
        "threads for parallel loops (0: all cores)"},
       {"--loop-ir", K::Text, "FILE", "write the loop IR the backend compiled"},
       {"--gemm", K::Text, "auto|weir|openblas",
        "what runs GEMMs: OpenBLAS (auto) or Weir's own AVX-512 micro-kernel "
        "(weir)"},
       {"--repeat", K::Count, "N",
        "run N times after one warm-up run; print the median time", "", 1},
       {"--check", K::Flag, "",
        "also run the reference interpreter and compare (exit 1 on a "
        "mismatch)"},
       {"--interpreter", K::Flag, "",
        "run on the reference interpreter instead"},
       {"--checked", K::Flag, "",
        "bounds-check every load and store in the generated code, not only "
        "those not proven in bounds (for debugging; slower)"},
       {"--profile", K::Flag, "",
        "time every loop nest and library call; print the slowest"}}};
  return spec;
}

namespace {

RunOptions parse(const Args &args) {
  ParsedArgs a = parseArgs(runSpec(), args);
  RunOptions o;
  o.model = a.operands()[0];
  for (auto &[name, file] : a.pairs("--inputs"))
    o.inputs.emplace(name, file);
  for (auto &[name, file] : a.pairs("--expected"))
    o.expected.emplace(name, file);
  for (auto &[op, impl] : a.pairs("--impl"))
    o.impl.emplace(op, impl);
  for (auto &[name, value] : a.pairs("--dim")) {
    char *end = nullptr;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (*end != '\0' || v < 0)
      throw UsageError{"run: --dim takes NAME=N with N >= 0, got '" + name +
                       "=" + value + "'"};
    o.dims[name] = v;
  }
  o.seed = static_cast<std::uint64_t>(a.count("--random").value_or(0));
  o.rtol = a.number("--rtol").value_or(o.rtol);
  o.atol = a.number("--atol").value_or(o.atol);
  o.loopIRFile = a.text("--loop-ir").value_or("");
  if (auto g = a.text("--gemm")) {
    auto e = codegen::cpu::parseGemmEngine(*g);
    if (!e)
      throw UsageError{"run: --gemm takes auto, weir or openblas, got '" + *g +
                       "'"};
    o.gemm = *e;
  }
  o.threads = static_cast<int>(a.count("--threads").value_or(0));
  o.repeat = static_cast<int>(a.count("--repeat").value_or(1));
  o.interpreter = a.flag("--interpreter");
  o.check = a.flag("--check");
  o.checked = a.flag("--checked");
  o.profile = a.flag("--profile");
  o.saveDir = a.text("--save-outputs").value_or("");
  return o;
}

runtime::Tensor readTensorFile(const std::string &path) {
  if (std::filesystem::path(path).extension() == ".npy")
    return runtime::readNpy(path);
  return runtime::readTensorPb(path);
}

/// The regions that took longest, per run, with their share.
void printProfile(const std::map<std::string, double> &seconds, int runs) {
  std::vector<std::pair<double, std::string>> rows;
  double total = 0;
  for (const auto &[label, s] : seconds) {
    rows.push_back({s / runs, label});
    total += s / runs;
  }
  std::sort(rows.rbegin(), rows.rend());
  std::printf("profile      %.3f ms in %zu timed regions (mean per run); the "
              "slowest:\n",
              total * 1e3, rows.size());
  for (std::size_t i = 0; i < rows.size() && i < 25; ++i)
    std::printf("  %9.3f ms %5.1f%%  %s\n", rows[i].first * 1e3,
                total > 0 ? 100 * rows[i].first / total : 0.0,
                rows[i].second.c_str());
  // By kind of region: the map's own name after the node's ("conv1.gemm"
  // counts as "gemm").
  std::map<std::string, double> byKind;
  for (const auto &[s, label] : rows)
    byKind[label.substr(label.find_last_of('.') + 1)] += s;
  std::vector<std::pair<double, std::string>> kinds;
  for (const auto &[kind, s] : byKind)
    kinds.push_back({s, kind});
  std::sort(kinds.rbegin(), kinds.rend());
  std::printf("  by kind:");
  for (std::size_t i = 0; i < kinds.size() && i < 10; ++i)
    std::printf("%s %s %.3f ms", i ? "," : "", kinds[i].second.c_str(),
                kinds[i].first * 1e3);
  std::printf("\n");
}

/// The values of the inputs that decide sizes, read from --inputs: the
/// model is loaded again with them fixed (onnx/shape_inputs.h).
std::map<std::string, ir::TensorValue, std::less<>>
shapeInputValues(const RunOptions &o, const onnx_import::ImportReport &report) {
  std::map<std::string, ir::TensorValue, std::less<>> values;
  for (const onnx_import::ShapeInput &s : report.shapeInputs) {
    auto given = o.inputs.find(s.name);
    if (given == o.inputs.end())
      throw Error(o.model + ": input '" + s.name + "' decides sizes (it is " +
                  s.decides + "); give its value with --inputs " + s.name +
                  "=FILE");
    values[s.name] = readTensorFile(given->second).value();
  }
  return values;
}

} // namespace

int runCommand(const Args &args) {
  RunOptions o = parse(args);
  auto openStart = std::chrono::steady_clock::now();
  Loaded loaded = loadAny(o.model, o.dims);
  std::map<std::string, ir::TensorValue, std::less<>> fixed;
  if (!loaded.report.shapeInputs.empty()) {
    fixed = shapeInputValues(o, loaded.report);
    loaded = loadAny(o.model, o.dims, fixed);
  }
  double openMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - openStart)
                      .count();
  ir::Program &program = loaded.program;

  operators::ExpandAllReport expanded = operators::expandAll(program, o.impl);
  if (!expanded.skipped.empty())
    throw Error(o.model +
                ": cannot run yet: " + std::to_string(expanded.skipped.size()) +
                " operators have no expansion (first: " +
                expanded.skipped.front() + ")");

  // Before any input is made: a --dim too large is refused, not allocated.
  ir::checkRunLimits(program, o.dims);
  interp::TensorMap inputs;
  std::mt19937_64 rng(o.seed);
  for (const std::string &name : program.inputs) {
    auto given = o.inputs.find(name);
    inputs[name] = given != o.inputs.end()
                       ? readTensorFile(given->second)
                       : runtime::randomTensor(program.container(name), o.dims,
                                               rng, "--dim");
  }
  for (const auto &[name, file] : o.inputs)
    if (!fixed.count(name) &&
        (!program.findContainer(name) ||
         std::find(program.inputs.begin(), program.inputs.end(), name) ==
             program.inputs.end()))
      throw Error("--inputs names '" + name + "', which is not an input of " +
                  o.model);

  interp::InterpretOptions options;
  options.symbols = o.dims;
  using Clock = std::chrono::steady_clock;
  auto msSince = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  interp::TensorMap outputs;
  std::vector<double> times;
  double compileMs = 0;
  int pieces = 0, cachedPieces = 0, sharedPieces = 0;
  int threads = 1;
  std::string gemmName;
  if (o.interpreter) {
    for (int r = 0; r < o.repeat; ++r) {
      auto start = Clock::now();
      outputs = interp::interpret(program, inputs, options);
      times.push_back(msSince(start));
    }
  } else {
    codegen::CompileOptions co;
    co.threads = o.threads;
    co.gemm = o.gemm;
    co.profile = o.profile;
    co.lower.checkAllAccesses = o.checked;
    co.keepLLVMIR = false;
    auto start = Clock::now();
    std::optional<codegen::Executable> compiled;
    {
      Progress progress("compiling");
      co.progress = [&](int done, int total) {
        progress.update(done, total, "pieces");
      };
      compiled = codegen::compile(program, co);
    }
    codegen::Executable exe = std::move(*compiled);
    compileMs = msSince(start);
    pieces = exe.pieceCount();
    cachedPieces = exe.cachedPieceCount();
    sharedPieces = exe.sharedPieceCount();
    threads = exe.threads();
    if (!o.loopIRFile.empty())
      writeFileAtomically(o.loopIRFile, exe.loopIR());
    gemmName = std::string(codegen::cpu::gemmEngineName(exe.gemmEngine()));
    codegen::RunOptions ro;
    ro.symbols = o.dims;
    std::vector<codegen::ProfileEntry> profile;
    std::map<std::string, double> perNode; // summed over runs
    if (o.profile)
      ro.profile = &profile;
    // With repeats, one untimed run first: the first run pays for page
    // faults and cold caches that later runs reuse.
    if (o.repeat > 1)
      outputs = exe.run(inputs, ro);
    profile.clear();
    for (int r = 0; r < o.repeat; ++r) {
      auto begin = Clock::now();
      outputs = exe.run(inputs, ro);
      times.push_back(msSince(begin));
      for (const codegen::ProfileEntry &e : profile)
        perNode[e.label] += e.seconds;
    }
    if (o.profile)
      printProfile(perNode, o.repeat);
  }
  std::sort(times.begin(), times.end());
  double ms = times[times.size() / 2];

  interp::TensorMap reference;
  double referenceMs = 0;
  if (o.check && !o.interpreter) {
    auto start = Clock::now();
    reference = interp::interpret(program, inputs, options);
    referenceMs = msSince(start);
  }

  bool allOk = true;
  for (const std::string &name : program.outputs) {
    const runtime::Tensor &t = outputs.at(name);
    std::printf("%-24s %s", name.c_str(), t.describe().c_str());
    if (auto it = o.expected.find(name); it != o.expected.end()) {
      runtime::Tensor want = readTensorFile(it->second);
      Comparison e = compareTensors(t, want, o.rtol, o.atol);
      allOk &= e.ok;
      if (!e.problem.empty())
        std::printf("  MISMATCH: %s", e.problem.c_str());
      else
        std::printf("  max abs err %.3g  max rel err %.3g  %s", e.maxAbs,
                    e.maxRel, e.ok ? "ok" : "MISMATCH");
    }
    if (auto it = reference.find(name); it != reference.end()) {
      Comparison e = compareTensors(t, it->second, o.rtol, o.atol);
      allOk &= e.ok;
      std::printf("  vs interpreter: %s",
                  !e.problem.empty() ? ("MISMATCH: " + e.problem).c_str()
                  : e.maxAbs == 0    ? "identical"
                  : e.ok             ? "within tolerance"
                                     : "MISMATCH");
      if (e.problem.empty() && e.maxAbs != 0)
        std::printf(" (max abs err %.3g)", e.maxAbs);
    }
    std::printf("\n");
    if (!o.saveDir.empty()) {
      std::filesystem::create_directories(o.saveDir);
      runtime::writeNpy(std::filesystem::path(o.saveDir) / (name + ".npy"), t);
    }
  }
  for (const auto &[name, file] : o.expected)
    if (!outputs.count(name))
      throw Error("--expected names '" + name +
                  "', which is not an output of " + o.model);
  std::printf("open         %.1f ms (%s)\n", openMs,
              !loaded.sessionFromCache ? (loaded.fromOnnx ? "ONNX import"
                                                          : "program file")
              : *loaded.sessionFromCache
                  ? "session: its program from the cache, recipe not replayed"
                  : "session: recipe replayed");
  for (const auto &[name, value] : fixed)
    std::printf("fixed        input '%s' = %s at load (it decides sizes)\n",
                name.c_str(), onnx_import::describeValue(value).c_str());
  if (o.interpreter) {
    std::printf("engine       reference interpreter (%d operators expanded)\n",
                expanded.expanded);
  } else {
    std::printf("engine       CPU backend, LLVM JIT, %d thread%s, gemm on %s "
                "(%d operators expanded)\n",
                threads, threads == 1 ? "" : "s", gemmName.c_str(),
                expanded.expanded);
    std::printf("compile      %.1f ms (%d piece%s, %d from the compile "
                "cache, %d equal to another)\n",
                compileMs, pieces, pieces == 1 ? "" : "s", cachedPieces,
                sharedPieces);
  }
  if (o.repeat > 1)
    std::printf("time         %.3f ms (median of %d runs)\n", ms, o.repeat);
  else
    std::printf("time         %.3f ms\n", ms);
  if (!reference.empty())
    std::printf("interpreter  %.1f ms (%.0fx slower)\n", referenceMs,
                ms > 0 ? referenceMs / ms : 0.0);
  return allOk ? 0 : 1;
}

} // namespace weir::cli
