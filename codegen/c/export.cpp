/// \file
/// The readable C++ export: the loop IR printed as standalone C++17 with
/// OpenMP (see export.h). Names are made identifiers once (Names), each
/// local is declared in the innermost scope that holds all its uses (Locals),
/// and values print with C's precedence so that only needed parentheses
/// appear (Printer).

#include "codegen/c/export.h"
#include "codegen/c/preamble.h"

#include "ir/error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace weir::codegen {
namespace {

using ir::DType;
using ir::tasklet::BinaryOp;
using ir::tasklet::Func;
using ir::tasklet::UnaryOp;

// ------------------------------------------------------------ buffer use --

/// Every buffer `v` loads from.
void collectBuffers(const Value &v, std::set<std::string> &used) {
  if (v.kind == ValueKind::Load)
    used.insert(v.name);
  for (const ValuePtr &op : v.operands)
    if (op)
      collectBuffers(*op, used);
}

/// Every buffer `s` and its nested statements load, store, allocate or
/// pass to a call.
void collectBuffers(const Stmt &s, std::set<std::string> &used) {
  if (!s.buffer.empty())
    used.insert(s.buffer);
  for (const CallArg &a : s.args)
    if (!a.buffer.empty())
      used.insert(a.buffer);
  if (s.value)
    collectBuffers(*s.value, used);
  for (const StmtPtr &b : s.body)
    if (b)
      collectBuffers(*b, used);
}

// ----------------------------------------------------------------- names --

/// Identifiers C++ or the included headers claim (keywords, macros, the
/// entry point's parameters).
const std::set<std::string, std::less<>> &reservedNames() {
  static const std::set<std::string, std::less<>> names = [] {
    std::istringstream words(
        "alignas alignof and and_eq asm auto bitand bitor bool break case "
        "catch char char8_t char16_t char32_t class compl concept const "
        "consteval constexpr constinit const_cast continue co_await "
        "co_return co_yield decltype default delete do double dynamic_cast "
        "else enum explicit export extern false float for friend goto if "
        "inline int long mutable namespace new noexcept not not_eq nullptr "
        "operator or or_eq private protected public register "
        "reinterpret_cast requires return short signed sizeof static "
        "static_assert static_cast struct switch template this "
        "thread_local throw true try typedef typeid typename union "
        "unsigned using virtual void volatile wchar_t while xor xor_eq "
        "final override import module main std buffers symbols errno "
        "assert stdin stdout stderr unix linux i386 NULL EOF NAN INFINITY "
        "BUFSIZ signbit isnan isinf isfinite fpclassify isnormal offsetof "
        "setjmp va_arg va_start va_end va_copy alloca");
    std::set<std::string, std::less<>> set;
    for (std::string w; words >> w;)
      set.insert(w);
    return set;
  }();
  return names;
}

/// Whether `s` looks like a macro of the C library (`EXIT_SUCCESS`,
/// `INT32_MAX`, `M_PI`): upper case with an underscore.
bool macroLike(const std::string &s) {
  return s.find('_') != std::string::npos &&
         std::none_of(s.begin(), s.end(),
                      [](char c) { return c >= 'a' && c <= 'z'; });
}

/// Makes names valid, distinct C++ identifiers.
class Names {
public:
  /// The identifier for `raw` in `space` (buffers, index variables, locals),
  /// the same one every time.
  const std::string &get(char space, const std::string &raw) {
    auto key = std::string(1, space) + raw;
    auto it = ids_.find(key);
    if (it != ids_.end())
      return it->second;
    std::string base = sanitize(raw), id = base;
    for (int n = 2; used_.count(id); ++n)
      id = base + (base.back() == '_' ? "" : "_") + std::to_string(n);
    used_.insert(id);
    return ids_.emplace(key, id).first->second;
  }

  /// `raw` with each run of other characters than letters and digits
  /// replaced by one `_` (`__` is reserved).
  static std::string letters(const std::string &raw) {
    std::string s;
    for (char c : raw) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (c >= '0' && c <= '9');
      if (ok)
        s += c;
      else if (s.empty() || s.back() != '_')
        s += '_';
    }
    return s;
  }

