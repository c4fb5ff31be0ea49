#pragma once
/// \file
/// A program's containers by name in a hash table, for the passes that
/// look one up per edge of a whole program (validation, the analysis). The
/// program's own ordered map compares names, and an exporter's names share
/// long prefixes (`/features/denseblock3/denselayer12/...`): those string
/// comparisons were a tenth of a DenseNet-121 recipe's time.

#include "ir/program.h"

#include <string_view>
#include <unordered_map>

namespace weir::ir {

class ContainerIndex {
public:
  /// `program` must outlive the index and keep its containers meanwhile.
  explicit ContainerIndex(const Program &program);
  /// Like Program::findContainer.
  const Container *find(std::string_view name) const;

private:
  std::unordered_map<std::string_view, const Container *> byName_;
};

} // namespace weir::ir
