/// \file
/// `weir run MODEL [options]`: import, expand every operator, run on the
/// reference interpreter, and compare with expected outputs. (The CPU
/// backend will join the interpreter as the default engine; the interpreter
/// stays as the oracle.)

#include "app/cli/commands.h"
#include "app/cli/load.h"
#include "core/interp/interpreter.h"
#include "core/runtime/npy.h"
#include "core/runtime/tensor_pb.h"
#include "ir/error.h"
#include "transforms/expansion/expansion.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

namespace weir::cli {
namespace {

struct RunOptions {
  std::string model;
  std::map<std::string, std::string> inputs;   ///< name -> file
  std::map<std::string, std::string> expected; ///< name -> file
  std::map<std::string, std::string> impl;     ///< op -> implementation
  ir::Bindings dims;
  std::uint64_t seed = 0;
  double rtol = 1e-3, atol = 1e-4;
  std::string saveDir;
};

std::pair<std::string, std::string> splitPair(const std::string &arg,
                                              const std::string &option) {
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    throw UsageError{"run: " + option + " takes NAME=VALUE, got '" + arg + "'"};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

double parseNumber(const std::string &text, const std::string &option) {
  try {
    std::size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size())
      return v;
  } catch (const std::exception &) {
  }
  throw UsageError{"run: " + option + " takes a number, got '" + text + "'"};
}

RunOptions parse(const Args &args) {
  RunOptions o;
  auto value = [&](std::size_t &i) -> const std::string & {
    if (i + 1 >= args.size())
      throw UsageError{"run: " + args[i] + " needs a value"};
    return args[++i];
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "--inputs" || a == "--expected") {
      // One or more NAME=FILE pairs follow.
      auto &target = a == "--inputs" ? o.inputs : o.expected;
      if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
        throw UsageError{"run: " + a + " needs NAME=FILE"};
      while (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0 &&
             args[i + 1].find('=') != std::string::npos)
        target.insert(splitPair(args[++i], a));
    } else if (a == "--impl") {
      o.impl.insert(splitPair(value(i), a));
    } else if (a == "--dim") {
      auto [name, v] = splitPair(value(i), a);
      o.dims[name] = static_cast<std::int64_t>(parseNumber(v, a));
    } else if (a == "--random") {
      o.seed = static_cast<std::uint64_t>(parseNumber(value(i), a));
    } else if (a == "--rtol") {
      o.rtol = parseNumber(value(i), a);
    } else if (a == "--atol") {
      o.atol = parseNumber(value(i), a);
    } else if (a == "--save-outputs") {
      o.saveDir = value(i);
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError{"run: unknown option '" + a + "'"};
    } else if (o.model.empty()) {
      o.model = a;
    } else {
      throw UsageError{"run: more than one model given"};
    }
  }
  if (o.model.empty())
    throw UsageError{"run: no model given"};
  return o;
}

runtime::Tensor readTensorFile(const std::string &path) {
  if (std::filesystem::path(path).extension() == ".npy")
    return runtime::readNpy(path);
  return runtime::readTensorPb(path);
}

/// Seeded inputs in the ranges models expect: floats uniform in [-1, 1),
/// integers in [0, 10), booleans fair coins.
runtime::Tensor randomTensor(const ir::Container &c, const ir::Bindings &dims,
                             std::mt19937_64 &rng) {
  std::vector<std::int64_t> shape;
  for (const ir::Expr &d : c.shape) {
    try {
      shape.push_back(d.evaluate(dims));
    } catch (const Error &e) {
      throw Error("input '" + c.name + "' has a symbolic shape; give its "
                  "size with --dim (" + e.what() + ")");
    }
  }
  runtime::Tensor t(c.dtype, shape);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  for (std::int64_t i = 0; i < t.elementCount(); ++i) {
    if (ir::isFloat(c.dtype))
      t.setFromDouble(i, real(rng));
    else if (c.dtype == ir::DType::Bool)
      t.setFromDouble(i, small(rng) % 2);
    else
      t.setFromDouble(i, small(rng));
  }
  return t;
}

struct Errors {
  double maxAbs = 0, maxRel = 0;
  bool ok = true;
  std::string problem;
};

Errors compare(const runtime::Tensor &got, const runtime::Tensor &want,
               double rtol, double atol) {
  Errors e;
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) {
    e.ok = false;
    e.problem = "got " + got.describe() + ", expected " + want.describe();
    return e;
  }
  for (std::int64_t i = 0; i < want.elementCount(); ++i) {
    double a = got.getAsDouble(i), b = want.getAsDouble(i);
    if (std::isnan(a) && std::isnan(b))
      continue;
    double abs = std::fabs(a - b);
    if (std::isnan(abs))
      abs = INFINITY;
    e.maxAbs = std::max(e.maxAbs, abs);
    if (b != 0)
      e.maxRel = std::max(e.maxRel, abs / std::fabs(b));
    if (abs > atol + rtol * std::fabs(b))
      e.ok = false;
  }
  return e;
}

} // namespace

int runCommand(const Args &args) {
  RunOptions o = parse(args);
  Loaded loaded = loadAny(o.model);
  ir::Program &program = loaded.program;

  expansion::ExpandAllReport expanded = expansion::expandAll(program, o.impl);
  if (!expanded.skipped.empty())
    throw Error(o.model + ": cannot run yet: " +
                std::to_string(expanded.skipped.size()) +
                " operators have no expansion (first: " +
                expanded.skipped.front() + ")");

  interp::TensorMap inputs;
  std::mt19937_64 rng(o.seed);
  for (const std::string &name : program.inputs) {
    auto given = o.inputs.find(name);
    inputs[name] = given != o.inputs.end()
                       ? readTensorFile(given->second)
                       : randomTensor(program.container(name), o.dims, rng);
  }
  for (const auto &[name, file] : o.inputs)
    if (!program.findContainer(name) ||
        std::find(program.inputs.begin(), program.inputs.end(), name) ==
            program.inputs.end())
      throw Error("--inputs names '" + name + "', which is not an input of " +
                  o.model);

  interp::InterpretOptions options;
  options.symbols = o.dims;
  auto start = std::chrono::steady_clock::now();
  interp::TensorMap outputs = interp::interpret(program, inputs, options);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();

  bool allOk = true;
  for (const std::string &name : program.outputs) {
    const runtime::Tensor &t = outputs.at(name);
    std::printf("%-24s %s", name.c_str(), t.describe().c_str());
    if (auto it = o.expected.find(name); it != o.expected.end()) {
      Errors e = compare(t, readTensorFile(it->second), o.rtol, o.atol);
      allOk &= e.ok;
      if (!e.problem.empty())
        std::printf("  MISMATCH: %s", e.problem.c_str());
      else
        std::printf("  max abs err %.3g  max rel err %.3g  %s", e.maxAbs,
                    e.maxRel, e.ok ? "ok" : "MISMATCH");
    }
    std::printf("\n");
    if (!o.saveDir.empty()) {
      std::filesystem::create_directories(o.saveDir);
      runtime::writeNpy(std::filesystem::path(o.saveDir) / (name + ".npy"), t);
    }
  }
  for (const auto &[name, file] : o.expected)
    if (!outputs.count(name))
      throw Error("--expected names '" + name + "', which is not an output of " +
                  o.model);
  std::printf("engine       reference interpreter (%d operators expanded)\n",
              expanded.expanded);
  std::printf("time         %.1f ms\n", ms);
  return allOk ? 0 : 1;
}

} // namespace weir::cli
