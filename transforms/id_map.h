#pragma once
/// \file
/// IdMap: a step's input node ids -> the ids in its result. A node the step
/// does not touch keeps its id, so the map stores only what the step
/// changed: the nodes it removed, and the nodes it replaced by another that
/// stands for them (map-fusion's second map entry by the first's).
///
///     IdMap m;                  // every node kept under its id
///     m.erase(array);           // removed: find(array) is nullopt
///     m[second] = first;        // `first` now stands for `second`
///     m.find(other);            // `other`, untouched
///
/// The workspace keeps every version's map. Listing every node made a
/// recipe's maps grow with steps × nodes: a chain of 4,000 operators, 8,000
/// steps over up to 16,000 nodes, held a gigabyte of them. A step changes
/// a handful of entries, so its map is a handful of entries.
///
/// An id the step's input did not have (a node the step added) also reads
/// as kept under its id: the map does not know the input's ids.

#include "ir/program.h"

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace weir::transforms {

class IdMap {
public:
  /// (from, to): `from` is now `to`, or removed when `to` is 0.
  using Change = std::pair<ir::NodeId, ir::NodeId>;

  /// Every node kept under its id.
  IdMap() = default;

  /// Where node `from` went: its id in the result, or nullopt when the
  /// step removed it.
  std::optional<ir::NodeId> find(ir::NodeId from) const;
  /// 1 when `from` survives (kept or replaced), 0 when removed.
  std::size_t count(ir::NodeId from) const { return find(from) ? 1 : 0; }
  /// find(), throwing std::out_of_range for a removed node.
  ir::NodeId at(ir::NodeId from) const;
  /// The id `from` goes to, to assign: `m[second] = first` makes `first`
  /// stand for `second` (removed or not before).
  ir::NodeId &operator[](ir::NodeId from);
  /// Removes `from`; returns 1 when it was there (not removed already).
  std::size_t erase(ir::NodeId from);
  /// This map followed by `next`: where each node ended up after both.
  void then(const IdMap &next);

  /// What the step changed, ascending by `from`.
  const std::vector<Change> &changes() const { return changes_; }
  /// Whether every node kept its id.
  bool identity() const { return changes_.empty(); }
  friend bool operator==(const IdMap &, const IdMap &) = default;

private:
  std::vector<Change>::iterator lowerBound(ir::NodeId from);
  std::vector<Change>::const_iterator lowerBound(ir::NodeId from) const;
  std::vector<Change> changes_; ///< ascending by `from`
};

} // namespace weir::transforms
