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
  sorted_.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i)
    sorted_.emplace_back(records[i].id, static_cast<std::uint32_t>(i));
  std::sort(sorted_.begin(), sorted_.end());
  for (std::size_t i = 1; i < sorted_.size(); ++i)
    if (sorted_[i].first == sorted_[i - 1].first &&
        (duplicates_.empty() || duplicates_.back() != sorted_[i].first))
      duplicates_.push_back(sorted_[i].first);
}

template IdPositions::IdPositions(const CowList<Node> &);
template IdPositions::IdPositions(const CowList<Edge> &);

std::size_t IdPositions::sortedPosition(std::uint64_t id) const {
  auto it =
      std::lower_bound(sorted_.begin(), sorted_.end(), id,
                       [](const std::pair<std::uint64_t, std::uint32_t> &p,
                          std::uint64_t want) { return p.first < want; });
  return it != sorted_.end() && it->first == id ? it->second : kAbsent;
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
