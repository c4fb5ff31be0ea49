/// \file
/// The random program generator of the differential test (see
/// random_program.h).
///
/// Every index is built together with an interval that bounds it, computed
/// the way ir::validate bounds map parameters (a parameter of range b:e:s
/// lies in [b, e - 1]), so a chosen index stays inside its container both
/// for the validator and at run time. Symbolic extents are bounded at the
/// value the program is generated for.

#include "codegen/random_program.h"
#include "ir/float16.h"

#include "core/runtime/tensor.h"
#include "ir/error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace weir::randprog {
namespace {

using ir::DType;
using ir::Expr;
using ir::NodeId;
using ir::Range;

/// splitmix64: small, and the same on every platform (the standard library's
/// distributions are not).
class Rng {
public:
  explicit Rng(std::uint64_t seed)
      : state_(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi]; lo when hi < lo.
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo)
      return lo;
    return lo + static_cast<std::int64_t>(
                    next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return uniform() < p; }
  /// An index drawn with the given (not necessarily normalized) weights.
  std::size_t weighted(const std::vector<double> &weights) {
    double total = 0;
    for (double w : weights)
      total += w;
    double x = uniform() * total;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (x < weights[i])
        return i;
      x -= weights[i];
    }
    return weights.size() - 1;
  }
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[static_cast<std::size_t>(range(0, std::int64_t(v.size()) - 1))];
  }

private:
  std::uint64_t state_;
};

DType randomDType(Rng &rng) {
  static const std::vector<DType> types = {
      DType::F32, DType::F64, DType::I32,  DType::I64, DType::U8,
      DType::I8,  DType::U16, DType::Bool, DType::F16, DType::I16,
      DType::U32, DType::U64, DType::BF16};
  static const std::vector<double> weights = {22, 14, 12, 9, 7, 7, 6,
                                              8,  5,  3,  3, 2, 2};
  return types[rng.weighted(weights)];
}

std::string typeName(DType t) { return std::string(ir::dtypeName(t)); }

// ------------------------------------------------------------ tasklets --

/// A variable a tasklet body may read: an input connector or a temporary.
struct Var {
  std::string name;
  DType dtype;
};

/// Generated tasklet code and whether it is made of literals only (and so
/// takes its type from the operand beside it).
struct Code {
  std::string text;
  bool literal = false;
};

/// Random, well-typed tasklet expressions over a set of variables.
class ExprGen {
public:
  ExprGen(Rng &rng, std::vector<Var> vars)
      : rng_(rng), vars_(std::move(vars)) {}

  void addVar(Var v) { vars_.push_back(std::move(v)); }

  /// An expression of type `t` at most `depth` operators deep; at the root
  /// (`root`) an operator unless the depth is 0.
  Code gen(DType t, int depth, bool root = false) {
    if (depth <= 0 || (!root && rng_.chance(0.22)))
      return leaf(t);
    if (t == DType::Bool)
      return genBool(depth);
    if (ir::isFloat(t))
      return genFloat(t, depth);
    return genInt(t, depth);
  }

  /// `gen`, cast to `t` when it is literals only, so that its type is `t`
  /// whatever surrounds it (for temporaries and divisors).
  std::string typed(DType t, int depth) {
    Code c = gen(t, depth);
    return c.literal ? typeName(t) + "(" + c.text + ")" : c.text;
  }

  /// The value of an output: an expression of type `t` that reads at least
  /// one variable, when there is one (a few tries).
  std::string root(DType t, int depth) {
    Code c = gen(t, depth, true);
    for (int tries = 0; tries < 8 && !vars_.empty() && !readsVar(c.text);
         ++tries)
      c = gen(t, depth, true);
    return c.text;
  }

  /// Whether `text` names one of the variables.
  bool readsVar(const std::string &text) const {
    std::size_t i = 0;
    while (i < text.size()) {
      auto ident = [](char ch, bool first) {
        return std::isalpha(static_cast<unsigned char>(ch)) || ch == '_' ||
               (!first && std::isdigit(static_cast<unsigned char>(ch)));
      };
      if (!ident(text[i], true)) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < text.size() && ident(text[j], false))
        ++j;
      std::string word = text.substr(i, j - i);
      for (const Var &v : vars_)
        if (v.name == word)
          return true;
      i = j;
    }
    return false;
  }

  /// A type for a comparison or cast operand, favouring the variables'.
  DType operandType() {
    if (!vars_.empty() && rng_.chance(0.6))
      return rng_.pick(vars_).dtype;
    return randomDType(rng_);
  }

