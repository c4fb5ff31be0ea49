#include "core/runtime/tensor.h"
#include "ir/float16.h"

#include "ir/error.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace weir::runtime;
using weir::ir::DType;
using namespace weir::ir;

namespace {

template <typename F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const weir::Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected weir::Error";
  return {};
}

#define EXPECT_ERROR(stmt, needle)                                             \
  EXPECT_NE(errorOf([&] { stmt; }).find(needle), std::string::npos)            \
      << "message: " << errorOf([&] { stmt; })

const DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64,
                            DType::I8,  DType::U8,  DType::I16,  DType::U16,
                            DType::I32, DType::U32, DType::I64,  DType::U64,
                            DType::Bool};

bool aligned64(const void *p) {
  return reinterpret_cast<std::uintptr_t>(p) % 64 == 0;
}

float bitsToFloat(std::uint32_t bits) { return std::bit_cast<float>(bits); }

} // namespace

TEST(Tensor, DefaultIsEmptyF32) {
  Tensor t;
  EXPECT_EQ(t.dtype(), DType::F32);
  EXPECT_EQ(t.shape(), std::vector<std::int64_t>{0});
  EXPECT_EQ(t.elementCount(), 0);
  EXPECT_EQ(t.byteSize(), 0u);
  EXPECT_NE(t.data(), nullptr);
  EXPECT_FALSE(t.readOnly());
}

TEST(Tensor, BuffersAreAlignedAndZeroed) {
  for (DType d : kAllDTypes)
    for (const std::vector<std::int64_t> &shape : {std::vector<std::int64_t>{},
                                                   {0},
                                                   {1},
                                                   {3, 5},
                                                   {7, 0, 2},
                                                   {2, 3, 11}}) {
      Tensor t(d, shape);
      EXPECT_TRUE(aligned64(t.data())) << t.describe();
      EXPECT_EQ(t.byteSize(), static_cast<std::size_t>(t.elementCount()) *
                                  weir::ir::dtypeSize(d));
      for (std::size_t i = 0; i < t.byteSize(); ++i)
        ASSERT_EQ(t.data()[i], std::byte{0}) << t.describe() << " byte " << i;
    }
}

TEST(Tensor, ShapeStridesAndDescribe) {
  Tensor t(DType::F32, {1, 3, 32, 32});
  EXPECT_EQ(t.rank(), 4u);
  EXPECT_EQ(t.elementCount(), 3 * 32 * 32);
  EXPECT_EQ(t.strides(), (std::vector<std::int64_t>{3072, 1024, 32, 1}));
  EXPECT_EQ(t.describe(), "f32[1, 3, 32, 32]");
  EXPECT_EQ(Tensor(DType::BF16, {}).describe(), "bf16[]");
  EXPECT_EQ(Tensor(DType::BF16, {}).elementCount(), 1);
  EXPECT_EQ(Tensor(DType::I64, {4, 0, 2}).strides(),
            (std::vector<std::int64_t>{2, 2, 1}));
}

TEST(Tensor, CopiesShareCloneIsIndependent) {
  Tensor a(DType::I32, {4});
  a.mutableAs<std::int32_t>()[1] = 7;
  Tensor shared = a;
  shared.mutableAs<std::int32_t>()[2] = 9;
  EXPECT_EQ(a.as<std::int32_t>()[2], 9);
  EXPECT_EQ(shared.data(), a.data());

  Tensor copy = a.clone();
  EXPECT_NE(copy.data(), a.data());
  EXPECT_TRUE(aligned64(copy.data()));
  copy.mutableAs<std::int32_t>()[1] = -1;
  EXPECT_EQ(a.as<std::int32_t>()[1], 7);
  EXPECT_EQ(copy.as<std::int32_t>()[2], 9);
}

TEST(Tensor, BlobTensorsAreReadOnlyAndShared) {
  auto bytes = std::make_shared<std::vector<std::byte>>(6 * sizeof(float));
  for (int i = 0; i < 6; ++i) {
    float f = static_cast<float>(i) + 0.5f;
    std::memcpy(bytes->data() + 4 * i, &f, 4);
  }
  weir::ir::Blob blob = bytes;
  Tensor t = Tensor::fromBlob(DType::F32, {2, 3}, blob);
  EXPECT_TRUE(t.readOnly());
  EXPECT_EQ(t.data(), blob->data()); // wrapped, not copied
  EXPECT_EQ(blob.use_count(), 3);    // bytes, blob and the tensor
  EXPECT_EQ(t.getAsDouble(4), 4.5);
  EXPECT_ERROR(t.mutableData(), "read-only");
  EXPECT_ERROR(t.setFromDouble(0, 1.0), "f32[2, 3]");

  blob.reset(); // the tensor keeps the bytes alive
  bytes.reset();
  EXPECT_EQ(t.getAsDouble(5), 5.5);

  Tensor reshaped = t.reshaped({3, 2});
  EXPECT_TRUE(reshaped.readOnly());
  EXPECT_EQ(reshaped.data(), t.data());

  Tensor writable = t.clone();
  EXPECT_FALSE(writable.readOnly());
  writable.setFromDouble(0, 42);
  EXPECT_EQ(t.getAsDouble(0), 0.5);
  EXPECT_EQ(writable.getAsDouble(0), 42);
}

