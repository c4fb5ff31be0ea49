/// \file
/// Lexer and parser of the tasklet language: precedence climbing over the
/// binary operators, recursive descent for the rest. Every error is a
/// weir::Error that points at the line and column of the offending token.

#include "ir/error.h"
#include "ir/tasklet.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace weir::ir::tasklet {
namespace {

enum class Tok : std::uint8_t {
  Ident,
  Int,
  Float,
  Op, ///< a unary or binary operator
  LParen,
  RParen,
  Comma,
  Assign,
  Separator, ///< newline or ';'
  End,
};

struct Token {
  Tok kind;
  std::string_view text;
  std::size_t offset; ///< into the source, for quoting the line
  int line;
  int column;
};

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

/// How a token is named in a message.
std::string describe(const Token &t) {
  if (t.kind == Tok::End)
    return "end of text";
  if (t.text == "\n")
    return "end of line";
  return "'" + std::string(t.text) + "'";
}

/// Builds the "line L, column C: ..." message with the source line quoted and
/// a caret under the column, then throws it.
[[noreturn]] void fail(std::string_view src, std::size_t offset, int line,
                       int column, const std::string &message) {
  std::size_t begin = offset;
  while (begin > 0 && src[begin - 1] != '\n')
    --begin;
  std::size_t end = src.find('\n', begin);
  if (end == std::string_view::npos)
    end = src.size();
  if (end > begin && src[end - 1] == '\r')
    --end;
  std::string_view lineText = src.substr(begin, end - begin);
  // Tabs are copied into the caret line so that the caret lines up however
  // the reader's terminal expands them.
  std::string caret;
  for (std::size_t i = begin; i < offset && i < src.size() && src[i] != '\n';
       ++i)
    caret += src[i] == '\t' ? '\t' : ' ';
  caret += '^';
  throw Error("tasklet line " + std::to_string(line) + ", column " +
              std::to_string(column) + ": " + message + "\n    " +
              std::string(lineText) + "\n    " + caret);
}

std::vector<Token> lex(std::string_view src) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  int line = 1;
  std::size_t lineStart = 0;
  auto column = [&](std::size_t at) {
    return static_cast<int>(at - lineStart) + 1;
  };
  auto push = [&](Tok kind, std::size_t begin, std::size_t length) {
    tokens.push_back(
        {kind, src.substr(begin, length), begin, line, column(begin)});
  };
  while (i < src.size()) {
    char c = src[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '#') {
      while (i < src.size() && src[i] != '\n')
        ++i;
    } else if (c == '\n' || c == ';') {
      push(Tok::Separator, i, 1);
      ++i;
      if (c == '\n') {
        ++line;
        lineStart = i;
      }
    } else if (isIdentStart(c)) {
      std::size_t begin = i;
      while (i < src.size() && isIdentChar(src[i]))
        ++i;
      push(Tok::Ident, begin, i - begin);
    } else if (isDigit(c) ||
               (c == '.' && i + 1 < src.size() && isDigit(src[i + 1]))) {
      std::size_t begin = i;
      bool isFloat = false;
      bool malformed = false;
      while (i < src.size() && isDigit(src[i]))
        ++i;
      if (i < src.size() && src[i] == '.') {
        isFloat = true;
        ++i;
        while (i < src.size() && isDigit(src[i]))
          ++i;
      }
      if (i < src.size() && (src[i] == 'e' || src[i] == 'E')) {
        isFloat = true;
        ++i;
        if (i < src.size() && (src[i] == '+' || src[i] == '-'))
          ++i;
        malformed = i >= src.size() || !isDigit(src[i]);
        while (i < src.size() && isDigit(src[i]))
          ++i;
      }
      // "2x" or "1.2.3" would otherwise lex as two tokens and fail later
      // with a message about the second one, far from the real mistake.
      if (malformed ||
          (i < src.size() && (isIdentChar(src[i]) || src[i] == '.'))) {
        std::size_t end = i;
        while (end < src.size() && (isIdentChar(src[end]) || src[end] == '.'))
          ++end;
        fail(src, begin, line, column(begin),
             "malformed number '" +
                 std::string(src.substr(begin, end - begin)) + "'");
      }
      push(isFloat ? Tok::Float : Tok::Int, begin, i - begin);
    } else {
      std::string_view two = src.substr(i, 2);
      if (two == "==" || two == "!=" || two == "<=" || two == ">=" ||
          two == "&&" || two == "||") {
        push(Tok::Op, i, 2);
        i += 2;
        continue;
      }
      switch (c) {
      case '+':
      case '-':
      case '*':
      case '/':
      case '%':
      case '<':
      case '>':
      case '!':
        push(Tok::Op, i, 1);
        break;
      case '(':
        push(Tok::LParen, i, 1);
        break;
      case ')':
        push(Tok::RParen, i, 1);
        break;
      case ',':
        push(Tok::Comma, i, 1);
        break;
      case '=':
        push(Tok::Assign, i, 1);
        break;
      case '&':
      case '|':
        fail(src, i, line, column(i),
             std::string("unexpected '") + c + "'; did you mean '" + c + c +
                 "'?");
      default:
        fail(src, i, line, column(i),
             std::string("unexpected character '") + c + "'");
      }
      ++i;
    }
  }
  tokens.push_back(
      {Tok::End, src.substr(src.size()), src.size(), line, column(src.size())});
  return tokens;
}

