#pragma once
/// \file
/// How Weir judges an output against its expected value (`weir run
/// --expected`, `weir run --check`, `weir conformance`, Workspace::verify):
/// dtypes and shapes must be equal; float elements agree when equal
/// (infinities included), both NaN, or within `atol + rtol * |expected|`;
/// integer and bool elements must be equal.

#include "core/runtime/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace weir::runtime {

/// How an output compares with its expected value.
struct Comparison {
  bool ok = true;
  /// Set when dtype or shape differ; no element is compared then.
  std::string problem;
  double maxAbs = 0, maxRel = 0;
  /// Elements outside the tolerance.
  std::int64_t mismatches = 0;
  /// The element furthest outside its tolerance (-1 when none is).
  std::int64_t worst = -1;
  double worstGot = 0, worstWant = 0;
};

inline Comparison compareTensors(const runtime::Tensor &got,
                                 const runtime::Tensor &want, double rtol,
                                 double atol) {
  Comparison c;
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) {
    c.ok = false;
    c.problem = "got " + got.describe() + ", expected " + want.describe();
    return c;
  }
  const bool exact = !ir::isFloat(want.dtype());
  double worstExcess = 0;
  for (std::int64_t i = 0; i < want.elementCount(); ++i) {
    double a = got.getAsDouble(i), b = want.getAsDouble(i);
    if (a == b || (std::isnan(a) && std::isnan(b)))
      continue;
    double abs = std::fabs(a - b);
    if (std::isnan(abs))
      abs = INFINITY;
    c.maxAbs = std::max(c.maxAbs, abs);
    if (b != 0)
      c.maxRel = std::max(c.maxRel, abs / std::fabs(b));
    double tolerance = exact ? 0 : atol + rtol * std::fabs(b);
    if (abs <= tolerance)
      continue;
    ++c.mismatches;
    c.ok = false;
    double excess = tolerance > 0 ? abs / tolerance : INFINITY;
    if (c.worst < 0 || excess > worstExcess) {
      worstExcess = excess;
      c.worst = i;
      c.worstGot = a;
      c.worstWant = b;
    }
  }
  return c;
}

/// "[1, 2, 0]": the row-major multi-index of flat element `flat`.
inline std::string elementIndex(const std::vector<std::int64_t> &shape,
                                std::int64_t flat) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (std::size_t d = 0; d < index.size(); ++d)
    s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

/// One line: the dtype/shape problem, or how many elements differ and the
/// worst of them; "" when the comparison passed.
inline std::string describeMismatch(const Comparison &c,
                                    const runtime::Tensor &want) {
  if (c.ok)
    return "";
  if (!c.problem.empty())
    return c.problem;
  char buf[160];
  std::snprintf(buf, sizeof buf, "got %.9g, expected %.9g (abs err %.3g)",
                c.worstGot, c.worstWant, std::fabs(c.worstGot - c.worstWant));
  return std::to_string(c.mismatches) + " of " +
         std::to_string(want.elementCount()) + " elements differ; worst at " +
         elementIndex(want.shape(), c.worst) + ": " + buf;
}

} // namespace weir::runtime
