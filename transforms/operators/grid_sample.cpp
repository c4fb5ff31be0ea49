/// \file
/// Pure expansion of GridSample (2-D; bilinear, nearest and bicubic; zeros,
/// border and reflection padding; align_corners), with PyTorch's
/// grid_sampler semantics, which ONNX adopted. The sampling positions are
/// data, and tasklets cannot index with data, so it is a one-hot
/// contraction: every output position meets every input position, whose
/// weight is the product of a row weight and a column weight; each sums
/// the coefficients of the taps (2 bilinear, 1 nearest, 4 bicubic) that
/// land on it after the padding mode moved them, a tap outside the input
/// counting nothing. Work is the output's size times the input's plane.

#include "transforms/operators/expansion.h"

namespace weir::operators {
namespace {

using ir::Expr;

/// Contraction visits past which the expansion refuses.
constexpr double kMaxVisits = 1e9;

std::string lit(double v) { return ExpansionContext::floatLiteral(v); }

struct Sampling {
  std::string mode, padding;
  bool alignCorners = false;
};

/// Lines that apply the padding mode to coordinate `v` of an axis of
/// `size` positions, into `out` (PyTorch's compute_coordinates).
std::string padded(const Sampling &s, const std::string &v,
                   const std::string &out, std::int64_t size,
                   const std::string &tag) {
  std::string last = lit(double(size - 1));
  if (s.padding == "border")
    return out + " = min(max(" + v + ", 0.0), " + last + ")\n";
  if (s.padding != "reflection")
    return out + " = " + v + "\n";
  // Reflect over [0, size - 1] (align_corners) or [-0.5, size - 0.5],
  // then clip.
  double low = s.alignCorners ? 0.0 : -0.5;
  double span = s.alignCorners ? double(size - 1) : double(size);
  if (span <= 0)
    return out + " = 0.0\n";
  std::string d = "d" + tag, e = "e" + tag, f = "f" + tag, r = "r" + tag;
  return d + " = abs(" + v + " - " + lit(low) + ")\n" + f + " = floor(" + d +
         " / " + lit(span) + ")\n" + e + " = " + d + " - " + lit(span) + " * " +
         f + "\n" + r + " = select(" + f + " - 2.0 * floor(" + f +
         " / 2.0) == 0.0, " + e + " + " + lit(low) + ", " + lit(span) + " - " +
         e + " + " + lit(low) + ")\n" + out + " = min(max(" + r + ", 0.0), " +
         last + ")\n";
}

/// Lines that set `w<axis>`, the weight of position `p<axis>` (f32) along
/// an axis of `size` positions, for the unnormalized coordinate
/// `c<axis>`.
std::string axisWeight(const Sampling &s, const std::string &axis,
                       std::int64_t size) {
  std::string c = "c" + axis, p = "p" + axis, w = "w" + axis;
  std::string last = lit(double(size - 1));
  auto inside = [&](const std::string &t) {
    return "(" + t + " >= 0.0 && " + t + " <= " + last + ")";
  };
  std::string code;
  if (s.mode == "bicubic") {
    // Taps at floor(c) - 1 .. + 2 on the raw coordinate; each tap moved
    // by the padding mode, then truncated as PyTorch's bounded read does.
    code += "b" + axis + " = floor(" + c + ")\nt" + axis + " = " + c + " - b" +
            axis + "\n";
    std::string a = lit(-0.75);
    auto near = [&](const std::string &x) {
      return "((" + a + " + 2.0) * " + x + " - (" + a + " + 3.0)) * " + x +
             " * " + x + " + 1.0";
    };
    auto far = [&](const std::string &x) {
      return "((" + a + " * " + x + " - 5.0 * " + a + ") * " + x + " + 8.0 * " +
             a + ") * " + x + " - 4.0 * " + a;
    };
    std::string t = "t" + axis;
    std::vector<std::string> coeff{far("(" + t + " + 1.0)"), near(t),
                                   near("(1.0 - " + t + ")"),
                                   far("(2.0 - " + t + ")")};
    code += w + " = 0.0\n";
    for (int k = 0; k < 4; ++k) {
      std::string ks = axis + std::to_string(k);
      code += "u" + ks + " = b" + axis + " + " + lit(double(k - 1)) + "\n";
      code += padded(s, "u" + ks, "m" + ks, size, ks);
      code += "n" + ks + " = f32(i64(m" + ks + "))\n";
      code += w + " = " + w + " + select(" + inside("m" + ks) + " && n" + ks +
              " == " + p + ", " + coeff[std::size_t(k)] + ", 0.0)\n";
    }
    return code;
  }
  code += padded(s, c, "m" + axis, size, axis);
  std::string m = "m" + axis;
  if (s.mode == "nearest") {
    code += "n" + axis + " = round(" + m + ")\n";
    code += w + " = select(" + inside("n" + axis) + " && n" + axis +
            " == " + p + ", 1.0, 0.0)\n";
    return code;
  }
  code += "b" + axis + " = floor(" + m + ")\ng" + axis + " = b" + axis +
          " + 1.0\nt" + axis + " = " + m + " - b" + axis + "\n";
  code += w + " = select(" + inside("b" + axis) + " && b" + axis + " == " + p +
          ", 1.0 - t" + axis + ", 0.0) + select(" + inside("g" + axis) +
          " && g" + axis + " == " + p + ", t" + axis + ", 0.0)\n";
  return code;
}

void expandGridSample(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &grid = ctx.requireInput("grid");
  const ir::Container &y = ctx.requireOutput("Y");
  if (x.dtype != ir::DType::F32 || grid.dtype != ir::DType::F32)
    ctx.fail("X and grid must be float32");
  if (x.shape.size() != 4 || grid.shape.size() != 4 || y.shape.size() != 4)
    ctx.fail("only 2-D sampling (X [N, C, H, W], grid [N, H', W', 2]) is "
             "supported");
  if (ctx.constantDim(grid.shape[3]) != 2)
    ctx.fail("the grid's last dimension must hold (x, y)");
  for (std::size_t d : {0, 2, 3})
    if (ctx.constantDim(y.shape[d]) !=
        ctx.constantDim(d == 0 ? x.shape[0] : grid.shape[d - 1]))
      ctx.fail("Y must be [N, C, H', W'] for X [N, C, H, W] and grid "
               "[N, H', W', 2]");
  if (ctx.constantDim(grid.shape[0]) != ctx.constantDim(x.shape[0]) ||
      ctx.constantDim(y.shape[1]) != ctx.constantDim(x.shape[1]))
    ctx.fail("X, grid and Y disagree on the batch or the channels");
  Sampling s{ctx.stringAttr("mode", "bilinear"),
             ctx.stringAttr("padding_mode", "zeros"),
             ctx.intAttr("align_corners", 0) != 0};
  if (s.mode != "bilinear" && s.mode != "nearest" && s.mode != "bicubic")
    ctx.fail("mode '" + s.mode + "' is not bilinear, nearest or bicubic");
  if (s.padding != "zeros" && s.padding != "border" &&
      s.padding != "reflection")
    ctx.fail("padding_mode '" + s.padding +
             "' is not zeros, border or "
             "reflection");
  std::int64_t h = ctx.constantDim(x.shape[2]), w = ctx.constantDim(x.shape[3]);
  double visits = double(h) * double(w);
  for (const Expr &d : y.shape)
    visits *= double(ctx.constantDim(d));
  if (visits > kMaxVisits)
    ctx.fail("a grid sample this large is too costly as a one-hot "
             "contraction");

  auto params = ExpansionContext::params(4, "o");
  auto idx = ExpansionContext::indices(params);
  ctx.addMap("init", params, ExpansionContext::fullRanges(y.shape), {},
             "v = f32(0)", {{"v", y.name, idx}});
  std::vector<std::string> all = params;
  all.push_back("r");
  all.push_back("q");
  auto ranges = ExpansionContext::fullRanges(y.shape);
  ranges.emplace_back(Expr(0), Expr(h));
  ranges.emplace_back(Expr(0), Expr(w));
  Expr r = Expr::symbol("r"), q = Expr::symbol("q");
  // Unnormalized coordinates: x along W, y along H.
  auto unnormalize = [&](const std::string &g, std::int64_t size) {
    return s.alignCorners
               ? "(" + g + " + 1.0) / 2.0 * " + lit(double(size - 1))
               : "((" + g + " + 1.0) * " + lit(double(size)) + " - 1.0) / 2.0";
  };
  std::string code = "cx = " + unnormalize("sx", w) +
                     "\ncy = " + unnormalize("sy", h) +
                     "\npx = f32(jx)\npy = f32(jy)\n";
  code += axisWeight(s, "x", w) + axisWeight(s, "y", h);
  code += "v = wx * wy * a\n";
  ctx.addMap("sample", all, ranges,
             {{"sx", grid.name, {idx[0], idx[2], idx[3], Expr(0)}},
              {"sy", grid.name, {idx[0], idx[2], idx[3], Expr(1)}},
              {"jx", ctx.addIota("columns", ir::DType::I64, w), {q}},
              {"jy", ctx.addIota("rows", ir::DType::I64, h), {r}},
              {"a", x.name, {idx[0], idx[1], r, q}}},
             code, {{"v", y.name, idx, ir::Wcr::Sum}});
}

const ExpansionRegistrar kGridSample{
    {"GridSample", "pure",
     "one-hot contraction over the input plane with per-axis tap weights",
     expandGridSample},
    true};

} // namespace
} // namespace weir::operators