TEST(Tensor, FromBlobChecksSize) {
  auto bytes = std::make_shared<const std::vector<std::byte>>(10);
  EXPECT_ERROR(Tensor::fromBlob(DType::F32, {3}, bytes), "10 bytes");
  EXPECT_ERROR(Tensor::fromBlob(DType::F32, {3}, nullptr), "12 bytes");
  EXPECT_ERROR(Tensor::fromBlob(DType::F32, {-3}, bytes), "negative");
  Tensor empty = Tensor::fromBlob(DType::I16, {0, 4}, nullptr);
  EXPECT_EQ(empty.elementCount(), 0);
  EXPECT_EQ(empty.describe(), "i16[0, 4]");
}

TEST(Tensor, Reshaped) {
  Tensor t(DType::U8, {2, 6});
  t.setFromDouble(11, 200);
  Tensor r = t.reshaped({3, 4});
  EXPECT_EQ(r.shape(), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(r.data(), t.data());
  EXPECT_EQ(r.getAsDouble(11), 200);
  EXPECT_EQ(t.reshaped({12}).rank(), 1u);
  EXPECT_ERROR(t.reshaped({5, 2}), "10 elements instead of 12");
  EXPECT_ERROR(t.reshaped({-12}), "negative");
}

TEST(Tensor, OverflowAndNegativeShapes) {
  const std::int64_t big = std::int64_t(1) << 40;
  EXPECT_ERROR(Tensor(DType::F32, {2, -1}), "negative dimension");
  EXPECT_ERROR(Tensor(DType::F32, {big, big}), "overflows");
  EXPECT_ERROR(Tensor(DType::U8, {INT64_MAX, INT64_MAX, INT64_MAX}),
               "overflows");
  // Empty, but strides would still overflow.
  EXPECT_ERROR(Tensor(DType::F32, {0, big, big}), "overflows");
  EXPECT_ERROR(
      checkedTensorBytes(DType::F32, {big}, kDefaultMaxTensorBytes, "'x.npy'"),
      "'x.npy': tensor f32[1099511627776] is too large");
  EXPECT_EQ(checkedTensorBytes(DType::F64, {3, 0, 5}, 0, "x"), 0u);
  EXPECT_EQ(checkedTensorBytes(DType::F64, {3, 5}, 120, "x"), 120u);
  EXPECT_ERROR(checkedTensorBytes(DType::F64, {3, 5}, 119, "x"), "limit");
}

TEST(Tensor, GetAndSetEveryDType) {
  for (DType d : kAllDTypes) {
    Tensor t(d, {6});
    // Values every dtype holds exactly.
    const double values[] = {0, 1, 2, 3, 100, 127};
    for (int i = 0; i < 6; ++i)
      t.setFromDouble(i, values[i]);
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(t.getAsDouble(i),
                d == DType::Bool ? (values[i] != 0) : values[i])
          << weir::ir::dtypeName(d) << " " << i;
  }
  Tensor i8(DType::I8, {1});
  Tensor u8(DType::U8, {1});
  Tensor i64(DType::I64, {1});
  Tensor u64(DType::U64, {1});
  Tensor b(DType::Bool, {1});
  auto roundTrip = [](Tensor &t, double v) {
    t.setFromDouble(0, v);
    return t.getAsDouble(0);
  };
  EXPECT_EQ(roundTrip(i8, -2.9), -2); // toward zero
  EXPECT_EQ(roundTrip(i8, 2.9), 2);
  EXPECT_EQ(roundTrip(i8, 300), 127); // saturates
  EXPECT_EQ(roundTrip(i8, -300), -128);
  EXPECT_EQ(roundTrip(i8, NAN), 0);
  EXPECT_EQ(roundTrip(u8, -0.5), 0);
  EXPECT_EQ(roundTrip(u8, -7), 0);
  EXPECT_EQ(roundTrip(u8, 255.9), 255);
  EXPECT_EQ(roundTrip(u8, INFINITY), 255);
  EXPECT_EQ(roundTrip(i64, -9223372036854775808.0), -9223372036854775808.0);
  EXPECT_EQ(i64.as<std::int64_t>()[0], INT64_MIN);
  roundTrip(i64, 1e300);
  EXPECT_EQ(i64.as<std::int64_t>()[0], INT64_MAX);
  roundTrip(u64, 18446744073709551616.0);
  EXPECT_EQ(u64.as<std::uint64_t>()[0], UINT64_MAX);
  roundTrip(u64, 18014398509481988.0); // 2^54 + 4, exact in double
  EXPECT_EQ(u64.as<std::uint64_t>()[0], 18014398509481988u);
  EXPECT_EQ(roundTrip(b, 0.25), 1);
  EXPECT_EQ(roundTrip(b, -0.0), 0);
  EXPECT_EQ(b.as<std::uint8_t>()[0], 0);

  Tensor f32(DType::F32, {1});
  EXPECT_EQ(roundTrip(f32, 0.1), static_cast<double>(0.1f));
  EXPECT_EQ(roundTrip(f32, 1e300), INFINITY);
  EXPECT_TRUE(std::isnan(roundTrip(f32, NAN)));
  Tensor f64(DType::F64, {1});
  EXPECT_EQ(roundTrip(f64, 0.1), 0.1);
  Tensor f16(DType::F16, {1});
  EXPECT_EQ(roundTrip(f16, 0.1), 0.0999755859375);
  EXPECT_EQ(f16.as<std::uint16_t>()[0], 0x2E66);
  Tensor bf16(DType::BF16, {1});
  EXPECT_EQ(roundTrip(bf16, 1.0 / 3), 0.333984375);
  EXPECT_EQ(bf16.as<std::uint16_t>()[0], 0x3EAB);
}

TEST(Half, KnownBitPatterns) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(0.5f), 0x3800);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF); // largest finite
  EXPECT_EQ(floatToHalf(65519.0f), 0x7BFF); // just below the halfway point
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // tie rounds to even: infinity
  EXPECT_EQ(floatToHalf(1e10f), 0x7C00);
  EXPECT_EQ(floatToHalf(-1e10f), 0xFC00);
  EXPECT_EQ(floatToHalf(INFINITY), 0x7C00);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xFC00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);    // smallest normal
  EXPECT_EQ(floatToHalf(std::ldexp(1023.0f, -24)), 0x03FF); // largest sub
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);    // smallest sub
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);    // tie to even: 0
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -26)), 0x0001);    // 0.75 ulp: up
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);    // 1.5 ulp tie: even
  EXPECT_EQ(floatToHalf(std::ldexp(5.0f, -25)), 0x0002);    // 2.5 ulp tie: even
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25) * 1.0001f), 0x0001);
  EXPECT_EQ(floatToHalf(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(floatToHalf(bitsToFloat(0x00000001)), 0x0000); // float subnormal
  // Rounding the subnormal range up into the smallest normal.
  EXPECT_EQ(floatToHalf(std::ldexp(2047.0f, -25)), 0x0400);
  // Ties between normals: 1 + 2^-11 lies halfway between 0x3C00 and 0x3C01.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3C02);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
            0x3C01);
  // Rounding up carries into the exponent: 2 - 2^-12 -> 2.0.
  EXPECT_EQ(floatToHalf(2.0f - std::ldexp(1.0f, -12)), 0x4000);

  std::uint16_t nan = floatToHalf(NAN);
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  EXPECT_EQ(floatToHalf(bitsToFloat(0x7FC00000)), 0x7E00);
  // A signalling NaN whose payload lives only in low bits stays a NaN.
  EXPECT_EQ(floatToHalf(bitsToFloat(0x7F800001)), 0x7E00);
  EXPECT_EQ(floatToHalf(bitsToFloat(0xFFC00000)), 0xFE00);

  EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(halfToFloat(0xC000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(halfToFloat(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x7C00), INFINITY);
  EXPECT_EQ(halfToFloat(0xFC00), -INFINITY);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7E00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7C01)));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(halfToFloat(0x7E00)), 0x7FC00000u);
}