  /// A valid identifier, clear of keywords, macros and the helpers.
  static std::string sanitize(const std::string &raw) {
    std::string s = letters(raw);
    if (s.empty() || (s[0] >= '0' && s[0] <= '9') || s[0] == '_')
      s = "v" + std::string(s.empty() || s[0] == '_' ? "" : "_") + s;
    if (reservedNames().count(s) || macroLike(s) || s.rfind("weir_", 0) == 0 ||
        s.rfind("omp_", 0) == 0 ||
        (s.size() > 2 && s.compare(s.size() - 2, 2, "_t") == 0))
      s += s.back() == '_' ? "v" : "_";
    return s;
  }

private:
  std::map<std::string, std::string> ids_;
  std::set<std::string, std::less<>> used_;
};

/// The function's name for files and the entry point: letters, digits and
/// single underscores, not starting with one.
std::string baseName(const LoopFunction &f) {
  std::string s = Names::letters(f.name);
  s.erase(0, s.find_first_not_of('_'));
  return s.empty() ? "program" : s;
}

/// A comment line's text: no control characters, and no backslash, which
/// at the end of a line would continue the comment onto the next.
std::string commentSafe(const std::string &s) {
  std::string out;
  for (char c : s)
    out += (static_cast<unsigned char>(c) < 0x20 || c == '\\' || c == 0x7f)
               ? '?'
               : c;
  return out;
}

// ----------------------------------------------------------------- types --

/// The C++ type a value of `t` is computed in.
const char *computeType(DType t) {
  switch (t) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
    return "float";
  case DType::F64:
    return "double";
  case DType::I8:
    return "int8_t";
  case DType::U8:
    return "uint8_t";
  case DType::I16:
    return "int16_t";
  case DType::U16:
    return "uint16_t";
  case DType::I32:
    return "int32_t";
  case DType::U32:
    return "uint32_t";
  case DType::I64:
    return "int64_t";
  case DType::U64:
    return "uint64_t";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

/// The C++ type an element of a `t` buffer is stored as.
const char *storageType(DType t) {
  switch (t) {
  case DType::F16:
  case DType::BF16:
    return "uint16_t";
  case DType::Bool:
    return "uint8_t";
  default:
    return computeType(t);
  }
}

/// Computed in float but rounded to its own precision on store and cast.
bool isHalfLike(DType t) { return t == DType::F16 || t == DType::BF16; }

// ------------------------------------------------------------ local scope --

/// Where each local is declared: in the innermost scope (function, loop,
/// allocation or `if` body) enclosing every use, at its first assignment when
/// that is its first use and sits directly in that scope, else at the scope's
/// top. Scopes and assignments are numbered in the printer's walk order.
struct Locals {
  struct Info {
    DType type = DType::F32;
    std::vector<int> scope; ///< common prefix of the paths of all uses
    int firstScope = 0;     ///< the scope of the first use
    int firstAssign = -1;   ///< the first use's assignment number, or -1
    int declareAtAssign = -1;
    bool read = false; ///< whether a value reads it
  };
  std::map<std::string, Info> info;
  /// Scope number -> locals declared at its top.
  std::map<int, std::vector<std::string>> atTop;

  void collect(const Stmt &root) {
    std::vector<int> path = {0};
    int scopes = 1, assigns = 0;
    walk(root, path, scopes, assigns);
    for (auto &[name, i] : info) {
      if (i.firstAssign >= 0 && i.firstScope == i.scope.back())
        i.declareAtAssign = i.firstAssign;
      else
        atTop[i.scope.back()].push_back(name);
    }
  }

private:
  void use(const std::string &name, DType type, const std::vector<int> &path,
           int assignment) {
    auto [it, first] = info.try_emplace(name);
    Info &i = it->second;
    if (first) {
      i = Info{type, path, path.back(), assignment, -1};
      return;
    }
    std::size_t n = 0;
    while (n < i.scope.size() && n < path.size() && i.scope[n] == path[n])
      ++n;
    i.scope.resize(n); // never empty: every path starts at the function
  }

  void walkValue(const Value &v, const std::vector<int> &path) {
    if (v.kind == ValueKind::Local) {
      use(v.name, v.type, path, -1);
      info[v.name].read = true;
    }
    for (const ValuePtr &op : v.operands)
      walkValue(*op, path);
  }

  void walk(const Stmt &s, std::vector<int> &path, int &scopes, int &assigns) {
    switch (s.kind) {
    case StmtKind::Block:
      for (const StmtPtr &b : s.body)
        walk(*b, path, scopes, assigns);
      return;
    case StmtKind::Call:
      return;
    case StmtKind::Store:
      walkValue(*s.value, path);
      return;
    case StmtKind::Assign:
      walkValue(*s.value, path);
      use(s.var, s.value->type, path, assigns++);
      return;
    case StmtKind::If:
      walkValue(*s.value, path);
      [[fallthrough]];
    case StmtKind::For:
    case StmtKind::Allocate:
      path.push_back(scopes++);
      for (const StmtPtr &b : s.body)
        walk(*b, path, scopes, assigns);
      path.pop_back();
      return;
    }
  }
};

// --------------------------------------------------------------- printer --

/// C++ operator precedence, loosest first.
enum Prec : int {
  kTernary = 2,
  kOr = 4,
  kAnd = 5,
  kEq = 9,
  kRel = 10,
  kAdd = 12,
  kMul = 13,
  kUnary = 15,
  kPrimary = 20,
};

/// A C++ expression and the precedence of its outermost operator.
struct Code {
  std::string text;
  int prec = kPrimary;
};

std::string wrap(const Code &c, int minPrec) {
  return c.prec < minPrec ? "(" + c.text + ")" : c.text;
}

std::string shortest(double d, bool single) {
  char buf[64];
  auto r = single ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(d))
                  : std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return single ? s + "f" : s;
}

