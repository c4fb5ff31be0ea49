#include "transforms/operators/broadcast.h"

namespace weir::operators {

std::vector<ir::Expr> broadcastIndex(const std::vector<ir::Expr> &inShape,
                                     const std::vector<ir::Expr> &outShape,
                                     const std::vector<ir::Expr> &outIndex) {
  std::vector<ir::Expr> index;
  std::size_t offset = outShape.size() - inShape.size();
  for (std::size_t k = 0; k < inShape.size(); ++k) {
    const ir::Expr &out = outShape[k + offset];
    bool stretched = inShape[k] == ir::Expr(1) && out != ir::Expr(1);
    index.push_back(stretched ? ir::Expr(0) : outIndex[k + offset]);
  }
  return index;
}

} // namespace weir::operators
