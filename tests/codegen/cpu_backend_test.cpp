/// \file
/// The CPU backend on the bundled models: import, expand-all, lower, JIT,
/// and bit-for-bit agreement with the reference interpreter, serial and on
/// two threads; plus what the Executable exposes (loop IR, LLVM IR, cache).

#include "codegen/cpu/compile.h"
#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "onnx/import.h"
#include "transforms/operators/expansion.h"
#include "expansion/single_op.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace weir {
namespace {

/// The pure implementations: everything in maps and tasklets.
const std::map<std::string, std::string> kPure{
    {"MatMul", "pure"}, {"Gemm", "pure"}, {"Conv", "pure"}};

ir::Program
expandedModel(const std::string &name,
              const std::map<std::string, std::string> &choice = {}) {
  ir::Program p = onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                           "/resources/models/" + name)
                      .program;
  operators::ExpandAllReport r = operators::expandAll(p, choice);
  EXPECT_TRUE(r.skipped.empty()) << r.skipped.front();
  return p;
}

interp::TensorMap randomInputs(const ir::Program &p, ir::Bindings dims,
                               unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> real(-1, 1);
  interp::TensorMap inputs;
  for (const std::string &name : p.inputs) {
    const ir::Container &c = p.container(name);
    std::vector<std::int64_t> shape;
    for (const ir::Expr &d : c.shape)
      shape.push_back(d.evaluate(dims));
    runtime::Tensor t(c.dtype, shape);
    for (std::int64_t i = 0; i < t.elementCount(); ++i)
      t.setFromDouble(i, ir::isFloat(c.dtype) ? real(rng) : (i % 3 != 0));
    inputs[name] = t;
  }
  return inputs;
}

/// Equal bit for bit (tolerance 0), or within `tolerance` relative to the
/// largest magnitude of the output.
void expectIdentical(const interp::TensorMap &got,
                     const interp::TensorMap &want, double tolerance = 0) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto &[name, w] : want) {
    const runtime::Tensor &g = got.at(name);
    ASSERT_EQ(g.shape(), w.shape()) << name;
    ASSERT_EQ(g.dtype(), w.dtype()) << name;
    double scale = 0;
    for (std::int64_t i = 0; i < w.elementCount(); ++i)
      scale = std::max(scale, std::fabs(w.getAsDouble(i)));
    for (std::int64_t i = 0; i < w.elementCount(); ++i) {
      double a = g.getAsDouble(i), b = w.getAsDouble(i);
      if (std::isnan(a) && std::isnan(b))
        continue;
      if (tolerance == 0)
        ASSERT_EQ(a, b) << name << " element " << i;
      else
        ASSERT_NEAR(a, b, tolerance * scale) << name << " element " << i;
    }
  }
}

struct ModelCase {
  const char *file;
  ir::Bindings dims;
};

class BundledModel : public ::testing::TestWithParam<ModelCase> {};

TEST_P(BundledModel, PureJitEqualsInterpreterSerialAndParallel) {
  ir::Program p = expandedModel(GetParam().file, kPure);
  interp::TensorMap inputs = randomInputs(p, GetParam().dims, 7);
  interp::InterpretOptions io;
  io.symbols = GetParam().dims;
  interp::TensorMap want = interp::interpret(p, inputs, io);
  codegen::RunOptions ro;
  ro.symbols = GetParam().dims;

  codegen::CompileOptions serial;
  serial.threads = 1;
  expectIdentical(codegen::compile(p, serial).run(inputs, ro), want);

  codegen::CompileOptions parallel;
  parallel.threads = 2;
  parallel.lower.parallelizeSequentialMaps = true;
  parallel.lower.minParallelIterations = 1;
  codegen::Executable exe = codegen::compile(p, parallel);
  EXPECT_NE(exe.loopIR().find("parallel for"), std::string::npos)
      << exe.loopIR();
  expectIdentical(exe.run(inputs, ro), want);
}

