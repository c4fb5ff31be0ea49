// Det by the permutation formula: matrices a factorization without
// pivoting could not take, a singular one, a batch against cofactor
// expansion, and the size limit.

#include "expansion/single_op.h"

namespace weir::expansion_testing {
namespace {

runtime::Tensor det(const std::vector<std::int64_t> &shape,
                    const std::vector<double> &values) {
  std::vector<std::int64_t> out(shape.begin(), shape.end() - 2);
  Program p = single("Det", {}, {{"X", "x", shape}}, {{"Y", "y", out}});
  operators::ExpandAllReport r = operators::expandAll(p);
  EXPECT_TRUE(r.skipped.empty()) << (r.skipped.empty() ? "" : r.skipped[0]);
  expectValid(p);
  runtime::Tensor x(DType::F32, shape);
  for (std::size_t i = 0; i < values.size(); ++i)
    x.setFromDouble(std::int64_t(i), values[i]);
  return interp::interpret(p, {{"x", x}}).at("y");
}

TEST(DetExpansion, ZeroPivotsSingularAndBatched) {
  expectNear(det({2, 2}, {0, 1, 1, 0}), {-1});
  // Rows 1 and 3 equal: exactly 0.
  runtime::Tensor singular = det({3, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3});
  EXPECT_EQ(singular.getAsDouble(0), 0.0);
  // By cofactors: 2(0*1 - 4*5) - 1(3*1 - 4*2) + 7(3*5 - 0*2) = 70;
  // the second is the first with two rows exchanged.
  expectNear(det({2, 3, 3}, {2, 1, 7, 3, 0, 4, 2, 5, 1, //
                             3, 0, 4, 2, 1, 7, 2, 5, 1}),
             {70, -70});
}

TEST(DetExpansion, LargeMatricesAreRefusedWithTheLimit) {
  Program p = single("Det", {}, {{"X", "x", {9, 9}}}, {{"Y", "y", {}}});
  operators::ExpandAllReport r = operators::expandAll(p);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].find("matrices of order 9 are not supported; the "
                              "permutation formula is used up to 8"),
            std::string::npos)
      << r.skipped[0];
}

} // namespace
} // namespace weir::expansion_testing
