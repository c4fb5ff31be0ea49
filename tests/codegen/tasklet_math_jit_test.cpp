// The CPU backend's exp, erf, sigmoid and pow(x, 2) on f32: emitted as
// arithmetic (no libm call left), so the map's loop vectorizes, and equal
// bit for bit to the reference interpreter over a sweep that includes
// infinities, NaN, signed zeros and the subnormal range. A scalar constant
// exponent is folded into the loop IR as a literal.

#include "codegen/cpu/compile.h"
#include "core/interp/interpreter.h"
#include "ir/mapped_tasklet.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace weir::codegen {
namespace {

using ir::DType;
using ir::Expr;

ir::Container argument(std::string name, std::vector<Expr> shape) {
  ir::Container c;
  c.name = std::move(name);
  c.dtype = DType::F32;
  c.shape = std::move(shape);
  c.strides = ir::rowMajorStrides(c.shape);
  c.transient = false;
  return c;
}

/// exp(x), erf(x), sigmoid(x), pow(x, two) for i in 0:n in one map, with
/// `two` a constant scalar 2, and pow(|x|, x / 4) in another.
ir::Program mathMap(std::int64_t n) {
  ir::Program p;
  p.name = "math";
  ir::State &s = p.states.emplace_back();
  s.name = "main";
  p.addContainer(argument("X", {Expr(n)}));
  p.inputs.push_back("X");
  ir::Container two = argument("two", {});
  two.transient = true;
  float value = 2.0f;
  auto bytes = std::make_shared<std::vector<std::byte>>(sizeof value);
  std::memcpy(bytes->data(), &value, sizeof value);
  two.constant = bytes;
  p.addContainer(two);
  std::vector<ir::MappedOutput> outs;
  for (const char *o : {"E", "F", "S", "Q", "P"}) {
    p.addContainer(argument(o, {Expr(n)}));
    p.outputs.push_back(o);
    outs.push_back({std::string("o") + o, o, {Expr::symbol("i")}, std::nullopt});
  }
  // pow with a variable exponent calls libm, which would keep the loop
  // scalar: it gets a map of its own.
  std::vector<ir::MappedOutput> powOut{outs.back()};
  outs.pop_back();
  ir::AccessNodes access;
  ir::addMappedTasklet(p, s, "math", {"i"}, {ir::Range(Expr(0), Expr(n))},
                       {{"x", "X", {Expr::symbol("i")}}, {"t", "two", {}}},
                       "oE = exp(x)\noF = erf(x)\noS = sigmoid(x)\n"
                       "oQ = pow(x, t)",
                       outs, access, ir::Schedule::CpuParallel);
  ir::addMappedTasklet(p, s, "pow", {"i"}, {ir::Range(Expr(0), Expr(n))},
                       {{"x", "X", {Expr::symbol("i")}}},
                       "oP = pow(abs(x), x * 0.25)", powOut, access,
                       ir::Schedule::CpuParallel);
  return p;
}

TEST(TaskletMathJit, VectorizedAndEqualToTheInterpreter) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs{0.0f,  -0.0f, inf,    -inf,   std::nanf(""),
                        88.7f, 89.5f, -87.5f, -95.0f, -103.9f,
                        -110.f, 3.99f, 4.0f,  -4.5f,  1e-30f,
                        1.0f,  -1.0f, 0.999f};
  for (int k = 0; xs.size() < 4096; ++k)
    xs.push_back(-120.0f + 0.0587f * float(k));
  auto n = static_cast<std::int64_t>(xs.size());
  ir::Program p = mathMap(n);
  runtime::Tensor x(DType::F32, {n});
  std::memcpy(x.mutableAs<float>(), xs.data(), xs.size() * sizeof(float));
  interp::TensorMap in{{"X", x}};
  interp::TensorMap want = interp::interpret(p, in);
  CompileOptions o;
  o.threads = 2;
  Executable exe = compile(p, o);
  // The constant exponent is a literal in the loop IR.
  EXPECT_NE(exe.loopIR().find("f32 = 2.0:f32"), std::string::npos)
      << exe.loopIR();
  EXPECT_EQ(exe.loopIR().find("two["), std::string::npos) << exe.loopIR();
  // exp, erf and sigmoid are arithmetic on vectors; only P's pow calls libm.
  const std::string &ir = exe.optimizedLLVMIR();
  for (const char *libm : {"@expf(", "@erff("})
    EXPECT_EQ(ir.find(libm), std::string::npos) << libm;
  EXPECT_NE(ir.find("@powf("), std::string::npos);
  EXPECT_NE(ir.find(" x float> @llvm.roundeven"), std::string::npos)
      << "exp is not vectorized";
  interp::TensorMap got = exe.run(in);
  for (const char *o : {"E", "F", "S", "Q", "P"})
    for (std::int64_t i = 0; i < n; ++i) {
      float a = got.at(o).as<float>()[i], b = want.at(o).as<float>()[i];
      if (std::isnan(a) && std::isnan(b))
        continue;
      ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0)
          << o << "(" << xs[static_cast<std::size_t>(i)] << "): " << a
          << " vs " << b;
    }
}

} // namespace
} // namespace weir::codegen
