#include "ir/error.h"
#include "ir/subset.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

using namespace weir::ir;

namespace {

Expr sym(const char *name) { return Expr::symbol(name); }

template <typename F>
void expectError(F &&f, std::initializer_list<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "expected weir::Error";
  } catch (const weir::Error &e) {
    std::string message = e.what();
    for (const std::string &needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos)
          << "'" << needle << "' not in: " << message;
  }
}

} // namespace

TEST(Range, Size) {
  Expr n = sym("N"), i = sym("i");
  EXPECT_EQ(Range(0, 64).size(), Expr(64));
  EXPECT_EQ(Range(0, 64, 2).size(), Expr(32));
  EXPECT_EQ(Range(0, 63, 2).size(), Expr(32));
  EXPECT_EQ(Range(1, 10, 3).size(), Expr(3)); // 1, 4, 7
  EXPECT_EQ(Range(1, 11, 3).size(), Expr(4)); // 1, 4, 7, 10
  EXPECT_EQ(Range(5, 5).size(), Expr(0));
  EXPECT_EQ(Range(0, n).size(), n);
  EXPECT_EQ(Range(i, i + 16).size(), Expr(16));
  EXPECT_EQ(Range(i * 4, i * 4 + 8, 2).size(), Expr(4));
  EXPECT_EQ(Range(0, n, 2).size(), floorDiv(n + 1, 2));
  EXPECT_EQ(Range(0, n, 2).size().evaluate({{"N", 7}}), 4);
  EXPECT_EQ(Range::point(i).size(), Expr(1));
  EXPECT_EQ(Range().size(), Expr(0));
}

TEST(Range, PointsAndText) {
  Expr n = sym("N"), i = sym("i");
  Range p = Range::point(i * 2);
  EXPECT_TRUE(p.isPoint());
  EXPECT_EQ(p.begin, i * 2);
  EXPECT_EQ(p.end, i * 2 + 1);
  EXPECT_EQ(p.str(), "i*2");
  EXPECT_TRUE(Range(i, i + 1).isPoint());
  EXPECT_EQ(Range(i, i + 1), Range::point(i));
  EXPECT_FALSE(Range(0, 2, 2).isPoint()); // one index, but not a point
  EXPECT_EQ(Range(0, 2, 2).str(), "0:2:2");
  EXPECT_FALSE(Range(0, n).isPoint());
  EXPECT_EQ(Range(0, n).str(), "0:N");
  EXPECT_EQ(Range(0, n, 2).str(), "0:N:2");
  EXPECT_EQ(Range(i * 4, min(i * 4 + 4, n)).str(), "i*4:min(N, i*4 + 4)");
  EXPECT_EQ(Range(0, 1).str(), "0");
}

TEST(Range, StepMustBePositive) {
  expectError([] { Range(0, 8, 0); }, {"step 0", "positive"});
  expectError([] { Range(0, 8, -2); }, {"step -2"});
  Range symbolic(0, 8, sym("s")); // unknown sign: accepted
  EXPECT_EQ(symbolic.str(), "0:8:s");
}

TEST(Range, Equality) {
  Expr n = sym("N");
  EXPECT_EQ(Range(0, n + n), Range(0, 2 * n));
  EXPECT_NE(Range(0, n), Range(0, n, 2));
  EXPECT_NE(Range(0, n), Range(1, n));
}

TEST(Range, ParseRoundTrip) {
  Expr n = sym("N"), i = sym("i");
  std::vector<Range> cases = {
      Range::point(i),
      Range::point(0),
      Range(0, 64),
      Range(0, n, 2),
      Range(-3, 5),
      Range(i * 4, min(i * 4 + 4, n)),
      Range(max(i - 1, 0), min(i + 2, n), floorDiv(n, 8) + 1),
      Range(0, 2, 2),
      Range(floorDiv(i, 2), mod(i, 7) + 1, 3),
  };
  for (const Range &r : cases) {
    SCOPED_TRACE(r.str());
    EXPECT_EQ(parseRange(r.str()), r);
  }
  EXPECT_EQ(parseRange(" 0 : N "), Range(0, n));
  EXPECT_EQ(parseRange("(i):(i+1)"), Range::point(i));
}

