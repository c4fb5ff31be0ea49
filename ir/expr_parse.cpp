/// \file
/// parseExpr: recursive descent over the text form. Precedence follows
/// Python, so `-a // b` is `(-a) // b`: unary minus binds tighter than `*`,
/// `//` and `%`, which bind tighter than binary `+` and `-`.

#include "ir/expr.h"

#include "ir/error.h"

#include <cstdint>
#include <limits>

namespace weir::ir {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  Expr parseAll() {
    Expr e = parseSum();
    skipSpace();
    if (!atEnd())
      fail(std::string("unexpected '") + peek() + "'");
    return e;
  }

private:
  /// Deeper nesting than any real index expression; guards the stack
  /// against hostile text.
  static constexpr int kMaxDepth = 500;

  struct DepthGuard {
    explicit DepthGuard(Parser &p) : parser(p) {
      if (++parser.depth_ > kMaxDepth)
        parser.fail("expression nests too deeply");
    }
    ~DepthGuard() { --parser.depth_; }
    Parser &parser;
  };

  Expr parseSum() {
    DepthGuard guard(*this);
    Expr e = parseProduct();
    for (;;) {
      skipSpace();
      if (accept('+'))
        e = e + parseProduct();
      else if (accept('-'))
        e = e - parseProduct();
      else
        return e;
    }
  }

  Expr parseProduct() {
    Expr e = parseUnary();
    for (;;) {
      skipSpace();
      if (text_.substr(pos_, 2) == "//") {
        pos_ += 2;
        e = floorDiv(e, parseUnary());
      } else if (accept('*')) {
        e = e * parseUnary();
      } else if (accept('%')) {
        e = mod(e, parseUnary());
      } else {
        return e;
      }
    }
  }

  Expr parseUnary() {
    DepthGuard guard(*this);
    skipSpace();
    if (accept('-')) {
      skipSpace();
      // A negated literal is read whole so that INT64_MIN, printed as
      // -9223372036854775808, reads back.
      if (!atEnd() && isDigit(peek()))
        return parseNumber(true);
      return -parseUnary();
    }
    if (accept('+'))
      return parseUnary();
    return parsePrimary();
  }

  Expr parsePrimary() {
    skipSpace();
    if (atEnd())
      fail("expected a number, symbol or '(' but the text ended");
    char c = peek();
    if (isDigit(c))
      return parseNumber(false);
    if (accept('(')) {
      Expr e = parseSum();
      expect(')');
      return e;
    }
    if (isIdentStart(c)) {
      std::size_t start = pos_;
      while (!atEnd() && isIdentChar(peek()))
        ++pos_;
      std::string name(text_.substr(start, pos_ - start));
      skipSpace();
      if (atEnd() || peek() != '(')
        return Expr::symbol(name);
      return parseCall(name, start);
    }
    fail(std::string("unexpected '") + c + "'");
  }

  Expr parseCall(const std::string &name, std::size_t start) {
    Expr (*build)(const Expr &, const Expr &) = nullptr;
    if (name == "floordiv")
      build = floorDiv;
    else if (name == "mod")
      build = mod;
    else if (name == "min")
      build = min;
    else if (name == "max")
      build = max;
    else {
      pos_ = start;
      fail("unknown function '" + name +
           "' (expected floordiv, mod, min or max)");
    }
    expect('(');
    Expr a = parseSum();
    expect(',');
    Expr b = parseSum();
    expect(')');
    return build(a, b);
  }

  Expr parseNumber(bool negative) {
    std::size_t start = pos_;
    constexpr std::uint64_t kMaxMagnitude = std::uint64_t{1} << 63;
    std::uint64_t limit = negative ? kMaxMagnitude : kMaxMagnitude - 1;
    std::uint64_t value = 0;
    while (!atEnd() && isDigit(peek())) {
      std::uint64_t digit = static_cast<std::uint64_t>(peek() - '0');
      if (value > (limit - digit) / 10) {
        pos_ = start;
        fail("integer literal out of the 64-bit range");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    if (negative)
      return Expr(static_cast<std::int64_t>(~value + 1));
    return Expr(static_cast<std::int64_t>(value));
  }

  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                        peek() == '\r'))
      ++pos_;
  }

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  bool accept(char c) {
    if (!atEnd() && peek() == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    skipSpace();
    if (accept(c))
      return;
    if (atEnd())
      fail(std::string("expected '") + c + "' but the text ended");
    fail(std::string("expected '") + c + "' but found '" + peek() + "'");
  }

  [[noreturn]] void fail(const std::string &why) const {
    throw Error("cannot parse expression '" + std::string(text_) + "': " + why +
                " at column " + std::to_string(pos_ + 1));
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

} // namespace

Expr parseExpr(std::string_view text) {
  try {
    return Parser(text).parseAll();
  } catch (const Error &e) {
    std::string message = e.what();
    if (message.rfind("cannot parse expression", 0) == 0)
      throw;
    // Overflow while folding, or a bad symbol name: still quote the text.
    throw Error("cannot parse expression '" + std::string(text) +
                "': " + message);
  }
}

} // namespace weir::ir
