/// \file
/// Differential test of the CPU backend: 240 random programs
/// (codegen/random_program.h) compiled and run, their outputs compared bit
/// for bit with the reference interpreter's (NaN equals NaN, -0 equals +0),
/// every other one also with parallel loops on two threads. Plus the
/// generator's own checks (valid programs that interpret and cover the IR)
/// and targeted cases: integer division by zero and inputs written in place.

#include "codegen/cpu/compile.h"
#include "codegen/random_program.h"
#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "ir/mapped_tasklet.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "ir/validate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace weir {
namespace {

using interp::TensorMap;
using ir::DType;
using ir::Expr;
using ir::NodeId;
using ir::Range;
using runtime::Tensor;

constexpr std::uint64_t kPrograms = 240;

// -------------------------------------------------------------- compare --

/// Element `i` of `t` as text, with its bits for floats.
std::string elementText(const Tensor &t, std::int64_t i) {
  std::ostringstream os;
  os.precision(17);
  std::size_t size = ir::dtypeSize(t.dtype());
  std::uint64_t bits = 0;
  std::memcpy(&bits, t.data() + static_cast<std::size_t>(i) * size, size);
  if (ir::isFloat(t.dtype()))
    os << t.getAsDouble(i) << " (bits 0x" << std::hex << bits << ")";
  else if (ir::isSignedInt(t.dtype()))
    os << static_cast<std::int64_t>(t.getAsDouble(i)) << " (bits 0x" << std::hex
       << bits << ")";
  else
    os << bits;
  return os.str();
}

/// Whether element `i` agrees: the same bits, or both NaN, or both zero.
bool sameElement(const Tensor &a, const Tensor &b, std::int64_t i) {
  std::size_t size = ir::dtypeSize(a.dtype());
  const std::byte *pa = a.data() + static_cast<std::size_t>(i) * size;
  const std::byte *pb = b.data() + static_cast<std::size_t>(i) * size;
  if (std::memcmp(pa, pb, size) == 0)
    return true;
  if (!ir::isFloat(a.dtype()))
    return false;
  double x = a.getAsDouble(i), y = b.getAsDouble(i);
  return (std::isnan(x) && std::isnan(y)) || (x == 0 && y == 0);
}

/// The first difference between `want` (the interpreter's) and `got`, or
/// nullopt when they agree.
std::optional<std::string> firstDifference(const TensorMap &want,
                                           const TensorMap &got) {
  for (const auto &[name, w] : want) {
    auto it = got.find(name);
    if (it == got.end())
      return "output '" + name + "' is missing";
    const Tensor &g = it->second;
    if (g.dtype() != w.dtype() || g.shape() != w.shape())
      return "output '" + name + "' is " + g.describe() + ", expected " +
             w.describe();
    for (std::int64_t i = 0; i < w.elementCount(); ++i)
      if (!sameElement(w, g, i))
        return "output '" + name + "' " + w.describe() +
               " differs first at flat index " + std::to_string(i) +
               ": interpreter " + elementText(w, i) + ", compiled " +
               elementText(g, i);
  }
  if (got.size() != want.size())
    return "the compiled program returns " + std::to_string(got.size()) +
           " outputs, the interpreter " + std::to_string(want.size());
  return std::nullopt;
}

/// Whether two tensors hold the same bytes.
bool identical(const Tensor &a, const Tensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), a.byteSize()) == 0;
}

/// Deep copies, so that a later change to the originals shows.
TensorMap cloneAll(const TensorMap &m) {
  TensorMap out;
  for (const auto &[name, t] : m)
    out.emplace(name, t.clone());
  return out;
}

// --------------------------------------------------------- differential --

struct Case {
  std::uint64_t seed;
  bool parallel;
};

/// How GoogleTest shows a Case in failure messages.
void PrintTo(const Case &c, std::ostream *os) {
  *os << "seed " << c.seed << (c.parallel ? ", parallel" : "");
}

