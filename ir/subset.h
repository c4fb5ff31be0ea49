#pragma once
/// \file
/// Ranges and subsets: the index sets that maps iterate over and memlets
/// move. A Range is half-open, [begin, end) with a positive step; a Subset is
/// one Range per dimension of a container.

#include "ir/expr.h"

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::ir {

/// Half-open range [begin, end) with step (> 0).
struct Range {
  Expr begin;
  Expr end;
  Expr step = Expr(1);

  Range() = default;
  /// Throws weir::Error when the step is a constant <= 0.
  Range(Expr b, Expr e, Expr s = Expr(1));

  /// [i, i+1): one index.
  static Range point(Expr i);

  /// Number of indices: ceilDiv(end - begin, step), canonical.
  Expr size() const;
  /// size() when begin, end and step are constants (and it fits), without
  /// making an Expr.
  std::optional<std::int64_t> constantSize() const;
  /// Whether this is provably a single index: end == begin + 1 with step 1.
  /// (Ranges such as 0:2:2 also hold one index but keep their text form.)
  bool isPoint() const;
  /// "i" for a point, "b:e" for step 1, "b:e:s" otherwise.
  std::string str() const;

  friend bool operator==(const Range &a, const Range &b) {
    return a.begin == b.begin && a.end == b.end && a.step == b.step;
  }
  friend bool operator!=(const Range &a, const Range &b) { return !(a == b); }
};

struct Subset {
  std::vector<Range> dims;

  /// 0:d for each dimension d of the shape.
  static Subset full(const std::vector<Expr> &shape);

  /// Product of the range sizes (1 for rank 0).
  Expr volume() const;
  /// "i, 0:64, 0:N:2": ranges separated by ", "; empty for rank 0.
  std::string str() const;

  friend bool operator==(const Subset &a, const Subset &b) {
    return a.dims == b.dims;
  }
  friend bool operator!=(const Subset &a, const Subset &b) { return !(a == b); }
};

/// Write str(); lets test frameworks and logs print ranges and subsets.
std::ostream &operator<<(std::ostream &os, const Range &r);
std::ostream &operator<<(std::ostream &os, const Subset &s);

/// Inverse of Range::str(). Throws weir::Error quoting the text.
Range parseRange(std::string_view text);
/// Inverse of Subset::str(); commas and colons inside calls such as
/// min(a, b) belong to the expression, not to the subset.
Subset parseSubset(std::string_view text);

} // namespace weir::ir