/// A literal of float type `t` holding `d` (rounded to float unless f64, as
/// the interpreter holds it).
Code floatLiteralCode(DType t, double d) {
  bool single = t != DType::F64;
  if (single) // as the interpreter rounds it (infinite beyond float's range)
    d = static_cast<float>(d);
  if (std::isnan(d)) {
    char buf[64];
    if (single) {
      float f = static_cast<float>(d);
      std::uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      std::snprintf(buf, sizeof buf, "weir_f32_from_bits(0x%08xu)", bits);
    } else {
      std::uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      std::snprintf(buf, sizeof buf, "weir_f64_from_bits(0x%016llxull)",
                    static_cast<unsigned long long>(bits));
    }
    return {buf};
  }
  if (std::isinf(d)) {
    std::string inf = single ? "INFINITY" : "double(INFINITY)";
    return d > 0 ? Code{inf} : Code{"-" + inf, kUnary};
  }
  std::string s = shortest(d, single);
  return {s, s[0] == '-' ? kUnary : kPrimary};
}

Code intLiteralCode(DType t, std::uint64_t bits) {
  if (t == DType::Bool)
    return {bits ? "true" : "false"};
  if (t == DType::I64 && bits == (std::uint64_t(1) << 63))
    return {"INT64_MIN"};
  std::string n = ir::isSignedInt(t)
                      ? std::to_string(static_cast<std::int64_t>(bits))
                      : std::to_string(bits) + "u";
  return {std::string(computeType(t)) + "(" + n + ")"};
}

/// `c`, a value of type `from`, converted to `to` by the interpreter's rules.
Code convert(const Code &c, DType from, DType to) {
  if (from == to)
    return c;
  if (to == DType::Bool)
    return {wrap(c, kRel + 1) + " != 0", kEq};
  if (to == DType::F16 || to == DType::BF16) {
    std::string arg = ir::isFloat(from) ? c.text : "double(" + c.text + ")";
    return {
        std::string(to == DType::F16 ? "weir_round_f16(" : "weir_round_bf16(") +
        arg + ")"};
  }
  if (to == DType::F32 && isHalfLike(from))
    return c; // already a float holding an f16/bf16 value
  if (ir::isFloat(to))
    return {std::string(computeType(to)) + "(" + c.text + ")"};
  if (ir::isFloat(from))
    return {"weir_ftoi<" + std::string(computeType(to)) + ">(" + c.text + ")"};
  return {std::string(computeType(to)) + "(" + c.text + ")"};
}

/// `c` (already of the buffer's dtype `t`) as the element stored.
std::string encode(const Code &c, DType t) {
  switch (t) {
  case DType::F16:
    return "weir_f16_bits(" + c.text + ")";
  case DType::BF16:
    return "weir_bf16_bits(" + c.text + ")";
  case DType::Bool:
    return "uint8_t(" + c.text + ")";
  default:
    return c.text;
  }
}

/// Prints one LoopFunction (see exportCpp).
class Printer {
public:
  explicit Printer(const LoopFunction &f) : f_(f) {
    if (f.body)
      locals_.collect(*f.body);
  }

