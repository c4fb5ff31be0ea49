/// \file
/// IdMap (see id_map.h).

#include "transforms/id_map.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace weir::transforms {

namespace {
bool before(const IdMap::Change &c, ir::NodeId id) { return c.first < id; }
} // namespace

std::vector<IdMap::Change>::iterator IdMap::lowerBound(ir::NodeId from) {
  if (changes_.empty() || changes_.back().first < from)
    return changes_.end(); // a newer id: appends
  return std::lower_bound(changes_.begin(), changes_.end(), from, before);
}

std::vector<IdMap::Change>::const_iterator
IdMap::lowerBound(ir::NodeId from) const {
  return std::lower_bound(changes_.begin(), changes_.end(), from, before);
}

std::optional<ir::NodeId> IdMap::find(ir::NodeId from) const {
  auto it = lowerBound(from);
  if (it == changes_.end() || it->first != from)
    return from;
  if (it->second == 0)
    return std::nullopt;
  return it->second;
}

ir::NodeId IdMap::at(ir::NodeId from) const {
  if (std::optional<ir::NodeId> to = find(from))
    return *to;
  throw std::out_of_range("IdMap::at: node " + std::to_string(from) +
                          " was removed");
}

ir::NodeId &IdMap::operator[](ir::NodeId from) {
  auto it = lowerBound(from);
  if (it == changes_.end() || it->first != from)
    it = changes_.insert(it, {from, from});
  return it->second;
}

std::size_t IdMap::erase(ir::NodeId from) {
  auto it = lowerBound(from);
  if (it == changes_.end() || it->first != from) {
    changes_.insert(it, {from, 0});
    return 1;
  }
  return std::exchange(it->second, 0) != 0 ? 1 : 0;
}

void IdMap::then(const IdMap &next) {
  // A node this map names goes on through `next` from where this map sent
  // it; a node it kept as it was is changed by `next` alone.
  auto through = [&](const Change &c) {
    return Change{c.first, c.second ? next.find(c.second).value_or(0) : 0};
  };
  std::vector<Change> composed;
  composed.reserve(changes_.size() + next.changes_.size());
  auto mine = changes_.cbegin(), theirs = next.changes_.cbegin();
  while (mine != changes_.cend() || theirs != next.changes_.cend()) {
    if (theirs == next.changes_.cend() ||
        (mine != changes_.cend() && mine->first <= theirs->first)) {
      if (theirs != next.changes_.cend() && theirs->first == mine->first)
        ++theirs; // this map's entry decides where the node went
      composed.push_back(through(*mine++));
    } else {
      composed.push_back(*theirs++);
    }
  }
  // An entry that maps a node to itself says nothing.
  std::erase_if(composed, [](const Change &c) { return c.first == c.second; });
  changes_ = std::move(composed);
}

} // namespace weir::transforms
