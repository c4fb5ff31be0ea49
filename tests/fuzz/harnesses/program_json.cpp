/// \file
/// Fuzz harness: a Weir program as JSON plus its binary sidecar (the input
/// is the JSON, a NUL byte, then the sidecar's bytes), through what a user
/// does with a `.json` program: validate, print, analyze, save and reload,
/// lower to the loop IR, and interpret when it is small.

#include "codegen/lower/lower.h"
#include "core/interp/interpreter.h"
#include "core/runtime/random_tensor.h"
#include "ir/analysis.h"
#include "ir/hash.h"
#include "ir/json.h"
#include "ir/limits.h"
#include "ir/print.h"
#include "ir/validate.h"
#include "tests/fuzz/harness.h"

#include <random>

using namespace weir;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  std::string_view all = fuzz::text(data, size);
  std::size_t nul = all.find('\0');
  std::string json(all.substr(0, nul));
  std::vector<std::byte> binary;
  if (nul != std::string_view::npos)
    for (char c : all.substr(nul + 1))
      binary.push_back(static_cast<std::byte>(c));

  ir::Program program;
  try {
    program = ir::deserialize(json, binary);
  } catch (const Error &) {
    return 0;
  }
  (void)ir::validate(program);
  (void)ir::print(program);
  fuzz::refusable([&] { (void)ir::analyze(program); });
  if (ir::hasErrors(ir::validate(program)))
    return 0;
  // What was read writes back to an equal program.
  ir::SerializedProgram again = ir::serialize(program);
  fuzz::require(ir::structuralHash(ir::deserialize(again.json, again.binary)) ==
                    ir::structuralHash(program),
                "a program read from JSON does not survive a save and reload");

  fuzz::refusable([&] { (void)codegen::lower(program); });
  fuzz::refusable([&] {
    ir::RunLimits limits;
    limits.maxTensorBytes = std::int64_t(16) << 20;
    limits.maxTransientBytes = std::int64_t(64) << 20;
    limits.maxSymbolValue = 64;
    ir::Bindings ones;
    for (const std::string &s : program.symbols)
      ones[s] = 2;
    ir::checkRunLimits(program, ones, limits);
    std::int64_t flops = 0;
    try {
      flops = ir::analyze(program).flops.evaluate(ones);
    } catch (const Error &) {
    }
    if (flops > 20000000)
      return;
    std::mt19937_64 rng(1);
    interp::TensorMap inputs;
    for (const std::string &name : program.inputs)
      inputs[name] =
          runtime::randomTensor(program.container(name), ones, rng, "--dim");
    interp::InterpretOptions options;
    options.symbols = ones;
    options.limits = limits;
    (void)interp::interpret(program, inputs, options);
  });
  return 0;
}