private:
  std::string floatLiteral() {
    static const std::vector<std::string> common = {
        "0.5",  "1.0", "2.0", "0.25", "3.0",  "1.5", "0.1",
        "10.0", "0.0", "2.5", "1e-3", "0.75", "4.0", "0.3"};
    static const std::vector<std::string> rare = {"1e10",   "65504.0", "1e-8",
                                                  "3.4e38", "1e300",   "100.0"};
    return rng_.chance(0.06) ? rng_.pick(rare) : rng_.pick(common);
  }

  std::string intLiteral() {
    static const std::vector<std::string> common = {"0", "1", "2",  "3",
                                                    "5", "7", "10", "100"};
    static const std::vector<std::string> rare = {
        "127", "128", "200", "255", "1000", "65537", "4294967297"};
    return rng_.chance(0.08) ? rng_.pick(rare) : rng_.pick(common);
  }

  /// A non-zero divisor in every integer type (at most 127).
  std::string divisorLiteral() {
    static const std::vector<std::string> divisors = {"1", "2",  "3",  "5",
                                                      "7", "10", "16", "100"};
    return rng_.pick(divisors);
  }

  Code literal(DType t) {
    if (t == DType::Bool)
      return {rng_.chance(0.5) ? "true" : "false", false};
    std::string text = ir::isFloat(t) ? floatLiteral() : intLiteral();
    if (rng_.chance(0.15))
      text = "(-" + text + ")";
    return {text, true};
  }

  Code leaf(DType t) {
    std::vector<const Var *> same, other;
    for (const Var &v : vars_)
      (v.dtype == t ? same : other).push_back(&v);
    if (!same.empty() && rng_.chance(0.75))
      return {rng_.pick(same)->name, false};
    if (!other.empty() && rng_.chance(0.5))
      return {typeName(t) + "(" + rng_.pick(other)->name + ")", false};
    return literal(t);
  }

  static Code binary(const Code &a, const std::string &op, const Code &b) {
    return {"(" + a.text + " " + op + " " + b.text + ")",
            a.literal && b.literal};
  }

  static Code call(const std::string &f, const Code &a) {
    return {f + "(" + a.text + ")", a.literal};
  }

  static Code call(const std::string &f, const Code &a, const Code &b) {
    return {f + "(" + a.text + ", " + b.text + ")", a.literal && b.literal};
  }

  Code select(DType t, int depth) {
    Code c = gen(DType::Bool, depth - 1);
    Code a = gen(t, depth - 1), b = gen(t, depth - 1);
    return {"select(" + c.text + ", " + a.text + ", " + b.text + ")",
            a.literal && b.literal};
  }

  Code castFrom(DType t, int depth) {
    DType u = operandType();
    return {typeName(t) + "(" + gen(u, depth - 1).text + ")", false};
  }

  Code genBool(int depth) {
    switch (rng_.weighted({4, 2, 2, 1, 1, 1, 0.6, 0.8})) {
    case 0: { // comparison
      static const std::vector<std::string> ops = {"<",  "<=", ">",
                                                   ">=", "==", "!="};
      DType u = operandType();
      if (u == DType::Bool)
        return binary(gen(u, depth - 1),
                      rng_.chance(0.5) ? "==" : "!=", gen(u, depth - 1));
      return binary(gen(u, depth - 1), rng_.pick(ops), gen(u, depth - 1));
    }
    case 1:
      return binary(gen(DType::Bool, depth - 1), "&&",
                    gen(DType::Bool, depth - 1));
    case 2:
      return binary(gen(DType::Bool, depth - 1), "||",
                    gen(DType::Bool, depth - 1));
    case 3:
      return {"(!" + gen(DType::Bool, depth - 1).text + ")", false};
    case 4:
      return select(DType::Bool, depth);
    case 5:
      return castFrom(DType::Bool, depth);
    case 6: { // a division guarded by `&&` (or `||`)
      static const std::vector<DType> ints = {
          DType::I32, DType::I64, DType::U8, DType::I8, DType::U16, DType::I16};
      DType u = operandType();
      if (!ir::isInteger(u))
        u = rng_.pick(ints);
      std::string b = typed(u, depth - 1);
      std::string a = gen(u, depth - 1).text;
      std::string q = "(" + a + (rng_.chance(0.5) ? " / " : " % ") + b + ")";
      if (rng_.chance(0.5))
        return {"((" + b + " != 0) && (" + q + " > 1))", false};
      return {"((" + b + " == 0) || (" + q + " < 2))", false};
    }
    default:
      return binary(gen(DType::Bool, depth - 1),
                    "!=", gen(DType::Bool, depth - 1));
    }
  }

  Code genFloat(DType t, int depth) {
    auto sub = [&] { return gen(t, depth - 1); };
    switch (rng_.weighted({5, 0.4, 1, 4, 3, 0.7, 2, 2, 2})) {
    case 0: {
      static const std::vector<std::string> ops = {"+", "-", "*", "/"};
      return binary(sub(), rng_.pick(ops), sub());
    }
    case 1:
      return binary(sub(), "%", sub());
    case 2: {
      Code a = sub();
      return {"(-" + a.text + ")", a.literal};
    }
    case 3: {
      static const std::vector<std::string> fs = {
          "exp", "tanh", "sigmoid", "floor", "ceil", "round",
          "erf", "sin",  "cos",     "atan",  "abs",  "asinh"};
      return call(rng_.pick(fs), sub());
    }
    case 4: { // functions with a limited domain, kept inside it
      Code a = sub();
      switch (rng_.range(0, 7)) {
      case 0:
        return {"log(abs(" + a.text + ") + 1.0)", a.literal};
      case 1:
        return {"sqrt(abs(" + a.text + "))", a.literal};
      case 2:
        return {"rsqrt(abs(" + a.text + ") + 1.0)", a.literal};
      case 3:
        return {"pow(abs(" + a.text + "), 0.5)", a.literal};
      case 4:
        return {"pow(" + a.text + ", 2.0)", a.literal};
      case 5:
        return {"pow(" + a.text + ", 3.0)", a.literal};
      case 6:
        return {"acosh(abs(" + a.text + ") + 1.0)", a.literal};
      default:
        return {"pow(abs(" + a.text + "), 1.5)", a.literal};
      }
    }
    case 5: { // outside the domain now and then: NaN and inf are fine
      static const std::vector<std::string> fs = {"log",  "sqrt",  "asin",
                                                  "acos", "tan",   "sinh",
                                                  "cosh", "atanh", "rsqrt"};
      return call(rng_.pick(fs), sub());
    }
    case 6:
      return call(rng_.chance(0.5) ? "min" : "max", sub(), sub());
    case 7:
      return select(t, depth);
    default:
      return castFrom(t, depth);
    }
  }

  Code genInt(DType t, int depth) {
    auto sub = [&] { return gen(t, depth - 1); };
    switch (rng_.weighted({5, 2.5, 1, 2, 2, 2})) {
    case 0: {
      static const std::vector<std::string> ops = {"+", "-", "*"};
      return binary(sub(), rng_.pick(ops), sub());
    }
    case 1: { // division and remainder that never divide by zero
      std::string op = rng_.chance(0.6) ? " / " : " % ";
      Code a = sub();
      switch (rng_.range(0, 2)) {
      case 0: {
        std::string b = typed(t, depth - 1);
        Code otherwise = sub();
        return {"select((" + b + " != 0), (" + a.text + op + b + "), " +
                    otherwise.text + ")",
                false};
      }
      case 1: {
        Code b = sub();
        return {"(" + a.text + op + "max(" + b.text + ", 1))",
                a.literal && b.literal};
      }
      default:
        return {"(" + a.text + op + divisorLiteral() + ")", a.literal};
      }
    }
    case 2: {
      Code a = sub();
      return {"(-" + a.text + ")", a.literal};
    }
    case 3:
      switch (rng_.range(0, 2)) {
      case 0:
        return call("abs", sub());
      case 1:
        return call("min", sub(), sub());
      default:
        return call("max", sub(), sub());
      }
    case 4:
      return select(t, depth);
    default:
      return castFrom(t, depth);
    }
  }

  Rng &rng_;
  std::vector<Var> vars_;
};

// --------------------------------------------------------------- indices --

/// A container dimension: its extent as written in the shape and its value
/// at the program's symbol values.
struct Dim {
  Expr size;
  std::int64_t value = 1;
};

/// A map parameter. Its values lie in [lo, hi] (hi = end - 1, as the
/// validator bounds it).
struct Param {
  std::string name;
  Range range;
  std::int64_t lo = 0, hi = 0;
  /// The range ends at `N + endConst` (symbolic programs).
  bool symbolicEnd = false;
  Expr sym() const { return Expr::symbol(name); }
};

/// An index expression and bounds on its values.
struct Index {
  Expr expr;
  std::int64_t lo = 0, hi = 0;
  /// hi is `N + (hi - N)` symbolically: a new dimension sized from it can be
  /// written in terms of N.
  bool symbolic = false;
};

struct Weighted {
  Index index;
  double weight;
};

Index pick(Rng &rng, const std::vector<Weighted> &cands) {
  std::vector<double> w;
  for (const Weighted &c : cands)
    w.push_back(c.weight);
  return cands[rng.weighted(w)].index;
}

