// CowList (ir/cow_list.h): copies share elements until one copy changes
// one, and a change never shows through another copy.

#include "ir/cow_list.h"
#include "ir/program.h"
#include "ir_builders.h"

#include <gtest/gtest.h>

#include <string>

namespace weir::ir {
namespace {

struct Item {
  int key = 0;
  std::string text;
};

CowList<Item> items(int n) {
  CowList<Item> list;
  for (int i = 0; i < n; ++i)
    list.push_back({i, "item " + std::to_string(i)});
  return list;
}

TEST(CowList, CopySharesEveryElement) {
  CowList<Item> a = items(5);
  CowList<Item> b = a;
  ASSERT_EQ(b.size(), 5u);
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(&a[i], &b[i]) << i;
}

TEST(CowList, EditCopiesOnlyThatElement) {
  CowList<Item> a = items(5);
  CowList<Item> b = a;
  b.edit(2).text = "changed";
  EXPECT_EQ(a[2].text, "item 2");
  EXPECT_EQ(b[2].text, "changed");
  EXPECT_NE(&a[2], &b[2]);
  for (std::size_t i : {0u, 1u, 3u, 4u})
    EXPECT_EQ(&a[i], &b[i]) << i;
  // A second edit of an element no one else holds changes it in place.
  const Item *once = &b[2];
  b.edit(2).key = 42;
  EXPECT_EQ(&b[2], once);
  EXPECT_EQ(a[2].key, 2);
}

TEST(CowList, EditingTheOriginalLeavesTheCopy) {
  CowList<Item> a = items(3);
  CowList<Item> b = a;
  a.edit(a.size() - 1).text = "last";
  EXPECT_EQ(b.back().text, "item 2");
  EXPECT_EQ(a.back().text, "last");
}

TEST(CowList, EditWhereCopiesOnlyWhatItChanges) {
  CowList<Item> a = items(6);
  CowList<Item> b = a;
  b.editWhere([](const Item &x) { return x.key % 2 == 0; },
              [](Item &x) { x.text = "even"; });
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].text, "item " + std::to_string(i));
    EXPECT_EQ(b[i].text, i % 2 == 0 ? "even" : a[i].text);
    EXPECT_EQ(&a[i] == &b[i], i % 2 == 1) << i;
  }
}

TEST(CowList, EditableCopiesWhatItVisits) {
  CowList<Item> a = items(4);
  CowList<Item> b = a;
  for (Item &x : b.editable())
    x.key += 10;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].key, int(i));
    EXPECT_EQ(b[i].key, int(i) + 10);
    EXPECT_NE(&a[i], &b[i]);
  }
}

TEST(CowList, EraseInsertAndReorderKeepTheOther) {
  CowList<Item> a = items(5);
  CowList<Item> b = a;
  EXPECT_EQ(b.eraseIf([](const Item &x) { return x.key < 2; }), 2u);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b.front().key, 2);
  EXPECT_EQ(&b.front(), &a[2]);
  EXPECT_EQ(a.size(), 5u);

  // Inserting another list's elements shares them.
  CowList<Item> c;
  c.insert(c.end(), a.begin() + 3, a.end());
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(&c[0], &a[3]);
  c.edit(0).key = -1;
  EXPECT_EQ(a[3].key, 3);

  b.reverse();
  EXPECT_EQ(b.front().key, 4);
  b.swapAt(0, 2);
  EXPECT_EQ(b.front().key, 2);
  b.rotate(b.begin(), b.begin() + 1, b.end());
  EXPECT_EQ(b.back().key, 2);
  EXPECT_EQ(a[0].key, 0);
  EXPECT_EQ(a[4].key, 4);

  auto at = b.erase(b.begin());
  EXPECT_EQ(at, b.begin());
  EXPECT_EQ(b.size(), 2u);
}

// A program is a value: a changed copy never shows its change through the
// original, and what it did not change stays shared.
TEST(CowList, ProgramCopiesAreValues) {
  Program p = builders::elementwiseAdd(8);
  Program q = p;
  State &s = q.states[0];
  ASSERT_FALSE(s.nodes.empty());
  NodeId id = s.nodes.back().id;
  s.findNode(id)->label = "renamed";
  EXPECT_NE(p.states[0].findNode(id)->label, "renamed");
  EXPECT_EQ(std::as_const(s).findNode(id)->label, "renamed");
  for (std::size_t i = 0; i + 1 < s.nodes.size(); ++i)
    EXPECT_EQ(&s.nodes[i], &p.states[0].nodes[i]) << i;
  for (std::size_t i = 0; i < s.edges.size(); ++i)
    EXPECT_EQ(&s.edges[i], &p.states[0].edges[i]) << i;
}

} // namespace
} // namespace weir::ir
