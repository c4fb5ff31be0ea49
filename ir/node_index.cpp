/// \file
/// A state's nodes and edges by id (see node_index.h).

#include "ir/node_index.h"

#include <algorithm>

namespace weir::ir {

template <typename Record>
IdPositions::IdPositions(const CowList<Record> &records) {
  if (records.empty())
    return;
  auto [lo, hi] = std::minmax_element(
      records.begin(), records.end(),
      [](const Record &a, const Record &b) { return a.id < b.id; });
  low_ = lo->id;
  const std::uint64_t span = hi->id - lo->id;
  if (span <= 4 * static_cast<std::uint64_t>(records.size()) + 64) {
    table_.assign(span + 1, 0);
    for (std::size_t i = 0; i < records.size(); ++i) {
      std::uint32_t &slot = table_[records[i].id - low_];
      if (slot == 0)
        slot = static_cast<std::uint32_t>(i + 1);
      else if (std::find(duplicates_.begin(), duplicates_.end(),
                         records[i].id) == duplicates_.end())
        duplicates_.push_back(records[i].id);
    }
    std::sort(duplicates_.begin(), duplicates_.end());
    return;
  }
  std::size_t capacity = 16;
  unsigned bits = 4;
  while (capacity < 2 * records.size()) {
    capacity *= 2;
    ++bits;
  }
  hashed_.assign(capacity, Slot{});
  shift_ = 64 - bits;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const std::uint64_t id = records[i].id;
    for (std::size_t k = slotOf(id);; k = (k + 1) & (capacity - 1)) {
      Slot &slot = hashed_[k];
      if (slot.at == 0) {
        slot = Slot{id, static_cast<std::uint32_t>(i + 1)};
        break;
      }
      if (slot.id == id) {
        duplicates_.push_back(id);
        break;
      }
    }
  }
  std::sort(duplicates_.begin(), duplicates_.end());
  duplicates_.erase(std::unique(duplicates_.begin(), duplicates_.end()),
                    duplicates_.end());
}

template IdPositions::IdPositions(const CowList<Node> &);
template IdPositions::IdPositions(const CowList<Edge> &);

std::size_t IdPositions::hashedPosition(std::uint64_t id) const {
  const std::size_t mask = hashed_.size() - 1;
  for (std::size_t k = slotOf(id);; k = (k + 1) & mask) {
    const Slot &slot = hashed_[k];
    if (slot.at == 0)
      return kAbsent;
    if (slot.id == id)
      return slot.at - 1;
  }
}

Successors successors(const State &state, const NodeIndex &index) {
  const std::size_t n = state.nodes.size();
  Successors out;
  out.first.assign(n + 1, 0);
  out.indegree.assign(n, 0);
  std::vector<std::pair<std::size_t, std::size_t>> arcs;
  arcs.reserve(state.edges.size());
  for (const Edge &e : state.edges) {
    std::size_t a = index.position(e.src), b = index.position(e.dst);
    if (a == NodeIndex::kAbsent || b == NodeIndex::kAbsent)
      continue;
    arcs.emplace_back(a, b);
    ++out.first[a + 1];
    ++out.indegree[b];
  }
  for (std::size_t i = 0; i < n; ++i)
    out.first[i + 1] += out.first[i];
  out.targets.resize(arcs.size());
  std::vector<std::size_t> fill(out.first.begin(), out.first.end() - 1);
  for (auto [a, b] : arcs)
    out.targets[fill[a]++] = b;
  return out;
}

} // namespace weir::ir
