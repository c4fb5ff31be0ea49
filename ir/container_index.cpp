/// \file
/// A program's containers by name in a hash table (see container_index.h).

#include "ir/container_index.h"

namespace weir::ir {

ContainerIndex::ContainerIndex(const Program &program) {
  byName_.reserve(program.containers.size());
  for (const auto &[name, c] : program.containers)
    byName_.emplace(name, &c);
}

const Container *ContainerIndex::find(std::string_view name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

} // namespace weir::ir
