#include "ir/error.h"
#include "ir/tasklet.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace weir::ir;
using namespace weir::ir::tasklet;

namespace {

/// Canonical text of `text`, checking that printing is a fixed point.
std::string canon(std::string_view text) {
  std::string printed = print(parse(text));
  EXPECT_EQ(print(parse(printed)), printed) << "from: " << text;
  return printed;
}

/// The message parse throws for `text`, or "" when it parses.
std::string parseError(std::string_view text) {
  try {
    parse(text);
  } catch (const weir::Error &e) {
    return e.what();
  }
  return "";
}

/// The value of the first statement of `text`.
ExprPtr firstValue(std::string_view text) {
  return parse(text).statements.at(0).value;
}

/// All issue messages, one per line, for readable expectations.
std::string check(std::string_view text, const ConnectorTypes &inputs,
                  const ConnectorTypes &outputs) {
  std::string all;
  for (const TypeIssue &i : typeCheck(parse(text), inputs, outputs))
    all += i.message + "\n";
  return all;
}

} // namespace

TEST(TaskletNames, RoundTrip) {
  for (int i = 0; i <= static_cast<int>(kLastFunc); ++i) {
    auto f = static_cast<Func>(i);
    EXPECT_EQ(parseFunc(funcName(f)), f) << funcName(f);
  }
  EXPECT_FALSE(parseFunc("select").has_value());
  EXPECT_FALSE(parseFunc("f32").has_value());
  EXPECT_EQ(funcName(Func::Rsqrt), "rsqrt");
  EXPECT_EQ(funcArity(Func::Exp), 1);
  EXPECT_EQ(funcArity(Func::Pow), 2);
  EXPECT_EQ(funcArity(Func::Min), 2);
  EXPECT_EQ(binaryOpText(BinaryOp::Le), "<=");
  EXPECT_EQ(binaryOpText(BinaryOp::And), "&&");
  EXPECT_LT(precedence(BinaryOp::Or), precedence(BinaryOp::And));
  EXPECT_LT(precedence(BinaryOp::Add), precedence(BinaryOp::Mod));
}

TEST(TaskletParse, Structure) {
  Code c = parse("t = a * b\nout = select(t > 0, t, 0.1 * t)");
  ASSERT_EQ(c.statements.size(), 2u);
  EXPECT_EQ(c.statements[0].target, "t");
  const Expr &mul = *c.statements[0].value;
  EXPECT_EQ(mul.kind, ExprKind::Binary);
  EXPECT_EQ(mul.binaryOp, BinaryOp::Mul);
  EXPECT_EQ(mul.operands[0]->name, "a");
  const Expr &sel = *c.statements[1].value;
  ASSERT_EQ(sel.kind, ExprKind::Select);
  ASSERT_EQ(sel.operands.size(), 3u);
  EXPECT_EQ(sel.operands[0]->binaryOp, BinaryOp::Gt);
  EXPECT_EQ(sel.operands[0]->operands[1]->kind, ExprKind::IntLit);
  EXPECT_EQ(sel.operands[2]->operands[0]->kind, ExprKind::FloatLit);
  EXPECT_EQ(sel.operands[2]->operands[0]->floatValue, 0.1);
}