/// Indices over `params` that stay inside a dimension of extent `d`.
Index indexInto(Rng &rng, const std::vector<Param> &params, const Dim &d) {
  std::int64_t v = d.value;
  std::vector<Weighted> c;
  for (const Param &p : params) {
    Expr x = p.sym();
    if (p.hi <= v - 1)
      c.push_back({{x, p.lo, p.hi}, 4});
    std::int64_t cmin = -p.lo, cmax = v - 1 - p.hi;
    if (cmax >= cmin && (cmin != 0 || cmax != 0)) {
      std::int64_t k = rng.range(cmin, cmax);
      if (k != 0)
        c.push_back({{x + k, p.lo + k, p.hi + k}, 1.5});
    }
    if (p.hi <= v - 1)
      c.push_back({{d.size - 1 - x, v - 1 - p.hi, v - 1 - p.lo}, 1.5});
    if (2 * p.hi <= v - 1) {
      std::int64_t k = rng.range(0, v - 1 - 2 * p.hi);
      c.push_back({{x * 2 + k, 2 * p.lo + k, 2 * p.hi + k}, 1});
    }
    if (p.hi / 2 <= v - 1)
      c.push_back({{ir::floorDiv(x, 2), p.lo / 2, p.hi / 2}, 0.7});
    if (v >= 2) {
      std::int64_t m = rng.range(2, std::min<std::int64_t>(v, 4));
      c.push_back({{ir::mod(x, m), 0, m - 1}, 0.7});
    }
    if (p.lo <= v - 1)
      c.push_back({{ir::min(x, d.size - 1), std::min(p.lo, v - 1),
                    std::min(p.hi, v - 1)},
                   0.5});
  }
  if (params.size() >= 2) {
    const Param &a = rng.pick(params);
    const Param &b = rng.pick(params);
    if (a.name != b.name && a.hi + b.hi <= v - 1)
      c.push_back({{a.sym() + b.sym(), a.lo + b.lo, a.hi + b.hi}, 1});
  }
  std::int64_t k = rng.range(0, v - 1);
  c.push_back({{Expr(k), k, k}, c.empty() ? 1.0 : 0.8});
  return pick(rng, c);
}

/// Indices over `params` for a new dimension, which is sized to fit.
Index freeIndex(Rng &rng, const std::vector<Param> &params) {
  std::vector<Weighted> c;
  for (const Param &p : params) {
    Expr x = p.sym();
    c.push_back({{x, p.lo, p.hi, p.symbolicEnd}, 5});
    std::int64_t k = rng.range(1, 3);
    c.push_back({{x + k, p.lo + k, p.hi + k, p.symbolicEnd}, 1});
    c.push_back({{x * 2 + k, 2 * p.lo + k, 2 * p.hi + k}, 0.7});
    c.push_back({{ir::floorDiv(x, 2), p.lo / 2, p.hi / 2}, 0.6});
    std::int64_t m = rng.range(2, 4);
    c.push_back({{ir::mod(x, m), 0, m - 1}, 0.6});
    // Reversed along the range; the validator bounds `end - 1 - x` only
    // when the end is no other parameter.
    bool fixedEnd = true;
    for (const std::string &s : p.range.end.freeSymbols())
      fixedEnd = fixedEnd && s == "N";
    if (fixedEnd)
      c.push_back({{p.range.end - 1 - x, 0, p.hi - p.lo}, 1});
  }
  if (params.size() >= 2) {
    const Param &a = rng.pick(params);
    const Param &b = rng.pick(params);
    if (a.name != b.name)
      c.push_back({{a.sym() + b.sym(), a.lo + b.lo, a.hi + b.hi}, 1});
  }
  std::int64_t k = rng.range(0, 3);
  c.push_back({{Expr(k), k, k}, 0.5});
  return pick(rng, c);
}

// ------------------------------------------------------------ operations --

struct ReadSpec {
  std::string conn, container;
  std::vector<Expr> index;
  DType dtype;
};

struct WriteSpec {
  std::string conn, container;
  std::vector<Expr> index;
  std::optional<ir::Wcr> wcr;
  DType dtype;
};

struct TaskletSpec {
  std::vector<ReadSpec> reads;
  std::vector<WriteSpec> writes;
  /// The value handed to the next tasklet of the group (connector `h`).
  std::optional<DType> handOut, handIn;
  std::string body;
};

/// One tasklet, or two with the first handing a value to the second.
struct Group {
  std::vector<TaskletSpec> tasklets;
  std::size_t depth = 0; ///< index of the enclosing map level
};

struct Level {
  std::vector<Param> params;
  ir::Schedule schedule = ir::Schedule::Sequential;
};

/// Map levels nested into each other (none: top-level tasklets) and the
/// groups inside them, in the order they are added to the state.
struct OpSpec {
  std::string label;
  std::vector<Level> levels;
  std::vector<Group> groups;
};

enum class Role : std::uint8_t { Input, Output, Transient };

struct Info {
  std::vector<Dim> dims;
  DType dtype;
  Role role;
  bool written = false; ///< by an earlier operation
  bool read = false;    ///< by an operation after it was written
};

/// The access node holding a container's latest value in the current state.
struct Version {
  NodeId node = 0;
  bool written = false;
  /// Nodes after which the operations that read this version are done.
  std::vector<NodeId> readers;
};

const std::vector<ir::Wcr> kWcrs = {ir::Wcr::Sum, ir::Wcr::Max, ir::Wcr::Min,
                                    ir::Wcr::Prod};

class Generator {
public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  ir::Program run(std::uint64_t seed) {
    p_.name = "random_" + std::to_string(seed);
    if (rng_.chance(0.18)) {
      nValue_ = rng_.range(2, 9);
      p_.symbols = {"N"};
      p_.metadata[kSymbolsKey] = "N=" + std::to_string(*nValue_);
    } else {
      p_.metadata[kSymbolsKey] = "";
    }
    int states = static_cast<int>(rng_.weighted({0.4, 0.35, 0.25})) + 1;
    for (int s = 0; s < states; ++s) {
      ir::State &st = p_.states.emplace_back();
      st.name = "s" + std::to_string(s);
      stateIndex_ = p_.states.size() - 1;
      latest_.clear();
      int ops = static_cast<int>(rng_.weighted({0.35, 0.4, 0.25})) + 1;
      for (int o = 0; o < ops; ++o) {
        bool last = s == states - 1 && o == ops - 1;
        operation(last && outputs_ == 0);
      }
    }
    return std::move(p_);
  }

private:
  ir::State &state() { return p_.states[stateIndex_]; }

  // -- containers --

  std::string newContainer(Role role, DType dtype, std::vector<Dim> dims) {
    std::string prefix = role == Role::Input    ? "x"
                         : role == Role::Output ? "y"
                                                : "t";
    int &count = role == Role::Input    ? inputs_
                 : role == Role::Output ? outputs_
                                        : transients_;
    std::string name = prefix + std::to_string(count++);
    ir::Container c;
    c.name = name;
    c.dtype = dtype;
    for (const Dim &d : dims)
      c.shape.push_back(d.size);
    c.strides = ir::rowMajorStrides(c.shape);
    c.transient = role == Role::Transient;
    p_.addContainer(std::move(c));
    if (role == Role::Input)
      p_.inputs.push_back(name);
    if (role == Role::Output)
      p_.outputs.push_back(name);
    info_[name] = Info{std::move(dims), dtype, role};
    if (role == Role::Input)
      info_[name].written = true;
    return name;
  }

