// IdMap (transforms/id_map.h) against a std::map over every id, and its
// composition against applying two maps one after the other.

#include "transforms/id_map.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <stdexcept>

namespace weir::transforms {
namespace {

constexpr ir::NodeId kIds = 80;

/// Every id 1..kIds -> where `m` sends it (nullopt: removed).
std::map<ir::NodeId, std::optional<ir::NodeId>> table(const IdMap &m) {
  std::map<ir::NodeId, std::optional<ir::NodeId>> t;
  for (ir::NodeId id = 1; id <= kIds; ++id)
    t[id] = m.find(id);
  return t;
}

IdMap randomMap(std::mt19937 &rng, int ops) {
  auto pick = [&](int lo, int hi) {
    return static_cast<ir::NodeId>(
        std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  IdMap m;
  for (int i = 0; i < ops; ++i) {
    if (pick(0, 1))
      m.erase(pick(1, kIds));
    else
      m[pick(1, kIds)] = pick(1, kIds);
  }
  return m;
}

TEST(IdMap, KeepsEveryNodeItDoesNotName) {
  IdMap m;
  EXPECT_TRUE(m.identity());
  EXPECT_EQ(m.find(7), 7u);
  EXPECT_EQ(m.at(7), 7u);
  EXPECT_EQ(m.count(7), 1u);
  EXPECT_EQ(m.erase(7), 1u);
  EXPECT_EQ(m.erase(7), 0u); // removed already
  EXPECT_EQ(m.find(7), std::nullopt);
  EXPECT_EQ(m.count(7), 0u);
  EXPECT_THROW(m.at(7), std::out_of_range);
  m[7] = 3; // node 3 stands for the removed node 7
  EXPECT_EQ(m.at(7), 3u);
  EXPECT_EQ(m.changes().size(), 1u);
  EXPECT_FALSE(m.identity());
}

TEST(IdMap, BehavesAsATableOfEveryId) {
  std::mt19937 rng(5);
  auto pick = [&](int lo, int hi) {
    return static_cast<ir::NodeId>(
        std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  for (int trial = 0; trial < 50; ++trial) {
    IdMap m;
    std::map<ir::NodeId, std::optional<ir::NodeId>> want;
    for (ir::NodeId id = 1; id <= kIds; ++id)
      want[id] = id;
    for (int op = 0; op < 200; ++op) {
      ir::NodeId id = pick(1, kIds), to = pick(1, kIds);
      switch (pick(0, 2)) {
      case 0:
        m[id] = to;
        want[id] = to;
        break;
      case 1:
        EXPECT_EQ(m.erase(id), want[id] ? 1u : 0u);
        want[id] = std::nullopt;
        break;
      default:
        EXPECT_EQ(m.count(id), want[id] ? 1u : 0u);
        if (want[id])
          EXPECT_EQ(m.at(id), *want[id]);
        else
          EXPECT_THROW(m.at(id), std::out_of_range);
      }
    }
    EXPECT_EQ(table(m), want);
    for (std::size_t i = 1; i < m.changes().size(); ++i)
      EXPECT_LT(m.changes()[i - 1].first, m.changes()[i].first);
  }
}

TEST(IdMap, ThenSendsEachNodeThroughBothMaps) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    IdMap first = randomMap(rng, 30), second = randomMap(rng, 30);
    std::map<ir::NodeId, std::optional<ir::NodeId>> want;
    for (ir::NodeId id = 1; id <= kIds; ++id) {
      std::optional<ir::NodeId> mid = first.find(id);
      want[id] = mid ? second.find(*mid) : std::nullopt;
    }
    IdMap both = first;
    both.then(second);
    EXPECT_EQ(table(both), want) << "trial " << trial;
  }
}

} // namespace
} // namespace weir::transforms
