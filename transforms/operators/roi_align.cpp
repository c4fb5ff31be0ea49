/// \file
/// Pure expansion of RoiAlign (average mode, a fixed sampling_ratio).
/// Each output bin averages G x G bilinear samples of its region; a sample
/// at (y, x) reads row h with weight max(0, 1 - |h - y'|), y' = y clamped
/// to [0, H - 1], and nothing when y lies outside [-1, H] (the same for
/// columns), which is the operator's bilinear rule written as a tent over
/// every row. The sample positions depend on the regions (data), so the
/// weights are maps over (region, bin, sample, row) and (region, bin,
/// sample, column), and the average is two contractions: over the batch
/// (one-hot on batch_indices) and rows, then over samples and columns.
/// Max mode and the adaptive sampling_ratio = 0, whose sample count
/// depends on each region's size, are refused.

#include "transforms/operators/expansion.h"

namespace weir::operators {
namespace {

using ir::Expr;

/// A [bins, grid] table of the sample offsets bin + (i + 0.5) / grid, in
/// units of one bin.
std::string sampleOffsets(ExpansionContext &ctx, ir::DType dtype,
                          std::int64_t bins, std::int64_t grid,
                          const std::string &suffix) {
  std::vector<double> v;
  for (std::int64_t b = 0; b < bins; ++b)
    for (std::int64_t i = 0; i < grid; ++i)
      v.push_back(double(b) + (double(i) + 0.5) / double(grid));
  return ctx.addConstant(suffix, ctx.tensorOf(dtype, {bins, grid}, v));
}

/// w[r, bin, i, p]: the tent weight of pixel p for sample i of bin `bin`
/// of region r along one axis; `lo` and `hi` are the region's columns of
/// rois for that axis.
std::string axisWeights(ExpansionContext &ctx, const ir::Container &x,
                        const ir::Container &rois, std::int64_t lo,
                        std::int64_t hi, std::int64_t bins, std::int64_t grid,
                        std::int64_t pixels, bool halfPixel, double scale,
                        const std::string &axis) {
  const std::int64_t regions = ctx.constantDim(rois.shape[0]);
  std::string w = ctx.addTransient(axis + "_weights", x.dtype,
                                   {Expr(regions), Expr(bins), Expr(grid),
                                    Expr(pixels)});
  std::vector<double> at;
  for (std::int64_t p = 0; p < pixels; ++p)
    at.push_back(double(p));
  std::string position =
      ctx.addConstant(axis + "_pixels", ctx.tensorOf(x.dtype, {pixels}, at));
  std::string offsets = sampleOffsets(ctx, x.dtype, bins, grid, axis + "_offsets");
  auto lit = [](double v) { return ExpansionContext::floatLiteral(v); };
  const std::string shift = lit(halfPixel ? 0.5 : 0.0);
  std::string code = "s = a * " + lit(scale) + " - " + shift + "\n" +
                     "e = b * " + lit(scale) + " - " + shift + "\n" +
                     (halfPixel ? std::string("l = e - s\n")
                                : std::string("l = max(e - s, 1.0)\n")) +
                     "y = s + f * l / " + lit(double(bins)) + "\n" +
                     "c = min(max(y, 0.0), " + lit(double(pixels - 1)) + ")\n" +
                     "w = select(y >= -1.0 && y <= " + lit(double(pixels)) +
                     ", max(0.0, 1.0 - abs(p - c)), 0.0)";
  const Expr r = Expr::symbol("r"), k = Expr::symbol("k"),
             i = Expr::symbol("i"), p = Expr::symbol("p");
  ctx.addMap(axis + "_weights", {"r", "k", "i", "p"},
             {{Expr(0), Expr(regions)},
              {Expr(0), Expr(bins)},
              {Expr(0), Expr(grid)},
              {Expr(0), Expr(pixels)}},
             {{"a", rois.name, {r, Expr(lo)}},
              {"b", rois.name, {r, Expr(hi)}},
              {"f", offsets, {k, i}},
              {"p", position, {p}}},
             code, {{"w", w, {r, k, i, p}}});
  return w;
}

void expandRoiAlign(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &rois = ctx.requireInput("rois");
  const ir::Container &batch = ctx.requireInput("batch_indices");
  const ir::Container &y = ctx.requireOutput("Y");
  if (x.dtype != ir::DType::F32 && x.dtype != ir::DType::F64)
    ctx.fail("X must be float32 or float64");
  if (rois.dtype != x.dtype)
    ctx.fail("rois must have X's dtype");
  if (x.shape.size() != 4 || rois.shape.size() != 2 ||
      batch.shape.size() != 1 || y.shape.size() != 4 ||
      ctx.constantDim(rois.shape[1]) != 4)
    ctx.fail("needs X [N, C, H, W], rois [R, 4], batch_indices [R] and Y "
             "[R, C, output_height, output_width]");
  if (ctx.stringAttr("mode", "avg") != "avg")
    ctx.fail("mode=max is not supported; only avg");
  const std::int64_t grid = ctx.intAttr("sampling_ratio", 0);
  if (grid < 1)
    ctx.fail("sampling_ratio=0 (a sample count per region's size, which is "
             "data) is not supported; give sampling_ratio > 0");
  const std::string defaultMode =
      ctx.library().opsetVersion >= 16 ? "half_pixel" : "output_half_pixel";
  const std::string mode =
      ctx.stringAttr("coordinate_transformation_mode", defaultMode);
  if (mode != "half_pixel" && mode != "output_half_pixel")
    ctx.fail("coordinate_transformation_mode must be half_pixel or "
             "output_half_pixel");
  const bool halfPixel = mode == "half_pixel";
  const double scale = ctx.floatAttr("spatial_scale", 1.0);
  const std::int64_t n = ctx.constantDim(x.shape[0]),
                     channels = ctx.constantDim(x.shape[1]),
                     height = ctx.constantDim(x.shape[2]),
                     width = ctx.constantDim(x.shape[3]),
                     regions = ctx.constantDim(rois.shape[0]),
                     bh = ctx.constantDim(y.shape[2]),
                     bw = ctx.constantDim(y.shape[3]);

  std::string wy = axisWeights(ctx, x, rois, 1, 3, bh, grid, height,
                               halfPixel, scale, "row");
  std::string wx = axisWeights(ctx, x, rois, 0, 2, bw, grid, width,
                               halfPixel, scale, "column");
  const Expr r = Expr::symbol("r"), c = Expr::symbol("c"),
             k = Expr::symbol("k"), i = Expr::symbol("i"),
             h = Expr::symbol("h"),
             w = Expr::symbol("w"), q = Expr::symbol("q"),
             j = Expr::symbol("j"), b = Expr::symbol("b");
  const std::string zero = std::string(ir::dtypeName(x.dtype)) + "(0)";
  // rows[r, c, k, i, w] = sum over b, h of [batch[r] == b] X[b, c, h, w]
  // wy[r, k, i, h].
  std::string rows = ctx.addTransient(
      "rows", x.dtype,
      {Expr(regions), Expr(channels), Expr(bh), Expr(grid), Expr(width)});
  ctx.addMap("rows_zero", {"r", "c", "k", "i", "w"},
             {{Expr(0), Expr(regions)}, {Expr(0), Expr(channels)},
              {Expr(0), Expr(bh)}, {Expr(0), Expr(grid)},
              {Expr(0), Expr(width)}},
             {}, "t = " + zero, {{"t", rows, {r, c, k, i, w}}});
  std::string images = ctx.addIota("images", batch.dtype, n);
  ctx.addMap("rows", {"r", "c", "k", "i", "w", "b", "h"},
             {{Expr(0), Expr(regions)}, {Expr(0), Expr(channels)},
              {Expr(0), Expr(bh)}, {Expr(0), Expr(grid)},
              {Expr(0), Expr(width)}, {Expr(0), Expr(n)},
              {Expr(0), Expr(height)}},
             {{"s", batch.name, {r}},
              {"o", images, {b}},
              {"v", x.name, {b, c, h, w}},
              {"g", wy, {r, k, i, h}}},
             "t = select(s == o, v * g, " + zero + ")",
             {{"t", rows, {r, c, k, i, w}, ir::Wcr::Sum}});
  // Y[r, c, k, j] = sum over i, q, w of rows[r, c, k, i, w] wx[r, j, q, w],
  // divided by the G x G samples.
  ctx.addMap("zero", {"r", "c", "k", "j"}, ExpansionContext::fullRanges(y.shape),
             {}, "t = " + zero, {{"t", y.name, {r, c, k, j}}});
  ctx.addMap("average", {"r", "c", "k", "j", "i", "q", "w"},
             {{Expr(0), Expr(regions)}, {Expr(0), Expr(channels)},
              {Expr(0), Expr(bh)}, {Expr(0), Expr(bw)},
              {Expr(0), Expr(grid)}, {Expr(0), Expr(grid)},
              {Expr(0), Expr(width)}},
             {{"v", rows, {r, c, k, i, w}}, {"g", wx, {r, j, q, w}}},
             "t = v * g / " +
                 ExpansionContext::floatLiteral(double(grid * grid)),
             {{"t", y.name, {r, c, k, j}, ir::Wcr::Sum}});
}

const ExpansionRegistrar kRoiAlign{
    {"RoiAlign", "pure",
     "bilinear tent weights per region, then two contractions (batch and "
     "rows, samples and columns)",
     expandRoiAlign},
    true};

} // namespace
} // namespace weir::operators