  ExportedCpp run() {
    std::string name = baseName(f_);
    std::string entry = exportedSymbol(f_);
    out_ << "// " << name << ".cpp: the Weir program '" << commentSafe(f_.name)
         << "' as standalone C++17\n// with OpenMP, printed from its loop IR "
            "by Weir's C++ export (codegen/c).\n//\n"
            "// Build (these flags keep the results bit for bit equal to "
            "Weir's; never\n// add -ffast-math or -Ofast):\n"
            "//   g++ -std=c++17 -O2 -fopenmp -ffp-contract=off -shared -fPIC "
         << name << ".cpp\n//       -o lib" << name << ".so\n//\n"
         << "// Entry point:\n//   extern \"C\" int " << entry
         << "(void **buffers, const int64_t *symbols);\n"
            "// Each buffer is a dense row-major array (f16 and bf16 as "
            "uint16_t bit\n// patterns, bool as one byte each); outputs "
            "must arrive zero-filled.\n";
    for (std::size_t i = 0; i < f_.buffers.size(); ++i) {
      const BufferParam &b = f_.buffers[i];
      out_ << "//   buffers[" << i << "]  "
           << (b.role == BufferParam::Role::Input    ? "input   "
               : b.role == BufferParam::Role::Output ? "output  "
                                                     : "constant")
           << "  " << commentSafe(b.name) << ": " << ir::dtypeName(b.dtype)
           << "[";
      for (std::size_t d = 0; d < b.shape.size(); ++d)
        out_ << (d ? ", " : "") << commentSafe(b.shape[d].str());
      out_ << "]\n";
    }
    for (std::size_t i = 0; i < f_.symbols.size(); ++i)
      out_ << "//   symbols[" << i << "]  " << commentSafe(f_.symbols[i])
           << "\n";
    out_ << "// Returns 0, or 1 when an integer division or remainder by "
            "zero happened\n// (the outputs are then unspecified).\n\n"
         << c_export::kPreamble << c_export::kTaskletMath << c_export::kHelpers
         << "\nextern \"C\" int " << entry
         << "(void **buffers, const int64_t *symbols) {\n";
    if (f_.buffers.empty())
      line("(void)buffers;");
    if (f_.symbols.empty())
      line("(void)symbols;");
    for (std::size_t i = 0; i < f_.buffers.size(); ++i) {
      const BufferParam &b = f_.buffers[i];
      buffers_[b.name] = b.dtype;
      bool readOnly = b.role != BufferParam::Role::Output && !b.written;
      std::string type =
          std::string(readOnly ? "const " : "") + storageType(b.dtype) + " *";
      line(type + names_.get('b', b.name) + " = static_cast<" + type +
           ">(buffers[" + std::to_string(i) + "]);");
    }
    std::set<std::string> used;
    if (f_.body)
      collectBuffers(*f_.body, used);
    for (const BufferParam &b : f_.buffers)
      if (!used.count(b.name))
        line("(void)" + names_.get('b', b.name) +
             "; // neither read nor written (a value that only decided sizes, "
             "or a constant no loop reads)");
    for (std::size_t i = 0; i < f_.symbols.size(); ++i)
      line("const int64_t " + names_.get('i', f_.symbols[i]) + " = symbols[" +
           std::to_string(i) + "];");
    line("std::atomic<int> weir_status{0}; // 1 after an integer division by "
         "zero, 3 after an access out of bounds");
    declareLocals(0);
    if (f_.body)
      stmt(*f_.body);
    line("return weir_status.load();");
    out_ << "}\n";
    ExportedCpp out{out_.str(), {}};
    // Offsets to lines, in one pass over the text.
    std::vector<std::streamoff> lineStarts = {0};
    for (std::size_t i = 0; i < out.text.size(); ++i)
      if (out.text[i] == '\n')
        lineStarts.push_back(std::streamoff(i + 1));
    auto lineOf = [&](std::streamoff offset) {
      return int(std::upper_bound(lineStarts.begin(), lineStarts.end(),
                                  offset) -
                 lineStarts.begin()) -
             1;
    };
    for (const OpenRegion &r : regions_)
      out.regions.push_back({r.label, lineOf(r.begin), lineOf(r.end - 1)});
    std::sort(out.regions.begin(), out.regions.end(),
              [](const SourceRegion &a, const SourceRegion &b) {
                return a.first < b.first;
              });
    return out;
  }

private:
  void line(const std::string &text) {
    out_ << std::string(static_cast<std::size_t>(indent_) * 2, ' ') << text
         << "\n";
  }

