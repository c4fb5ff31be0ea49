// The expansion registry agrees with the importer's operator catalog.

#include "core/onnx/op_catalog.h"
#include "transforms/expansion/expansion.h"

#include <gtest/gtest.h>

using namespace weir;

TEST(ExpansionRegistry, EveryExpandableOpIsAKnownOnnxOp) {
  std::vector<std::string> ops = expansion::expandableOps();
  ASSERT_FALSE(ops.empty());
  for (const std::string &op : ops) {
    EXPECT_TRUE(onnx_import::findOp("", op)) << op;
    auto impls = expansion::implementationsOf(op);
    ASSERT_FALSE(impls.empty()) << op;
    EXPECT_EQ(impls.front()->op, op);
    EXPECT_FALSE(impls.front()->summary.empty()) << op;
  }
  std::printf("%zu of %zu catalogued operators have a pure expansion\n",
              ops.size(), onnx_import::knownOps().size());
}

TEST(ExpansionRegistry, UnknownImplementationIsAnError) {
  EXPECT_TRUE(expansion::implementationsOf("NoSuchOp").empty());
}
