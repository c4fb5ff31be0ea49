#include "codegen/lower/bounds_proof.h"

#include "ir/affine.h"
#include "ir/error.h"

#include <limits>
#include <vector>

namespace weir::codegen::lowering {

void BoundsProof::enter(const std::string &var, const ir::Range &range) {
  ranges_[var] = range;
  auto lo = ir::boundOf(range.begin, intervals_);
  auto hi = ir::boundOf(range.end, intervals_);
  // An empty loop runs nothing, so any interval is sound for its body; a
  // non-empty one takes values in [lo(begin), hi(end) - 1].
  if (lo && hi && hi->hi > std::numeric_limits<std::int64_t>::min())
    intervals_[var] = {lo->lo, hi->hi - 1};
  else
    intervals_.erase(var);
}

void BoundsProof::leave(const std::string &var) {
  ranges_.erase(var);
  intervals_.erase(var);
}

std::optional<ir::Expr> BoundsProof::extreme(const ir::Expr &e, bool greatest,
                                             int depth) const {
  // Each round replaces the variables by their loops' ends, which name only
  // enclosing loops' variables: as many rounds as loops suffice.
  if (depth > static_cast<int>(ranges_.size()))
    return std::nullopt;
  std::vector<std::string> vars;
  for (const std::string &v : e.freeSymbols())
    if (ranges_.count(v))
      vars.push_back(v);
  if (vars.empty())
    return e;
  std::optional<ir::Affine> a = ir::affineIn(e, vars);
  if (!a)
    return std::nullopt;
  // Each variable at the end of its range that makes the sum least (or
  // greatest); those ends may name enclosing loops' variables in turn.
  ir::Expr out = a->constant;
  for (const auto &[v, k] : a->coef) {
    const ir::Range &r = ranges_.find(v)->second;
    bool atLast = (k > 0) == greatest;
    out = out + ir::Expr(k) * (atLast ? r.end - ir::Expr(1) : r.begin);
  }
  return extreme(out, greatest, depth + 1);
}

bool BoundsProof::inBounds(const ir::Expr &index,
                           const ir::Expr &extent) const {
  try {
    auto i = ir::boundOf(index, intervals_);
    auto n = ir::boundOf(extent, intervals_);
    if (i && n && i->lo >= 0 && i->hi < n->lo)
      return true;
    std::optional<ir::Expr> least = extreme(index, false, 0);
    std::optional<ir::Expr> most = extreme(index, true, 0);
    return least && most && ir::provablyLessEqual(ir::Expr(0), *least) &&
           ir::provablyLessEqual(*most + ir::Expr(1), extent);
  } catch (const Error &) {
    return false; // arithmetic that overflows proves nothing
  }
}

} // namespace weir::codegen::lowering
