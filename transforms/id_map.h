#pragma once
/// \file
/// IdMap: a step's input node ids -> the ids in its result, for every node
/// that survives (kept under its id, or replaced by a node that stands for
/// it). Nodes that disappear are absent.
///
/// Every step of a recipe makes one over every node of the program, and the
/// workspace keeps each version's: as a std::map that was a tree node per
/// node per step (DenseNet-121: 461 maps of about 5,000 entries, built one
/// allocation at a time and freed the same way when the workspace closes).
/// An IdMap is one sorted vector of pairs with the map operations the
/// transformations use; a step changes a handful of entries, and new ids
/// (larger than every old one) append.

#include "ir/program.h"

#include <cstddef>
#include <utility>
#include <vector>

namespace weir::transforms {

class IdMap {
public:
  using value_type = std::pair<ir::NodeId, ir::NodeId>;
  using const_iterator = std::vector<value_type>::const_iterator;

  IdMap() = default;
  /// Every id maps to itself; `ids` in any order, duplicates once.
  static IdMap identity(std::vector<ir::NodeId> ids);

  /// The entry for `from`, made (mapping to 0) when there is none.
  ir::NodeId &operator[](ir::NodeId from);
  /// Throws std::out_of_range when `from` has no entry.
  ir::NodeId at(ir::NodeId from) const;
  std::size_t count(ir::NodeId from) const { return find(from) != end(); }
  const_iterator find(ir::NodeId from) const;
  /// Adds `from` -> `to` unless `from` has an entry; says whether it added.
  std::pair<const_iterator, bool> emplace(ir::NodeId from, ir::NodeId to);
  /// Removes `from`'s entry; returns how many went (0 or 1).
  std::size_t erase(ir::NodeId from);

  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  friend bool operator==(const IdMap &, const IdMap &) = default;

private:
  std::vector<value_type>::iterator lowerBound(ir::NodeId from);
  std::vector<value_type> entries_; ///< ascending by the first id
};

} // namespace weir::transforms
