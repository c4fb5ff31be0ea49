// The expansion registry agrees with the importer's operator catalog.

#include "onnx/op_catalog.h"
#include "transforms/operators/blocked_layout.h"
#include "transforms/operators/expansion.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

using namespace weir;

TEST(ExpansionRegistry, EveryExpandableOpIsAKnownOnnxOp) {
  std::vector<std::string> ops = operators::expandableOps();
  ASSERT_FALSE(ops.empty());
  // Weir's own operators (domain "weir", made by layout-transform) are the
  // only ones that are not ONNX operators.
  const std::set<std::string_view> weirOwn = {
      operators::kToBlocked, operators::kFromBlocked, operators::kBlockedConv};
  std::size_t onnxOps = 0;
  for (const std::string &op : ops) {
    if (weirOwn.count(op)) {
      EXPECT_FALSE(onnx_import::findOp("", op)) << op;
    } else {
      EXPECT_TRUE(onnx_import::findOp("", op)) << op;
      ++onnxOps;
    }
    auto impls = operators::implementationsOf(op);
    ASSERT_FALSE(impls.empty()) << op;
    EXPECT_EQ(impls.front()->op, op);
    EXPECT_FALSE(impls.front()->summary.empty()) << op;
  }
  std::printf("%zu of %zu catalogued operators have a pure expansion\n",
              onnxOps, onnx_import::knownOps().size());
}

TEST(ExpansionRegistry, UnknownImplementationIsAnError) {
  EXPECT_TRUE(operators::implementationsOf("NoSuchOp").empty());
}