  /// A role for a new container that an operation writes.
  Role newWrittenRole(bool forceOutput) {
    if (forceOutput || (outputs_ < 3 && rng_.chance(outputs_ == 0 ? 0.6 : 0.3)))
      return outputs_ < 3 || transients_ >= 3 ? Role::Output : Role::Transient;
    return transients_ < 3 ? Role::Transient : Role::Output;
  }

  Dim concreteDim(std::int64_t lo, std::int64_t hi) {
    std::int64_t v = rng_.range(lo, hi);
    return {Expr(v), v};
  }

  Dim symbolDim(std::int64_t offset = 0) {
    return {Expr::symbol("N") + offset, *nValue_ + offset};
  }

  /// Dimensions for a new target: rank 0 to 3, small extents, now and then
  /// the symbol N.
  std::vector<Dim> newDims(bool needSymbol) {
    int rank = static_cast<int>(rng_.weighted({0.06, 0.34, 0.4, 0.2}));
    if (needSymbol && rank == 0)
      rank = 1;
    std::vector<Dim> dims;
    for (int d = 0; d < rank; ++d)
      dims.push_back(concreteDim(1, rank == 3 ? 6 : 10));
    if (nValue_ && rank > 0 && (needSymbol || rng_.chance(0.3)))
      dims[static_cast<std::size_t>(rng_.range(0, rank - 1))] =
          symbolDim(rng_.chance(0.8) ? 0 : 2);
    return dims;
  }

  /// A new dimension holding every value of `index` (plus some slack).
  Dim dimFor(const Index &index) {
    std::int64_t slack = rng_.chance(0.6) ? 0 : rng_.range(1, 2);
    std::int64_t v = index.hi + 1 + slack;
    if (index.symbolic && nValue_)
      return {Expr::symbol("N") + (v - *nValue_), v};
    return {Expr(v), v};
  }

  static std::int64_t elementCount(const std::vector<Dim> &dims) {
    std::int64_t n = 1;
    for (const Dim &d : dims)
      n *= d.value;
    return n;
  }

  /// Containers an operation may read: inputs and what earlier operations
  /// wrote, minus `exclude`; transients not read yet weigh most.
  std::vector<std::string> readable(const std::set<std::string> &exclude,
                                    std::vector<double> &weights) {
    std::vector<std::string> names;
    for (const auto &[name, info] : info_) {
      if (exclude.count(name))
        continue;
      double w = info.role == Role::Input ? 2 : info.written ? 2 : 0.2;
      if (info.role == Role::Transient && info.written && !info.read)
        w = 6;
      names.push_back(name);
      weights.push_back(w);
    }
    return names;
  }

  // -- parameters --

  std::string paramName(int k) {
    static const std::vector<std::string> names = {"i", "j", "k",
                                                   "l", "m", "q"};
    return names[static_cast<std::size_t>(k) % names.size()];
  }

  /// A parameter ranging inside a dimension: begin 0 to 2, step 1 to 3, end
  /// at the extent or a little before it.
  Param dimParam(const std::string &name, const Dim &d) {
    std::int64_t v = d.value;
    std::int64_t step =
        static_cast<std::int64_t>(rng_.weighted({6, 2.5, 1.5})) + 1;
    std::int64_t begin =
        rng_.chance(0.4) ? rng_.range(0, std::min<std::int64_t>(2, v - 1)) : 0;
    std::int64_t endOff =
        rng_.chance(0.3)
            ? rng_.range(0, std::min<std::int64_t>(2, v - 1 - begin))
            : 0;
    Param p;
    p.name = name;
    p.range = Range(Expr(begin), d.size - endOff, Expr(step));
    p.lo = begin;
    p.hi = v - endOff - 1;
    p.symbolicEnd = !d.size.isConstant();
    return p;
  }

  /// A parameter that indexes no dimension (a reduction): 1 to 5 values.
  Param freeParam(const std::string &name) {
    std::int64_t begin = rng_.chance(0.4) ? rng_.range(1, 3) : 0;
    std::int64_t step = static_cast<std::int64_t>(rng_.weighted({6, 2, 1})) + 1;
    std::int64_t count = rng_.range(1, 5);
    std::int64_t end = begin + (count - 1) * step + 1 +
                       (rng_.chance(0.4) ? rng_.range(0, step - 1) : 0);
    Param p;
    p.name = name;
    p.range = Range(Expr(begin), Expr(end), Expr(step));
    p.lo = begin;
    p.hi = end - 1;
    return p;
  }

  static std::int64_t tripCount(const Param &p) {
    std::int64_t step = *p.range.step.asConstant();
    return (p.hi - p.lo) / step + 1;
  }

  // -- reads --

  /// A read of some container at an index over `params` (a new input when
  /// nothing fitting exists or by chance).
  ReadSpec chooseRead(const std::vector<Param> &params,
                      const std::set<std::string> &exclude, DType hint,
                      bool forceNewSymbolic = false) {
    std::vector<double> weights;
    std::vector<std::string> names = readable(exclude, weights);
    bool existing = !forceNewSymbolic && !names.empty() &&
                    (inputs_ >= 5 || rng_.chance(0.5));
    ReadSpec r;
    if (existing) {
      r.container = names[rng_.weighted(weights)];
      Info &info = info_[r.container];
      for (const Dim &d : info.dims)
        r.index.push_back(indexInto(rng_, params, d).expr);
      r.dtype = info.dtype;
      if (info.written)
        info.read = true;
      return r;
    }
    int rank = static_cast<int>(rng_.weighted({0.1, 0.35, 0.35, 0.2}));
    if (forceNewSymbolic)
      rank = std::max(rank, 1);
    std::vector<Dim> dims;
    for (int d = 0; d < rank; ++d) {
      Index ix;
      if (forceNewSymbolic && d == 0) {
        // The first dimension is N itself, so that the input binds it.
        for (const Param &p : params)
          if (p.symbolicEnd && p.hi <= *nValue_ - 1) {
            ix = {p.sym(), p.lo, p.hi};
            break;
          }
        dims.push_back(symbolDim());
      } else if (params.empty()) {
        dims.push_back(concreteDim(1, 6));
        ix = {Expr(rng_.range(0, dims.back().value - 1)), 0, 0};
      } else {
        ix = freeIndex(rng_, params);
        dims.push_back(dimFor(ix));
      }
      r.index.push_back(ix.expr);
      if (elementCount(dims) > 1024) { // keep containers small
        dims.pop_back();
        r.index.pop_back();
        break;
      }
    }
    r.dtype = rng_.chance(0.5) ? hint : randomDType(rng_);
    r.container = newContainer(Role::Input, r.dtype, dims);
    return r;
  }

  // -- tasklet bodies --