TEST(Half, EveryPatternRoundTrips) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    auto bits = static_cast<std::uint16_t>(h);
    float f = halfToFloat(bits);
    if (std::isnan(f)) {
      // Quiet NaNs keep their payload; signalling ones become quiet.
      EXPECT_EQ(floatToHalf(f), bits | 0x0200) << std::hex << h;
      continue;
    }
    ASSERT_EQ(floatToHalf(f), bits) << std::hex << h;
    ASSERT_EQ(doubleToHalf(f), bits) << std::hex << h;
  }
}

TEST(Half, DoubleRoundsOnce) {
  // 1 + 2^-11 + 2^-40 is just above the 0x3C00/0x3C01 tie. Through float the
  // 2^-40 is lost and the tie then rounds down to even; from double it
  // rounds up.
  double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(floatToHalf(static_cast<float>(x)), 0x3C00);
  EXPECT_EQ(doubleToHalf(x), 0x3C01);
  Tensor t(DType::F16, {1});
  t.setFromDouble(0, x);
  EXPECT_EQ(t.as<std::uint16_t>()[0], 0x3C01);
  EXPECT_EQ(doubleToHalf(1e-300), 0x0000);
  EXPECT_EQ(doubleToHalf(-1e-310), 0x8000); // a double subnormal
  EXPECT_EQ(doubleToHalf(1e300), 0x7C00);
}

