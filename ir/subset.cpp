/// \file
/// Range and Subset: sizes, volumes and the text form.

#include "ir/subset.h"

#include "ir/error.h"

#include <ostream>

namespace weir::ir {

namespace {

/// Splits at `sep` where it is outside parentheses. An unbalanced ')' is
/// left for parseExpr to report.
std::vector<std::string_view> splitTopLevel(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '(')
      ++depth;
    else if (c == ')' && depth > 0)
      --depth;
    else if (c == sep && depth == 0) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::string_view trim(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  };
  while (!s.empty() && space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && space(s.back()))
    s.remove_suffix(1);
  return s;
}

} // namespace

Range::Range(Expr b, Expr e, Expr s)
    : begin(simplify(b)), end(simplify(e)), step(simplify(s)) {
  if (auto c = step.asConstant(); c && *c <= 0)
    throw Error("range " + begin.str() + ":" + end.str() + ":" + step.str() +
                " has step " + step.str() + "; the step must be positive");
}

Range Range::point(Expr i) { return Range(i, i + 1); }

std::optional<std::int64_t> Range::constantSize() const {
  std::optional<std::int64_t> b = begin.asConstant(), e = end.asConstant(),
                              s = step.asConstant();
  std::int64_t span = 0, top = 0;
  if (b && e && s && *s > 0 && !__builtin_sub_overflow(*e, *b, &span) &&
      !__builtin_add_overflow(span, *s - 1, &top))
    return top >= 0 ? top / *s : -((-top + *s - 1) / *s);
  return std::nullopt;
}

Expr Range::size() const {
  // The common cases without symbolic arithmetic (analyses call this for
  // every memlet of every version): constant bounds, and a unit step.
  if (std::optional<std::int64_t> n = constantSize())
    return Expr(*n);
  if (std::optional<std::int64_t> s = step.asConstant(); s && *s == 1)
    return end - begin;
  return ceilDiv(end - begin, step);
}

bool Range::isPoint() const {
  return step == Expr(1) && end - begin == Expr(1);
}

std::string Range::str() const {
  if (isPoint())
    return begin.str();
  std::string out = begin.str() + ":" + end.str();
  if (step != Expr(1))
    out += ":" + step.str();
  return out;
}

std::ostream &operator<<(std::ostream &os, const Range &r) {
  return os << r.str();
}

std::ostream &operator<<(std::ostream &os, const Subset &s) {
  return os << "[" << s.str() << "]";
}

Range parseRange(std::string_view text) {
  std::vector<std::string_view> parts = splitTopLevel(text, ':');
  if (parts.size() > 3)
    throw Error("cannot parse range '" + std::string(text) +
                "': expected 'i', 'begin:end' or 'begin:end:step'");
  std::vector<Expr> exprs;
  for (std::string_view part : parts) {
    if (trim(part).empty())
      throw Error("cannot parse range '" + std::string(text) +
                  "': empty bound (expected 'i', 'begin:end' or "
                  "'begin:end:step')");
    try {
      exprs.push_back(parseExpr(part));
    } catch (const Error &e) {
      throw Error("cannot parse range '" + std::string(text) +
                  "': " + e.what());
    }
  }
  try {
    if (exprs.size() == 1)
      return Range::point(exprs[0]);
    if (exprs.size() == 2)
      return Range(exprs[0], exprs[1]);
    return Range(exprs[0], exprs[1], exprs[2]);
  } catch (const Error &e) {
    throw Error("cannot parse range '" + std::string(text) + "': " + e.what());
  }
}

Subset Subset::full(const std::vector<Expr> &shape) {
  Subset s;
  s.dims.reserve(shape.size());
  for (const Expr &d : shape)
    s.dims.emplace_back(Expr(0), d);
  return s;
}

Expr Subset::volume() const {
  // Constant sizes multiply as integers (one Expr at the end, not one per
  // dimension); the first symbolic one, or an overflow, continues as Exprs.
  std::int64_t product = 1;
  std::size_t d = 0;
  for (; d < dims.size(); ++d) {
    std::optional<std::int64_t> n = dims[d].constantSize();
    std::int64_t next = 0;
    if (!n || __builtin_mul_overflow(product, *n, &next))
      break;
    product = next;
  }
  Expr v = product;
  for (; d < dims.size(); ++d)
    v = v * dims[d].size();
  return v;
}

std::string Subset::str() const {
  std::string out;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += dims[i].str();
  }
  return out;
}

Subset parseSubset(std::string_view text) {
  Subset s;
  if (trim(text).empty())
    return s;
  for (std::string_view part : splitTopLevel(text, ',')) {
    try {
      s.dims.push_back(parseRange(part));
    } catch (const Error &e) {
      throw Error("cannot parse subset '" + std::string(text) +
                  "': " + e.what());
    }
  }
  return s;
}

} // namespace weir::ir
