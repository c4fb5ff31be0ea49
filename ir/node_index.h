#pragma once
/// \file
/// A state's nodes (and edges) by id, for the passes that walk a whole state
/// and look nodes up by id (validation, scope parents, analyses). They ran on
/// std::maps keyed by id, allocating a tree node per node and per edge on
/// every version of a long recipe; a NodeIndex answers with a position in
/// `state.nodes`, so the pass can keep what it learns in flat vectors.
///
///     ir::NodeIndex index(state);
///     std::vector<int> indegree(index.size());
///     for (const ir::Edge &e : state.edges)
///       if (std::size_t d = index.position(e.dst); d !=
///       ir::NodeIndex::kAbsent)
///         ++indegree[d];

#include "ir/program.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace weir::ir {

/// Positions in a vector of records (a state's nodes or edges) by their
/// ids; NodeIndex and EdgeIndex are its two uses.
class IdPositions {
public:
  static constexpr std::size_t kAbsent =
      std::numeric_limits<std::size_t>::max();

  /// Instantiated for a state's nodes and edges.
  template <typename Record>
  explicit IdPositions(const CowList<Record> &records);

  /// The position of the record with this id (the first, when two share
  /// it), or kAbsent.
  std::size_t position(std::uint64_t id) const {
    if (!table_.empty() || hashed_.empty()) {
      if (id < low_ || id - low_ >= table_.size())
        return kAbsent;
      std::uint32_t at = table_[id - low_];
      return at == 0 ? kAbsent : at - 1;
    }
    return hashedPosition(id);
  }
  /// Ids that more than one record carries, ascending.
  const std::vector<std::uint64_t> &duplicateIds() const { return duplicates_; }

private:
  std::size_t hashedPosition(std::uint64_t id) const;
  std::size_t slotOf(std::uint64_t id) const {
    return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  /// Position + 1 of the record with id `low_ + i` at [i] (0: none). Ids
  /// are handed out in increasing order, so a state's ids are dense enough
  /// for a table; the table is used while it is at most 4 times the record
  /// count.
  std::vector<std::uint32_t> table_;
  std::uint64_t low_ = 0;
  /// For the states whose ids are too sparse (a long recipe leaves them
  /// so): an open-addressing hash table of (id, position + 1), at most
  /// half full, probed linearly; 0 marks an empty slot.
  struct Slot {
    std::uint64_t id = 0;
    std::uint32_t at = 0;
  };
  std::vector<Slot> hashed_;
  unsigned shift_ = 64;
  std::vector<std::uint64_t> duplicates_;
};

class NodeIndex : public IdPositions {
public:
  /// Keeps a reference to `state`, which must outlive the index unchanged.
  explicit NodeIndex(const State &state)
      : IdPositions(state.nodes), state_(&state) {}

  std::size_t size() const { return state_->nodes.size(); }
  const Node *find(NodeId id) const {
    std::size_t at = position(id);
    return at == kAbsent ? nullptr : &state_->nodes[at];
  }

private:
  const State *state_;
};

/// A state's edges by id, as NodeIndex is for its nodes.
class EdgeIndex : public IdPositions {
public:
  /// Keeps a reference to `state`, which must outlive the index unchanged.
  explicit EdgeIndex(const State &state)
      : IdPositions(state.edges), state_(&state) {}

  const Edge *find(EdgeId id) const {
    std::size_t at = position(id);
    return at == kAbsent ? nullptr : &state_->edges[at];
  }

private:
  const State *state_;
};

/// A state's edges as successor lists by node position, for topological
/// walks: node i's successors are `targets[first[i]]` up to
/// `targets[first[i + 1]]`, in edge order. Edges that name a node outside
/// the state are left out.
struct Successors {
  std::vector<std::size_t> first;   ///< size() + 1 offsets
  std::vector<std::size_t> targets; ///< positions
  std::vector<int> indegree;        ///< edges into each position
};
Successors successors(const State &state, const NodeIndex &index);

} // namespace weir::ir