TEST(Bfloat16, KnownBitPatterns) {
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3F80);
  EXPECT_EQ(floatToBfloat16(-2.0f), 0xC000);
  EXPECT_EQ(floatToBfloat16(0.0f), 0x0000);
  EXPECT_EQ(floatToBfloat16(-0.0f), 0x8000);
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x3F808000)), 0x3F80); // tie: even
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x3F818000)), 0x3F82); // tie: even
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x3F808001)), 0x3F81);
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x3F807FFF)), 0x3F80);
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x7F7F0000)), 0x7F7F); // max finite
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x7F7FFFFF)), 0x7F80); // -> inf
  EXPECT_EQ(floatToBfloat16(INFINITY), 0x7F80);
  EXPECT_EQ(floatToBfloat16(-INFINITY), 0xFF80);
  // Subnormals: bf16 shares float's exponent range.
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x00010000)), 0x0001);
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x00008000)), 0x0000); // tie: even
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x00018000)), 0x0002); // tie: even
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x00008001)), 0x0001);
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x007FFFFF)), 0x0080); // -> normal
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x80000001)), 0x8000);
  // NaNs stay NaN, including one whose payload truncation would drop.
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x7FC00000)), 0x7FC0);
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0x7F800001)), 0x7FC0);
  EXPECT_EQ(floatToBfloat16(bitsToFloat(0xFFFFFFFF)), 0xFFFF);

  EXPECT_EQ(bfloat16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(bfloat16ToFloat(0x0001), bitsToFloat(0x00010000));
  EXPECT_EQ(bfloat16ToFloat(0xFF80), -INFINITY);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(0x7FC1)));
  EXPECT_EQ(doubleToBfloat16(1e300), 0x7F80);
  EXPECT_EQ(doubleToBfloat16(1e-300), 0x0000);
  // Just above the 0x3F80/0x3F81 tie, by less than float resolves.
  EXPECT_EQ(doubleToBfloat16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)),
            0x3F81);
}

TEST(Bfloat16, EveryPatternRoundTrips) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    auto bits = static_cast<std::uint16_t>(h);
    float f = bfloat16ToFloat(bits);
    if (std::isnan(f)) {
      EXPECT_EQ(floatToBfloat16(f), bits | 0x0040) << std::hex << h;
      continue;
    }
    ASSERT_EQ(floatToBfloat16(f), bits) << std::hex << h;
    ASSERT_EQ(doubleToBfloat16(f), bits) << std::hex << h;
  }
}

TEST(Half, MatchesExhaustiveFloatReference) {
  // Every float whose low 13 bits sit at the interesting points (just below,
  // at and just above a half-ulp) against a reference built from the
  // neighbouring halves. Catches off-by-one rounding anywhere in the range.
  for (std::uint32_t hi = 0; hi < (1u << 19); ++hi) {
    for (std::uint32_t low : {0x0FFFu, 0x1000u, 0x1001u}) {
      float f = bitsToFloat((hi << 13) | low);
      if (std::isnan(f) || std::isinf(f) || std::fabs(f) >= 65520.0f)
        continue;
      std::uint16_t h = floatToHalf(f);
      // Neither neighbour of the result may be closer to |f|, and on a tie
      // the result must be the even one.
      double a = std::fabs(static_cast<double>(f));
      double got = std::fabs(static_cast<double>(halfToFloat(h)));
      std::uint16_t mag = h & 0x7FFF;
      for (int step : {-1, 1}) {
        int other = mag + step;
        if (other < 0 || other > 0x7BFF)
          continue;
        double alt = halfToFloat(static_cast<std::uint16_t>(other));
        ASSERT_TRUE(
            std::fabs(got - a) < std::fabs(alt - a) ||
            (std::fabs(got - a) == std::fabs(alt - a) && (mag & 1) == 0))
            << std::hex << std::bit_cast<std::uint32_t>(f) << " -> " << h;
      }
    }
  }
}