/// Runs seed `c.seed` through the interpreter and the compiled code and
/// reports any disagreement with everything needed to reproduce it.
void runCase(const Case &c) {
  ir::Program program = randprog::randomProgram(c.seed);
  TensorMap inputs = randprog::randomInputs(program, c.seed);
  TensorMap pristine = cloneAll(inputs);
  std::string context =
      "seed " + std::to_string(c.seed) +
      (c.parallel ? " (parallelizeSequentialMaps, 2 threads)" : "") + "\n" +
      ir::print(program);

  TensorMap want;
  std::optional<std::string> interpError;
  try {
    want = interp::interpret(program, inputs);
  } catch (const Error &e) {
    interpError = e.what();
  }

  codegen::CompileOptions options;
  if (c.parallel)
    options =
        codegen::CompileOptions{.lower = {.parallelizeSequentialMaps = true,
                                          .minParallelIterations = 1},
                                .threads = 2};
  std::optional<codegen::Executable> exe;
  try {
    exe = codegen::compile(program, options);
  } catch (const Error &e) {
    FAIL() << "compile failed: " << e.what() << "\n" << context;
  }
  context += "\nloop IR:\n" + exe->loopIR();

  TensorMap got;
  std::optional<std::string> runError;
  try {
    got = exe->run(inputs);
  } catch (const Error &e) {
    runError = e.what();
  }

  for (const auto &[name, t] : inputs)
    EXPECT_TRUE(identical(t, pristine.at(name)))
        << "the compiled program changed the caller's input '" << name << "'\n"
        << context;
  if (interpError || runError) {
    // Generated programs never divide by zero; both must agree anyway.
    EXPECT_EQ(interpError.has_value(), runError.has_value())
        << "interpreter: " << interpError.value_or("ok")
        << "\ncompiled: " << runError.value_or("ok") << "\n"
        << context;
    ADD_FAILURE() << "the program failed to run: "
                  << interpError.value_or(runError.value_or("")) << "\n"
                  << context;
    return;
  }
  std::optional<std::string> diff = firstDifference(want, got);
  EXPECT_FALSE(diff) << *diff << "\n" << context;
}

class Differential : public ::testing::TestWithParam<Case> {};

TEST_P(Differential, CompiledMatchesInterpreter) { runCase(GetParam()); }

std::vector<Case> allCases() {
  std::vector<Case> cases;
  for (std::uint64_t seed = 0; seed < kPrograms; ++seed) {
    cases.push_back({seed, false});
    if (seed % 2 == 0)
      cases.push_back({seed, true});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(, Differential, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return "seed" + std::to_string(info.param.seed) +
                                  (info.param.parallel ? "_parallel" : "");
                         });

// ----------------------------------------------------------- generator --

/// What a program exercises, read off the program itself.
struct Features {
  std::map<std::string, int> counts;
  void add(const std::string &feature) { ++counts[feature]; }
};

void scan(const ir::Program &p, Features &f) {
  std::set<std::string> seen;
  auto note = [&](const std::string &what) { seen.insert(what); };
  if (!p.symbols.empty())
    note("symbolic shape");
  if (p.states.size() > 1)
    note("several states");
  for (const auto &[name, c] : p.containers)
    note("dtype " + std::string(ir::dtypeName(c.dtype)));
  // Transients and outputs written in one state and read in a later one.
  std::map<std::string, std::size_t> firstWrite;
  for (std::size_t si = 0; si < p.states.size(); ++si) {
    const ir::State &s = p.states[si];
    ir::ScopeParents parent = ir::scopeParents(s);
    for (const ir::Node &n : s.nodes) {
      if (n.kind == ir::NodeKind::MapEntry) {
        const ir::MapData &m = n.map();
        if (parent[n.id] != 0)
          note("nested map");
        if (m.params.size() >= 3)
          note("map with 3 parameters");
        for (const Range &r : m.ranges) {
          if (auto step = r.step.asConstant(); step && *step > 1)
            note("range step > 1");
          if (r.begin != Expr(0))
            note("range begin != 0");
          for (const Expr &e : {r.begin, r.end})
            for (const std::string &sym : e.freeSymbols())
              if (sym != "N")
                note("range over an outer parameter");
        }
        if (m.schedule != ir::Schedule::Sequential)
          note("schedule " + std::string(ir::scheduleName(m.schedule)));
      }
      if (n.kind == ir::NodeKind::Tasklet && parent[n.id] == 0)
        note("top-level tasklet");
      if (n.kind == ir::NodeKind::Tasklet) {
        const std::string &src = n.tasklet().source;
        for (const char *what :
             {"select(", "&&", "||", " / ", " % ", "exp(", "log(", "sqrt(",
              "tanh(", "min(", "max(", "floor(", "round(", "pow(", "sigmoid("})
          if (src.find(what) != std::string::npos)
            note(std::string("tasklet uses ") + what);
        if (n.tasklet().code->statements.size() > n.outputs.size())
          note("tasklet temporaries");
      }
    }
    std::map<NodeId, int> mapChildren;
    for (const ir::Edge &e : s.edges) {
      const ir::Node *src = s.findNode(e.src), *dst = s.findNode(e.dst);
      if (e.memlet.wcr)
        note("wcr " + std::string(ir::wcrName(*e.memlet.wcr)));
      if (src->kind == ir::NodeKind::Access &&
          dst->kind == ir::NodeKind::Access && !e.memlet.empty()) {
        note("access-to-access copy");
        if (e.memlet.container == dst->access().container)
          note("copy memlet naming the destination");
        if (p.container(src->access().container).shape !=
            p.container(dst->access().container).shape)
          note("copy between shapes");
      }
      if (src->kind == ir::NodeKind::Tasklet &&
          dst->kind == ir::NodeKind::Tasklet && e.memlet.empty())
        note("tasklet hand-over");
      if (src->kind == ir::NodeKind::Access && !e.memlet.empty()) {
        const std::string &c = src->access().container;
        auto w = firstWrite.find(c);
        if (w != firstWrite.end() && w->second < si)
          note(p.container(c).transient ? "transient read in a later state"
                                        : "output read in a later state");
      }
      if (dst->kind == ir::NodeKind::Access && !e.memlet.empty()) {
        const std::string &c = dst->access().container;
        firstWrite.emplace(c, si);
        for (const std::string &in : p.inputs)
          if (in == c)
            note("input written in place");
      }
      if (src->kind == ir::NodeKind::MapEntry && !e.dstConn.empty() &&
          dst->kind != ir::NodeKind::MapEntry)
        ++mapChildren[e.src];
    }
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::MapEntry && parent[n.id] != 0) {
        std::set<NodeId> siblings;
        for (const ir::Node &m : s.nodes)
          if (m.kind != ir::NodeKind::Access &&
              m.kind != ir::NodeKind::MapExit && parent[m.id] == parent[n.id])
            siblings.insert(m.id);
        if (siblings.size() > 1)
          note("map beside another node in a scope");
      }
  }
  for (const std::string &what : seen)
    f.add(what);
}