TEST(TaskletParse, Literals) {
  EXPECT_EQ(firstValue("x = 1e-5")->kind, ExprKind::FloatLit);
  EXPECT_EQ(firstValue("x = 1e-5")->floatValue, 1e-5);
  EXPECT_EQ(firstValue("x = 2.")->floatValue, 2.0);
  EXPECT_EQ(firstValue("x = .5")->floatValue, 0.5);
  EXPECT_EQ(firstValue("x = 3E2")->kind, ExprKind::FloatLit);
  EXPECT_EQ(firstValue("x = 1e+3")->floatValue, 1000.0);
  ExprPtr i = firstValue("x = 9223372036854775807");
  EXPECT_EQ(i->kind, ExprKind::IntLit);
  EXPECT_EQ(i->intValue, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(firstValue("x = true")->kind, ExprKind::BoolLit);
  EXPECT_EQ(firstValue("x = true")->intValue, 1);
  EXPECT_EQ(firstValue("x = false")->intValue, 0);
  ExprPtr neg = firstValue("x = -1");
  EXPECT_EQ(neg->kind, ExprKind::Unary);
  EXPECT_EQ(neg->unaryOp, UnaryOp::Neg);
}

TEST(TaskletParse, CastsAndCalls) {
  ExprPtr cast = firstValue("y = f32(x)");
  EXPECT_EQ(cast->kind, ExprKind::Cast);
  EXPECT_EQ(cast->castTo, DType::F32);
  EXPECT_EQ(firstValue("y = bool(x)")->castTo, DType::Bool);
  EXPECT_EQ(firstValue("y = bf16(x)")->castTo, DType::BF16);
  ExprPtr call = firstValue("y = pow(x, 2.0)");
  EXPECT_EQ(call->kind, ExprKind::Call);
  EXPECT_EQ(call->func, Func::Pow);
  EXPECT_EQ(call->operands.size(), 2u);
  // A function name not followed by '(' is an ordinary variable.
  EXPECT_EQ(firstValue("y = exp + 1")->operands[0]->name, "exp");
}

TEST(TaskletParse, SeparatorsAndComments) {
  Code c = parse("# leading comment\n\n  a = x ; b = y  # trailing\n\n"
                 ";;c = z\r\n");
  ASSERT_EQ(c.statements.size(), 3u);
  EXPECT_EQ(c.statements[0].target, "a");
  EXPECT_EQ(c.statements[1].target, "b");
  EXPECT_EQ(c.statements[2].target, "c");
  EXPECT_TRUE(parse("").statements.empty());
  EXPECT_TRUE(parse("  # nothing\n\n").statements.empty());
}

TEST(TaskletPrint, Precedence) {
  EXPECT_EQ(canon("y = a - (b - c)"), "y = a - (b - c)\n");
  EXPECT_EQ(canon("y = (a - b) - c"), "y = a - b - c\n");
  EXPECT_EQ(canon("y = a / (b * c)"), "y = a / (b * c)\n");
  EXPECT_EQ(canon("y = (a * b) / c"), "y = a * b / c\n");
  EXPECT_EQ(canon("y = (a + b) * c"), "y = (a + b) * c\n");
  EXPECT_EQ(canon("y = a + (b * c)"), "y = a + b * c\n");
  EXPECT_EQ(canon("y = a + (b + c)"), "y = a + (b + c)\n");
  EXPECT_EQ(canon("y = ((a))"), "y = a\n");
  EXPECT_EQ(canon("y = a || b && c"), "y = a || b && c\n");
  EXPECT_EQ(canon("y = (a || b) && c"), "y = (a || b) && c\n");
  EXPECT_EQ(canon("y = a < b == c >= d"), "y = a < b == c >= d\n");
  EXPECT_EQ(canon("y = a + b < c * d && !e"), "y = a + b < c * d && !e\n");
  EXPECT_EQ(canon("y = a % b % c"), "y = a % b % c\n");
  EXPECT_EQ(canon("y = a % (b % c)"), "y = a % (b % c)\n");
}

TEST(TaskletPrint, Unary) {
  EXPECT_EQ(canon("y = -x"), "y = -x\n");
  EXPECT_EQ(canon("y = -(a + b)"), "y = -(a + b)\n");
  EXPECT_EQ(canon("y = (-a) * b"), "y = -a * b\n");
  EXPECT_EQ(canon("y = -(a * b)"), "y = -(a * b)\n");
  EXPECT_EQ(canon("y = a - -b"), "y = a - -b\n");
  EXPECT_EQ(canon("y = - - x"), "y = --x\n");
  EXPECT_EQ(canon("y = !(a && b)"), "y = !(a && b)\n");
  EXPECT_EQ(canon("y = -1"), "y = -1\n");
  EXPECT_EQ(canon("y = -f32(x)"), "y = -f32(x)\n");
}

TEST(TaskletPrint, Literals) {
  EXPECT_EQ(canon("y = 1e-5"), "y = 1e-05\n");
  EXPECT_EQ(canon("y = 0.1"), "y = 0.1\n");
  EXPECT_EQ(canon("y = 2.0"), "y = 2.0\n");
  EXPECT_EQ(canon("y = 2."), "y = 2.0\n");
  EXPECT_EQ(canon("y = 1e20"), "y = 1e+20\n");
  EXPECT_EQ(canon("y = 42"), "y = 42\n");
  EXPECT_EQ(canon("y = 0"), "y = 0\n");
  EXPECT_EQ(canon("y = true || false"), "y = true || false\n");
  EXPECT_EQ(canon("y = 3.141592653589793"), "y = 3.141592653589793\n");
}

TEST(TaskletPrint, FloatsRoundTripExactly) {
  const double values[] = {0.1,
                           1.0 / 3.0,
                           1e-300,
                           4.9406564584124654e-324,
                           1.7976931348623157e308,
                           123456789.0,
                           2.5e-7,
                           0.0};
  for (double v : values) {
    Expr e;
    e.kind = ExprKind::FloatLit;
    e.floatValue = v;
    std::string text = print(e);
    ExprPtr back = firstValue("y = " + text);
    ASSERT_EQ(back->kind, ExprKind::FloatLit) << text;
    EXPECT_EQ(back->floatValue, v) << text;
  }
}

TEST(TaskletPrint, LiteralsTheGrammarCannotSpell) {
  // Built by a transformation, not parsed: they still print as text that
  // parses and prints back identically.
  auto lit = [](double v) {
    auto e = std::make_shared<Expr>();
    e->kind = ExprKind::FloatLit;
    e->floatValue = v;
    return e;
  };
  auto var = std::make_shared<Expr>();
  var->kind = ExprKind::Var;
  var->name = "x";
  auto mul = std::make_shared<Expr>();
  mul->kind = ExprKind::Binary;
  mul->binaryOp = BinaryOp::Mul;
  mul->operands = {var, lit(std::numeric_limits<double>::infinity())};
  EXPECT_EQ(print(*mul), "x * (1.0 / 0.0)");
  EXPECT_EQ(canon("y = " + print(*mul)), "y = x * (1.0 / 0.0)\n");
  mul->operands = {var, lit(-2.5)};
  EXPECT_EQ(print(*mul), "x * -2.5");
  EXPECT_EQ(canon("y = x * -2.5"), "y = x * -2.5\n");
  EXPECT_EQ(print(*lit(std::nan(""))), "0.0 / 0.0");
  EXPECT_EQ(print(*lit(-0.0)), "-0.0");

  Expr minInt;
  minInt.kind = ExprKind::IntLit;
  minInt.intValue = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(print(minInt), "-9223372036854775807 - 1");
  EXPECT_EQ(canon("y = " + print(minInt)), "y = -9223372036854775807 - 1\n");
}

TEST(TaskletPrint, CallsAndCode) {
  EXPECT_EQ(canon("y = max(exp(-x), min(a, b + 1))"),
            "y = max(exp(-x), min(a, b + 1))\n");
  EXPECT_EQ(canon("y=select(c,a,b)"), "y = select(c, a, b)\n");
  EXPECT_EQ(canon("y = f32(i) * i64(x)"), "y = f32(i) * i64(x)\n");
  EXPECT_EQ(canon("y = pow( sigmoid(x) , 2.0 )"), "y = pow(sigmoid(x), 2.0)\n");
  EXPECT_EQ(canon("t = a * b; out = select(t > 0, t, 0.1 * t)"),
            "t = a * b\nout = select(t > 0, t, 0.1 * t)\n");
  EXPECT_EQ(print(Code{}), "");
}

TEST(TaskletParse, ErrorsNameLineAndColumn) {
  std::string e = parseError("a = x\nb = foo(x)");
  EXPECT_NE(e.find("line 2, column 5"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown function 'foo'"), std::string::npos) << e;
  EXPECT_NE(e.find("b = foo(x)\n        ^"), std::string::npos) << e;

  e = parseError("y = exp(x, z)");
  EXPECT_NE(e.find("line 1, column 5"), std::string::npos) << e;
  EXPECT_NE(e.find("'exp' takes 1 argument, got 2"), std::string::npos) << e;
  e = parseError("y = pow(x)");
  EXPECT_NE(e.find("'pow' takes 2 arguments, got 1"), std::string::npos) << e;
  e = parseError("y = select(c, a)");
  EXPECT_NE(e.find("'select' takes 3 arguments, got 2"), std::string::npos)
      << e;
  e = parseError("y = f32(a, b)");
  EXPECT_NE(e.find("'f32' takes 1 argument, got 2"), std::string::npos) << e;
  e = parseError("y = sqrt()");
  EXPECT_NE(e.find("'sqrt' takes 1 argument, got 0"), std::string::npos) << e;
}

TEST(TaskletParse, UnbalancedParentheses) {
  std::string e = parseError("y = (a + b");
  EXPECT_NE(e.find("line 1, column 11"), std::string::npos) << e;
  EXPECT_NE(e.find("expected ')'"), std::string::npos) << e;
  EXPECT_NE(e.find("'(' at line 1, column 5"), std::string::npos) << e;

  e = parseError("y = (a + b\nz = 1");
  EXPECT_NE(e.find("end of line"), std::string::npos) << e;

  e = parseError("y = a + b)");
  EXPECT_NE(e.find("line 1, column 10"), std::string::npos) << e;
  EXPECT_NE(e.find("unbalanced ')'"), std::string::npos) << e;

  e = parseError("y = exp(x");
  EXPECT_NE(e.find("expected ',' or ')'"), std::string::npos) << e;
  e = parseError("y = ()");
  EXPECT_NE(e.find("unbalanced ')'"), std::string::npos) << e;
}

TEST(TaskletParse, StatementErrors) {
  std::string e = parseError("y a + b");
  EXPECT_NE(e.find("expected '=' after 'y', found 'a'"), std::string::npos)
      << e;
  e = parseError("y\n");
  EXPECT_NE(e.find("expected '=' after 'y', found end of line"),
            std::string::npos)
      << e;
  e = parseError("y == 1");
  EXPECT_NE(e.find("expected '=' after 'y'"), std::string::npos) << e;
  e = parseError("ok = 1\n  = a + b");
  EXPECT_NE(e.find("line 2, column 3: assignment to nothing"),
            std::string::npos)
      << e;
  e = parseError("y = a b");
  EXPECT_NE(e.find("line 1, column 7: unexpected 'b' after the expression"),
            std::string::npos)
      << e;
  e = parseError("y = a +");
  EXPECT_NE(e.find("expected an expression, found end of text"),
            std::string::npos)
      << e;
  e = parseError("y = ");
  EXPECT_NE(e.find("expected an expression"), std::string::npos) << e;
  e = parseError("1 = y");
  EXPECT_NE(e.find("expected a target name, found '1'"), std::string::npos)
      << e;
  e = parseError("true = y");
  EXPECT_NE(e.find("cannot assign to the constant 'true'"), std::string::npos)
      << e;
  e = parseError("y = a = b");
  EXPECT_NE(e.find("unexpected '='"), std::string::npos) << e;
}

TEST(TaskletParse, LexicalErrors) {
  std::string e = parseError("y = 9223372036854775808");
  EXPECT_NE(e.find("does not fit"), std::string::npos) << e;
  e = parseError("y = 1e999");
  EXPECT_NE(e.find("out of the range"), std::string::npos) << e;
  e = parseError("y = 2x");
  EXPECT_NE(e.find("malformed number '2x'"), std::string::npos) << e;
  e = parseError("y = 1.2.3");
  EXPECT_NE(e.find("malformed number '1.2.3'"), std::string::npos) << e;
  e = parseError("y = 1e");
  EXPECT_NE(e.find("malformed number '1e'"), std::string::npos) << e;
  e = parseError("y = a & b");
  EXPECT_NE(e.find("did you mean '&&'"), std::string::npos) << e;
  e = parseError("y = a $ b");
  EXPECT_NE(e.find("line 1, column 7: unexpected character '$'"),
            std::string::npos)
      << e;
}

TEST(TaskletParse, DepthIsBounded) {
  std::string deepParens =
      "y = " + std::string(5000, '(') + "x" + std::string(5000, ')');
  EXPECT_NE(parseError(deepParens).find("nested more than"), std::string::npos);
  std::string longSum = "y = x";
  for (int i = 0; i < 5000; ++i)
    longSum += " + x";
  EXPECT_NE(parseError(longSum).find("nested more than"), std::string::npos);
  std::string negations = "y = " + std::string(5000, '-') + "x";
  EXPECT_NE(parseError(negations).find("nested more than"), std::string::npos);
  // Well inside the bound, a long chain still round-trips.
  std::string sum = "y = x";
  for (int i = 0; i < 500; ++i)
    sum += " + x";
  EXPECT_EQ(canon(sum), sum + "\n");
}

TEST(TaskletCountOps, CountsOperations) {
  EXPECT_EQ(countOps(parse("y = x")), 0);
  EXPECT_EQ(countOps(parse("y = 1.0")), 0);
  EXPECT_EQ(countOps(parse("y = -x")), 1);
  EXPECT_EQ(countOps(parse("y = a * b + c")), 2);
  EXPECT_EQ(countOps(parse("y = exp(f32(i))")), 2);
  EXPECT_EQ(countOps(parse("t = a * b\nout = select(t > 0, t, 0.1 * t)")), 4);
  EXPECT_EQ(countOps(Code{}), 0);
}

TEST(TaskletTypeCheck, HashTakesSixtyFourBitIntegers) {
  ConnectorTypes in{{"c", DType::I64}, {"x", DType::F32}, {"k", DType::I32}};
  ConnectorTypes u{{"y", DType::U64}}, i{{"y", DType::I64}};
  EXPECT_EQ(check("y = hash(u64(7), u64(c))", in, u), "");
  EXPECT_EQ(check("y = hash(7, c)", in, i), "");
  EXPECT_NE(check("y = hash(7, x)", in, i)
                .find("'hash' needs 64-bit integer arguments, got f32"),
            std::string::npos);
  EXPECT_NE(check("y = hash(k, k)", in, i)
                .find("'hash' needs 64-bit integer arguments, got i32"),
            std::string::npos);
}

TEST(TaskletTypeCheck, WellTyped) {
  ConnectorTypes f32x{{"x", DType::F32}};
  ConnectorTypes f32y{{"y", DType::F32}};
  EXPECT_EQ(check("y = x * 2", f32x, f32y), "");
  EXPECT_EQ(check("y = 2 * x + 0.5", f32x, f32y), "");
  EXPECT_EQ(check("t = x * x\ny = select(t > 0, t, 0.1 * t)", f32x, f32y), "");
  EXPECT_EQ(check("y = select(x > 0, x, 0)", f32x, f32y), "");
  EXPECT_EQ(check("y = exp(-x) + sigmoid(x) * erf(x) / sqrt(x)", f32x, f32y),
            "");
  EXPECT_EQ(check("y = pow(x, 2)", f32x, f32y), "");
  EXPECT_EQ(check("y = x % 1.5", f32x, f32y), "");
  EXPECT_EQ(check("y = 1.0", f32x, f32y), "");
  EXPECT_EQ(check("y = 1", f32x, f32y), "");
  EXPECT_EQ(check("y = f32(1 + 2) * x", f32x, f32y), "");
  EXPECT_EQ(
      check("c = x > 0 && !(x > 1) || false; y = select(c, x, -x)", f32x, f32y),
      "");

  ConnectorTypes ints{{"i", DType::I32}, {"j", DType::I32}};
  EXPECT_EQ(check("k = abs(i) + max(i, j) - min(j, 3)\nr = k % 2 == 0\nm = k",
                  ints, {{"r", DType::Bool}, {"m", DType::I32}}),
            "");
  EXPECT_EQ(check("y = f32(i) * 0.5", ints, f32y), "");
  EXPECT_EQ(check("y = i == j", ints, {{"y", DType::Bool}}), "");
  EXPECT_EQ(check("y = bool(i) == true", ints, {{"y", DType::Bool}}), "");

  // Temporaries: a lone literal gets its default type (i64, then f32).
  EXPECT_EQ(check("n = 1; y = i64(i) + n", ints, {{"y", DType::I64}}), "");
  EXPECT_EQ(check("t = x; t = t * 2; y = t", f32x, f32y), "");
}

TEST(TaskletTypeCheck, TrigonometryAndRoundTakeFloats) {
  ConnectorTypes in{{"x", DType::F64}, {"n", DType::I32}};
  for (const char *f : {"sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                        "cosh", "asinh", "acosh", "atanh", "round"}) {
    std::string fn(f);
    EXPECT_EQ(check("y = " + fn + "(x)", in, {{"y", DType::F64}}), "") << fn;
    EXPECT_NE(check("y = " + fn + "(n)", in, {{"y", DType::I32}})
                  .find("'" + fn + "' needs floating-point arguments"),
              std::string::npos)
        << fn;
    EXPECT_EQ(funcArity(*parseFunc(fn)), 1) << fn;
  }
}

TEST(TaskletTypeCheck, Variables) {
  ConnectorTypes f32x{{"x", DType::F32}};
  ConnectorTypes f32y{{"y", DType::F32}};
  EXPECT_EQ(check("t = x\ny = z + t", f32x, f32y),
            "statement 2: 'z' is not an input connector or an earlier "
            "temporary\n");
  EXPECT_EQ(check("y = t\nt = x", f32x, f32y),
            "statement 1: 't' is not an input connector or an earlier "
            "temporary\n");
  EXPECT_EQ(check("t = x", f32x, f32y),
            "output connector 'y' is never assigned\n");
  EXPECT_EQ(check("x = 1.0; y = x", f32x, f32y),
            "statement 1: 'x' is an input connector and cannot be assigned\n");
  EXPECT_EQ(check("y = x; z = y", f32x, f32y),
            "statement 2: 'y' is an output connector, which cannot be read; "
            "compute the value into a temporary and read that\n");
}

TEST(TaskletTypeCheck, OperandTypes) {
  ConnectorTypes in{{"x", DType::F32}, {"n", DType::I64}, {"b", DType::Bool}};
  ConnectorTypes f32y{{"y", DType::F32}};
  std::string issues = check("y = x + n", in, f32y);
  EXPECT_NE(issues.find("statement 1: '+' mixes f32 and i64 in 'x + n'"),
            std::string::npos)
      << issues;
  EXPECT_NE(issues.find("cast"), std::string::npos) << issues;

  issues = check("y = exp(n)", in, f32y);
  EXPECT_NE(issues.find("'exp' needs floating-point arguments, got i64"),
            std::string::npos)
      << issues;
  issues = check("y = exp(1)", in, f32y);
  EXPECT_NE(issues.find("'exp' needs floating-point arguments, got integer "
                        "literal"),
            std::string::npos)
      << issues;
  issues = check("y = pow(x, f64(x))", in, f32y);
  EXPECT_NE(issues.find("'pow' mixes f32 and f64"), std::string::npos)
      << issues;
  issues = check("y = select(x, x, x)", in, f32y);
  EXPECT_NE(issues.find("condition of 'select' must be bool, got f32"),
            std::string::npos)
      << issues;
  issues = check("y = select(b, x, n)", in, f32y);
  EXPECT_NE(issues.find("branches of 'select' have different types, f32 and "
                        "i64"),
            std::string::npos)
      << issues;
  issues = check("y = f32(n * 0.5)", in, f32y);
  EXPECT_NE(issues.find("'*' mixes i64 and float literal"), std::string::npos)
      << issues;
  issues = check("y = f32(b && x)", in, f32y);
  EXPECT_NE(issues.find("'&&' needs bool operands, got bool and f32"),
            std::string::npos)
      << issues;
  issues = check("y = f32(!x)", in, f32y);
  EXPECT_NE(issues.find("'!' needs a bool operand, got f32"), std::string::npos)
      << issues;
  issues = check("y = f32(-b)", in, f32y);
  EXPECT_NE(issues.find("unary '-' needs a numeric operand, got bool"),
            std::string::npos)
      << issues;
  issues = check("y = f32(b + b)", in, f32y);
  EXPECT_NE(issues.find("'+' needs numeric operands, got bool"),
            std::string::npos)
      << issues;
  issues = check("y = f32(b < true)", in, f32y);
  EXPECT_NE(issues.find("'<' needs numeric operands"), std::string::npos)
      << issues;
}

TEST(TaskletTypeCheck, AssignedTypes) {
  ConnectorTypes in{{"x", DType::F32}, {"n", DType::I64}};
  EXPECT_EQ(check("y = x > 0", in, {{"y", DType::F32}}),
            "statement 1: the value assigned to output 'y' has type bool but "
            "the connector is f32\n");
  EXPECT_EQ(check("y = x > 0", in, {{"y", DType::Bool}}), "");
  EXPECT_EQ(check("y = f64(x)", in, {{"y", DType::F32}}),
            "statement 1: the value assigned to output 'y' has type f64 but "
            "the connector is f32\n");
  EXPECT_EQ(check("y = 0.5", in, {{"y", DType::I64}}),
            "statement 1: the value assigned to output 'y' has type float "
            "literal but the connector is i64\n");
  EXPECT_EQ(check("y = 2", in, {{"y", DType::F64}}), "");
  EXPECT_EQ(check("t = x\nt = n\ny = t", in, {{"y", DType::F32}}),
            "statement 2: temporary 't' was first assigned f32 but is now "
            "assigned i64\n");
  EXPECT_EQ(check("t = 1\nt = x\ny = x", in, {{"y", DType::F32}}),
            "statement 2: temporary 't' was first assigned i64 but is now "
            "assigned f32\n");
}

TEST(TaskletTypeCheck, ReportsEachProblemOnce) {
  ConnectorTypes in{{"x", DType::F32}, {"n", DType::I64}};
  // The bad first assignment of t is reported; its later reads are not.
  EXPECT_EQ(check("t = x + n\ny = t * 2\nz = q", in,
                  {{"y", DType::F32}, {"z", DType::F32}}),
            "statement 1: '+' mixes f32 and i64 in 'x + n'; convert one side "
            "with a cast such as f32(...)\n"
            "statement 3: 'q' is not an input connector or an earlier "
            "temporary\n");
  // Independent operands are both checked.
  std::string issues = check("y = a + b", in, {{"y", DType::F32}});
  EXPECT_NE(issues.find("'a' is not"), std::string::npos) << issues;
  EXPECT_NE(issues.find("'b' is not"), std::string::npos) << issues;
}

TEST(TaskletTypeCheck, InferType) {
  ConnectorTypes vars{{"x", DType::F16}, {"i", DType::U8}};
  std::vector<TypeIssue> issues;
  auto infer = [&](std::string_view text) {
    return inferType(*firstValue("v = " + std::string(text)), vars, issues);
  };
  EXPECT_EQ(infer("x * 2"), DType::F16);
  EXPECT_EQ(infer("x > 0"), DType::Bool);
  EXPECT_EQ(infer("i + 1"), DType::U8);
  EXPECT_EQ(infer("1 + 2"), DType::I64);
  EXPECT_EQ(infer("1 + 2.0"), DType::F32);
  EXPECT_EQ(infer("-0.5"), DType::F32);
  EXPECT_EQ(infer("i64(x)"), DType::I64);
  EXPECT_TRUE(issues.empty());
  EXPECT_EQ(infer("x + i"), std::nullopt);
  EXPECT_EQ(infer("w"), std::nullopt);
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[1].message, "'w' is not a known variable");
}
