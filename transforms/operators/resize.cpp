/// \file
/// Pure expansion of Resize (and of Upsample, which the importer upgrades
/// to it): nearest, linear and cubic interpolation, every coordinate
/// transformation of ONNX's reference, exclude_outside and
/// tf_crop_and_resize's extrapolation.
///
/// Interpolation is separable: ONNX's reference interpolates the last axis
/// first and each earlier axis over the results, and so does this
/// expansion, one step per resized axis. A step is two maps:
/// - the weights W [out, in] of the axis: for output position i, the
///   source coordinate x (from i, the scale and the lengths), its taps
///   (the n = 2 or 4 positions nearest x, preferring the left, clamped to
///   the edge as the reference's edge padding does) and their coefficients;
///   W[i, j] sums the coefficients of the taps that land on j;
/// - a contraction T[.., i, ..] = sum_j W[i, j] * S[.., j, ..],
///   Sum-resolved.
/// The scale may be data (a graph input): the weight tasklet reads it, so
/// the program is exact for the scale that arrives. The contraction is
/// dense in the input's axis (tasklets cannot index with data); revisit
/// when the IR gains indirect memlets.

#include "transforms/operators/expansion.h"

#include <cmath>
#include <cstring>

namespace weir::operators {
namespace {

using ir::Expr;

/// Contraction visits past which the expansion refuses.
constexpr double kMaxVisits = 1e9;

std::string f64(double v) { return ExpansionContext::floatLiteral(v); }

struct ResizeMode {
  std::string mode, transform, nearest;
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0;
};

/// Tasklet lines that set `x`, the source coordinate of output position
/// `o` (f64), from the scale `s` and, for tf_crop_and_resize, the roi's
/// start `a` and end `e`. `width` is the reference's output width, the
/// scale times the input length (not the rounded output length).
std::string coordinate(ExpansionContext &ctx, const std::string &transform,
                       std::int64_t in) {
  std::string last = f64(double(in - 1));
  std::string width = "w = s * " + f64(double(in)) + "\n";
  if (transform == "half_pixel")
    return "x = (o + 0.5) / s - 0.5\n";
  if (transform == "asymmetric")
    return "x = o / s\n";
  if (transform == "tf_half_pixel_for_nn")
    return "x = (o + 0.5) / s\n";
  if (transform == "pytorch_half_pixel")
    return width + "x = select(w == 1.0, -0.5, (o + 0.5) / s - 0.5)\n";
  if (transform == "align_corners")
    return width + "x = select(w == 1.0, 0.0, o * " + last + " / (w - 1.0))\n";
  if (transform == "tf_crop_and_resize")
    return width + "x = select(w == 1.0, (e - a) * " + last +
           " / 2.0, o * (e - a) * " + last + " / (w - 1.0)) + a * " + last +
           "\n";
  ctx.fail("coordinate_transformation_mode '" + transform +
           "' is not supported");
}

/// Tasklet lines that set c0 .. c{n-1}, the coefficients of the taps at
/// b + t - (n / 2 - 1), from the ratio r in (0, 1]; returns n.
std::size_t coefficients(ExpansionContext &ctx, const ResizeMode &m,
                         std::string &code) {
  if (m.mode == "linear") {
    code += "c0 = 1.0 - r\nc1 = r\n";
    return 2;
  }
  if (m.mode == "cubic") {
    std::string a = f64(m.cubicA);
    auto outer = [&](const std::string &d) { // d = distance + 1, in [1, 2]
      return "((" + a + " * " + d + " - 5.0 * " + a + ") * " + d + " + 8.0 * " +
             a + ") * " + d + " - 4.0 * " + a;
    };
    auto inner = [&](const std::string &d) { // d in [0, 1]
      return "((" + a + " + 2.0) * " + d + " - (" + a + " + 3.0)) * " + d +
             " * " + d + " + 1.0";
    };
    code += "q = 1.0 - r\n";
    code += "c0 = " + outer("(r + 1.0)") + "\n";
    code += "c1 = " + inner("r") + "\n";
    code += "c2 = " + inner("q") + "\n";
    code += "c3 = " + outer("(q + 1.0)") + "\n";
    return 4;
  }
  if (m.mode != "nearest")
    ctx.fail("mode '" + m.mode + "' is not nearest, linear or cubic");
  // The reference takes the right tap for a whole coordinate (r = 1).
  std::string right;
  if (m.nearest == "round_prefer_floor")
    right = "r > 0.5";
  else if (m.nearest == "round_prefer_ceil")
    right = "r >= 0.5";
  else if (m.nearest == "floor")
    right = "r == 1.0";
  else if (m.nearest == "ceil")
    right = "r > 0.0";
  else
    ctx.fail("nearest_mode '" + m.nearest + "' is not supported");
  code +=
      "g = " + right + "\nc0 = select(g, 0.0, 1.0)\nc1 = select(g, 1.0, 0.0)\n";
  return 2;
}

/// Where a per-axis value (a scale, a roi bound) comes from: a literal, or
/// element `at` of a data container.
struct AxisValue {
  std::optional<double> constant;
  std::string container;
  std::int64_t at = 0;
};

AxisValue axisValue(ExpansionContext &ctx, const ir::Container *c,
                    std::string_view connector, std::int64_t at) {
  if (c->shape.size() != 1 || ctx.constantDim(c->shape[0]) <= at)
    ctx.fail("'" + std::string(connector) + "' has no value " +
             std::to_string(at));
  if (c->constant) {
    std::size_t size = ir::dtypeSize(c->dtype);
    if (c->constant->size() < std::size_t(at + 1) * size)
      ctx.fail("'" + std::string(connector) + "' holds too few values");
    const std::byte *p = c->constant->data() + std::size_t(at) * size;
    double v = 0;
    if (c->dtype == ir::DType::F32) {
      float f;
      std::memcpy(&f, p, 4);
      v = f;
    } else if (c->dtype == ir::DType::F64) {
      std::memcpy(&v, p, 8);
    } else {
      ctx.fail("'" + std::string(connector) + "' must be float32 or float64");
    }
    return {v, "", at};
  }
  if (c->dtype != ir::DType::F32 && c->dtype != ir::DType::F64)
    ctx.fail("'" + std::string(connector) + "' must be float32 or float64");
  return {std::nullopt, c->name, at};
}

void expandResize(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &y = ctx.requireOutput("Y");
  if (!ir::isFloat(x.dtype))
    ctx.fail("resizing " + std::string(ir::dtypeName(x.dtype)) +
             " is not supported");
  std::size_t rank = x.shape.size();
  if (y.shape.size() != rank)
    ctx.fail("the output's rank differs from the input's");
  ResizeMode m{ctx.stringAttr("mode", "nearest"),
               ctx.stringAttr("coordinate_transformation_mode", "half_pixel"),
               ctx.stringAttr("nearest_mode", "round_prefer_floor"),
               ctx.floatAttr("cubic_coeff_a", -0.75),
               ctx.intAttr("exclude_outside", 0) != 0,
               ctx.floatAttr("extrapolation_value", 0)};
  bool crop = m.transform == "tf_crop_and_resize";
  const ir::Container *scales = ctx.input("scales");
  if (scales && scales->shape.size() == 1 && scales->shape[0].asConstant() == 0)
    scales = nullptr; // opset 13: an empty scales beside sizes
  const ir::Container *roi = crop ? ctx.input("roi") : nullptr;
  if (crop && !roi)
    ctx.fail("tf_crop_and_resize needs a roi");
  auto numel = [&](const std::vector<Expr> &shape) {
    double n = 1;
    for (const Expr &d : shape)
      n *= double(ctx.constantDim(d));
    return n;
  };

  if (scales && (scales->shape.size() != 1 ||
                 ctx.constantDim(scales->shape[0]) != std::int64_t(rank)))
    ctx.fail("scales must hold one value per axis, " + std::to_string(rank));
  if (roi && (roi->shape.size() != 1 ||
              ctx.constantDim(roi->shape[0]) != 2 * std::int64_t(rank)))
    ctx.fail("roi must hold a start and an end per axis, " +
             std::to_string(2 * rank) + " values");
  // The axes to resize, last first; an axis resized by exactly 1 (or of
  // one element kept at one) maps each element onto itself.
  std::vector<std::size_t> axes;
  for (std::size_t d = rank; d-- > 0;) {
    std::int64_t in = ctx.constantDim(x.shape[d]);
    std::int64_t out = ctx.constantDim(y.shape[d]);
    std::optional<double> s =
        scales ? axisValue(ctx, scales, "scales", std::int64_t(d)).constant
               : std::optional<double>(double(out) / double(in));
    bool identity =
        !crop &&
        ((in == out && s == 1.0 && m.transform != "tf_half_pixel_for_nn") ||
         (in == 1 && out == 1));
    if (!identity)
      axes.push_back(d);
  }
  auto params = ExpansionContext::params(rank);
  auto idx = ExpansionContext::indices(params);
  std::string zero = std::string(ir::dtypeName(x.dtype)) + "(0)";
  if (axes.empty()) {
    ctx.addMap("copy", params, ExpansionContext::fullRanges(y.shape),
               {{"x", x.name, idx}}, "y = x", {{"y", y.name, idx}});
    return;
  }

  std::string source = x.name;
  std::vector<Expr> shape = x.shape;
  double visits = 0;
  for (std::size_t step = 0; step < axes.size(); ++step) {
    std::size_t d = axes[step];
    std::string ax = std::to_string(d);
    std::int64_t in = ctx.constantDim(x.shape[d]);
    std::int64_t out = ctx.constantDim(y.shape[d]);
    shape[d] = y.shape[d];
    visits += numel(shape) * double(in);
    if (visits > kMaxVisits)
      ctx.fail("a resize this large is too costly as a dense contraction");

    // The weights of axis d.
    std::vector<ir::MappedInput> inputs{
        {"p",
         ctx.addIota("out" + ax, ir::DType::I64, out),
         {Expr::symbol("i")}},
        {"k", ctx.addIota("in" + ax, ir::DType::I64, in), {Expr::symbol("j")}}};
    std::string code = "o = f64(p)\n";
    auto read = [&](const std::string &name, const AxisValue &v) {
      if (v.constant) {
        // A literal alone would be f32; directly inside a cast it is f64.
        double c = *v.constant;
        code += name + " = " + (c < 0 ? "0.0 - " : "") + "f64(" +
                ExpansionContext::floatLiteral(std::fabs(c)) + ")\n";
      } else {
        inputs.push_back({name + "_in", v.container, {Expr(v.at)}});
        code += name + " = f64(" + name + "_in)\n";
      }
    };
    read("s", scales ? axisValue(ctx, scales, "scales", std::int64_t(d))
                     : AxisValue{double(out) / double(in), "", 0});
    if (crop) {
      read("a", axisValue(ctx, roi, "roi", std::int64_t(d)));
      read("e", axisValue(ctx, roi, "roi", std::int64_t(rank + d)));
    }
    code += coordinate(ctx, m.transform, in);
    code += "b = ceil(x) - 1.0\nr = x - b\n";
    std::size_t n = coefficients(ctx, m, code);
    std::string last = f64(double(in - 1));
    std::string sum = "0.0", weight = "0.0";
    for (std::size_t t = 0; t < n; ++t) {
      std::string ts = std::to_string(t);
      std::string tap = "b + " + f64(double(t) - double(n / 2 - 1));
      code += "u" + ts + " = " + tap + "\n";
      code += "h" + ts + " = min(max(u" + ts + ", 0.0), " + last + ")\n";
      if (m.excludeOutside) {
        code += "m" + ts + " = select(u" + ts + " < 0.0 || u" + ts + " > " +
                last + ", 0.0, c" + ts + ")\n";
        sum += " + m" + ts;
      }
    }
    if (m.excludeOutside)
      code += "z = " + sum + "\n";
    for (std::size_t t = 0; t < n; ++t) {
      std::string ts = std::to_string(t);
      std::string c = m.excludeOutside ? "m" + ts + " / z" : "c" + ts;
      weight += " + select(h" + ts + " == f64(k), " + c + ", 0.0)";
    }
    if (crop)
      code += "v = " + std::string(ir::dtypeName(x.dtype)) +
              "(select(x < 0.0 || x > " + last + ", 0.0, " + weight + "))\n";
    else
      code +=
          "v = " + std::string(ir::dtypeName(x.dtype)) + "(" + weight + ")\n";
    std::string w =
        ctx.addTransient("weights" + ax, x.dtype, {Expr(out), Expr(in)});
    ctx.addMap(
        "weights" + ax, {"i", "j"},
        {ir::Range(Expr(0), Expr(out)), ir::Range(Expr(0), Expr(in))}, inputs,
        code, {{"v", w, {Expr::symbol("i"), Expr::symbol("j")}, std::nullopt}});
    std::string outside;
    if (crop) {
      // Where the coordinate leaves the input, the output is the
      // extrapolation value: a flag per output position, from the same
      // coordinate lines as the weights.
      outside = ctx.addTransient("outside" + ax, x.dtype, {Expr(out)});
      std::vector<ir::MappedInput> flagInputs;
      for (const ir::MappedInput &mi : inputs)
        if (mi.connector != "k")
          flagInputs.push_back(mi);
      std::string flagCode = code.substr(0, code.find("b = ceil(x)"));
      flagCode += "f = select(x < 0.0 || x > " + last + ", " +
                  std::string(ir::dtypeName(x.dtype)) + "(1), " + zero + ")\n";
      ctx.addMap("outside" + ax, {"i"}, {ir::Range(Expr(0), Expr(out))},
                 flagInputs, flagCode,
                 {{"f", outside, {Expr::symbol("i")}, std::nullopt}});
    }

    // The contraction over the input axis.
    bool lastStep = step + 1 == axes.size();
    std::string target = lastStep && !crop
                             ? y.name
                             : ctx.addTransient("axis" + ax, x.dtype, shape);
    ctx.addMap("init" + ax, params, ExpansionContext::fullRanges(shape), {},
               "v = " + zero, {{"v", target, idx}});
    std::vector<std::string> all = params;
    all.push_back("j");
    std::vector<ir::Range> ranges = ExpansionContext::fullRanges(shape);
    ranges.emplace_back(Expr(0), Expr(in));
    std::vector<Expr> from = idx;
    from[d] = Expr::symbol("j");
    ctx.addMap("interpolate" + ax, all, ranges,
               {{"w", w, {idx[d], Expr::symbol("j")}}, {"s", source, from}},
               "v = w * s", {{"v", target, idx, ir::Wcr::Sum}});
    if (crop) {
      std::string extrapolated =
          lastStep ? y.name : ctx.addTransient("cropped" + ax, x.dtype, shape);
      ctx.addMap("extrapolate" + ax, params,
                 ExpansionContext::fullRanges(shape),
                 {{"v", target, idx}, {"f", outside, {idx[d]}}},
                 "y = select(f > " + zero + ", " +
                     std::string(ir::dtypeName(x.dtype)) + "(" +
                     f64(m.extrapolation) + "), v)",
                 {{"y", extrapolated, idx}});
      target = extrapolated;
    }
    source = target;
  }
}

const ExpansionRegistrar kResize{
    {"Resize", "pure",
     "separable: per axis, interpolation weights, then a dense contraction",
     expandResize},
    true};

} // namespace
} // namespace weir::operators