TEST(DifferentialGenerator, ProgramsAreValidRunAndCoverTheIR) {
  Features f;
  std::int64_t elementsMax = 0;
  for (std::uint64_t seed = 0; seed < kPrograms; ++seed) {
    ir::Program p = randprog::randomProgram(seed);
    // Deterministic: the same seed gives the same program.
    EXPECT_EQ(ir::print(p), ir::print(randprog::randomProgram(seed)));
    std::vector<ir::Diagnostic> diagnostics = ir::validate(p);
    std::string errors;
    for (const ir::Diagnostic &d : diagnostics)
      if (d.severity == ir::Severity::Error)
        errors += d.str() + "\n";
    ASSERT_TRUE(errors.empty()) << "seed " << seed << ":\n"
                                << errors << ir::print(p);
    ASSERT_FALSE(p.outputs.empty()) << "seed " << seed;
    TensorMap inputs = randprog::randomInputs(p, seed);
    interp::Interpreter it(p, inputs);
    try {
      it.run();
    } catch (const Error &e) {
      FAIL() << "seed " << seed << ": " << e.what() << "\n" << ir::print(p);
    }
    for (const auto &[name, c] : p.containers)
      elementsMax = std::max(elementsMax, it.value(name).elementCount());
    scan(p, f);
  }
  EXPECT_LE(elementsMax, 4096);
  std::ostringstream summary;
  for (const auto &[what, n] : f.counts)
    summary << "  " << what << ": " << n << " programs\n";
  std::cout << "features over " << kPrograms << " programs:\n" << summary.str();
  for (const char *what : {"symbolic shape",
                           "several states",
                           "nested map",
                           "map with 3 parameters",
                           "range step > 1",
                           "range begin != 0",
                           "range over an outer parameter",
                           "schedule cpu-parallel",
                           "top-level tasklet",
                           "wcr sum",
                           "wcr max",
                           "wcr min",
                           "wcr prod",
                           "access-to-access copy",
                           "copy memlet naming the destination",
                           "copy between shapes",
                           "tasklet hand-over",
                           "transient read in a later state",
                           "input written in place",
                           "map beside another node in a scope",
                           "tasklet temporaries",
                           "dtype f32",
                           "dtype f64",
                           "dtype i32",
                           "dtype i64",
                           "dtype u8",
                           "dtype i8",
                           "dtype u16",
                           "dtype bool",
                           "dtype f16",
                           "tasklet uses select(",
                           "tasklet uses &&",
                           "tasklet uses ||",
                           "tasklet uses  / ",
                           "tasklet uses  % ",
                           "tasklet uses exp(",
                           "tasklet uses log(",
                           "tasklet uses sqrt(",
                           "tasklet uses tanh(",
                           "tasklet uses min(",
                           "tasklet uses max(",
                           "tasklet uses floor(",
                           "tasklet uses round(",
                           "tasklet uses pow(",
                           "tasklet uses sigmoid("})
    EXPECT_GE(f.counts[what], 3) << "too few programs with: " << what << "\n"
                                 << summary.str();
}

