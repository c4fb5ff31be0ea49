// IdMap (transforms/id_map.h) against std::map on random operations.

#include "transforms/id_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>

namespace weir::transforms {
namespace {

TEST(IdMap, BehavesAsAStdMapOfIds) {
  std::mt19937 rng(5);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<ir::NodeId> ids;
    for (int i = pick(0, 40); i > 0; --i)
      ids.push_back(static_cast<ir::NodeId>(pick(1, 60)));
    IdMap m = IdMap::identity(ids);
    std::map<ir::NodeId, ir::NodeId> want;
    for (ir::NodeId id : ids)
      want.emplace(id, id);
    for (int op = 0; op < 200; ++op) {
      auto id = static_cast<ir::NodeId>(pick(0, 80));
      auto to = static_cast<ir::NodeId>(pick(1, 80));
      switch (pick(0, 4)) {
      case 0:
        m[id] = to;
        want[id] = to;
        break;
      case 1:
        EXPECT_EQ(m.erase(id), want.erase(id));
        break;
      case 2:
        EXPECT_EQ(m.emplace(id, to).second, want.emplace(id, to).second);
        break;
      case 3:
        EXPECT_EQ(m.count(id), want.count(id));
        if (want.count(id))
          EXPECT_EQ(m.at(id), want.at(id));
        else
          EXPECT_THROW(m.at(id), std::out_of_range);
        break;
      default: // a read through [] makes an entry, as std::map's does
        EXPECT_EQ(m[id], want[id]);
      }
      ASSERT_EQ(m.size(), want.size());
    }
    auto it = want.begin();
    for (const auto &[from, to] : m) {
      ASSERT_NE(it, want.end());
      EXPECT_EQ(from, it->first);
      EXPECT_EQ(to, it->second);
      ++it;
    }
    EXPECT_EQ(m.find(1000), m.end());
  }
}

} // namespace
} // namespace weir::transforms