  /// Fills in the body of every tasklet of `g`, naming the connectors.
  void writeBodies(Group &g) {
    for (TaskletSpec &t : g.tasklets) {
      std::vector<Var> vars;
      for (std::size_t k = 0; k < t.reads.size(); ++k) {
        t.reads[k].conn = "a" + std::to_string(k);
        vars.push_back({t.reads[k].conn, t.reads[k].dtype});
      }
      if (t.handIn)
        vars.push_back({"h", *t.handIn});
      ExprGen gen(rng_, vars);
      std::string body;
      int temps = static_cast<int>(rng_.weighted({0.5, 0.3, 0.2}));
      for (int k = 0; k < temps; ++k) {
        DType u = gen.operandType();
        std::string name = "t" + std::to_string(k);
        body += name + " = " + gen.typed(u, depth()) + "\n";
        gen.addVar({name, u});
      }
      for (std::size_t k = 0; k < t.writes.size(); ++k) {
        t.writes[k].conn = "r" + std::to_string(k);
        body += t.writes[k].conn + " = " +
                gen.root(t.writes[k].dtype, depth()) + "\n";
      }
      if (t.handOut)
        body += "h = " + gen.root(*t.handOut, depth()) + "\n";
      t.body = body;
    }
  }

  int depth() {
    return static_cast<int>(rng_.weighted({0.2, 0.35, 0.3, 0.15})) + 1;
  }

  /// Splits the reads of a one-tasklet group over two tasklets, the first
  /// handing a value to the second, with probability `p`.
  void maybeHandOver(Group &g, double p) {
    if (!rng_.chance(p))
      return;
    TaskletSpec &only = g.tasklets[0];
    TaskletSpec first, second;
    std::size_t split = static_cast<std::size_t>(
        rng_.range(0, static_cast<std::int64_t>(only.reads.size())));
    first.reads.assign(only.reads.begin(), only.reads.begin() + split);
    second.reads.assign(only.reads.begin() + split, only.reads.end());
    first.handOut = second.handIn = randomDType(rng_);
    second.writes = only.writes;
    g.tasklets = {first, second};
  }

  // -- operations --

  void operation(bool forceOutput) {
    std::size_t kind = rng_.weighted({55, 15, 13, 9, 5});
    bool symbolicFirst = nValue_ && !boundN_;
    if (symbolicFirst)
      kind = rng_.chance(0.5) ? 0 : 1;
    switch (kind) {
    case 0:
      return mapOp(forceOutput, false, false);
    case 1:
      return mapOp(forceOutput, true, false);
    case 2:
      if (copyOp(forceOutput))
        return;
      return mapOp(forceOutput, false, false);
    case 3:
      return topLevelOp(forceOutput);
    default:
      return mapOp(forceOutput, false, true);
    }
  }

  /// The container a map operation writes, existing or new.
  std::string chooseTarget(bool forceOutput, bool stencil, bool needSymbol) {
    std::vector<std::string> existing;
    for (const auto &[name, info] : info_)
      if (info.role != Role::Input || rng_.chance(0.15))
        if (!stencil || info.role != Role::Input)
          if (!needSymbol && (!stencil || elementCount(info.dims) > 1))
            existing.push_back(name);
    if (!forceOutput && !existing.empty() && (stencil || rng_.chance(0.3)))
      return rng_.pick(existing);
    return newContainer(newWrittenRole(forceOutput), randomDType(rng_),
                        newDims(needSymbol));
  }

