// NodeIndex and EdgeIndex (ir/node_index.h): a record's position by its id,
// through a table when ids are dense and a hash table when they are sparse,
// checked against a std::map on the same ids.

#include "ir/node_index.h"
#include "ir/program.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace weir::ir {
namespace {

State withIds(const std::vector<NodeId> &ids) {
  State s;
  s.name = "main";
  for (NodeId id : ids) {
    Node n;
    n.id = id;
    n.kind = NodeKind::Access;
    n.payload = AccessData{"x"};
    s.nodes.push_back(n);
  }
  return s;
}

/// Every id's first position, the absent ids around them, and the
/// duplicates, as a std::map sees them.
void expectAgreesWithAMap(const std::vector<NodeId> &ids) {
  State s = withIds(ids);
  NodeIndex index(s);
  std::map<NodeId, std::size_t> first;
  std::vector<std::uint64_t> twice;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (!first.emplace(ids[i], i).second &&
        (twice.empty() || std::find(twice.begin(), twice.end(), ids[i]) ==
                              twice.end()))
      twice.push_back(ids[i]);
  std::sort(twice.begin(), twice.end());
  for (const auto &[id, at] : first) {
    EXPECT_EQ(index.position(id), at) << id;
    EXPECT_EQ(index.find(id), &s.nodes[at]) << id;
    for (NodeId near : {id - 1, id + 1, id + 1000003})
      if (!first.count(near))
        EXPECT_EQ(index.position(near), NodeIndex::kAbsent) << near;
  }
  EXPECT_EQ(index.position(0), first.count(0) ? first[0] : NodeIndex::kAbsent);
  EXPECT_EQ(index.duplicateIds(), twice);
}

TEST(NodeIndex, DenseIdsByTable) {
  expectAgreesWithAMap({5, 6, 7, 9, 8, 12});
  expectAgreesWithAMap({1});
  expectAgreesWithAMap({});
}

TEST(NodeIndex, SparseIdsByHash) {
  // Ids a long recipe leaves: far apart, in no order.
  expectAgreesWithAMap({3, 100000, 7, 5000000000ull, 42, 99999});
  std::mt19937_64 rng(7);
  std::vector<NodeId> ids;
  for (int i = 0; i < 5000; ++i)
    ids.push_back(rng() % 1000000000 + 1);
  expectAgreesWithAMap(ids);
}

TEST(NodeIndex, DuplicatesKeepTheFirstPosition) {
  expectAgreesWithAMap({4, 5, 4, 6, 5, 4});                    // dense
  expectAgreesWithAMap({4, 900000, 4, 6, 900000, 4, 1 << 30}); // sparse
}

TEST(EdgeIndex, FindsEdgesById) {
  State s;
  for (EdgeId id : {10u, 2000000u, 30u}) {
    Edge e;
    e.id = id;
    s.edges.push_back(e);
  }
  EdgeIndex index(s);
  EXPECT_EQ(index.find(2000000), &s.edges[1]);
  EXPECT_EQ(index.find(30), &s.edges[2]);
  EXPECT_EQ(index.find(31), nullptr);
}

} // namespace
} // namespace weir::ir