  void declareLocals(int scope) {
    auto it = locals_.atTop.find(scope);
    if (it == locals_.atTop.end())
      return;
    for (const std::string &name : it->second)
      line(declaration(locals_.info.at(name)) + names_.get('l', name) + "{};");
  }

  /// The type that declares a local (marked when nothing reads it, as a
  /// tasklet input it ignores, so that g++ -Wall stays quiet).
  static std::string declaration(const Locals::Info &info) {
    return std::string(info.read ? "" : "[[maybe_unused]] ") +
           computeType(info.type) + " ";
  }

  /// Statements of a new scope (numbered as Locals numbers them).
  void scopeBody(const std::vector<StmtPtr> &body) {
    ++indent_;
    declareLocals(scopes_++);
    for (const StmtPtr &s : body)
      stmt(*s);
    --indent_;
  }

  DType bufferType(const std::string &name) const {
    auto it = buffers_.find(name);
    if (it == buffers_.end())
      throw Error("exportCpp: '" + name + "' is not a buffer of function '" +
                  f_.name + "'");
    return it->second;
  }

  /// `text` as a C++ string literal.
  static std::string stringLiteral(const std::string &text) {
    std::string out = "\"";
    for (char ch : text) {
      auto byte = static_cast<unsigned char>(ch);
      if (byte < 0x20 || byte == 0x7f) {
        // Three octal digits: a hex escape would swallow the text after it.
        char octal[5];
        std::snprintf(octal, sizeof octal, "\\%03o", byte);
        out += octal;
        continue;
      }
      if (ch == '"' || ch == '\\')
        out += '\\';
      out += ch;
    }
    return out + "\"";
  }

  // Index expressions (ir::Expr), in int64_t.
  /// Whether a guarded access is in bounds: its dimensions' weir_check
  /// calls (preamble), joined by &&.
  std::string checks(const BoundsGuard &g) {
    std::string what = stringLiteral(g.what);
    std::string out = "(";
    for (std::size_t d = 0; d < g.index.size(); ++d)
      out += (d ? " && " : "") + std::string("weir_check(") +
             index(g.index[d]) + ", " + index(g.extent[d]) + ", " +
             std::to_string(d) + ", " + what + ", weir_status)";
    return out + ")";
  }

  std::string index(const ir::Expr &e) {
    switch (e.kind()) {
    case ir::ExprKind::Const: {
      std::int64_t v = *e.asConstant();
      return v == std::numeric_limits<std::int64_t>::min() ? "INT64_MIN"
                                                           : std::to_string(v);
    }
    case ir::ExprKind::Sym:
      return names_.get('i', e.symbolName());
    case ir::ExprKind::Add: {
      std::string s;
      for (const ir::Expr &term : e.operands()) {
        std::optional<std::int64_t> neg = negativeCoefficient(term);
        if (!s.empty())
          s += neg ? " - " : " + ";
        s += product(term, !s.empty() && neg);
      }
      return s.empty() ? "0" : s;
    }
    case ir::ExprKind::Mul:
      return product(e, false);
    case ir::ExprKind::FloorDiv:
    case ir::ExprKind::Mod:
    case ir::ExprKind::Min:
    case ir::ExprKind::Max: {
      static const std::map<ir::ExprKind, std::string> fn = {
          {ir::ExprKind::FloorDiv, "weir_floordiv("},
          {ir::ExprKind::Mod, "weir_mod("},
          {ir::ExprKind::Min, "std::min<int64_t>("},
          {ir::ExprKind::Max, "std::max<int64_t>("}};
      return fn.at(e.kind()) + index(e.operands()[0]) + ", " +
             index(e.operands()[1]) + ")";
    }
    }
    return "0";
  }

  /// The negatable negative coefficient of a sum's term (printed as `- `).
  static std::optional<std::int64_t> negativeCoefficient(const ir::Expr &e) {
    std::optional<std::int64_t> c = e.asConstant();
    if (!c && e.kind() == ir::ExprKind::Mul && e.operands().size() >= 2)
      c = e.operands().back().asConstant();
    if (c && *c < 0 && *c != std::numeric_limits<std::int64_t>::min())
      return c;
    return std::nullopt;
  }