  /// A map (or nest of maps) writing one target; see random_program.h.
  void mapOp(bool forceOutput, bool reduce, bool stencil) {
    bool needSymbol = nValue_ && !boundN_;
    std::string target = chooseTarget(forceOutput, stencil, needSymbol);
    Info info = info_[target];
    std::size_t rank = info.dims.size();

    // Parameters: one per dimension of the target (mostly), plus reduction
    // parameters.
    int pc = 0;
    std::vector<Param> params;
    std::vector<Index> writeIndex(rank);
    std::set<std::string> dimParamNames;
    /// Dimension written at exactly the parameter (not reversed).
    std::map<std::string, std::size_t> dimOf;
    for (std::size_t d = 0; d < rank; ++d) {
      const Dim &dim = info.dims[d];
      bool symbolic = !dim.size.isConstant();
      if (rng_.chance(0.85) || (needSymbol && symbolic)) {
        Param p = dimParam(paramName(pc++), dim);
        if (rng_.chance(0.15) && !(needSymbol && symbolic)) {
          writeIndex[d] = {dim.size - 1 - p.sym(), dim.value - 1 - p.hi,
                           dim.value - 1 - p.lo};
        } else {
          writeIndex[d] = {p.sym(), p.lo, p.hi};
          dimOf[p.name] = d;
        }
        dimParamNames.insert(p.name);
        params.push_back(p);
      } else {
        std::int64_t k = rng_.range(0, dim.value - 1);
        writeIndex[d] = {Expr(k), k, k};
      }
    }
    std::size_t dimParams = params.size();
    if (reduce || rng_.chance(0.15) || params.empty()) {
      reduce = true;
      int n = rng_.chance(0.7) ? 1 : 2;
      for (int k = 0; k < n; ++k)
        params.push_back(freeParam(paramName(pc++)));
    }
    std::optional<ir::Wcr> wcr;
    if (reduce ? rng_.chance(0.93) : rng_.chance(0.08))
      wcr = rng_.pick(kWcrs);

    // Keep the iteration space small.
    auto iterations = [&] {
      std::int64_t n = 1;
      for (const Param &p : params)
        n *= tripCount(p);
      return n;
    };
    while (params.size() > dimParams && iterations() > 2000)
      params.pop_back();

    // Shuffle the parameters (the first one is not always dimension 0),
    // then split them into nested levels.
    for (std::size_t k = params.size(); k > 1; --k)
      std::swap(params[k - 1], params[static_cast<std::size_t>(rng_.range(
                                   0, static_cast<std::int64_t>(k) - 1))]);
    OpSpec op;
    op.label = "map" + std::to_string(opCounter_++);
    std::vector<std::size_t> cuts;
    if (params.size() >= 3 && rng_.chance(0.12))
      cuts = {1, 2};
    else if (params.size() >= 2 && rng_.chance(0.35))
      cuts = {static_cast<std::size_t>(
          rng_.range(1, static_cast<std::int64_t>(params.size()) - 1))};
    std::size_t from = 0;
    for (std::size_t c = 0; c <= cuts.size(); ++c) {
      std::size_t to = c < cuts.size() ? cuts[c] : params.size();
      Level level;
      level.params.assign(params.begin() + from, params.begin() + to);
      static const std::vector<ir::Schedule> schedules = {
          ir::Schedule::Sequential, ir::Schedule::CpuParallel,
          ir::Schedule::Vectorized};
      level.schedule = schedules[rng_.weighted({6, 3, 1})];
      op.levels.push_back(std::move(level));
      from = to;
    }
    // Inner ranges that depend on an outer parameter: a window after it or
    // a triangle for a reduction, a triangle for a dimension written at the
    // parameter itself.
    for (std::size_t l = 1; l < op.levels.size(); ++l)
      for (Param &q : op.levels[l].params) {
        if (!rng_.chance(0.5) || q.symbolicEnd)
          continue;
        const Param &o = rng_.pick(op.levels[l - 1].params);
        auto d = dimOf.find(q.name);
        if (!dimParamNames.count(q.name)) {
          std::int64_t w = rng_.range(1, 3);
          if (rng_.chance(0.5)) {
            q.range = Range(o.sym(), o.sym() + w);
            q.lo = o.lo;
            q.hi = o.hi + w - 1;
          } else {
            q.range = Range(Expr(0), o.sym() + 1);
            q.lo = 0;
            q.hi = o.hi;
          }
        } else if (d != dimOf.end() && !o.symbolicEnd &&
                   o.hi <= info.dims[d->second].value - 1) {
          q.range = Range(Expr(0), o.sym() + 1);
          q.lo = 0;
          q.hi = o.hi;
          writeIndex[d->second] = {q.sym(), q.lo, q.hi};
        }
      }
    std::vector<Param> all;
    for (const Level &l : op.levels)
      all.insert(all.end(), l.params.begin(), l.params.end());

    // The primary group, in the innermost level.
    std::set<std::string> written = {target};
    Group primary;
    primary.depth = op.levels.size() - 1;
    TaskletSpec t;
    WriteSpec w;
    w.container = target;
    for (const Index &ix : writeIndex)
      w.index.push_back(ix.expr);
    w.wcr = wcr;
    w.dtype = info.dtype;
    t.writes.push_back(w);

    // In place: read the target where it is written, or (a stencil) one
    // step ahead along a dimension.
    if (info_[target].written &&
        (stencil ||
         (info.role != Role::Input ? rng_.chance(0.3) : rng_.chance(0.6)))) {
      ReadSpec r{"", target, w.index, info.dtype};
      if (stencil) {
        for (std::size_t d = 0; d < rank; ++d) {
          const Index &ix = writeIndex[d];
          if (ix.expr.kind() != ir::ExprKind::Sym)
            continue;
          if (ix.hi + 1 <= info.dims[d].value - 1) {
            r.index[d] = ix.expr + 1;
            break;
          }
          if (ix.lo >= 1) {
            r.index[d] = ix.expr - 1;
            break;
          }
        }
      }
      t.reads.push_back(r);
    }
    int nIn = static_cast<int>(rng_.weighted({0.1, 0.35, 0.35, 0.2}));
    if (needSymbol)
      nIn = std::max(nIn, 1);
    std::set<std::string> exclude = written;
    for (int k = 0; k < nIn; ++k)
      t.reads.push_back(
          chooseRead(all, exclude, info.dtype, needSymbol && k == 0));
    if (needSymbol)
      boundN_ = true;
    primary.tasklets.push_back(t);
    maybeHandOver(primary, 0.25);

    // A second target written by the first tasklet of a hand-over, at the
    // same index.
    if (primary.tasklets.size() == 2 && rng_.chance(0.3)) {
      WriteSpec extra = w;
      extra.dtype = randomDType(rng_);
      extra.container =
          newContainer(newWrittenRole(false), extra.dtype, info.dims);
      primary.tasklets[0].writes.push_back(extra);
      written.insert(extra.container);
    }

    // A sibling in an outer level: a group next to the inner map, writing a
    // new container indexed by the outer parameters.
    std::optional<Group> sibling;
    if (op.levels.size() >= 2 && rng_.chance(0.3)) {
      std::size_t depth = static_cast<std::size_t>(
          rng_.range(0, static_cast<std::int64_t>(op.levels.size()) - 2));
      std::vector<Param> outer;
      for (std::size_t l = 0; l <= depth; ++l)
        outer.insert(outer.end(), op.levels[l].params.begin(),
                     op.levels[l].params.end());
      Group g;
      g.depth = depth;
      TaskletSpec s;
      WriteSpec sw;
      std::vector<Dim> dims;
      for (const Param &p : outer) {
        Index ix{p.sym(), p.lo, p.hi, p.symbolicEnd};
        dims.push_back(dimFor(ix));
        sw.index.push_back(ix.expr);
      }
      sw.dtype = randomDType(rng_);
      if (rng_.chance(0.2))
        sw.wcr = rng_.pick(kWcrs);
      sw.container = newContainer(newWrittenRole(false), sw.dtype, dims);
      written.insert(sw.container);
      s.writes.push_back(sw);
      int n = static_cast<int>(rng_.range(0, 2));
      for (int k = 0; k < n; ++k)
        s.reads.push_back(chooseRead(outer, written, sw.dtype));
      g.tasklets.push_back(s);
      maybeHandOver(g, 0.2);
      sibling = g;
    }

    writeBodies(primary);
    if (sibling) {
      writeBodies(*sibling);
      if (rng_.chance(0.5)) {
        op.groups = {*sibling, primary};
      } else {
        op.groups = {primary, *sibling};
      }
    } else {
      op.groups = {primary};
    }
    emit(op);
  }

  /// Top-level tasklets: single elements in, single elements out.
  void topLevelOp(bool forceOutput) {
    std::string target = chooseTarget(forceOutput, false, false);
    Info info = info_[target];
    OpSpec op;
    op.label = "top" + std::to_string(opCounter_++);
    Group g;
    TaskletSpec t;
    WriteSpec w;
    w.container = target;
    for (const Dim &d : info.dims)
      w.index.push_back(Expr(rng_.range(0, d.value - 1)));
    if (rng_.chance(0.3))
      w.wcr = rng_.pick(kWcrs);
    w.dtype = info.dtype;
    t.writes.push_back(w);
    int nIn = static_cast<int>(rng_.range(0, 3));
    std::set<std::string> exclude = {target};
    if (info.written && rng_.chance(0.3))
      t.reads.push_back({"", target, w.index, info.dtype});
    for (int k = 0; k < nIn; ++k)
      t.reads.push_back(chooseRead({}, exclude, info.dtype));
    g.tasklets.push_back(t);
    maybeHandOver(g, 0.35);
    writeBodies(g);
    op.groups = {g};
    emit(op);
  }