TEST_P(BundledModel, BlasJitMatchesInterpreter) {
  // The default implementations call OpenBLAS, whose sums run in another
  // order than the interpreter's (which accumulates gemm in double).
  ir::Program p = expandedModel(GetParam().file);
  interp::TensorMap inputs = randomInputs(p, GetParam().dims, 11);
  interp::InterpretOptions io;
  io.symbols = GetParam().dims;
  codegen::RunOptions ro;
  ro.symbols = GetParam().dims;
  codegen::CompileOptions two;
  two.threads = 2;
  codegen::Executable exe = codegen::compile(p, two);
  EXPECT_NE(exe.loopIR().find("call sgemm"), std::string::npos);
  expectIdentical(exe.run(inputs, ro), interp::interpret(p, inputs, io), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Models, BundledModel,
                         ::testing::Values(ModelCase{"cnn.onnx", {}},
                                           ModelCase{"mlp.onnx", {{"N", 3}}},
                                           ModelCase{"transformer.onnx", {}}),
                         [](const auto &info) {
                           std::string n = info.param.file;
                           return n.substr(0, n.find('.'));
                         });

TEST(CpuBackend, ExposesLoopAndLLVMIRAndCaches) {
  ir::Program p = expandedModel("cnn.onnx", kPure);
  codegen::CompileOptions fresh;
  fresh.useCache = false;
  codegen::Executable a = codegen::compile(p, fresh);
  EXPECT_NE(a.loopIR().find("func "), std::string::npos);
  EXPECT_NE(a.llvmIR().find("define void @weir_piece_"), std::string::npos);
  EXPECT_NE(a.optimizedLLVMIR().find("weir_piece_"), std::string::npos);
  EXPECT_GT(a.compileSeconds(), 0);
  codegen::Executable b = codegen::compile(p);
  codegen::Executable c = codegen::compile(p);
  EXPECT_EQ(c.compileSeconds(), 0) << "a structurally equal program hits "
                                      "the compile cache";
  EXPECT_EQ(&b.llvmIR(), &c.llvmIR());
  EXPECT_NE(&a.llvmIR(), &c.llvmIR());
}

TEST(CpuBackend, OneCompileRunsEveryBatchSize) {
  // The MLP keeps its batch N symbolic: one executable, its loop bounds and
  // buffers sized from the inputs' shapes at run time, runs batch 1 and
  // batch 7 and agrees with the interpreter on each.
  ir::Program p = expandedModel("mlp.onnx");
  ASSERT_EQ(p.symbols, std::vector<std::string>{"N"});
  codegen::Executable exe = codegen::compile(p);
  for (std::int64_t n : {1, 7, 1}) {
    ir::Bindings dims{{"N", n}};
    interp::TensorMap inputs = randomInputs(p, dims, unsigned(n));
    interp::TensorMap got = exe.run(inputs);
    EXPECT_EQ(got.begin()->second.shape()[0], n);
    interp::InterpretOptions io;
    io.symbols = dims;
    expectIdentical(got, interp::interpret(p, inputs, io), 1e-5);
  }
}

TEST(CpuBackend, RandomGeneratorsDrawTheInterpretersNumbers) {
  // hash() is the same SplitMix64 in generated code: normal draws (log,
  // cos and sqrt of uniforms) agree to rounding, Bernoulli draws exactly.
  using expansion_testing::single;
  ir::Program normal = single("RandomNormal", {{"seed", 2.0}}, {},
                              {{"output", "z", {64, 33}}});
  ir::Program coin = single("Bernoulli", {{"seed", 4.0}},
                            {{"input", "p", {64, 33}}},
                            {{"output", "b", {64, 33}}});
  for (ir::Program *p : {&normal, &coin})
    ASSERT_TRUE(operators::expandAll(*p).skipped.empty());
  expectIdentical(codegen::compile(normal).run({}),
                  interp::interpret(normal, {}), 1e-6);
  interp::TensorMap inputs = randomInputs(coin, {}, 3);
  for (std::int64_t i = 0; i < 64 * 33; ++i) // probabilities in [0, 1]
    inputs["p"].setFromDouble(i, std::fabs(inputs["p"].getAsDouble(i)));
  expectIdentical(codegen::compile(coin).run(inputs),
                  interp::interpret(coin, inputs));
}

TEST(CpuBackend, RejectsUnexpandedPrograms) {
  ir::Program p = onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                           "/resources/models/cnn.onnx")
                      .program;
  try {
    codegen::compile(p);
    FAIL() << "compiled a program with library nodes";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("must be expanded"), std::string::npos)
        << e.what();
  }
}

TEST(CpuBackend, ChecksInputsLikeTheInterpreter) {
  ir::Program p = expandedModel("cnn.onnx");
  codegen::Executable exe = codegen::compile(p);
  interp::TensorMap inputs = randomInputs(p, {}, 1);
  inputs.begin()->second = runtime::Tensor(ir::DType::F32, {1, 2});
  EXPECT_THROW(exe.run(inputs), Error);
}

} // namespace
} // namespace weir