// ------------------------------------------------------------- targeted --

ir::Container argument(std::string name, DType dtype, std::vector<Expr> shape) {
  ir::Container c;
  c.name = std::move(name);
  c.dtype = dtype;
  c.shape = std::move(shape);
  c.strides = ir::rowMajorStrides(c.shape);
  c.transient = false;
  return c;
}

ir::Memlet memlet(std::string container, std::vector<Range> dims,
                  std::optional<ir::Wcr> wcr = std::nullopt) {
  return ir::Memlet{std::move(container), ir::Subset{std::move(dims)}, wcr};
}

template <typename T>
Tensor tensorOf(DType dtype, std::vector<std::int64_t> shape,
                const std::vector<T> &data) {
  Tensor t(dtype, std::move(shape));
  std::memcpy(t.mutableData(), data.data(), data.size() * sizeof(T));
  return t;
}

template <typename T> std::vector<T> contents(const Tensor &t) {
  std::vector<T> v(static_cast<std::size_t>(t.elementCount()));
  std::memcpy(v.data(), t.data(), v.size() * sizeof(T));
  return v;
}

/// C[i] = A[i] <op> B[i] over i32[n].
ir::Program divisionProgram(const std::string &op, std::int64_t n) {
  ir::Program p;
  p.name = "division";
  for (const char *name : {"A", "B", "C"})
    p.addContainer(argument(name, DType::I32, {n}));
  p.inputs = {"A", "B"};
  p.outputs = {"C"};
  ir::State &s = p.states.emplace_back();
  s.name = "main";
  ir::AccessNodes access;
  Expr i = Expr::symbol("i");
  ir::addMappedTasklet(p, s, "divide", {"i"}, {Range(0, n)},
                       {{"a", "A", {i}}, {"b", "B", {i}}}, "c = a " + op + " b",
                       {{"c", "C", {i}}}, access);
  return p;
}

template <typename F> void expectWeirError(F f, const std::string &who) {
  try {
    f();
    ADD_FAILURE() << who << " did not throw";
  } catch (const Error &) {
  }
}

TEST(DifferentialTargeted, IntegerDivisionByZeroThrowsInBoth) {
  for (const char *op : {"/", "%"}) {
    ir::Program p = divisionProgram(op, 5);
    TensorMap inputs = {
        {"A", tensorOf<std::int32_t>(DType::I32, {5}, {7, -7, 9, 1, 4})},
        {"B", tensorOf<std::int32_t>(DType::I32, {5}, {2, 3, -2, 0, 1})}};
    SCOPED_TRACE(op);
    expectWeirError([&] { interp::interpret(p, inputs); }, "the interpreter");
    codegen::Executable exe = codegen::compile(p);
    expectWeirError([&] { exe.run(inputs); }, "the compiled program");
    // Without the zero both run, and agree.
    TensorMap fine = {
        {"A", tensorOf<std::int32_t>(DType::I32, {5}, {7, -7, 9, 1, 4})},
        {"B", tensorOf<std::int32_t>(DType::I32, {5}, {2, 3, -2, -1, 1})}};
    std::optional<std::string> diff =
        firstDifference(interp::interpret(p, fine), exe.run(fine));
    EXPECT_FALSE(diff) << *diff;
  }
}

TEST(DifferentialTargeted, GuardedDivisionByZeroDoesNotThrow) {
  ir::Program p = divisionProgram("/", 4);
  for (ir::Node &n : p.states[0].nodes.editable())
    if (n.kind == ir::NodeKind::Tasklet) {
      ir::TaskletData data;
      data.source = "c = select(b != 0, a / b, -1)";
      data.code =
          std::make_shared<ir::tasklet::Code>(ir::tasklet::parse(data.source));
      n.payload = data;
    }
  TensorMap inputs = {
      {"A", tensorOf<std::int32_t>(DType::I32, {4}, {7, -7, 9, 1})},
      {"B", tensorOf<std::int32_t>(DType::I32, {4}, {0, 3, 0, 1})}};
  TensorMap want = interp::interpret(p, inputs);
  EXPECT_EQ(contents<std::int32_t>(want.at("C")),
            (std::vector<std::int32_t>{-1, -2, -1, 1}));
  std::optional<std::string> diff =
      firstDifference(want, codegen::compile(p).run(inputs));
  EXPECT_FALSE(diff) << *diff;
}