  /// A term of a sum (or any expression); `negate` prints its negative
  /// coefficient's magnitude, the caller having written ` - `.
  std::string product(const ir::Expr &e, bool negate) {
    if (e.kind() == ir::ExprKind::Const && negate)
      return std::to_string(-*e.asConstant());
    if (e.kind() == ir::ExprKind::Add)
      return "(" + index(e) + ")";
    if (e.kind() != ir::ExprKind::Mul)
      return index(e);
    const std::vector<ir::Expr> &ops = e.operands();
    std::size_t factors = ops.size();
    std::optional<std::int64_t> coefficient;
    std::string s;
    if (ops.size() >= 2 && ops.back().isConstant()) {
      coefficient = *ops.back().asConstant();
      --factors;
      if (negate || negativeCoefficient(ops.back())) {
        if (!negate)
          s = "-";
        coefficient = -*coefficient;
      }
    }
    for (std::size_t i = 0; i < factors; ++i)
      s += (i ? "*" : "") + product(ops[i], false);
    if (coefficient && *coefficient != 1)
      s += "*" + index(ir::Expr(*coefficient));
    return s;
  }

  // Values.
  Code value(const Value &v) {
    auto op = [&](std::size_t i) { return value(*v.operands[i]); };
    switch (v.kind) {
    case ValueKind::Literal:
      return ir::isFloat(v.type) ? floatLiteralCode(v.type, v.f)
                                 : intLiteralCode(v.type, v.bits);
    case ValueKind::Load: {
      DType t = bufferType(v.name);
      std::string element =
          names_.get('b', v.name) + "[" + index(v.index) + "]";
      if (v.guard)
        element = "(" + checks(*v.guard) + " ? " + element + " : " +
                  storageType(t) + "{})";
      Code c{element};
      if (t == DType::F16)
        c = {"weir_f16_to_f32(" + element + ")"};
      else if (t == DType::BF16)
        c = {"weir_bf16_to_f32(" + element + ")"};
      else if (t == DType::Bool)
        c = {element + " != 0", kEq};
      return convert(c, t, v.type);
    }
    case ValueKind::Local:
      return {names_.get('l', v.name)};
    case ValueKind::Unary: {
      Code a = op(0);
      if (v.unaryOp == UnaryOp::Not)
        return {"!" + wrap(a, kUnary), kUnary};
      if (!ir::isFloat(v.type))
        return {"weir_neg(" + a.text + ")"};
      std::string t = wrap(a, kUnary);
      return {"-" + (t[0] == '-' ? "(" + t + ")" : t), kUnary};
    }
    case ValueKind::Binary:
      return binaryCode(v, op(0), op(1));
    case ValueKind::Call:
      return callCode(v);
    case ValueKind::Select:
      return {wrap(op(0), kTernary + 1) + " ? " + wrap(op(1), kTernary + 1) +
                  " : " + wrap(op(2), kTernary + 1),
              kTernary};
    case ValueKind::Cast:
      return convert(op(0), v.operands[0]->type, v.type);
    }
    return {"0"};
  }

  static Code binaryCode(const Value &v, const Code &a, const Code &b) {
    auto infix = [&](const char *o, int prec, int left, int right) {
      return Code{wrap(a, left) + " " + o + " " + wrap(b, right), prec};
    };
    switch (v.binaryOp) {
    case BinaryOp::And: // a chain of one operator needs no parentheses
      return infix("&&", kAnd, kAnd, kEq);
    case BinaryOp::Or:
      return infix("||", kOr, a.prec == kOr ? kOr : kEq, kEq);
    case BinaryOp::Eq:
      return infix("==", kEq, kRel + 1, kRel + 1);
    case BinaryOp::Ne:
      return infix("!=", kEq, kRel + 1, kRel + 1);
    case BinaryOp::Lt:
      return infix("<", kRel, kRel + 1, kRel + 1);
    case BinaryOp::Le:
      return infix("<=", kRel, kRel + 1, kRel + 1);
    case BinaryOp::Gt:
      return infix(">", kRel, kRel + 1, kRel + 1);
    case BinaryOp::Ge:
      return infix(">=", kRel, kRel + 1, kRel + 1);
    default:
      break;
    }
    if (ir::isFloat(v.type)) {
      switch (v.binaryOp) {
      case BinaryOp::Add:
        return infix("+", kAdd, kAdd, kAdd + 1);
      case BinaryOp::Sub:
        return infix("-", kAdd, kAdd, kAdd + 1);
      case BinaryOp::Mul:
        return infix("*", kMul, kMul, kMul + 1);
      case BinaryOp::Div:
        return infix("/", kMul, kMul, kMul + 1);
      default: // Mod
        return {"std::fmod(" + a.text + ", " + b.text + ")"};
      }
    }
    static const std::map<BinaryOp, std::string> helpers = {
        {BinaryOp::Add, "weir_add("},
        {BinaryOp::Sub, "weir_sub("},
        {BinaryOp::Mul, "weir_mul("},
        {BinaryOp::Div, "weir_div("},
        {BinaryOp::Mod, "weir_rem("}};
    bool divides = v.binaryOp == BinaryOp::Div || v.binaryOp == BinaryOp::Mod;
    return {helpers.at(v.binaryOp) + a.text + ", " + b.text +
            (divides ? ", weir_status)" : ")")};
  }