  /// An access-to-access copy; false when there is nothing to copy.
  bool copyOp(bool forceOutput) {
    std::vector<double> weights;
    std::vector<std::string> names = readable({}, weights);
    for (std::size_t k = 0; k < names.size(); ++k)
      if (!info_[names[k]].written)
        weights[k] = 0;
    if (names.empty() || std::all_of(weights.begin(), weights.end(),
                                     [](double w) { return w == 0; }))
      return false;
    std::string src = names[rng_.weighted(weights)];
    Info info = info_[src];
    info_[src].read = true;

    std::optional<ir::Wcr> wcr;
    if (rng_.chance(0.12))
      wcr = rng_.chance(0.5) ? ir::Wcr::Sum : ir::Wcr::Max;
    ir::Memlet m;
    m.wcr = wcr;
    std::string dst;
    std::size_t variant = rng_.weighted({6, 2, 2.5, 1.5});
    // Lowering needs the element counts of a copy between shapes to agree
    // symbolically, so those copies take sources of constant shape.
    bool symbolic = false;
    for (const Dim &d : info.dims)
      symbolic = symbolic || !d.size.isConstant();
    if (info.dims.empty() || (symbolic && variant >= 2))
      variant = 0;

    // A subset of `dims`: per dimension begin, end and step inside it.
    auto subsetOf = [&](const std::vector<Dim> &dims,
                        std::vector<std::int64_t> &sizes) {
      ir::Subset s;
      for (const Dim &d : dims) {
        std::int64_t v = d.value;
        std::int64_t begin = rng_.chance(0.5) ? 0 : rng_.range(0, v - 1);
        std::int64_t step = rng_.chance(0.7) ? 1 : rng_.range(2, 3);
        std::int64_t endOff =
            rng_.chance(0.5) ? 0 : rng_.range(0, v - 1 - begin);
        s.dims.push_back(Range(Expr(begin), d.size - endOff, Expr(step)));
        sizes.push_back((v - endOff - begin + step - 1) / step);
      }
      return s;
    };

    std::vector<std::int64_t> sizes;
    switch (variant) {
    case 0:   // same shape, the memlet names the source
    case 1: { // same shape, the memlet names the destination
      std::vector<std::string> same;
      for (const auto &[name, other] : info_) {
        if (name == src || other.role == Role::Input ||
            other.dtype != info.dtype || other.dims.size() != info.dims.size())
          continue;
        bool eq = true;
        for (std::size_t d = 0; d < info.dims.size(); ++d)
          eq = eq && other.dims[d].size == info.dims[d].size;
        if (eq)
          same.push_back(name);
      }
      dst = !forceOutput && !same.empty() && rng_.chance(0.4)
                ? rng_.pick(same)
                : newContainer(newWrittenRole(forceOutput), info.dtype,
                               info.dims);
      m.container = variant == 0 ? src : dst;
      m.subset = subsetOf(info.dims, sizes);
      break;
    }
    case 2: { // into a compact container of the subset's element count
      m.container = src;
      m.subset = subsetOf(info.dims, sizes);
      std::vector<Dim> dims;
      if (rng_.chance(0.3)) {
        std::int64_t n = 1;
        for (std::int64_t s : sizes)
          n *= s;
        dims.push_back({Expr(n), n});
      } else {
        for (std::int64_t s : sizes)
          dims.push_back({Expr(s), s});
      }
      dst = newContainer(newWrittenRole(forceOutput), info.dtype, dims);
      break;
    }
    default: { // into a window of a larger container
      std::vector<Dim> dims;
      ir::Subset window;
      for (const Dim &d : info.dims) {
        std::int64_t before = rng_.range(0, 2), after = rng_.range(0, 2);
        dims.push_back(
            {Expr(d.value + before + after), d.value + before + after});
        window.dims.push_back(Range(Expr(before), Expr(before + d.value)));
      }
      if (elementCount(dims) > 4096)
        return false;
      dst = newContainer(newWrittenRole(forceOutput), info.dtype, dims);
      m.container = dst;
      m.subset = window;
      break;
    }
    }

    NodeId from = readNode(src);
    NodeId to = writeNode(dst, 0, false);
    ir::addEdge(p_, state(), from, "", to, "", m);
    versions_[from].readers.push_back(to);
    info_[dst].written = true;
    return true;
  }

  // -- emission --

  NodeId readNode(const std::string &c) {
    auto it = latest_.find(c);
    if (it != latest_.end())
      return it->second;
    NodeId id = ir::addAccess(p_, state(), c);
    latest_[c] = id;
    versions_[id] = Version{id, false, {}};
    return id;
  }

  /// The access node a write of `c` goes to, ordered after the operations
  /// that wrote or read the value it replaces: by empty edges into `scope`
  /// (the writing operation's first node), or into the new node itself when
  /// `scope` is 0.
  NodeId writeNode(const std::string &c, NodeId scope, bool readByThisOp) {
    auto it = latest_.find(c);
    if (it == latest_.end()) {
      NodeId id = ir::addAccess(p_, state(), c);
      latest_[c] = id;
      versions_[id] = Version{id, true, {}};
      return id;
    }
    Version prior = versions_[it->second];
    if (!prior.written && prior.readers.empty() && !readByThisOp) {
      versions_[prior.node].written = true;
      return prior.node;
    }
    NodeId fresh = ir::addAccess(p_, state(), c);
    NodeId into = scope ? scope : fresh;
    if (prior.written && !readByThisOp)
      ir::addEdge(p_, state(), prior.node, "", into, "", ir::Memlet{});
    std::set<NodeId> done;
    for (NodeId r : prior.readers)
      if (done.insert(r).second)
        ir::addEdge(p_, state(), r, "", into, "", ir::Memlet{});
    latest_[c] = fresh;
    versions_[fresh] = Version{fresh, true, {}};
    return fresh;
  }

  static ir::Memlet full(const ir::Program &p, const std::string &c,
                         std::optional<ir::Wcr> wcr) {
    return ir::Memlet{c, ir::Subset::full(p.container(c).shape), wcr};
  }

  static ir::Memlet point(const std::string &c, const std::vector<Expr> &index,
                          std::optional<ir::Wcr> wcr = std::nullopt) {
    ir::Memlet m;
    m.container = c;
    for (const Expr &e : index)
      m.subset.dims.push_back(Range::point(e));
    m.wcr = wcr;
    return m;
  }