std::optional<BinaryOp> binaryOp(const Token &t) {
  if (t.kind != Tok::Op)
    return std::nullopt;
  static constexpr BinaryOp kAll[] = {
      BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Mod,
      BinaryOp::Eq,  BinaryOp::Ne,  BinaryOp::Lt,  BinaryOp::Le,  BinaryOp::Gt,
      BinaryOp::Ge,  BinaryOp::And, BinaryOp::Or};
  for (BinaryOp op : kAll)
    if (binaryOpText(op) == t.text)
      return op;
  return std::nullopt;
}

/// An expression with the height of its tree, which bounds the recursion
/// depth of every later pass over it.
struct Parsed {
  ExprPtr expr;
  int height = 1;
};

class Parser {
public:
  explicit Parser(std::string_view src) : src_(src), tokens_(lex(src)) {}

  Code parseCode() {
    Code code;
    for (;;) {
      while (peek().kind == Tok::Separator)
        ++pos_;
      if (peek().kind == Tok::End)
        return code;
      code.statements.push_back(parseStatement());
      const Token &t = peek();
      if (t.kind == Tok::RParen)
        failAt(t, "unbalanced ')'");
      if (t.kind != Tok::Separator && t.kind != Tok::End)
        failAt(t, "unexpected " + describe(t) +
                      " after the expression; statements are separated by "
                      "newlines or ';'");
    }
  }

private:
  const Token &peek() const { return tokens_[pos_]; }
  const Token &next() { return tokens_[pos_++]; }

  [[noreturn]] void failAt(const Token &t, const std::string &message) const {
    fail(src_, t.offset, t.line, t.column, message);
  }

  Assignment parseStatement() {
    const Token &t = peek();
    if (t.kind == Tok::Assign)
      failAt(t, "assignment to nothing: expected a target name before '='");
    if (t.kind != Tok::Ident)
      failAt(t, "expected a target name, found " + describe(t));
    if (t.text == "true" || t.text == "false")
      failAt(t, "cannot assign to the constant '" + std::string(t.text) + "'");
    ++pos_;
    if (peek().kind != Tok::Assign)
      failAt(peek(), "expected '=' after '" + std::string(t.text) +
                         "', found " + describe(peek()));
    ++pos_;
    return {std::string(t.text), parseExpr().expr};
  }

  Parsed parseExpr() { return parseBinary(1); }

  /// Precedence climbing: operators binding at least `minPrec` are consumed
  /// here; a right operand only takes tighter ones, which makes every level
  /// left-associative.
  Parsed parseBinary(int minPrec) {
    Parsed lhs = parseUnary();
    for (;;) {
      const Token &t = peek();
      std::optional<BinaryOp> op = binaryOp(t);
      if (!op || precedence(*op) < minPrec)
        return lhs;
      ++pos_;
      Parsed rhs = parseBinary(precedence(*op) + 1);
      auto e = std::make_shared<Expr>();
      e->kind = ExprKind::Binary;
      e->binaryOp = *op;
      e->operands = {lhs.expr, rhs.expr};
      lhs = finish(t, e, std::max(lhs.height, rhs.height));
    }
  }

  Parsed parseUnary() {
    const Token &t = peek();
    if (t.kind == Tok::Op && (t.text == "-" || t.text == "!")) {
      ++pos_;
      Nesting guard(*this, t);
      Parsed operand = parseUnary();
      auto e = std::make_shared<Expr>();
      e->kind = ExprKind::Unary;
      e->unaryOp = t.text == "-" ? UnaryOp::Neg : UnaryOp::Not;
      e->operands = {operand.expr};
      return finish(t, e, operand.height);
    }
    return parsePrimary();
  }