  Code callCode(const Value &v) {
    std::string args;
    for (std::size_t i = 0; i < v.operands.size(); ++i)
      args += (i ? ", " : "") + value(*v.operands[i]).text;
    if (!ir::isFloat(v.type)) {
      // The type checker admits only abs, min, max and hash on integers.
      switch (v.func) {
      case Func::Hash:
        return {"weir_hash(" + args + ")"};
      case Func::Abs:
        return {"weir_iabs(" + args + ")"};
      case Func::Min:
        return {"weir_imin(" + args + ")"};
      case Func::Max:
        return {"weir_imax(" + args + ")"};
      default:
        throw Error("exportCpp: '" +
                    std::string(ir::tasklet::funcName(v.func)) +
                    "' of an integer in function '" + f_.name + "'");
      }
    }
    switch (v.func) {
    case Func::Rsqrt:
      return {"weir_rsqrt(" + args + ")"};
    case Func::Sigmoid:
      return {"weir_sigmoid(" + args + ")"};
    case Func::Exp:
      return {"weir_exp(" + args + ")"};
    case Func::Erf:
      return {"weir_erf(" + args + ")"};
    case Func::Pow:
      return {"weir_pow(" + args + ")"};
    case Func::Min:
      return {"weir_fmin(" + args + ")"};
    case Func::Max:
      return {"weir_fmax(" + args + ")"};
    case Func::Abs:
      return {"std::fabs(" + args + ")"};
    case Func::Round: // half to even: the default rounding mode
      return {"std::nearbyint(" + args + ")"};
    default:
      return {"std::" + std::string(ir::tasklet::funcName(v.func)) + "(" +
              args + ")"};
    }
  }

