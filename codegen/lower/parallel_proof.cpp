/// \file
/// The privacy proof for parallel and vectorized loops (see the header).

#include "codegen/lower/parallel_proof.h"

#include "ir/affine.h"

namespace weir::codegen {
namespace {

using Invariant = std::set<std::string, std::less<>>;

/// Whether every expression of `dims` is `var + rest` with the same `rest`,
/// invariant while `var` runs.
bool sameUnitIndex(const std::vector<const ir::Expr *> &dims,
                   const std::string &var, const Invariant &invariant) {
  const ir::Expr &e = *dims.front();
  for (const ir::Expr *d : dims)
    if (!(*d == e))
      return false;
  for (const std::string &s : (e - ir::Expr::symbol(var)).freeSymbols())
    if (!invariant.count(s))
      return false;
  return true;
}

} // namespace

bool iterationsArePrivate(const AccessLog &log, const std::string &var,
                          const Invariant &invariant,
                          const std::map<std::string, VarBounds> &inner) {
  std::map<std::string, std::vector<const Access *>, std::less<>> byContainer;
  for (const Access &a : log.accesses)
    byContainer[a.container].push_back(&a);
  for (const auto &[name, accesses] : byContainer) {
    bool written = false;
    for (const Access *a : accesses)
      written = written || a->write;
    if (!written)
      continue;
    std::size_t rank = accesses.front()->index.size();
    bool proven = false;
    for (std::size_t d = 0; d < rank && !proven; ++d) {
      std::vector<const ir::Expr *> dims;
      for (const Access *a : accesses)
        if (a->index.size() == rank)
          dims.push_back(&a->index[d]);
      if (dims.size() != accesses.size())
        break;
      proven = sameUnitIndex(dims, var, invariant) ||
               ir::disjointPerValue(
                   dims, var,
                   [&](const std::string &s) { return invariant.count(s) > 0; },
                   inner);
    }
    if (!proven)
      return false;
  }
  return true;
}

} // namespace weir::codegen
