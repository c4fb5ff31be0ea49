/// Reference interpreter: programs run on real data and compared against
/// direct C++ computations of the same formulas, typed tasklet arithmetic,
/// symbols, the errors a user can cause, and stepping.

#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "ir/float16.h"
#include "unit/ir_builders.h"

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace weir {
namespace {

using interp::DeadlinePassed;
using interp::interpret;
using interp::InterpretOptions;
using interp::Interpreter;
using interp::TensorMap;
using ir::DType;
using ir::Expr;
using ir::NodeId;
using ir::Program;
using ir::Range;
using runtime::Tensor;
using namespace ir::builders;

/// Runs `f`, expecting a weir::Error whose message contains every piece.
template <typename F>
void expectError(F f, const std::vector<std::string> &pieces) {
  try {
    f();
    ADD_FAILURE() << "expected a weir::Error";
  } catch (const Error &e) {
    for (const std::string &p : pieces)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message: " << e.what() << "\nmissing: " << p;
  }
}

template <typename T>
Tensor tensorOf(DType dtype, std::vector<std::int64_t> shape,
                const std::vector<T> &data) {
  Tensor t(dtype, std::move(shape));
  EXPECT_EQ(static_cast<std::size_t>(t.elementCount()), data.size());
  std::memcpy(t.mutableData(), data.data(), data.size() * sizeof(T));
  return t;
}

std::vector<float> randomFloats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

template <typename T> std::vector<T> contents(const Tensor &t) {
  std::vector<T> v(static_cast<std::size_t>(t.elementCount()));
  std::memcpy(v.data(), t.data(), v.size() * sizeof(T));
  return v;
}

/// A connector and the container it reads or writes: connector `x` goes
/// with container `X`.
struct Port {
  std::string name;
  DType dtype;
  std::string container() const {
    std::string c = name;
    for (char &ch : c)
      ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return c;
  }
};

/// Y[i] = body(A[i], B[i], ...) for i in `range`, every container of
/// shape [n]; the memlets into Y carry `wcr`, and when `point` is set every
/// iteration reads and writes that index instead of i.
Program mapProgram(const std::vector<Port> &ins, const Port &out,
                   std::string_view body, Expr n, Range range,
                   std::optional<ir::Wcr> wcr = std::nullopt,
                   std::optional<Expr> point = std::nullopt) {
  Program p;
  p.name = "map_program";
  declareSymbols(p, n);
  for (const Port &port : ins) {
    p.addContainer(argument(port.container(), port.dtype, {n}));
    p.inputs.push_back(port.container());
  }
  p.addContainer(argument(out.container(), out.dtype, {n}));
  p.outputs = {out.container()};
  ir::State &s = p.states.emplace_back();
  s.name = "main";
  std::vector<NodeId> accesses;
  for (const Port &port : ins)
    accesses.push_back(addAccess(p, s, port.container()));
  auto [entry, exit] = addMap(p, s, "map", {"i"}, {range});
  std::vector<ir::Connector> taskletIns;
  for (const Port &port : ins) {
    s.findNode(entry)->inputs.push_back({"IN_" + port.container(), port.dtype});
    s.findNode(entry)->outputs.push_back(
        {"OUT_" + port.container(), port.dtype});
    taskletIns.push_back({port.name, port.dtype});
  }
  s.findNode(exit)->inputs = {{"IN_" + out.container(), out.dtype}};
  s.findNode(exit)->outputs = {{"OUT_" + out.container(), out.dtype}};
  NodeId t =
      addTasklet(p, s, "body", taskletIns, {{out.name, out.dtype}}, body);
  NodeId y = addAccess(p, s, out.container());
  Expr at = point ? *point : Expr::symbol("i");
  for (std::size_t k = 0; k < ins.size(); ++k) {
    std::string c = ins[k].container();
    addEdge(p, s, accesses[k], "", entry, "IN_" + c, memlet(c, {Range(0, n)}));
    addEdge(p, s, entry, "OUT_" + c, t, ins[k].name,
            memlet(c, {Range::point(at)}));
  }
  std::string c = out.container();
  addEdge(p, s, t, out.name, exit, "IN_" + c,
          memlet(c, {Range::point(at)}, wcr));
  addEdge(p, s, exit, "OUT_" + c, y, "", memlet(c, {Range(0, n)}, wcr));
  return p;
}

// --- Whole programs on real data -------------------------------------------

TEST(InterpTest, ElementwiseAddMatchesDirectComputation) {
  const std::int64_t n = 37;
  std::vector<float> a = randomFloats(n, 1), b = randomFloats(n, 2);
  TensorMap out =
      interpret(elementwiseAdd(Expr(n)), {{"A", tensorOf(DType::F32, {n}, a)},
                                          {"B", tensorOf(DType::F32, {n}, b)}});
  ASSERT_EQ(out.size(), 1u);
  const Tensor &c = out.at("C");
  ASSERT_EQ(c.shape(), std::vector<std::int64_t>{n});
  std::vector<float> got = contents<float>(c);
  for (std::int64_t i = 0; i < n; ++i)
    EXPECT_EQ(got[i], a[i] + b[i]) << "i = " << i;
}

TEST(InterpTest, ADeadlineStopsALongMapInsideOneStep) {
  // One top-level map of 2^20 iterations is a single step: the deadline is
  // looked at inside it, not only between steps.
  const std::int64_t n = 1 << 20;
  std::vector<float> a = randomFloats(n, 1);
  TensorMap in = {{"A", tensorOf(DType::F32, {n}, a)},
                  {"B", tensorOf(DType::F32, {n}, a)}};
  InterpretOptions past;
  past.deadline = std::chrono::steady_clock::now();
  try {
    interpret(elementwiseAdd(Expr(n)), in, past);
    FAIL() << "a run past its deadline finished";
  } catch (const DeadlinePassed &e) {
    EXPECT_NE(std::string(e.what()).find("time limit"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("map"), std::string::npos)
        << e.what();
  }
  // A deadline far off changes nothing.
  InterpretOptions later;
  later.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  std::vector<float> small = randomFloats(8, 2);
  TensorMap out = interpret(elementwiseAdd(Expr(8)),
                            {{"A", tensorOf(DType::F32, {8}, small)},
                             {"B", tensorOf(DType::F32, {8}, small)}},
                            later);
  std::vector<float> got = contents<float>(out.at("C"));
  for (std::size_t i = 0; i < small.size(); ++i)
    EXPECT_EQ(got[i], small[i] + small[i]) << i;
}

TEST(InterpTest, InputsAreNotModified) {
  std::vector<float> a = randomFloats(4, 3);
  Tensor ta = tensorOf(DType::F32, {4}, a);
  interpret(elementwiseAdd(Expr(4)), {{"A", ta}, {"B", ta}});
  EXPECT_EQ(contents<float>(ta), a);
}

TEST(InterpTest, MatmulWithWcrSumMatchesNaiveLoop) {
  const std::int64_t m = 5, n = 7, k = 3;
  std::vector<float> a = randomFloats(m * k, 4), b = randomFloats(k * n, 5);
  TensorMap out = interpret(matmulWithWcr(m, n, k),
                            {{"A", tensorOf(DType::F32, {m, k}, a)},
                             {"B", tensorOf(DType::F32, {k, n}, b)}});
  std::vector<float> got = contents<float>(out.at("C"));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (std::int64_t kk = 0; kk < k; ++kk)
        acc += a[i * k + kk] * b[kk * n + j];
      EXPECT_FLOAT_EQ(got[i * n + j], acc) << "C[" << i << ", " << j << "]";
    }
}

TEST(InterpTest, NestedMaps) {
  const std::int64_t rows = 3, cols = 4;
  std::vector<float> x = randomFloats(rows * cols, 6);
  TensorMap out = interpret(nestedMaps(rows, cols),
                            {{"X", tensorOf(DType::F32, {rows, cols}, x)}});
  std::vector<float> y = contents<float>(out.at("Y"));
  for (std::size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(y[i], x[i] * 2.0f);
}

TEST(InterpTest, InnerRangesMayUseOuterParameters) {
  // The inner map runs j = 0:i+1: only the lower triangle is written.
  const std::int64_t n = 4;
  Program p = nestedMaps(n, n);
  for (ir::Node &node : p.states[0].nodes.editable())
    if (node.id == NestedIds::innerEntry || node.id == NestedIds::innerExit)
      node.map().ranges = {Range(0, Expr::symbol("i") + 1)};
  std::vector<float> x = randomFloats(n * n, 10);
  std::vector<float> y = contents<float>(
      interpret(p, {{"X", tensorOf(DType::F32, {n, n}, x)}}).at("Y"));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      EXPECT_EQ(y[i * n + j], j <= i ? x[i * n + j] * 2.0f : 0.0f)
          << i << ", " << j;
}

TEST(InterpTest, RangesWithStepVisitOnlyTheirIndices) {
  // i in 1:8:3 visits 1, 4, 7; every other element of Y keeps its zero.
  const std::int64_t n = 9;
  std::vector<float> x = randomFloats(n, 7);
  Program p = mapProgram({{"x", DType::F32}}, {"y", DType::F32}, "y = x * 10",
                         Expr(n), Range(1, 8, 3));
  std::vector<float> y = contents<float>(
      interpret(p, {{"X", tensorOf(DType::F32, {n}, x)}}).at("Y"));
  for (std::int64_t i = 0; i < n; ++i) {
    bool visited = i == 1 || i == 4 || i == 7;
    EXPECT_EQ(y[i], visited ? x[i] * 10.0f : 0.0f) << "i = " << i;
  }
}

TEST(InterpTest, WcrMaxAndMinCombineWithTheStoredValue) {
  // Every iteration writes Y[0], combining with what is stored there: the
  // zero Y starts with, then the earlier iterations' results.
  std::vector<float> x = {-3.0f, 2.5f, 7.25f, -8.0f};
  Tensor tx = tensorOf(DType::F32, {4}, x);
  Program pmax = mapProgram({{"x", DType::F32}}, {"y", DType::F32}, "y = x",
                            Expr(4), Range(0, 4), ir::Wcr::Max, Expr(0));
  // The point override applies to reads and writes; reads go back to X[i].
  for (ir::Edge &e : pmax.states[0].edges.editable())
    if (e.dstConn == "x")
      e.memlet = memlet("X", {Range::point(Expr::symbol("i"))});
  std::vector<float> y = contents<float>(interpret(pmax, {{"X", tx}}).at("Y"));
  EXPECT_EQ(y[0], 7.25f);
  EXPECT_EQ(y[1], 0.0f);

  Program pmin = pmax;
  for (ir::Edge &e : pmin.states[0].edges.editable())
    if (e.memlet.wcr)
      e.memlet.wcr = ir::Wcr::Min;
  EXPECT_EQ(contents<float>(interpret(pmin, {{"X", tx}}).at("Y"))[0], -8.0f);
}

/// X (f32[4]) -> tasklet reading X[1] and X[2] -> T[0] (transient f32[1])
/// -> copy -> Y (f32[1]), with Y added to the state before the tasklet so
/// that only the edges can put the copy last.
struct TopLevel {
  Program p;
  NodeId x, y, t, tasklet;
};

TopLevel topLevelProgram() {
  TopLevel r;
  Program &p = r.p;
  p.name = "top_level";
  p.addContainer(argument("X", DType::F32, {4}));
  p.addContainer(argument("Y", DType::F32, {1}));
  ir::Container t;
  t.name = "T";
  t.dtype = DType::F32;
  t.shape = {1};
  t.strides = ir::rowMajorStrides(t.shape);
  p.addContainer(t);
  p.inputs = {"X"};
  p.outputs = {"Y"};
  ir::State &s = p.states.emplace_back();
  s.name = "main";
  r.y = addAccess(p, s, "Y");
  r.x = addAccess(p, s, "X");
  r.t = addAccess(p, s, "T");
  r.tasklet =
      addTasklet(p, s, "combine", {{"a", DType::F32}, {"b", DType::F32}},
                 {{"c", DType::F32}}, "c = a * b - 1");
  addEdge(p, s, r.x, "", r.tasklet, "a", memlet("X", {Range::point(1)}));
  addEdge(p, s, r.x, "", r.tasklet, "b", memlet("X", {Range::point(2)}));
  addEdge(p, s, r.tasklet, "c", r.t, "", memlet("T", {Range::point(0)}));
  addEdge(p, s, r.t, "", r.y, "", memlet("T", {Range(0, 1)}));
  return r;
}

TEST(InterpTest, TopLevelTaskletAndAccessCopy) {
  TopLevel tl = topLevelProgram();
  std::vector<float> x = {1.5f, -2.0f, 3.25f, 4.0f};
  TensorMap out = interpret(tl.p, {{"X", tensorOf(DType::F32, {4}, x)}});
  EXPECT_EQ(contents<float>(out.at("Y"))[0], x[1] * x[2] - 1.0f);
}

TEST(InterpTest, ConstantContainersAreRead) {
  Program p = mapProgram({{"x", DType::F32}, {"w", DType::F32}},
                         {"y", DType::F32}, "y = x * w", Expr(3), Range(0, 3));
  std::vector<float> w = {0.5f, -1.0f, 4.0f};
  auto blob = std::make_shared<std::vector<std::byte>>(sizeof(float) * 3);
  std::memcpy(blob->data(), w.data(), blob->size());
  ir::Container &wc = p.containers.at("W");
  wc.constant = blob;
  p.inputs = {"X"};
  std::vector<float> x = {2.0f, 3.0f, 5.0f};
  Interpreter it(p, {{"X", tensorOf(DType::F32, {3}, x)}});
  it.run();
  EXPECT_TRUE(it.value("W").readOnly());
  std::vector<float> y = contents<float>(it.value("Y"));
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_EQ(y[i], x[i] * w[i]);
}

// --- Symbols -----------------------------------------------------------------

TEST(InterpTest, SymbolsAreInferredFromInputShapes) {
  Program p = elementwiseAdd(Expr::symbol("N"));
  std::vector<float> a = randomFloats(6, 8), b = randomFloats(6, 9);
  Interpreter it(p, {{"A", tensorOf(DType::F32, {6}, a)},
                     {"B", tensorOf(DType::F32, {6}, b)}});
  EXPECT_EQ(it.symbols().at("N"), 6);
  it.run();
  TensorMap out = it.outputs();
  ASSERT_EQ(out.at("C").shape(), std::vector<std::int64_t>{6});
  std::vector<float> c = contents<float>(out.at("C"));
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_EQ(c[i], a[i] + b[i]);
}

TEST(InterpTest, ConflictingSymbolsAreErrors) {
  Program p = elementwiseAdd(Expr::symbol("N"));
  Tensor five(DType::F32, {5}), six(DType::F32, {6});
  expectError(
      [&] {
        interpret(p, {{"A", five}, {"B", six}});
      },
      {"symbol 'N'", "input 'B'", "6", "5"});
  interp::InterpretOptions options;
  options.symbols["N"] = 4;
  expectError(
      [&] {
        interpret(p, {{"A", five}, {"B", five}}, options);
      },
      {"symbol 'N'", "options", "input 'A'"});
}

TEST(InterpTest, UnboundSymbolsInTransientShapesAreErrors) {
  TopLevel tl = topLevelProgram();
  tl.p.symbols.push_back("M");
  tl.p.containers.at("T").shape = {Expr::symbol("M")};
  tl.p.containers.at("T").strides = ir::rowMajorStrides({Expr::symbol("M")});
  Tensor x(DType::F32, {4});
  expectError([&] { interpret(tl.p, {{"X", x}}); }, {"'T'", "M"});
  interp::InterpretOptions options;
  options.symbols["M"] = 1;
  EXPECT_NO_THROW(interpret(tl.p, {{"X", x}}, options));
}

// --- Typed tasklets
// ------------------------------------------------------------

TEST(InterpTest, F16ComputesInFloatAndRoundsOnStore) {
  std::vector<float> values = {0.1f, -2.5f, 1000.3f, 3.0e-5f, 60000.0f};
  std::vector<std::uint16_t> bits;
  for (float v : values)
    bits.push_back(ir::floatToHalf(v));
  const auto n = static_cast<std::int64_t>(bits.size());
  Program p = mapProgram({{"x", DType::F16}}, {"y", DType::F16},
                         "y = x * 3.0 + 0.1", Expr(n), Range(0, n));
  std::vector<std::uint16_t> got = contents<std::uint16_t>(
      interpret(p, {{"X", tensorOf(DType::F16, {n}, bits)}}).at("Y"));
  for (std::size_t i = 0; i < bits.size(); ++i) {
    float x = ir::halfToFloat(bits[i]);
    float want = x * 3.0f + 0.1f;
    EXPECT_EQ(got[i], ir::floatToHalf(want)) << "x = " << x;
  }
}

TEST(InterpTest, Bf16ComputesInFloatAndRoundsOnStore) {
  std::vector<float> values = {0.1f, -2.5f, 1000.3f, 3.0e-5f};
  std::vector<std::uint16_t> bits;
  for (float v : values)
    bits.push_back(ir::floatToBfloat16(v));
  const auto n = static_cast<std::int64_t>(bits.size());
  Program p = mapProgram({{"x", DType::BF16}}, {"y", DType::BF16},
                         "y = x + x * x", Expr(n), Range(0, n));
  std::vector<std::uint16_t> got = contents<std::uint16_t>(
      interpret(p, {{"X", tensorOf(DType::BF16, {n}, bits)}}).at("Y"));
  for (std::size_t i = 0; i < bits.size(); ++i) {
    float x = ir::bfloat16ToFloat(bits[i]);
    EXPECT_EQ(got[i], ir::floatToBfloat16(x + x * x)) << "x = " << x;
  }
}

TEST(InterpTest, LiteralsTakeTheOperandsPrecision) {
  // 0.1 is the double nearest 0.1 beside an f64 and the float nearest it
  // beside an f32.
  Program p64 = mapProgram({{"x", DType::F64}}, {"y", DType::F64},
                           "y = x + 0.1", Expr(2), Range(0, 2));
  std::vector<double> x64 = {1.0, -3.5};
  std::vector<double> y64 = contents<double>(
      interpret(p64, {{"X", tensorOf(DType::F64, {2}, x64)}}).at("Y"));
  EXPECT_EQ(y64[0], 1.0 + 0.1);
  EXPECT_EQ(y64[1], -3.5 + 0.1);

  Program p32 = mapProgram({{"x", DType::F32}}, {"y", DType::F32},
                           "y = x + 0.1", Expr(1), Range(0, 1));
  std::vector<float> y32 = contents<float>(
      interpret(p32, {{"X", tensorOf(DType::F32, {1}, std::vector{1.0f})}})
          .at("Y"));
  EXPECT_EQ(y32[0], 1.0f + 0.1f);
}

TEST(InterpTest, F32RoundsEveryOperation) {
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11 in float, so the
  // result is 2^-11; computed in double it would keep the 2^-24.
  const float x = 1.0f + std::ldexp(1.0f, -12);
  Program p = mapProgram({{"x", DType::F32}}, {"y", DType::F32},
                         "y = x * x - 1", Expr(1), Range(0, 1));
  float y = contents<float>(
      interpret(p, {{"X", tensorOf(DType::F32, {1}, std::vector{x})}})
          .at("Y"))[0];
  float product = x * x;
  EXPECT_EQ(y, product - 1.0f);
  EXPECT_EQ(y, std::ldexp(1.0f, -11));
}

TEST(InterpTest, FloatMathFunctions) {
  std::vector<float> x = {-2.25f, -0.5f, 0.0f, 0.75f, 3.5f};
  const auto n = static_cast<std::int64_t>(x.size());
  Program p = mapProgram(
      {{"x", DType::F32}}, {"y", DType::F32},
      "a = sigmoid(x) + tanh(x) * erf(x) - rsqrt(abs(x) + 1)\n"
      "b = max(x, 0) + min(x, 0.5) + pow(exp(x * 0.25), 2.0)\n"
      "y = a + b + floor(x) * ceil(x) + log(abs(x) + 1) + sqrt(abs(x)) + "
      "select(x > 0, x, 0.1 * x)",
      Expr(n), Range(0, n));
  std::vector<float> y = contents<float>(
      interpret(p, {{"X", tensorOf(DType::F32, {n}, x)}}).at("Y"));
  for (std::size_t i = 0; i < x.size(); ++i) {
    float v = x[i];
    float a = 1.0f / (1.0f + std::exp(-v)) + std::tanh(v) * std::erf(v) -
              1.0f / std::sqrt(std::fabs(v) + 1.0f);
    float b = std::max(v, 0.0f) + std::min(v, 0.5f) +
              std::pow(std::exp(v * 0.25f), 2.0f);
    float want = a + b + std::floor(v) * std::ceil(v) +
                 std::log(std::fabs(v) + 1.0f) + std::sqrt(std::fabs(v)) +
                 (v > 0 ? v : 0.1f * v);
    EXPECT_FLOAT_EQ(y[i], want) << "x = " << v;
  }
}

TEST(InterpTest, FloatMinMaxPropagateNaN) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Program p = mapProgram({{"x", DType::F32}}, {"y", DType::F32},
                         "y = max(x, 0) + min(1, x)", Expr(2), Range(0, 2));
  std::vector<float> y = contents<float>(
      interpret(p, {{"X", tensorOf(DType::F32, {2}, std::vector{nan, 2.0f})}})
          .at("Y"));
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 3.0f);
}

TEST(InterpTest, IntegersWrapAndDivideTowardZero) {
  std::vector<std::int32_t> a = {
      70000, -7, 7, std::numeric_limits<std::int32_t>::min(), 123456789};
  std::vector<std::int32_t> b = {70000, 2, -2, -1, -1000};
  const auto n = static_cast<std::int64_t>(a.size());
  Program p =
      mapProgram({{"a", DType::I32}, {"b", DType::I32}}, {"y", DType::I32},
                 "y = a * b + a / b - a % b", Expr(n), Range(0, n));
  std::vector<std::int32_t> y =
      contents<std::int32_t>(interpret(p, {{"A", tensorOf(DType::I32, {n}, a)},
                                           {"B", tensorOf(DType::I32, {n}, b)}})
                                 .at("Y"));
  for (std::size_t i = 0; i < a.size(); ++i) {
    // Two's complement wrap-around, computed in 64 bits and truncated.
    auto wrap = [](std::int64_t v) {
      return static_cast<std::int32_t>(
          static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
    };
    std::int64_t x = a[i], z = b[i];
    std::int32_t prod = wrap(x * z);
    std::int32_t quot = wrap(x / z); // C++ truncates toward zero too
    std::int32_t rem = wrap(x % z);
    std::int32_t want =
        wrap(static_cast<std::int64_t>(wrap(std::int64_t(prod) + quot)) - rem);
    EXPECT_EQ(y[i], want) << a[i] << ", " << b[i];
  }
  EXPECT_EQ(y[1], -14 + -3 - -1); // -7 / 2 == -3, -7 % 2 == -1
}

TEST(InterpTest, SmallIntegersWrapAtTheirWidth) {
  Program p8 = mapProgram({{"a", DType::I8}}, {"y", DType::I8}, "y = a + 100",
                          Expr(2), Range(0, 2));
  std::vector<std::int8_t> y8 = contents<std::int8_t>(
      interpret(p8, {{"A", tensorOf(DType::I8, {2},
                                    std::vector<std::int8_t>{100, -100})}})
          .at("Y"));
  EXPECT_EQ(y8[0], -56);
  EXPECT_EQ(y8[1], 0);

  Program pu = mapProgram({{"a", DType::U8}}, {"y", DType::U8},
                          "y = a - 5 + abs(a) / 2", Expr(1), Range(0, 1));
  std::vector<std::uint8_t> yu = contents<std::uint8_t>(
      interpret(pu,
                {{"A", tensorOf(DType::U8, {1}, std::vector<std::uint8_t>{3})}})
          .at("Y"));
  EXPECT_EQ(yu[0], static_cast<std::uint8_t>(254 + 1));
}

TEST(InterpTest, BoolTasklets) {
  Program p =
      mapProgram({{"a", DType::F32}, {"f", DType::Bool}}, {"y", DType::Bool},
                 "y = (a > 0.5 && !f) || a < -1", Expr(4), Range(0, 4));
  std::vector<float> a = {1.0f, 1.0f, -2.0f, 0.0f};
  std::vector<std::uint8_t> f = {0, 1, 1, 0};
  std::vector<std::uint8_t> y = contents<std::uint8_t>(
      interpret(p, {{"A", tensorOf(DType::F32, {4}, a)},
                    {"F", tensorOf(DType::Bool, {4}, f)}})
          .at("Y"));
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_EQ(y[i], ((a[i] > 0.5f && !f[i]) || a[i] < -1.0f) ? 1 : 0);
}

TEST(InterpTest, CastsTruncateSaturateAndKeepLowBits) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {2.7f, -2.7f, 1e10f, -1e10f, nan};
  Program p = mapProgram({{"x", DType::F32}}, {"y", DType::I32}, "y = i32(x)",
                         Expr(5), Range(0, 5));
  std::vector<std::int32_t> y = contents<std::int32_t>(
      interpret(p, {{"X", tensorOf(DType::F32, {5}, x)}}).at("Y"));
  EXPECT_EQ(y, (std::vector<std::int32_t>{
                   2, -2, std::numeric_limits<std::int32_t>::max(),
                   std::numeric_limits<std::int32_t>::min(), 0}));

  Program q = mapProgram({{"a", DType::I64}}, {"y", DType::U8},
                         "y = u8(a) + u8(bool(a))", Expr(2), Range(0, 2));
  std::vector<std::uint8_t> yq = contents<std::uint8_t>(
      interpret(q, {{"A", tensorOf(DType::I64, {2},
                                   std::vector<std::int64_t>{-1, 0})}})
          .at("Y"));
  EXPECT_EQ(yq[0], static_cast<std::uint8_t>(0xff + 1));
  EXPECT_EQ(yq[1], 0);
}

TEST(InterpTest, IntegerDivisionByZeroNamesTheTasklet) {
  Program p = mapProgram({{"a", DType::I32}, {"b", DType::I32}},
                         {"y", DType::I32}, "y = a / b", Expr(4), Range(0, 4));
  Tensor a = tensorOf(DType::I32, {4}, std::vector<std::int32_t>{4, 5, 6, 7});
  Tensor b = tensorOf(DType::I32, {4}, std::vector<std::int32_t>{1, 2, 0, 3});
  expectError(
      [&] {
        interpret(p, {{"A", a}, {"B", b}});
      },
      {"tasklet 'body'", "division by zero", "a / b", "i = 2"});

  // select evaluates only the branch it picks.
  Program guarded =
      mapProgram({{"a", DType::I32}, {"b", DType::I32}}, {"y", DType::I32},
                 "y = select(b != 0, a / b, -1)", Expr(4), Range(0, 4));
  std::vector<std::int32_t> y =
      contents<std::int32_t>(interpret(guarded, {{"A", a}, {"B", b}}).at("Y"));
  EXPECT_EQ(y, (std::vector<std::int32_t>{4, 2, -1, 2}));
}

// --- Errors a user can cause
// ---------------------------------------------------

TEST(InterpTest, InputErrorsNameTheInput) {
  Program p = elementwiseAdd(Expr(4));
  Tensor good(DType::F32, {4});
  expectError([&] { interpret(p, {{"A", good}}); }, {"input 'B'", "missing"});
  expectError(
      [&] {
        interpret(p, {{"A", good}, {"B", Tensor(DType::F64, {4})}});
      },
      {"input 'B'", "f64", "f32"});
  expectError(
      [&] {
        interpret(p, {{"A", good}, {"B", Tensor(DType::F32, {5})}});
      },
      {"input 'B'", "[5]", "[4]"});
  expectError(
      [&] {
        interpret(p, {{"A", good}, {"B", Tensor(DType::F32, {4, 1})}});
      },
      {"input 'B'", "rank 1"});
  expectError(
      [&] {
        interpret(p, {{"A", good}, {"B", good}, {"Q", good}});
      },
      {"'Q' is not an input"});
}

TEST(InterpTest, LibraryNodesMustBeExpanded) {
  expectError(
      [&] {
        interpret(libraryRelu(), {{"X", Tensor(DType::F32, {4, 8})}});
      },
      {"library node 'relu0' (Relu) must be expanded before it can be "
       "interpreted"});
}

TEST(InterpTest, PrimitiveNodesCannotBeInterpreted) {
  Program p = libraryRelu();
  ir::Node &n = p.states[0].nodes.edit(1);
  n.kind = ir::NodeKind::Primitive;
  n.payload = ir::PrimitiveData{"unary", {}};
  expectError(
      [&] {
        interpret(p, {{"X", Tensor(DType::F32, {4, 8})}});
      },
      {"primitive node 'relu0' (unary)", "cannot be interpreted"});
}

TEST(InterpTest, WideMemletsIntoTaskletsAreNotSupported) {
  TopLevel tl = topLevelProgram();
  for (ir::Edge &e : tl.p.states[0].edges.editable())
    if (e.dstConn == "b")
      e.memlet = memlet("X", {Range(2, 4)});
  expectError(
      [&] {
        interpret(tl.p, {{"X", Tensor(DType::F32, {4})}});
      },
      {"tasklet 'combine'", "input connector 'b'", "2 elements",
       "not supported"});
}

TEST(InterpTest, WritingAConstantIsAnError) {
  TopLevel tl = topLevelProgram();
  ir::Container &t = tl.p.containers.at("T");
  t.constant = std::make_shared<std::vector<std::byte>>(sizeof(float));
  expectError(
      [&] {
        interpret(tl.p, {{"X", Tensor(DType::F32, {4})}});
      },
      {"tasklet 'combine'", "constant container 'T'"});
}

TEST(InterpTest, EmptyMemletsHandValuesBetweenTasklets) {
  // X[0] -> first (t = x + 1) -> second (y = t * t) -> Y[0], the middle
  // edge an empty memlet.
  Program p;
  p.name = "hand_over";
  p.addContainer(argument("X", DType::F64, {1}));
  p.addContainer(argument("Y", DType::F64, {1}));
  p.inputs = {"X"};
  p.outputs = {"Y"};
  ir::State &s = p.states.emplace_back();
  s.name = "main";
  NodeId x = addAccess(p, s, "X");
  NodeId first = addTasklet(p, s, "first", {{"x", DType::F64}},
                            {{"t", DType::F64}}, "t = x + 1");
  NodeId second = addTasklet(p, s, "second", {{"t", DType::F64}},
                             {{"y", DType::F64}}, "y = t * t");
  NodeId y = addAccess(p, s, "Y");
  addEdge(p, s, x, "", first, "x", memlet("X", {Range::point(0)}));
  addEdge(p, s, first, "t", second, "t", ir::Memlet{});
  addEdge(p, s, second, "y", y, "", memlet("Y", {Range::point(0)}));
  std::vector<double> out = contents<double>(
      interpret(p, {{"X", tensorOf(DType::F64, {1}, std::vector{2.5})}})
          .at("Y"));
  EXPECT_EQ(out[0], (2.5 + 1) * (2.5 + 1));
}

TEST(InterpTest, InvalidProgramsAreRejected) {
  Program p = elementwiseAdd(Expr(4));
  p.states[0].edges.pop_back(); // the exit's output now goes nowhere
  expectError(
      [&] {
        interpret(p, {{"A", Tensor(DType::F32, {4})},
                      {"B", Tensor(DType::F32, {4})}});
      },
      {"program 'elementwise_add' is invalid", "OUT_C"});
}

TEST(InterpTest, OutOfBoundsAccessesAreErrors) {
  // The validator cannot bound X[i + 1] against a symbolic extent; the
  // interpreter catches it on the last iteration.
  Program p = mapProgram({{"x", DType::F32}}, {"y", DType::F32}, "y = x",
                         Expr::symbol("N"), Range(0, Expr::symbol("N")));
  for (ir::Edge &e : p.states[0].edges.editable())
    if (e.dstConn == "x")
      e.memlet = memlet("X", {Range::point(Expr::symbol("i") + 1)});
  expectError(
      [&] {
        interpret(p, {{"X", Tensor(DType::F32, {3})}});
      },
      {"out of bounds", "'X'", "i = 2"});
}

// --- Stepping
// --------------------------------------------------------------------

/// Two states: `first` computes T = X + 1 over a map, `second` Y = T * 2.
struct TwoStates {
  Program p;
  NodeId x, entry1, t1, t2, entry2, y;
};

TwoStates twoStates(std::int64_t n) {
  TwoStates r;
  Program &p = r.p;
  p.name = "two_states";
  p.addContainer(argument("X", DType::F32, {n}));
  p.addContainer(argument("Y", DType::F32, {n}));
  ir::Container t;
  t.name = "T";
  t.shape = {n};
  t.strides = ir::rowMajorStrides(t.shape);
  p.addContainer(t);
  p.inputs = {"X"};
  p.outputs = {"Y"};
  Expr i = Expr::symbol("i");
  auto stage = [&](const char *name, const char *in, const char *out,
                   std::string_view body, NodeId &src, NodeId &entry,
                   NodeId &dst) {
    ir::State &s = p.states.emplace_back();
    s.name = name;
    src = addAccess(p, s, in);
    auto [e, x] = addMap(p, s, name, {"i"}, {Range(0, n)});
    entry = e;
    std::string I = std::string("IN_") + in, O = std::string("OUT_") + in;
    std::string IO = std::string("IN_") + out, OO = std::string("OUT_") + out;
    s.findNode(e)->inputs = {{I, DType::F32}};
    s.findNode(e)->outputs = {{O, DType::F32}};
    s.findNode(x)->inputs = {{IO, DType::F32}};
    s.findNode(x)->outputs = {{OO, DType::F32}};
    NodeId t =
        addTasklet(p, s, name, {{"a", DType::F32}}, {{"b", DType::F32}}, body);
    dst = addAccess(p, s, out);
    addEdge(p, s, src, "", e, I, memlet(in, {Range(0, n)}));
    addEdge(p, s, e, O, t, "a", memlet(in, {Range::point(i)}));
    addEdge(p, s, t, "b", x, IO, memlet(out, {Range::point(i)}));
    addEdge(p, s, x, OO, dst, "", memlet(out, {Range(0, n)}));
  };
  stage("first", "X", "T", "b = a + 1", r.x, r.entry1, r.t1);
  stage("second", "T", "Y", "b = a * 2", r.t2, r.entry2, r.y);
  return r;
}

TEST(InterpTest, SteppingRunsOneTopLevelNodeAtATime) {
  TwoStates ts = twoStates(3);
  std::vector<float> x = {1.0f, -2.0f, 0.5f};
  Interpreter it(ts.p, {{"X", tensorOf(DType::F32, {3}, x)}});
  std::vector<float> zeros(3, 0.0f);

  std::vector<std::pair<NodeId, std::size_t>> expected = {
      {ts.x, 0},  {ts.entry1, 0}, {ts.t1, 0},
      {ts.t2, 1}, {ts.entry2, 1}, {ts.y, 1}};
  std::vector<float> t1(3), y2(3);
  for (std::size_t i = 0; i < 3; ++i) {
    t1[i] = x[i] + 1.0f;
    y2[i] = t1[i] * 2.0f;
  }
  for (auto [node, state] : expected) {
    ASSERT_FALSE(it.done());
    EXPECT_EQ(it.nextNode(), node);
    EXPECT_EQ(it.currentState(), state);
    // Before this step: T is written by the first map, Y by the second.
    bool tWritten = node != ts.x && node != ts.entry1;
    bool yWritten = node == ts.y;
    EXPECT_EQ(contents<float>(it.value("T")), tWritten ? t1 : zeros);
    EXPECT_EQ(contents<float>(it.value("Y")), yWritten ? y2 : zeros);
    it.step();
  }
  EXPECT_TRUE(it.done());
  EXPECT_EQ(it.nextNode(), 0u);
  EXPECT_EQ(contents<float>(it.outputs().at("Y")), y2);
  expectError([&] { it.step(); }, {"finished"});
  expectError([&] { it.value("Nope"); }, {"'Nope'"});
}

TEST(InterpTest, SteppingFollowsEdgesNotInsertionOrder) {
  // Y sits first in State::nodes but receives the copy from T, so it runs
  // last; ties (X before the tasklet) follow insertion order.
  TopLevel tl = topLevelProgram();
  std::vector<float> x = {0.0f, 2.0f, 3.0f, 0.0f};
  Interpreter it(tl.p, {{"X", tensorOf(DType::F32, {4}, x)}});
  std::vector<NodeId> order;
  while (!it.done()) {
    order.push_back(it.nextNode());
    it.step();
    if (order.back() == tl.tasklet) {
      EXPECT_EQ(contents<float>(it.value("T"))[0], 5.0f);
      EXPECT_EQ(contents<float>(it.value("Y"))[0], 0.0f);
    }
  }
  EXPECT_EQ(order, (std::vector<NodeId>{tl.x, tl.tasklet, tl.t, tl.y}));
  EXPECT_EQ(contents<float>(it.value("Y"))[0], 5.0f);
}

} // namespace
} // namespace weir
