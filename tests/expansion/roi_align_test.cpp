// RoiAlign (average mode): the expansion's tent weights against the
// operator's bilinear rule written directly (floor, clamp, four taps), on
// regions inside, across and outside the image's border.

#include "expansion/single_op.h"

#include <cmath>

namespace weir::expansion_testing {
namespace {

/// The operator's definition for one bin, as ONNX Runtime computes it.
double bin(const runtime::Tensor &x, int batch, int c, const double roi[4],
           int ph, int pw, int bh, int bw, int grid, bool halfPixel) {
  const int height = int(x.shape()[2]), width = int(x.shape()[3]);
  const double off = halfPixel ? 0.5 : 0.0;
  double sw = roi[0] - off, sh = roi[1] - off, ew = roi[2] - off,
         eh = roi[3] - off;
  double rw = ew - sw, rh = eh - sh;
  if (!halfPixel) {
    rw = std::max(rw, 1.0);
    rh = std::max(rh, 1.0);
  }
  auto at = [&](int h, int w) {
    return x.getAsDouble(((std::int64_t(batch) * x.shape()[1] + c) * height +
                          h) * width + w);
  };
  double sum = 0;
  for (int iy = 0; iy < grid; ++iy)
    for (int ix = 0; ix < grid; ++ix) {
      double y = sh + ph * rh / bh + (iy + 0.5) * rh / bh / grid;
      double xx = sw + pw * rw / bw + (ix + 0.5) * rw / bw / grid;
      if (y < -1.0 || y > height || xx < -1.0 || xx > width)
        continue;
      y = std::max(y, 0.0);
      xx = std::max(xx, 0.0);
      int yl = int(y), xl = int(xx), yh, xh;
      if (yl >= height - 1) {
        yh = yl = height - 1;
        y = yl;
      } else {
        yh = yl + 1;
      }
      if (xl >= width - 1) {
        xh = xl = width - 1;
        xx = xl;
      } else {
        xh = xl + 1;
      }
      double ly = y - yl, lx = xx - xl, hy = 1 - ly, hx = 1 - lx;
      sum += hy * hx * at(yl, xl) + hy * lx * at(yl, xh) +
             ly * hx * at(yh, xl) + ly * lx * at(yh, xh);
    }
  return sum / (grid * grid);
}

void checkAgainstDefinition(bool halfPixel) {
  const double rois[3][4] = {{0.5, 1.0, 5.5, 4.0},   // inside
                             {-2.0, 3.0, 3.0, 9.5},  // across the border
                             {6.0, -3.0, 9.0, 0.2}}; // partly outside
  Program p = single(
      "RoiAlign",
      {{"output_height", std::int64_t(3)},
       {"output_width", std::int64_t(2)},
       {"sampling_ratio", std::int64_t(2)},
       {"coordinate_transformation_mode",
        std::string(halfPixel ? "half_pixel" : "output_half_pixel")}},
      {{"X", "x", {2, 2, 7, 8}},
       {"rois", "rois", {3, 4}},
       {"batch_indices", "bi", {3}, DType::I64, {1, 0, 1}}},
      {{"Y", "y", {3, 2, 3, 2}}});
  runtime::Tensor x = random({2, 2, 7, 8}, 5);
  runtime::Tensor r(DType::F32, {3, 4});
  for (int k = 0; k < 12; ++k)
    r.setFromDouble(k, rois[k / 4][k % 4]);
  operators::ExpandAllReport report = operators::expandAll(p);
  ASSERT_TRUE(report.skipped.empty()) << report.skipped[0];
  expectValid(p);
  runtime::Tensor y = interp::interpret(p, {{"x", x}, {"rois", r}}).at("y");
  const int batch[3] = {1, 0, 1};
  std::vector<double> want;
  for (int k = 0; k < 3; ++k)
    for (int c = 0; c < 2; ++c)
      for (int ph = 0; ph < 3; ++ph)
        for (int pw = 0; pw < 2; ++pw)
          want.push_back(bin(x, batch[k], c, rois[k], ph, pw, 3, 2, 2, halfPixel));
  expectNear(y, want);
}

TEST(RoiAlignExpansion, HalfPixelMatchesTheBilinearDefinition) {
  checkAgainstDefinition(true);
}

TEST(RoiAlignExpansion, OutputHalfPixelMatchesTheBilinearDefinition) {
  checkAgainstDefinition(false);
}

TEST(RoiAlignExpansion, AdaptiveSamplingAndMaxModeAreRefused) {
  auto refusal = [](Attributes a) {
    Program p = single("RoiAlign", std::move(a),
                       {{"X", "x", {1, 1, 4, 4}},
                        {"rois", "rois", {1, 4}},
                        {"batch_indices", "bi", {1}, DType::I64, {0}}},
                       {{"Y", "y", {1, 1, 1, 1}}});
    operators::ExpandAllReport r = operators::expandAll(p);
    return r.skipped.empty() ? std::string("expanded") : r.skipped[0];
  };
  EXPECT_NE(refusal({}).find("sampling_ratio=0"), std::string::npos);
  EXPECT_NE(refusal({{"sampling_ratio", std::int64_t(1)},
                     {"mode", std::string("max")}})
                .find("mode=max is not supported"),
            std::string::npos);
}

} // namespace
} // namespace weir::expansion_testing