/// X (an input, f32[n]) doubled in place, then Y[i] = X[i] + 1 in a second
/// state; X is also an input of the first state's copy into Z.
ir::Program inPlaceProgram(std::int64_t n) {
  ir::Program p;
  p.name = "in_place";
  p.addContainer(argument("X", DType::F32, {n}));
  p.addContainer(argument("Y", DType::F32, {n}));
  p.inputs = {"X"};
  p.outputs = {"Y"};
  Expr i = Expr::symbol("i");
  {
    ir::State &s = p.states.emplace_back();
    s.name = "double";
    NodeId in = ir::addAccess(p, s, "X");
    auto [entry, exit] = ir::addMap(p, s, "double", {"i"}, {Range(0, n)});
    s.findNode(entry)->inputs = {{"IN_X", DType::F32}};
    s.findNode(entry)->outputs = {{"OUT_X", DType::F32}};
    s.findNode(exit)->inputs = {{"IN_X", DType::F32}};
    s.findNode(exit)->outputs = {{"OUT_X", DType::F32}};
    NodeId t = ir::addTasklet(p, s, "double", {{"x", DType::F32}},
                              {{"y", DType::F32}}, "y = x * 2.0");
    NodeId out = ir::addAccess(p, s, "X");
    ir::addEdge(p, s, in, "", entry, "IN_X", memlet("X", {Range(0, n)}));
    ir::addEdge(p, s, entry, "OUT_X", t, "x", memlet("X", {Range::point(i)}));
    ir::addEdge(p, s, t, "y", exit, "IN_X", memlet("X", {Range::point(i)}));
    ir::addEdge(p, s, exit, "OUT_X", out, "", memlet("X", {Range(0, n)}));
  }
  {
    ir::State &s = p.states.emplace_back();
    s.name = "add";
    ir::AccessNodes access;
    ir::addMappedTasklet(p, s, "add", {"i"}, {Range(0, n)}, {{"x", "X", {i}}},
                         "y = x + 1.0", {{"y", "Y", {i}}}, access);
  }
  return p;
}

TEST(DifferentialTargeted, InputsWrittenInPlaceLeaveTheCallersTensor) {
  ir::Program p = inPlaceProgram(6);
  ASSERT_FALSE(ir::hasErrors(ir::validate(p))) << ir::print(p);
  std::vector<float> x = {1.5f, -2.0f, 0.25f, 3.0f, -0.0f, 100.0f};
  TensorMap inputs = {{"X", tensorOf(DType::F32, {6}, x)}};
  TensorMap want = interp::interpret(p, inputs);
  EXPECT_EQ(contents<float>(inputs.at("X")), x);
  codegen::Executable exe = codegen::compile(p);
  TensorMap got = exe.run(inputs);
  EXPECT_EQ(contents<float>(inputs.at("X")), x)
      << "the compiled program wrote the caller's input\n"
      << exe.loopIR();
  std::optional<std::string> diff = firstDifference(want, got);
  EXPECT_FALSE(diff) << *diff << "\n" << exe.loopIR();
  std::vector<float> y = contents<float>(got.at("Y"));
  for (std::size_t k = 0; k < x.size(); ++k)
    EXPECT_EQ(y[k], x[k] * 2.0f + 1.0f) << "k = " << k;
  // A second run sees the same, untouched input.
  EXPECT_FALSE(firstDifference(want, exe.run(inputs)));
}

// The parallel variants above mean something only if their programs do get
// parallel loops.
TEST(DifferentialGenerator, ParallelVariantsGetParallelLoops) {
  codegen::LowerOptions options;
  options.parallelizeSequentialMaps = true;
  options.minParallelIterations = 1;
  int parallel = 0;
  for (std::uint64_t seed = 0; seed < 240; seed += 2) {
    std::string text =
        codegen::print(codegen::lower(randprog::randomProgram(seed), options));
    parallel += text.find("parallel for") != std::string::npos;
  }
  EXPECT_GE(parallel, 40) << "of 120 programs";
}

} // namespace
} // namespace weir
