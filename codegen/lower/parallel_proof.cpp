/// \file
/// The privacy proof for parallel and vectorized loops (see the header).

#include "codegen/lower/parallel_proof.h"

#include <map>

namespace weir::codegen {

bool iterationsArePrivate(const AccessLog &log, const std::string &var,
                          const std::set<std::string, std::less<>> &invariant) {
  std::map<std::string, std::vector<const Access *>, std::less<>> byContainer;
  for (const Access &a : log.accesses)
    byContainer[a.container].push_back(&a);
  ir::Expr v = ir::Expr::symbol(var);
  for (const auto &[name, accesses] : byContainer) {
    bool written = false;
    for (const Access *a : accesses)
      written = written || a->write;
    if (!written)
      continue;
    std::size_t rank = accesses.front()->index.size();
    bool proven = false;
    for (std::size_t d = 0; d < rank && !proven; ++d) {
      const ir::Expr &e = accesses.front()->index[d];
      bool same = true;
      for (const Access *a : accesses)
        same = same && a->index.size() == rank && a->index[d] == e;
      if (!same)
        continue;
      bool fixedRest = true;
      for (const std::string &s : (e - v).freeSymbols())
        fixedRest = fixedRest && invariant.count(s) > 0;
      proven = fixedRest;
    }
    if (!proven)
      return false;
  }
  return true;
}

} // namespace weir::codegen
