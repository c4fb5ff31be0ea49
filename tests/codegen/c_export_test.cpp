/// \file
/// The readable C++ export (codegen/c/export.h): the text of a small export,
/// and programs exported, compiled with g++ -fopenmp as a shared library,
/// loaded and run on random inputs, their outputs compared bit for bit with
/// the reference interpreter's and the JIT's. Skipped when g++ is absent.

#include "codegen/c/export.h"
#include "codegen/cpu/compile.h"
#include "codegen/lower/lower.h"
#include "codegen/past_the_end.h"
#include "expansion/single_op.h"
#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "ir/mapped_tasklet.h"
#include "onnx/import.h"
#include "transforms/operators/expansion.h"
#include "transforms/registry.h"
#include "unit/ir_builders.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <sstream>

namespace weir::codegen {
namespace {

using namespace weir::ir;
using namespace weir::ir::builders;
namespace fs = std::filesystem;
using interp::TensorMap;
using runtime::Tensor;

bool haveGxx() {
  static const bool have = std::system("g++ --version >/dev/null 2>&1") == 0;
  return have;
}

#define SKIP_WITHOUT_GXX()                                                     \
  if (!haveGxx())                                                              \
  GTEST_SKIP() << "g++ is not installed, so the export cannot be compiled"

std::string readFile(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// An export written to a fresh temporary folder, compiled as a shared
/// library with the flags its header names, and loaded.
class CompiledExport {
public:
  using Entry = int (*)(void **, const std::int64_t *);

  explicit CompiledExport(const LoopFunction &f) : source_(exportCpp(f)) {
    std::string tmpl = (fs::temp_directory_path() / "weir-cexp-XXXXXX");
    if (!mkdtemp(tmpl.data())) {
      error_ = "mkdtemp failed";
      return;
    }
    dir_ = tmpl;
    fs::path cpp = dir_ / "export.cpp", lib = dir_ / "libexport.so";
    std::ofstream(cpp) << source_;
    std::string command =
        "g++ -std=c++17 -O2 -fopenmp -ffp-contract=off -Wall -Wextra "
        "-shared -fPIC '" +
        cpp.string() + "' -o '" + lib.string() + "' > '" +
        (dir_ / "log").string() + "' 2>&1";
    int rc = std::system(command.c_str());
    log_ = readFile(dir_ / "log");
    if (rc != 0) {
      error_ = "g++ failed:\n" + log_ + "\nsource:\n" + source_;
      return;
    }
    // Never unloaded: OpenMP's idle worker threads outlive the call and
    // would crash if libgomp (loaded with the export) went away.
    handle_ = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle_) {
      error_ = std::string("dlopen: ") + dlerror();
      return;
    }
    entry_ = reinterpret_cast<Entry>(dlsym(handle_, exportedSymbol(f).c_str()));
    if (!entry_)
      error_ = "no symbol " + exportedSymbol(f);
  }
  ~CompiledExport() {
    if (!dir_.empty()) {
      std::error_code ignored;
      fs::remove_all(dir_, ignored);
    }
  }
  CompiledExport(const CompiledExport &) = delete;
  CompiledExport &operator=(const CompiledExport &) = delete;

  /// Empty when compiling and loading worked.
  const std::string &error() const { return error_; }
  /// What g++ printed (warnings under -Wall -Wextra).
  const std::string &log() const { return log_; }
  const std::string &source() const { return source_; }
  Entry entry() const { return entry_; }

private:
  std::string source_, log_, error_;
  fs::path dir_;
  void *handle_ = nullptr;
  Entry entry_ = nullptr;
};

/// Runs the export of `f` (lowered from `program`) the way a deployment
/// would: inputs copied, outputs zero-filled, constants from the program.
/// Returns the entry point's status and fills `outputs`.
int runExport(const CompiledExport &lib, const Program &program,
              const LoopFunction &f, const TensorMap &inputs,
              const Bindings &given, TensorMap &outputs) {
  Bindings symbols = interp::bindInputs(program, inputs, given);
  std::map<std::string, Tensor> buffers;
  std::vector<void *> pointers;
  for (const BufferParam &b : f.buffers) {
    const Container &c = program.container(b.name);
    std::vector<std::int64_t> shape = interp::containerShape(c, symbols);
    Tensor t;
    if (b.role == BufferParam::Role::Input)
      t = inputs.at(b.name).clone();
    else if (b.role == BufferParam::Role::Output)
      t = Tensor(b.dtype, shape);
    else
      t = Tensor::fromBlob(b.dtype, shape, c.constant).clone();
    pointers.push_back(t.elementCount() ? t.mutableData() : nullptr);
    buffers.emplace(b.name, t);
  }
  std::vector<std::int64_t> values;
  for (const std::string &s : f.symbols)
    values.push_back(symbols.at(s));
  int status = lib.entry()(pointers.data(), values.data());
  for (const std::string &name : program.outputs)
    outputs[name] = buffers.at(name);
  return status;
}

void expectBitEqual(const Tensor &got, const Tensor &want,
                    const std::string &what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  if (std::memcmp(got.data(), want.data(), got.byteSize()) == 0)
    return;
  std::size_t size = dtypeSize(got.dtype());
  // A NaN's sign and payload are unspecified by IEEE 754 and by LLVM (g++
  // folds 1 + -x into 1 - x, which flips a NaN's sign), so any NaN equals
  // any NaN; every other value must match bit for bit.
  for (std::int64_t i = 0; i < got.elementCount(); ++i)
    if (std::memcmp(got.data() + i * size, want.data() + i * size, size) &&
        !(std::isnan(got.getAsDouble(i)) && std::isnan(want.getAsDouble(i)))) {
      ADD_FAILURE() << what << ": element " << i << " is " << got.getAsDouble(i)
                    << ", expected " << want.getAsDouble(i);
      return;
    }
}

void expectClose(const Tensor &got, const Tensor &want,
                 const std::string &what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (std::int64_t i = 0; i < got.elementCount(); ++i) {
    double a = got.getAsDouble(i), b = want.getAsDouble(i);
    if (!(std::fabs(a - b) <= 1e-4 + 1e-4 * std::fabs(b))) {
      ADD_FAILURE() << what << ": element " << i << " is " << a << ", expected "
                    << b;
      return;
    }
  }
}

/// How the export's results must relate to the JIT's: equal bit for bit,
/// or close where the JIT calls OpenBLAS sgemm (which sums in float, in its
/// own order) and the export sums like the interpreter.
enum class Jit { BitExact, Close };

/// Lowers, exports, compiles and runs `program`; its outputs must equal the
/// interpreter's (and the JIT's, see Jit) bit for bit, and g++ must not warn.
void checkAgainstOracles(const Program &program, const TensorMap &inputs,
                         const Bindings &given = {},
                         Jit jitCheck = Jit::BitExact) {
  LoopFunction f = lower(program);
  CompiledExport lib(f);
  ASSERT_EQ(lib.error(), "");
  EXPECT_EQ(lib.log(), "") << "g++ warned about:\n" << lib.source();
  TensorMap got;
  EXPECT_EQ(runExport(lib, program, f, inputs, given, got), 0);
  TensorMap reference = interp::interpret(program, inputs, {given});
  TensorMap jit = compile(program).run(inputs, {given});
  for (const std::string &name : program.outputs) {
    expectBitEqual(got.at(name), reference.at(name),
                   "'" + name + "' against the interpreter");
    if (jitCheck == Jit::BitExact)
      expectBitEqual(got.at(name), jit.at(name),
                     "'" + name + "' against the JIT");
    else
      expectClose(got.at(name), jit.at(name), "'" + name + "' against the JIT");
  }
}

/// `n` random values of `dtype`: uniform in [-scale, scale] for floats,
/// uniformly random bits for integers, with edge values mixed in.
Tensor randomTensor(DType dtype, std::int64_t n, unsigned seed,
                    double scale = 4) {
  Tensor t(dtype, {n});
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> real(-scale, scale);
  std::size_t size = dtypeSize(dtype);
  for (std::int64_t i = 0; i < n; ++i) {
    if (isFloat(dtype)) {
      t.setFromDouble(i, real(gen));
    } else {
      std::uint64_t bits = gen();
      std::memcpy(t.mutableData() + i * size, &bits, size);
    }
  }
  if (dtype == DType::Bool)
    for (std::int64_t i = 0; i < n; ++i)
      t.mutableData()[i] = std::byte(t.data()[i] != std::byte(0) ? 1 : 0);
  return t;
}

/// A function written by hand: a parallel loop over rows, each with a
/// scratch allocation filled by a vectorized loop (step 2) and summed into a
/// local, then halved when above 2 (a local named like the symbol `N`).
/// Its buffer names need sanitizing.
LoopFunction scratchSum() {
  using ir::tasklet::BinaryOp;
  LoopFunction f;
  f.name = "scratch sum";
  Expr n = Expr::symbol("N"), i = Expr::symbol("i"), j = Expr::symbol("j");
  f.buffers = {{"my-input.0", DType::F32, {n}, BufferParam::Role::Input},
               {"for", DType::F32, {n}, BufferParam::Role::Output, true}};
  f.symbols = {"N"};
  auto f32 = [](double v) { return floatLiteral(DType::F32, v); };
  ValuePtr x = load(DType::F32, "my-input.0", i);
  StmtPtr fill = forLoop(
      "j", 0, 8, 2, ForKind::Vectorized,
      {store("tmp", floorDiv(j, 2), binary(BinaryOp::Add, x, f32(1.0)))});
  ValuePtr acc = local(DType::F32, "acc");
  StmtPtr sum = forLoop(
      "j", 0, 4, 1, ForKind::Serial,
      {assign("acc", binary(BinaryOp::Add, acc, load(DType::F32, "tmp", j)))});
  StmtPtr halve = ifThen(binary(BinaryOp::Gt, acc, f32(2.0)),
                         {assign("N", binary(BinaryOp::Mul, acc, f32(0.5))),
                          store("for", i, local(DType::F32, "N"))});
  f.body = block({forLoop("i", 0, n, 1, ForKind::Parallel,
                          {allocate("tmp", DType::F32, 4,
                                    {fill, assign("acc", f32(0)), sum,
                                     store("for", i, acc), halve})})});
  return f;
}

TEST(CExport, PrintsReadableLoopsAndPragmas) {
  std::string src = exportCpp(scratchSum());
  for (const char *expected :
       {"// scratch_sum.cpp: the Weir program 'scratch sum'",
        "g++ -std=c++17 -O2 -fopenmp -ffp-contract=off",
        "extern \"C\" int weir_scratch_sum(void **buffers, const int64_t "
        "*symbols) {",
        "  const float *my_input_0 = static_cast<const float "
        "*>(buffers[0]);\n"
        "  float *for_ = static_cast<float *>(buffers[1]);\n"
        "  const int64_t N = symbols[0];\n",
        "  #pragma omp parallel for\n"
        "  for (int64_t i = 0; i < N; ++i) {\n"
        "    {\n"
        "      float *tmp = static_cast<float *>(weir_alloc(4, "
        "sizeof(float)));\n"
        "      #pragma omp simd\n"
        "      for (int64_t j = 0; j < 8; j += 2) {\n"
        "        tmp[weir_floordiv(j, 2)] = my_input_0[i] + 1.0f;\n"
        "      }\n"
        "      float acc = 0.0f;\n"
        "      for (int64_t j = 0; j < 4; ++j) {\n"
        "        acc = acc + tmp[j];\n"
        "      }\n"
        "      for_[i] = acc;\n"
        "      if (acc > 2.0f) {\n"
        "        float N_2 = acc * 0.5f;\n"
        "        for_[i] = N_2;\n"
        "      }\n"
        "      std::free(tmp);\n"
        "    }\n"
        "  }\n"
        "  return weir_status.load();\n}\n"})
    EXPECT_NE(src.find(expected), std::string::npos) << "missing:\n"
                                                     << expected << "\nin:\n"
                                                     << src;
}

TEST(CExport, HandWrittenFunctionRuns) {
  SKIP_WITHOUT_GXX();
  LoopFunction f = scratchSum();
  CompiledExport lib(f);
  ASSERT_EQ(lib.error(), "");
  EXPECT_EQ(lib.log(), "");
  const std::int64_t n = 37;
  Tensor x = randomTensor(DType::F32, n, 1), y(DType::F32, {n});
  void *buffers[] = {x.mutableData(), y.mutableData()};
  ASSERT_EQ(lib.entry()(buffers, &n), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    float t = x.as<float>()[i] + 1.0f, acc = 0;
    for (int j = 0; j < 4; ++j)
      acc += t;
    EXPECT_EQ(y.as<float>()[i], acc > 2.0f ? acc * 0.5f : acc) << i;
  }
}

TEST(CExport, LoweredParallelMapGetsTheOpenMPPragma) {
  LowerOptions options;
  options.minParallelIterations = 1;
  std::string src = exportCpp(lower(matmulWithWcr(8, 8, 8), options));
  EXPECT_NE(src.find("#pragma omp parallel for\n  for (int64_t i = 0; i < 8; "
                     "++i) {"),
            std::string::npos)
      << src;
}

TEST(CExport, ElementwiseWithASymbolicSizeMatchesTheOracles) {
  SKIP_WITHOUT_GXX();
  Program p = elementwiseAdd(Expr::symbol("n"));
  checkAgainstOracles(p, {{"A", randomTensor(DType::F32, 1001, 1)},
                          {"B", randomTensor(DType::F32, 1001, 2)}});
}

TEST(CExport, MatmulWithWcrMatchesTheOracles) {
  SKIP_WITHOUT_GXX();
  Program p =
      matmulWithWcr(Expr::symbol("M"), Expr::symbol("N"), Expr::symbol("K"));
  checkAgainstOracles(
      p, {{"A", randomTensor(DType::F32, 17 * 29, 3).reshaped({17, 29})},
          {"B", randomTensor(DType::F32, 29 * 13, 4).reshaped({29, 13})}});
}

TEST(CExport, NestedMapsMatchTheOracles) {
  SKIP_WITHOUT_GXX();
  checkAgainstOracles(
      nestedMaps(5, 7),
      {{"X", randomTensor(DType::F32, 35, 5).reshaped({5, 7})}});
}

/// The inputs of typedSemantics.
const std::vector<std::pair<std::string, DType>> &typedArgs() {
  static const std::vector<std::pair<std::string, DType>> args = {
      {"a", DType::I32}, {"b", DType::I32},  {"x", DType::F32},
      {"y", DType::F32}, {"c", DType::U8},   {"w", DType::I64},
      {"h", DType::F16}, {"g", DType::BF16}, {"m", DType::Bool},
      {"d", DType::F64}};
  return args;
}

/// A program of elementwise maps over `i in 0:n` that exercises the typed
/// semantics the export must reproduce: wrapping integers, C division with
/// MIN / -1, guarded division, saturating casts, f16/bf16 rounding, NaN in
/// min/max, round half to even, the math functions, f64 and bool logic.
Program typedSemantics(std::int64_t n) {
  Program p;
  p.name = "typed semantics";
  State &s = p.states.emplace_back();
  s.name = "main";
  for (const auto &[name, dtype] : typedArgs()) {
    p.addContainer(argument(name, dtype, {n}));
    p.inputs.push_back(name);
  }
  AccessNodes access;
  Expr i = Expr::symbol("i");
  auto map = [&](const std::string &label, std::vector<std::string> ins,
                 const std::string &code,
                 std::vector<std::pair<std::string, DType>> outs,
                 Schedule schedule = Schedule::Sequential) {
    std::vector<MappedInput> mi;
    for (const std::string &in : ins)
      mi.push_back({in, in, {i}});
    std::vector<MappedOutput> mo;
    for (auto &[name, dtype] : outs) {
      p.addContainer(argument(name, dtype, {n}));
      p.outputs.push_back(name);
      mo.push_back({"o_" + name, name, {i}, std::nullopt});
    }
    addMappedTasklet(p, s, label, {"i"}, {Range(0, n)}, mi, code, mo, access,
                     schedule);
  };
  map("intdiv", {"a", "b"},
      "o_q = select(b != 0, a / b, 0)\no_r = select(b != 0, a % b, 0)",
      {{"q", DType::I32}, {"r", DType::I32}}, Schedule::CpuParallel);
  map("wrap", {"a", "b", "c", "w"},
      "o_cc = c * c + 200\no_ww = w * w - w\no_aa = -a + abs(a) * 3\n"
      "o_mm = min(a, b) - max(a, b)",
      {{"cc", DType::U8},
       {"ww", DType::I64},
       {"aa", DType::I32},
       {"mm", DType::I32}},
      Schedule::Vectorized);
  map("casts", {"x"},
      "o_x8 = i8(x * 100.0)\no_x16 = u16(x * 10000.0)\n"
      "o_x64 = i64(x * 1e18)\no_xu = u64(x * 1e19)\no_xb = bool(x)",
      {{"x8", DType::I8},
       {"x16", DType::U16},
       {"x64", DType::I64},
       {"xu", DType::U64},
       {"xb", DType::Bool}});
  map("halves", {"x", "h", "g", "d"},
      "o_hh = f16(x) * 3.0\no_hx = f32(h) + x\no_gg = bf16(x) + g\n"
      "o_hi = i32(h * 100.0)\no_hd = f16(d)\no_gd = bf16(d * 1e30)",
      {{"hh", DType::F16},
       {"hx", DType::F32},
       {"gg", DType::BF16},
       {"hi", DType::I32},
       {"hd", DType::F16},
       {"gd", DType::BF16}});
  map("floats", {"x", "y"},
      "o_mx = max(x, y)\no_mn = min(x, y)\no_rd = round(x * 2.0)\n"
      "o_sg = sigmoid(x) + rsqrt(abs(y))\n"
      "o_tr = tanh(x) * erf(y) + exp(x) - log(abs(y))\n"
      "o_pw = pow(abs(x), y) + sqrt(abs(x)) + floor(x) * ceil(y) + x % y\n"
      // Functions that can fail (asin of 2.5e29) each get their own
      // output, so that a NaN in one names the function that made it.
      "o_tg = sin(x) + cos(y) + tan(x) + atan(y) + sinh(x) + cosh(y) + "
      "asinh(x)\no_as = asin(x / 4.0)\no_ac = acos(y / 4.0)\n"
      "o_ach = acosh(abs(y) + 1.0)\no_at = atanh(x / 5.0)",
      {{"mx", DType::F32},
       {"mn", DType::F32},
       {"rd", DType::F32},
       {"sg", DType::F32},
       {"tr", DType::F32},
       {"pw", DType::F32},
       {"tg", DType::F32},
       {"as", DType::F32},
       {"ac", DType::F32},
       {"ach", DType::F32},
       {"at", DType::F32}},
      Schedule::Vectorized);
  map("doubles", {"d", "x", "w"},
      "o_dd = d * 0.1 + f64(x) / 3.0\no_di = i32(d * 1e9)\n"
      "o_dm = max(d, f64(x))\no_dw = f64(w) + f64(x)",
      {{"dd", DType::F64},
       {"di", DType::I32},
       {"dm", DType::F64},
       {"dw", DType::F64}});
  map("logic", {"x", "y", "b", "m", "a", "w", "c"},
      "o_mb = x > y && b != 0 || !m\no_sel = select(m, x, y)\n"
      "o_af = f32(w) + f32(c)\no_ah = f16(w)\no_ag = bf16(a)\n"
      "o_ab = bool(a) == m",
      {{"mb", DType::Bool},
       {"sel", DType::F32},
       {"af", DType::F32},
       {"ah", DType::F16},
       {"ag", DType::BF16},
       {"ab", DType::Bool}});
  return p;
}

/// Random inputs for typedSemantics with the edge cases at the front.
TensorMap typedInputs(std::int64_t n) {
  TensorMap in;
  unsigned seed = 10;
  for (const auto &[name, dtype] : typedArgs())
    in[name] = randomTensor(dtype, n, seed++);
  auto *a = in["a"].mutableAs<std::int32_t>();
  auto *b = in["b"].mutableAs<std::int32_t>();
  const std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
  std::int32_t as[] = {kMin, kMin, 7, -7, 7, -7, 0, 5, kMin, -1};
  std::int32_t bs[] = {-1, 1, 2, 2, -2, -2, 0, 0, kMin, kMin};
  for (int k = 0; k < 10; ++k) {
    a[k] = as[k];
    b[k] = bs[k];
  }
  for (int k = 10; k < 20; ++k) // small divisors, often zero
    b[k] = k % 3 - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  double xs[] = {nan,  inf,    -inf, -0.0,        0.25, 0.75,  -1.25,
                 1e30, -1e-30, 2.5,  65520.0 / 3, 1e-7, 3.999, -4.0};
  double ys[] = {1.0, nan, 2.0, 0.0, -0.0, nan, inf, 1.0, 2.0, -3.0};
  for (std::size_t k = 0; k < std::size(xs); ++k)
    in["x"].setFromDouble(static_cast<std::int64_t>(k), xs[k]);
  for (std::size_t k = 0; k < std::size(ys); ++k)
    in["y"].setFromDouble(static_cast<std::int64_t>(k) + 3, ys[k]);
  std::uint16_t hs[] = {0x7e00, 0x7c00, 0xfc00, 0x0001,
                        0x03ff, 0x8200, 0x7bff, 0xfd01};
  std::memcpy(in["h"].mutableData(), hs, sizeof hs);
  double ds[] = {nan,  1e300,  -1e300, 65519.0,      65520.0,
                 1e-8, 3.0e-5, -inf,   2147483647.9, -2147483649.0};
  for (std::size_t k = 0; k < std::size(ds); ++k)
    in["d"].setFromDouble(static_cast<std::int64_t>(k), ds[k]);
  in["w"].mutableAs<std::int64_t>()[0] =
      std::numeric_limits<std::int64_t>::min();
  in["w"].mutableAs<std::int64_t>()[1] = (std::int64_t(1) << 53) + 1;
  return in;
}

TEST(CExport, TypedSemanticsMatchTheOracles) {
  SKIP_WITHOUT_GXX();
  checkAgainstOracles(typedSemantics(257), typedInputs(257));
}

TEST(CExport, RandomDrawsMatchTheOracles) {
  // hash() (SplitMix64) in the export's preamble: training-mode Dropout
  // and Bernoulli draw the interpreter's and the JIT's numbers.
  SKIP_WITHOUT_GXX();
  Program coin = expansion_testing::single(
      "Bernoulli", {{"seed", 9.0}}, {{"input", "p", {257}}},
      {{"output", "b", {257}}});
  ASSERT_TRUE(operators::expandAll(coin).skipped.empty());
  Tensor p = randomTensor(DType::F32, 257, 5, 0.5);
  for (std::int64_t i = 0; i < 257; ++i)
    p.setFromDouble(i, p.getAsDouble(i) + 0.5);
  checkAgainstOracles(coin, {{"p", p}});
  Program dropout = expansion_testing::single(
      "Dropout", {{"seed", std::int64_t(1)}},
      {{"data", "x", {257}},
       {"ratio", "r", {}, DType::F32},
       {"training_mode", "t", {}, DType::Bool, {1}}},
      {{"output", "y", {257}}, {"mask", "m", {257}, DType::Bool}});
  ASSERT_TRUE(operators::expandAll(dropout).skipped.empty());
  Tensor ratio(DType::F32, {});
  ratio.setFromDouble(0, 0.3);
  checkAgainstOracles(dropout,
                      {{"x", randomTensor(DType::F32, 257, 6)}, {"r", ratio}});
}

TEST(CExport, IntegerDivisionByZeroIsReported) {
  SKIP_WITHOUT_GXX();
  Program p;
  p.name = "divide";
  State &s = p.states.emplace_back();
  s.name = "main";
  for (const char *name : {"a", "b", "q"})
    p.addContainer(argument(name, DType::I16, {8}));
  p.inputs = {"a", "b"};
  p.outputs = {"q"};
  AccessNodes access;
  Expr i = Expr::symbol("i");
  addMappedTasklet(p, s, "div", {"i"}, {Range(0, 8)},
                   {{"a", "a", {i}}, {"b", "b", {i}}}, "q = a / b",
                   {{"q", "q", {i}, std::nullopt}}, access,
                   Schedule::CpuParallel);
  TensorMap in = {{"a", randomTensor(DType::I16, 8, 1)},
                  {"b", randomTensor(DType::I16, 8, 2)}};
  in["b"].mutableAs<std::int16_t>()[5] = 0;
  LoopFunction f = lower(p);
  CompiledExport lib(f);
  ASSERT_EQ(lib.error(), "");
  TensorMap out;
  EXPECT_EQ(runExport(lib, p, f, in, {}, out), 1);
  EXPECT_THROW(interp::interpret(p, in), Error);
  EXPECT_THROW(compile(p).run(in), Error);
  // Without the zero, the status is 0 again.
  in["b"].mutableAs<std::int16_t>()[5] = 3;
  EXPECT_EQ(runExport(lib, p, f, in, {}, out), 0);
}

TEST(CExport, AnAccessOutOfBoundsIsStoppedAndReported) {
  // The read past the end of a is guarded (codegen/past_the_end.h).
  SKIP_WITHOUT_GXX();
  Program p = fixtures::readsPastTheEnd();
  LoopFunction f = lower(p);
  CompiledExport lib(f);
  ASSERT_EQ(lib.error(), "");
  EXPECT_NE(lib.source().find("weir_check("), std::string::npos);
  TensorMap in = {{"x", randomTensor(DType::F32, 4, 1)}}, out;
  EXPECT_EQ(runExport(lib, p, f, in, {}, out), 3);
  // Within bounds, the same guard passes.
  p = fixtures::readsInside();
  LoopFunction inside = lower(p, {.checkAllAccesses = true});
  CompiledExport checked(inside);
  ASSERT_EQ(checked.error(), "");
  EXPECT_EQ(runExport(checked, p, inside, in, {}, out), 0);
  EXPECT_EQ(out.at("y").getAsDouble(3), in.at("x").getAsDouble(3));
}

/// A bundled model (batch N = 2), imported and expanded with `choice`, and
/// random inputs for it.
std::pair<Program, TensorMap>
bundledModel(const std::string &file,
             const std::map<std::string, std::string> &choice) {
  onnx_import::ImportResult r = onnx_import::importModel(
      std::string(WEIR_SOURCE_DIR) + "/resources/models/" + file);
  Program p = std::move(r.program);
  operators::ExpandAllReport report = operators::expandAll(p, choice);
  EXPECT_TRUE(report.skipped.empty()) << report.skipped.front();
  TensorMap in;
  unsigned seed = 30;
  for (const std::string &name : p.inputs) {
    std::vector<std::int64_t> shape =
        interp::containerShape(p.container(name), {{"N", 2}});
    std::int64_t count = 1;
    for (std::int64_t d : shape)
      count *= d;
    in[name] =
        randomTensor(p.container(name).dtype, count, seed++, 1).reshaped(shape);
  }
  return {std::move(p), std::move(in)};
}

TEST(CExport, BundledMlpWithLoopsMatchesTheOracles) {
  SKIP_WITHOUT_GXX();
  auto [p, in] =
      bundledModel("mlp.onnx", {{"MatMul", "pure"}, {"Gemm", "pure"}});
  checkAgainstOracles(p, in);
}

TEST(CExport, BundledMlpWithSgemmMatchesTheInterpreter) {
  SKIP_WITHOUT_GXX();
  auto [p, in] = bundledModel("mlp.onnx", {});
  std::string src = exportCpp(lower(p));
  EXPECT_NE(src.find("  weir_sgemm("), std::string::npos) << src;
  checkAgainstOracles(p, in, {}, Jit::Close);
}

TEST(CExport, BundledCnnMatchesTheOracles) {
  SKIP_WITHOUT_GXX();
  auto [p, in] = bundledModel(
      "cnn.onnx", {{"MatMul", "pure"}, {"Gemm", "pure"}, {"Conv", "pure"}});
  checkAgainstOracles(p, in);
}

TEST(CExport, BundledCnnWithGemmEpiloguesMatchesTheInterpreter) {
  SKIP_WITHOUT_GXX();
  auto [p, in] = bundledModel("cnn.onnx", {});
  int fused = 0;
  for (const char *id : {"init-fusion", "epilogue-fusion"}) {
    const transforms::Transformation &t =
        *transforms::requireTransformation(id);
    for (bool progress = true; progress;) {
      progress = false;
      for (const transforms::Match &m : transforms::findMatches(p, t))
        if (transforms::checkMatch(p, t, m)) {
          p = transforms::applyChecked(p, t, m).program;
          progress = true;
          ++fused;
          break;
        }
    }
  }
  EXPECT_GT(fused, 0);
  std::string src = exportCpp(lower(p));
  // The epilogue: a loop nest over C right after the sgemm call.
  EXPECT_NE(src.find("for (int64_t ei = 0;"), std::string::npos) << src;
  checkAgainstOracles(p, in, {}, Jit::Close);
}

TEST(CExport, SourceMapCoversEachNodesStatement) {
  // The CNN with sgemm calls and loop nests: every region opens on its
  // node's comment and closes on the statement's last line, at the
  // comment's indentation.
  auto [p, in] = bundledModel("cnn.onnx", {});
  ExportedCpp cpp = exportCppWithMap(lower(p));
  EXPECT_EQ(cpp.text, exportCpp(lower(p)));
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < cpp.text.size();) {
    std::size_t end = cpp.text.find('\n', at);
    lines.push_back(cpp.text.substr(at, end - at));
    at = end + 1;
  }
  ASSERT_GT(cpp.regions.size(), 5u);
  std::set<std::string> labels;
  for (const SourceRegion &r : cpp.regions) {
    ASSERT_GE(r.first, 0);
    ASSERT_LT(r.last, int(lines.size()));
    ASSERT_LT(r.first, r.last) << r.label;
    const std::string &open = lines[std::size_t(r.first)];
    const std::string &close = lines[std::size_t(r.last)];
    std::size_t indent = open.find_first_not_of(' ');
    EXPECT_EQ(open.substr(indent), "// node: " + r.label);
    EXPECT_EQ(close.find_first_not_of(' '), indent) << r.label;
    EXPECT_TRUE(close.substr(indent) == "}" || close.back() == ';')
        << r.label << ": " << close;
    labels.insert(r.label);
  }
  EXPECT_TRUE(labels.count("relu1.map")) << "regions name the nodes";
  EXPECT_TRUE(std::is_sorted(cpp.regions.begin(), cpp.regions.end(),
                             [](const SourceRegion &a, const SourceRegion &b) {
                               return a.first < b.first;
                             }));
}

} // namespace
} // namespace weir::codegen
