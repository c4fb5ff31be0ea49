#include "ir/dtype.h"

#include <gtest/gtest.h>

using namespace weir::ir;

TEST(DType, NamesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(DType::Bool); ++i) {
    auto t = static_cast<DType>(i);
    auto parsed = parseDType(dtypeName(t));
    ASSERT_TRUE(parsed.has_value()) << dtypeName(t);
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_FALSE(parseDType("f128").has_value());
}

TEST(DType, Sizes) {
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_TRUE(isFloat(DType::F16));
  EXPECT_FALSE(isFloat(DType::I8));
  EXPECT_TRUE(isInteger(DType::U32));
  EXPECT_FALSE(isInteger(DType::Bool));
}