TEST(Range, ParseErrors) {
  expectError([] { parseRange("1:2:3:4"); }, {"'1:2:3:4'"});
  expectError([] { parseRange("a:"); }, {"'a:'", "empty"});
  expectError([] { parseRange(":"); }, {"empty"});
  expectError([] { parseRange(""); }, {"empty"});
  expectError([] { parseRange("0:N:0"); }, {"'0:N:0'", "positive"});
  expectError([] { parseRange("0:N $ 1"); }, {"'0:N $ 1'", "unexpected '$'"});
  expectError([] { parseRange("0:min(N"); }, {"'0:min(N'", "expected ','"});
}

TEST(Subset, FullVolumeAndText) {
  Expr n = sym("N"), i = sym("i");
  Subset full = Subset::full({n, 64, 3});
  EXPECT_EQ(full.str(), "0:N, 0:64, 0:3");
  EXPECT_EQ(full.volume(), n * 192);
  Subset s{{Range::point(i), Range(0, 64), Range(0, n, 2)}};
  EXPECT_EQ(s.str(), "i, 0:64, 0:N:2");
  EXPECT_EQ(s.volume(), floorDiv(n + 1, 2) * 64);
  EXPECT_EQ(s.volume().evaluate({{"N", 5}}), 192);
  Subset scalar;
  EXPECT_EQ(scalar.str(), "");
  EXPECT_EQ(scalar.volume(), Expr(1));
  EXPECT_EQ(Subset::full({}), scalar);
  EXPECT_NE(full, s);
}

TEST(Subset, ParseRoundTrip) {
  Expr n = sym("N"), i = sym("i"), j = sym("j");
  std::vector<Subset> cases = {
      Subset{},
      Subset::full({n, 64}),
      Subset{{Range::point(i), Range(0, 64), Range(0, n, 2)}},
      Subset{{Range(i * 4, min(i * 4 + 4, n)),
              Range(max(j, min(i, n)), n, floorDiv(n, 2) + 1)}},
      Subset{{Range::point(min(i, j)), Range::point(max(i, min(j, n)))}},
  };
  for (const Subset &s : cases) {
    SCOPED_TRACE(s.str());
    EXPECT_EQ(parseSubset(s.str()), s);
  }
  EXPECT_EQ(parseSubset("i,0:64"), (Subset{{Range::point(i), Range(0, 64)}}));
  EXPECT_EQ(parseSubset("   "), Subset{});
  EXPECT_EQ(parseSubset("min(i, j):max(i, j)").dims.size(), 1u);
}

TEST(Subset, ParseErrors) {
  expectError([] { parseSubset("0:N, "); }, {"'0:N, '", "empty"});
  expectError([] { parseSubset(", i"); }, {"empty"});
  expectError([] { parseSubset("i, min(a b)"); },
              {"'i, min(a b)'", "min(a b)"});
  expectError([] { parseSubset("0:(N, 1"); }, {"'0:(N, 1'"});
  expectError([] { parseSubset("0:N)"); }, {"unexpected ')'"});
}

TEST(SubsetProperty, RandomRoundTrips) {
  std::mt19937_64 rng(99);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  const Expr syms[] = {sym("i"), sym("j"), sym("N")};
  std::function<Expr(int)> expr = [&](int depth) -> Expr {
    if (depth == 0 || pick(0, 3) == 0)
      return pick(0, 1) ? syms[pick(0, 2)] : Expr(pick(-9, 9));
    switch (pick(0, 5)) {
    case 0:
      return expr(depth - 1) + expr(depth - 1);
    case 1:
      return expr(depth - 1) * pick(-3, 3);
    case 2:
      return floorDiv(expr(depth - 1), pick(1, 8));
    case 3:
      return mod(expr(depth - 1), pick(1, 8));
    case 4:
      return min(expr(depth - 1), expr(depth - 1));
    default:
      return max(expr(depth - 1), expr(depth - 1));
    }
  };
  for (int t = 0; t < 500; ++t) {
    Subset s;
    for (int d = pick(0, 4); d > 0; --d) {
      switch (pick(0, 2)) {
      case 0:
        s.dims.push_back(Range::point(expr(3)));
        break;
      case 1:
        s.dims.emplace_back(expr(3), expr(3));
        break;
      default:
        s.dims.emplace_back(expr(3), expr(3), pick(1, 4));
        break;
      }
    }
    SCOPED_TRACE(s.str());
    ASSERT_EQ(parseSubset(s.str()), s);
    ASSERT_EQ(parseSubset(s.str()).str(), s.str());
  }
}
