/// \file
/// A program's containers by name in a hash table (see container_index.h).

#include "ir/container_index.h"

namespace weir::ir {

ContainerIndex::ContainerIndex(const Program &program) {
  containers_.reserve(program.containers.size());
  keys_.reserve(program.containers.size());
  byName_.reserve(program.containers.size());
  for (const auto &[name, c] : program.containers) {
    byName_.emplace(name, containers_.size());
    containers_.push_back(&c);
    keys_.push_back(name);
  }
}

std::size_t ContainerIndex::ordinal(std::string_view name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? kAbsent : it->second;
}

} // namespace weir::ir
