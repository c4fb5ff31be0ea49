#pragma once
/// \file
/// How Weir judges the output of a random generator (RandomNormal,
/// Bernoulli, training-mode Dropout, ...) against a reference's: both are
/// samples of one distribution drawn by different generators, so they
/// cannot agree element by element. They must have the same dtype, shape
/// and NaN count; where the reference's values are a few whole numbers (a
/// Bernoulli's 0 and 1, a mask), every value must be one of them; and the
/// two means must lie within 4.5 standard errors of each other (a false
/// alarm about once in 150,000 comparisons of equal distributions).

#include "core/runtime/tensor.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <string>

namespace weir::runtime {

/// "" when `got` passes for a sample of `want`'s distribution, else why
/// not.
inline std::string compareSamples(const Tensor &got, const Tensor &want) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype())
    return "got " + got.describe() + ", expected " + want.describe();
  const std::int64_t n = want.elementCount();
  std::int64_t nanGot = 0, nanWant = 0, used = 0;
  double sumGot = 0, sumWant = 0, sqGot = 0, sqWant = 0;
  std::set<double> support;
  bool whole = true;
  for (std::int64_t i = 0; i < n; ++i) {
    double g = got.getAsDouble(i), w = want.getAsDouble(i);
    nanGot += std::isnan(g);
    nanWant += std::isnan(w);
    if (std::isnan(g) || std::isnan(w))
      continue;
    ++used;
    sumGot += g;
    sumWant += w;
    sqGot += g * g;
    sqWant += w * w;
    whole = whole && w == std::floor(w);
    if (whole && support.size() <= 16)
      support.insert(w);
  }
  if (nanGot != nanWant)
    return std::to_string(nanGot) + " NaN where the reference has " +
           std::to_string(nanWant);
  if (used == 0)
    return "";
  if (whole && support.size() <= 16 && support.size() >= 2)
    for (std::int64_t i = 0; i < n; ++i) {
      double g = got.getAsDouble(i);
      if (!std::isnan(g) && !support.count(g))
        return "value " + std::to_string(g) + " at element " +
               std::to_string(i) + " is none of the reference's values";
    }
  const double k = double(used);
  const double meanGot = sumGot / k, meanWant = sumWant / k;
  const double varGot = std::max(0.0, sqGot / k - meanGot * meanGot);
  const double varWant = std::max(0.0, sqWant / k - meanWant * meanWant);
  const double bound = 4.5 * std::sqrt((varGot + varWant) / k) +
                       1e-9 * (1 + std::fabs(meanWant));
  if (std::fabs(meanGot - meanWant) > bound) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "mean %.6g, the reference's %.6g: further apart than 4.5 "
                  "standard errors (%.3g)",
                  meanGot, meanWant, bound);
    return buf;
  }
  return "";
}

} // namespace weir::runtime
