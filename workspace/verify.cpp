#include "workspace/verify.h"

#include "codegen/cpu/compile.h"
#include "core/runtime/compare.h"
#include "core/runtime/random_tensor.h"
#include "ir/error.h"
#include "transforms/operators/expansion.h"

#include <chrono>
#include <cstdio>
#include <cstring>

namespace weir::workspace {

std::string VerifyReport::str() const {
  std::string s;
  if (ok) {
    char buf[160];
    if (tolerance.exact)
      std::snprintf(buf, sizeof buf, "verified: %zu outputs bit-identical",
                    outputs.size());
    else {
      double worst = 0;
      for (const OutputCheck &o : outputs)
        worst = std::max(worst, o.maxAbs);
      std::snprintf(buf, sizeof buf,
                    "verified: %zu outputs within rtol %g / atol %g (max abs "
                    "error %.3g)",
                    outputs.size(), tolerance.rtol, tolerance.atol, worst);
    }
    return buf;
  }
  s = "MISMATCH:";
  for (const OutputCheck &o : outputs)
    if (!o.ok)
      s += " output '" + o.name + "': " + o.problem + ";";
  s.pop_back();
  return s;
}

transforms::Exactness
combineTolerances(const std::vector<transforms::Exactness> &steps) {
  transforms::Exactness out;
  for (const transforms::Exactness &e : steps)
    if (!e.exact) {
      out.exact = false;
      out.rtol = std::max(out.rtol, e.rtol);
      out.atol = std::max(out.atol, e.atol);
    }
  return out;
}

namespace {

interp::TensorMap run(const ir::Program &program, const char *which,
                      const interp::TensorMap &inputs, int threads) {
  ir::Program p = program;
  operators::ExpandAllReport report = operators::expandAll(p);
  if (!report.skipped.empty())
    throw Error(std::string("cannot verify: the program ") + which +
                " cannot run: " + report.skipped.front());
  codegen::CompileOptions options;
  options.threads = threads;
  options.keepLLVMIR = false;
  return codegen::compile(p, options).run(inputs);
}

/// Bitwise equality for exact transformations: the same bits, except that
/// any NaN equals any NaN (IEEE leaves sign and payload open).
bool identical(const runtime::Tensor &a, const runtime::Tensor &b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return false;
  if (!ir::isFloat(a.dtype()))
    return std::memcmp(a.data(), b.data(), a.byteSize()) == 0;
  for (std::int64_t i = 0; i < a.elementCount(); ++i) {
    double x = a.getAsDouble(i), y = b.getAsDouble(i);
    if (std::isnan(x) && std::isnan(y))
      continue;
    if (x != y || std::signbit(x) != std::signbit(y))
      return false;
  }
  return true;
}

} // namespace

VerifyReport verifyPrograms(const ir::Program &before, const ir::Program &after,
                            const transforms::Exactness &tolerance,
                            const VerifyOptions &options) {
  auto start = std::chrono::steady_clock::now();
  if (before.inputs != after.inputs || before.outputs != after.outputs)
    throw Error("cannot verify: the programs' inputs or outputs differ");
  ir::Bindings dims = options.dims;
  for (const std::string &symbol : before.symbols)
    dims.emplace(symbol, 1);
  interp::TensorMap inputs = runtime::randomInputs(before, options.seed, dims);
  for (const auto &[name, t] : options.inputs) {
    if (!inputs.count(name))
      throw Error("cannot verify: '" + name + "' is not an input");
    inputs[name] = t;
  }
  VerifyReport report;
  report.tolerance = options.tolerance.value_or(tolerance);
  interp::TensorMap want = run(before, "before", inputs, options.threads);
  interp::TensorMap got = run(after, "after", inputs, options.threads);
  for (const std::string &name : after.outputs) {
    OutputCheck o;
    o.name = name;
    runtime::Comparison c =
        runtime::compareTensors(got.at(name), want.at(name),
                                report.tolerance.rtol, report.tolerance.atol);
    o.maxAbs = c.maxAbs;
    o.maxRel = c.maxRel;
    o.ok =
        report.tolerance.exact ? identical(got.at(name), want.at(name)) : c.ok;
    if (!o.ok)
      o.problem = c.ok ? "not bit-identical (max abs difference " +
                             std::to_string(c.maxAbs) + ")"
                       : runtime::describeMismatch(c, want.at(name));
    report.ok = report.ok && o.ok;
    report.outputs.push_back(std::move(o));
  }
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return report;
}

} // namespace weir::workspace