  void emit(const OpSpec &op) {
    ir::State &s = state();
    // What each level reads and writes (a level carries what the groups at
    // its depth or deeper move), with the resolution of each write.
    std::size_t levels = op.levels.size();
    std::vector<std::set<std::string>> readsAt(
        std::max<std::size_t>(levels, 1)),
        writesAt(std::max<std::size_t>(levels, 1));
    std::map<std::string, std::optional<ir::Wcr>> wcrOf;
    std::set<std::string> reads, writes;
    for (const Group &g : op.groups)
      for (const TaskletSpec &t : g.tasklets) {
        for (const ReadSpec &r : t.reads) {
          reads.insert(r.container);
          for (std::size_t l = 0; l <= g.depth && l < levels; ++l)
            readsAt[l].insert(r.container);
        }
        for (const WriteSpec &w : t.writes) {
          writes.insert(w.container);
          wcrOf[w.container] = w.wcr;
          for (std::size_t l = 0; l <= g.depth && l < levels; ++l)
            writesAt[l].insert(w.container);
        }
      }
    std::map<std::string, NodeId> src, dst;
    for (const std::string &c : reads)
      src[c] = readNode(c);

    std::vector<NodeId> entries, exits;
    for (std::size_t l = 0; l < levels; ++l) {
      std::vector<std::string> names;
      std::vector<Range> ranges;
      for (const Param &p : op.levels[l].params) {
        names.push_back(p.name);
        ranges.push_back(p.range);
      }
      auto [entry, exit] =
          ir::addMap(p_, s, op.label + (l ? "_" + std::to_string(l) : ""),
                     names, ranges, op.levels[l].schedule);
      entries.push_back(entry);
      exits.push_back(exit);
    }

    // Tasklets, created group by group.
    std::vector<std::vector<NodeId>> ids;
    for (std::size_t gi = 0; gi < op.groups.size(); ++gi) {
      std::vector<NodeId> group;
      for (std::size_t ti = 0; ti < op.groups[gi].tasklets.size(); ++ti) {
        const TaskletSpec &t = op.groups[gi].tasklets[ti];
        std::vector<ir::Connector> ins, outs;
        for (const ReadSpec &r : t.reads)
          ins.push_back({r.conn, r.dtype});
        if (t.handIn)
          ins.push_back({"h", *t.handIn});
        for (const WriteSpec &w : t.writes)
          outs.push_back({w.conn, w.dtype});
        if (t.handOut)
          outs.push_back({"h", *t.handOut});
        group.push_back(ir::addTasklet(p_, s,
                                       op.label + "_g" + std::to_string(gi) +
                                           "t" + std::to_string(ti),
                                       ins, outs, t.body));
      }
      ids.push_back(group);
    }
    NodeId first = levels ? entries[0] : ids[0][0];
    NodeId last = levels ? exits[0] : ids.back().back();
    for (const std::string &c : writes)
      dst[c] = writeNode(c, first, reads.count(c) > 0);

    // Scope connectors and the memlets between levels.
    for (std::size_t l = 0; l < levels; ++l) {
      ir::Node &entry = *s.findNode(entries[l]);
      for (const std::string &c : readsAt[l]) {
        DType t = p_.container(c).dtype;
        entry.inputs.push_back({"IN_" + c, t});
        entry.outputs.push_back({"OUT_" + c, t});
      }
      ir::Node &exit = *s.findNode(exits[l]);
      for (const std::string &c : writesAt[l]) {
        DType t = p_.container(c).dtype;
        exit.inputs.push_back({"IN_" + c, t});
        exit.outputs.push_back({"OUT_" + c, t});
      }
      for (const std::string &c : readsAt[l])
        ir::addEdge(p_, s, l ? entries[l - 1] : src[c], l ? "OUT_" + c : "",
                    entries[l], "IN_" + c, full(p_, c, std::nullopt));
      if (readsAt[l].empty() && l > 0)
        ir::addEdge(p_, s, entries[l - 1], "", entries[l], "", ir::Memlet{});
      for (const std::string &c : writesAt[l])
        ir::addEdge(p_, s, exits[l], "OUT_" + c, l ? exits[l - 1] : dst[c],
                    l ? "IN_" + c : "", full(p_, c, wcrOf[c]));
    }

    // Tasklet memlets.
    for (std::size_t gi = 0; gi < op.groups.size(); ++gi) {
      const Group &g = op.groups[gi];
      for (std::size_t ti = 0; ti < g.tasklets.size(); ++ti) {
        const TaskletSpec &t = g.tasklets[ti];
        NodeId id = ids[gi][ti];
        for (const ReadSpec &r : t.reads)
          ir::addEdge(p_, s, levels ? entries[g.depth] : src[r.container],
                      levels ? "OUT_" + r.container : "", id, r.conn,
                      point(r.container, r.index));
        if (t.handIn)
          ir::addEdge(p_, s, ids[gi][ti - 1], "h", id, "h", ir::Memlet{});
        else if (t.reads.empty() && levels)
          ir::addEdge(p_, s, entries[g.depth], "", id, "", ir::Memlet{});
        for (const WriteSpec &w : t.writes)
          ir::addEdge(p_, s, id, w.conn,
                      levels ? exits[g.depth] : dst[w.container],
                      levels ? "IN_" + w.container : "",
                      point(w.container, w.index, w.wcr));
      }
    }

    for (const std::string &c : reads)
      versions_[src[c]].readers.push_back(last);
    for (const std::string &c : writes)
      info_[c].written = true;
  }

  Rng rng_;
  ir::Program p_;
  std::size_t stateIndex_ = 0;
  std::optional<std::int64_t> nValue_;
  bool boundN_ = false;
  int inputs_ = 0, outputs_ = 0, transients_ = 0, opCounter_ = 0;
  std::map<std::string, Info> info_;
  std::map<std::string, NodeId> latest_;
  std::map<NodeId, Version> versions_;
};

// ----------------------------------------------------------------- inputs --


double randomFloat(Rng &rng, DType t) {
  if (rng.chance(0.05)) {
    double big = t == DType::F16 ? 60000.0 : t == DType::F64 ? 1e300 : 1e30;
    double tiny = t == DType::F16 ? 3e-8 : t == DType::F64 ? 1e-310 : 1e-40;
    static const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> specials = {
        0.0, -0.0, inf,  -inf, std::numeric_limits<double>::quiet_NaN(),
        big, -big, tiny, -tiny};
    return rng.pick(specials);
  }
  if (rng.chance(0.1))
    return static_cast<double>(rng.range(-8, 8)) * 0.5; // ties for round
  return rng.uniform() * 8.0 - 4.0;
}

void fill(Rng &rng, runtime::Tensor &t) {
  std::byte *data = t.mutableData();
  std::size_t size = ir::dtypeSize(t.dtype());
  for (std::int64_t i = 0; i < t.elementCount(); ++i) {
    std::byte *at = data + static_cast<std::size_t>(i) * size;
    DType d = t.dtype();
    if (ir::isFloat(d)) {
      double v = randomFloat(rng, d);
      if (d == DType::F64) {
        std::memcpy(at, &v, 8);
      } else if (d == DType::F32) {
        auto f = static_cast<float>(v);
        std::memcpy(at, &f, 4);
      } else {
        std::uint16_t h =
            d == DType::F16 ? ir::doubleToHalf(v) : ir::doubleToBfloat16(v);
        std::memcpy(at, &h, 2);
      }
      continue;
    }
    std::uint64_t bits;
    if (d == DType::Bool)
      bits = rng.next() & 1;
    else if (rng.chance(0.1))
      bits = 0;
    else if (rng.chance(0.6))
      bits = static_cast<std::uint64_t>(ir::isSignedInt(d) ? rng.range(-8, 8)
                                                           : rng.range(0, 8));
    else
      bits = rng.next();
    std::memcpy(at, &bits, size); // little-endian: the low bytes
  }
}

} // namespace

ir::Bindings symbolsOf(const ir::Program &p) {
  ir::Bindings b;
  auto it = p.metadata.find(kSymbolsKey);
  if (it == p.metadata.end())
    return b;
  const std::string &text = it->second;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string item = text.substr(
        pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::size_t eq = item.find('=');
    if (eq != std::string::npos)
      b[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return b;
}

ir::Program randomProgram(std::uint64_t seed) {
  return Generator(seed).run(seed);
}

interp::TensorMap randomInputs(const ir::Program &program, std::uint64_t seed) {
  ir::Bindings symbols = symbolsOf(program);
  Rng rng(seed ^ 0x5DEECE66Dull);
  interp::TensorMap inputs;
  for (const std::string &name : program.inputs) {
    const ir::Container &c = program.container(name);
    std::vector<std::int64_t> shape;
    for (const Expr &d : c.shape)
      shape.push_back(d.evaluate(symbols));
    runtime::Tensor t(c.dtype, shape);
    fill(rng, t);
    inputs.emplace(name, std::move(t));
  }
  return inputs;
}

} // namespace weir::randprog
