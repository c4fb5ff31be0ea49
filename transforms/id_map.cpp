/// \file
/// IdMap (see id_map.h).

#include "transforms/id_map.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace weir::transforms {

IdMap IdMap::identity(std::vector<ir::NodeId> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  IdMap m;
  m.entries_.reserve(ids.size());
  for (ir::NodeId id : ids)
    m.entries_.emplace_back(id, id);
  return m;
}

std::vector<IdMap::value_type>::iterator IdMap::lowerBound(ir::NodeId from) {
  if (entries_.empty() || entries_.back().first < from)
    return entries_.end(); // a new id: appends
  return std::lower_bound(
      entries_.begin(), entries_.end(), from,
      [](const value_type &e, ir::NodeId id) { return e.first < id; });
}

ir::NodeId &IdMap::operator[](ir::NodeId from) {
  auto it = lowerBound(from);
  if (it == entries_.end() || it->first != from)
    it = entries_.insert(it, {from, 0});
  return it->second;
}

IdMap::const_iterator IdMap::find(ir::NodeId from) const {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), from,
      [](const value_type &e, ir::NodeId id) { return e.first < id; });
  return it != entries_.end() && it->first == from ? it : entries_.end();
}

ir::NodeId IdMap::at(ir::NodeId from) const {
  auto it = find(from);
  if (it == end())
    throw std::out_of_range("IdMap::at: node " + std::to_string(from) +
                            " has no entry");
  return it->second;
}

std::pair<IdMap::const_iterator, bool> IdMap::emplace(ir::NodeId from,
                                                      ir::NodeId to) {
  auto it = lowerBound(from);
  if (it != entries_.end() && it->first == from)
    return {it, false};
  return {entries_.insert(it, {from, to}), true};
}

std::size_t IdMap::erase(ir::NodeId from) {
  auto it = lowerBound(from);
  if (it == entries_.end() || it->first != from)
    return 0;
  entries_.erase(it);
  return 1;
}

} // namespace weir::transforms
