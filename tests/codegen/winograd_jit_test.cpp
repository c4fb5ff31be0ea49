// Winograd F(2x2, 3x3) and F(4x4, 3x3) on the CPU backend: the gemm calls
// of the cpu-parallel map run side by side (one `parallel for` around the
// calls), the tile transforms vectorize inside each thread, and the results
// agree with the interpreter on both GEMM engines, for even and odd outputs. A
// batch of calls in a sequential map (MatMul's) stays serial.

#include "codegen/cpu/compile.h"
#include "codegen/cpu/sgemm.h"
#include "core/interp/interpreter.h"
#include "expansion/single_op.h"
#include "transforms/operators/expansion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace weir::codegen::cpu {
namespace {

using namespace expansion_testing;

/// The loop-IR line that opens a loop labelled with `label`.
std::string loopLine(const std::string &loopIR, const std::string &label) {
  std::istringstream lines(loopIR);
  for (std::string line; std::getline(lines, line);)
    if (line.find("for ") != std::string::npos &&
        line.find(label) != std::string::npos)
      return line.substr(line.find_first_not_of(' '));
  return {};
}

TEST(WinogradJit, BatchedGemmsInParallelAndTransformsVectorized) {
  for (const char *impl : {"winograd", "winograd4"})
    for (bool odd : {false, true}) {
      std::int64_t h = odd ? 7 : 8;
      Program p = convWithConstantFilters(
          {2, 6, h, 6}, {5, 6, 3, 3}, {2, 5, h, 6},
          {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}}, true);
      ASSERT_TRUE(operators::expandAll(p, {{"Conv", impl}}).skipped.empty());
      interp::TensorMap in{{"X", random({2, 6, h, 6}, 3)},
                           {"B", random({5}, 4)}};
      interp::TensorMap want = interp::interpret(p, in);
      for (GemmEngine e : {GemmEngine::OpenBlas, GemmEngine::Weir}) {
        if (e == GemmEngine::Weir && !sgemmKernelAvailable())
          continue;
        CompileOptions o;
        o.threads = 2;
        o.gemm = e;
        o.lower.minParallelIterations = 1;
        Executable exe = compile(p, o);
        std::string gemm = loopLine(exe.loopIR(), "winograd_gemm");
        EXPECT_EQ(gemm.rfind("parallel for a", 0), 0u) << exe.loopIR();
        EXPECT_NE(exe.loopIR().find("vectorized for tx"), std::string::npos)
            << exe.loopIR();
        interp::TensorMap got = exe.run(in);
        const runtime::Tensor &y = got.at("Y"), &w = want.at("Y");
        ASSERT_EQ(y.shape(), w.shape());
        for (std::int64_t i = 0; i < w.elementCount(); ++i)
          // The interpreter's gemm sums in double, the JIT's in float; the
          // larger F(4x4) transforms carry that rounding further.
          ASSERT_NEAR(y.getAsDouble(i), w.getAsDouble(i),
                      1e-5 * std::max(1.0, std::fabs(w.getAsDouble(i))))
              << impl << " " << gemmEngineName(e) << (odd ? " odd" : " even")
              << " at " << i;
      }
    }
}

TEST(WinogradJit, SequentialBatchOfCallsStaysSerial) {
  // MatMul with 12 batches: a sequential map around 12 gemm calls, each of
  // which parallelizes itself.
  Program p =
      single("MatMul", {}, {{"A", "A", {12, 4, 8}}, {"B", "B", {12, 8, 5}}},
             {{"Y", "Y", {12, 4, 5}}});
  ASSERT_TRUE(operators::expandAll(p).skipped.empty());
  CompileOptions o;
  o.threads = 2;
  o.lower.minParallelIterations = 1;
  Executable exe = compile(p, o);
  EXPECT_EQ(exe.loopIR().find("parallel for"), std::string::npos)
      << exe.loopIR();
  EXPECT_NE(exe.loopIR().find("call sgemm"), std::string::npos);
}

} // namespace
} // namespace weir::codegen::cpu
