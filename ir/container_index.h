#pragma once
/// \file
/// A program's containers by name in a hash table, for the passes that
/// look one up per edge of a whole program (validation, the analysis). The
/// program's own ordered map compares names, and an exporter's names share
/// long prefixes (`/features/denseblock3/denselayer12/...`): those string
/// comparisons were a tenth of a DenseNet-121 recipe's time.
///
/// Each container also has an ordinal, its position in the program's (name)
/// order, so that a pass can keep a flag per container in a plain vector.

#include "ir/program.h"

#include <cstddef>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace weir::ir {

class ContainerIndex {
public:
  static constexpr std::size_t kAbsent =
      std::numeric_limits<std::size_t>::max();

  /// `program` must outlive the index and keep its containers meanwhile.
  explicit ContainerIndex(const Program &program);
  /// Like Program::findContainer.
  const Container *find(std::string_view name) const {
    std::size_t i = ordinal(name);
    return i == kAbsent ? nullptr : containers_[i];
  }
  /// The ordinal of the container with this key, or kAbsent.
  std::size_t ordinal(std::string_view name) const;

  std::size_t size() const { return containers_.size(); }
  /// The container with ordinal `i`, and its key in the program's map.
  const Container &at(std::size_t i) const { return *containers_[i]; }
  std::string_view key(std::size_t i) const { return keys_[i]; }

private:
  std::vector<const Container *> containers_;
  std::vector<std::string_view> keys_;
  std::unordered_map<std::string_view, std::size_t> byName_;
};

} // namespace weir::ir