  // Statements.
  void stmt(const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Block:
      for (const StmtPtr &b : s.body)
        stmt(*b);
      return;
    case StmtKind::For:
      return forLoop(s);
    case StmtKind::Allocate:
      return allocation(s);
    case StmtKind::Store: {
      DType t = bufferType(s.buffer);
      Code c = convert(value(*s.value), s.value->type, t);
      line((s.guard ? "if (" + checks(*s.guard) + ") " : std::string()) +
           names_.get('b', s.buffer) + "[" + index(s.index) +
           "] = " + encode(c, t) + ";");
      return;
    }
    case StmtKind::Assign: {
      const Locals::Info &info = locals_.info.at(s.var);
      std::string decl =
          info.declareAtAssign == assigns_++ ? declaration(info) : "";
      line(decl + names_.get('l', s.var) + " = " + value(*s.value).text + ";");
      return;
    }
    case StmtKind::Call:
      return callStmt(s);
    case StmtKind::If:
      line("if (" + value(*s.value).text + ") {");
      scopeBody(s.body);
      line("}");
      return;
    }
  }

  /// An allocation, with the allocations directly nested in it (the
  /// lowering wraps the body in one per transient) in the same block.
  void allocation(const Stmt &first) {
    std::vector<const Stmt *> chain = {&first};
    while (chain.back()->body.size() == 1 &&
           chain.back()->body[0]->kind == StmtKind::Allocate)
      chain.push_back(chain.back()->body[0].get());
    std::map<std::string, DType> outer = buffers_;
    line("{");
    ++indent_;
    for (const Stmt *a : chain) {
      std::string type = storageType(a->dtype);
      line(type + " *" + names_.get('b', a->buffer) + " = static_cast<" + type +
           " *>(weir_alloc(" + index(a->size) + ", sizeof(" + type + ")));");
      buffers_[a->buffer] = a->dtype;
    }
    for (std::size_t i = 1; i < chain.size(); ++i)
      declareLocals(scopes_++); // scopes with nothing but the next allocation
    --indent_;
    scopeBody(chain.back()->body);
    ++indent_;
    for (auto a = chain.rbegin(); a != chain.rend(); ++a)
      line("std::free(" + names_.get('b', (*a)->buffer) + ");");
    --indent_;
    line("}");
    buffers_ = std::move(outer);
  }

  /// A library routine (loop_ir.h lists them), as a preamble helper.
  void callStmt(const Stmt &s) {
    std::string outer = region_;
    int region = markRegion(s.label);
    region_ = outer;
    if (s.callee != kCallSgemm)
      throw Error("exportCpp: function '" + f_.name +
                  "' calls unknown routine '" + s.callee + "'");
    std::string args;
    for (const CallArg &a : s.args) {
      args += args.empty() ? "" : ", ";
      if (a.kind == CallArg::Kind::Float) {
        args += floatLiteralCode(DType::F64, a.f).text;
      } else if (a.kind == CallArg::Kind::Int) {
        args += index(a.expr);
      } else {
        bufferType(a.buffer); // must be in scope
        args += names_.get('b', a.buffer);
        if (a.expr != ir::Expr(0))
          args += a.expr.kind() == ir::ExprKind::Add
                      ? " + (" + index(a.expr) + ")"
                      : " + " + index(a.expr);
      }
    }
    line("// sgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, "
         "ldc, room of A, B and C)");
    line("weir_sgemm(" + args + ", " +
         stringLiteral(s.label.empty() ? "?" : s.label) + ", weir_status);");
    closeRegion(region);
  }

  /// A comment naming the node a loop nest or call was lowered from
  /// (Stmt::label), where it starts, and the start of its entry in the
  /// source map; the caller closes it (closeRegion) after the statement's
  /// last line. Returns the entry, or -1 when the statement continues the
  /// enclosing region.
  int markRegion(const std::string &label) {
    if (label.empty() || label == region_)
      return -1;
    regions_.push_back({label, out_.tellp(), 0});
    line("// node: " + commentSafe(label));
    region_ = label;
    return int(regions_.size()) - 1;
  }
  void closeRegion(int entry) {
    if (entry >= 0)
      regions_[std::size_t(entry)].end = out_.tellp();
  }

  void forLoop(const Stmt &s) {
    std::string outer = region_;
    int region = markRegion(s.label);
    std::string var = names_.get('i', s.var);
    bool parallel = s.forKind == ForKind::Parallel;
    bool simd = s.forKind == ForKind::Vectorized;
    if (parallel && (parallelDepth_ || simdDepth_))
      line("// parallel: runs on the enclosing loop's thread");
    else if (parallel)
      line("#pragma omp parallel for");
    else if (simd)
      line("#pragma omp simd");
    std::string step =
        s.step == ir::Expr(1) ? "++" + var : var + " += " + index(s.step);
    line("for (int64_t " + var + " = " + index(s.begin) + "; " + var + " < " +
         index(s.end) + "; " + step + ") {");
    parallelDepth_ += parallel;
    simdDepth_ += simd;
    scopeBody(s.body);
    parallelDepth_ -= parallel;
    simdDepth_ -= simd;
    line("}");
    closeRegion(region);
    region_ = outer;
  }

  const LoopFunction &f_;
  Names names_;
  Locals locals_;
  /// Buffers in scope: parameters and enclosing allocations.
  std::map<std::string, DType> buffers_;
  std::ostringstream out_;
  int indent_ = 1, scopes_ = 1, assigns_ = 0;
  int parallelDepth_ = 0, simdDepth_ = 0;
  /// The label of the region being printed ("" outside any).
  std::string region_;
  /// The source map, as byte offsets into out_ until run() ends.
  struct OpenRegion {
    std::string label;
    std::streamoff begin, end;
  };
  std::vector<OpenRegion> regions_;
};

} // namespace

std::string exportedSymbol(const LoopFunction &f) {
  return "weir_" + baseName(f);
}

std::string exportCpp(const LoopFunction &f) { return Printer(f).run().text; }

ExportedCpp exportCppWithMap(const LoopFunction &f) { return Printer(f).run(); }

} // namespace weir::codegen