  Parsed parsePrimary() {
    const Token &t = next();
    auto e = std::make_shared<Expr>();
    switch (t.kind) {
    case Tok::Int: {
      e->kind = ExprKind::IntLit;
      auto [end, ec] = std::from_chars(
          t.text.data(), t.text.data() + t.text.size(), e->intValue);
      if (ec != std::errc() || end != t.text.data() + t.text.size())
        failAt(t, "integer literal " + describe(t) +
                      " does not fit in a signed 64-bit integer");
      return {e};
    }
    case Tok::Float: {
      e->kind = ExprKind::FloatLit;
      // from_chars, unlike strtod, ignores the C locale, which a GUI may
      // have switched to one with a decimal comma.
      auto [end, ec] = std::from_chars(
          t.text.data(), t.text.data() + t.text.size(), e->floatValue);
      if (ec != std::errc() || end != t.text.data() + t.text.size())
        failAt(t, "float literal " + describe(t) +
                      " is out of the range of a 64-bit float");
      return {e};
    }
    case Tok::Ident:
      if (t.text == "true" || t.text == "false") {
        e->kind = ExprKind::BoolLit;
        e->intValue = t.text == "true";
        return {e};
      }
      if (peek().kind == Tok::LParen)
        return parseCall(t);
      e->kind = ExprKind::Var;
      e->name = t.text;
      return {e};
    case Tok::LParen: {
      Nesting guard(*this, t);
      Parsed inner = parseExpr();
      if (peek().kind != Tok::RParen)
        failAt(peek(), "expected ')' to close the '(' at line " +
                           std::to_string(t.line) + ", column " +
                           std::to_string(t.column) + ", found " +
                           describe(peek()));
      ++pos_;
      return inner;
    }
    case Tok::RParen:
      failAt(t, "unbalanced ')': expected an expression");
    default:
      failAt(t, "expected an expression, found " + describe(t));
    }
  }

  Parsed parseCall(const Token &name) {
    auto e = std::make_shared<Expr>();
    int arity = 0;
    if (std::optional<Func> f = parseFunc(name.text)) {
      e->kind = ExprKind::Call;
      e->func = *f;
      arity = funcArity(*f);
    } else if (name.text == "select") {
      e->kind = ExprKind::Select;
      arity = 3;
    } else if (std::optional<DType> to = parseDType(name.text)) {
      e->kind = ExprKind::Cast;
      e->castTo = *to;
      arity = 1;
    } else {
      std::string known;
      for (int i = 0; i <= static_cast<int>(kLastFunc); ++i)
        known += std::string(funcName(static_cast<Func>(i))) + ", ";
      failAt(name, "unknown function '" + std::string(name.text) +
                       "'; known are " + known +
                       "select, and casts to a dtype such as f32(x)");
    }
    const Token &open = next();
    Nesting guard(*this, open);
    int height = 0;
    if (peek().kind != Tok::RParen) {
      for (;;) {
        Parsed arg = parseExpr();
        e->operands.push_back(arg.expr);
        height = std::max(height, arg.height);
        if (peek().kind == Tok::Comma) {
          ++pos_;
          continue;
        }
        if (peek().kind != Tok::RParen)
          failAt(peek(), "expected ',' or ')' in the call to '" +
                             std::string(name.text) + "' opened at line " +
                             std::to_string(open.line) + ", column " +
                             std::to_string(open.column) + ", found " +
                             describe(peek()));
        break;
      }
    }
    ++pos_;
    if (static_cast<int>(e->operands.size()) != arity)
      failAt(name, "'" + std::string(name.text) + "' takes " +
                       std::to_string(arity) +
                       (arity == 1 ? " argument" : " arguments") + ", got " +
                       std::to_string(e->operands.size()));
    return finish(name, e, height);
  }

  /// Bounds the parser's own recursion, which parentheses deepen without
  /// making the tree any taller.
  class Nesting {
  public:
    Nesting(Parser &p, const Token &t) : p_(p) {
      if (++p_.nesting_ > kMaxExprDepth)
        p_.failAt(t, "expression nested more than " +
                         std::to_string(kMaxExprDepth) + " levels deep");
    }
    ~Nesting() { --p_.nesting_; }
    Nesting(const Nesting &) = delete;
    Nesting &operator=(const Nesting &) = delete;

  private:
    Parser &p_;
  };

  Parsed finish(const Token &t, ExprPtr e, int childHeight) const {
    if (childHeight + 1 > kMaxExprDepth)
      failAt(t, "expression nested more than " + std::to_string(kMaxExprDepth) +
                    " levels deep");
    return {std::move(e), childHeight + 1};
  }

  std::string_view src_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
};

} // namespace

Code parse(std::string_view text) { return Parser(text).parseCode(); }

} // namespace weir::ir::tasklet
