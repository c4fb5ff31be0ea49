/// \file
/// Pure expansions of DFT and STFT (opset 17). DFT: the transform along `axis` as a
/// contraction with twiddle factors, constant cosine and sine tables
/// [outputs, N] computed once at expansion (in double, stored in the
/// input's type):
///   forward: y[k] = sum_n x[n] (cos t - i sin t),  t = 2 pi k n / N
///   inverse: y[k] = (1 / N) sum_n x[n] (cos t + i sin t)
/// The input's last axis holds the real part, or the real and imaginary
/// parts; the output's holds both. onesided keeps the first N / 2 + 1
/// frequencies. A dft_length input (padding or truncating the signal) is
/// not supported yet.
/// STFT: the same contraction over each frame of the signal,
///   y[b, f, k] = sum_n x[b, f * step + n] w[n] e^{-i 2 pi k n / L},
/// with frame_step and frame_length constants (inputs fixed at load,
/// onnx/shape_inputs.h) and the window, when given, read as data.

#include "transforms/operators/expansion.h"

#include <cmath>
#include <numbers>

namespace weir::operators {
namespace {

using ir::Expr;

/// A constant [rows, n] table of f(k, j) in `dtype` (F32 or F64).
std::string table(ExpansionContext &ctx, const std::string &suffix,
                  ir::DType dtype, std::int64_t rows, std::int64_t n,
                  double (*f)(double)) {
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(rows * n));
  for (std::int64_t k = 0; k < rows; ++k)
    for (std::int64_t j = 0; j < n; ++j)
      // The angle reduced modulo n first, so large products stay exact.
      values.push_back(
          f(2.0 * std::numbers::pi * double((k * j) % n) / double(n)));
  return ctx.addConstant(suffix, ctx.tensorOf(dtype, {rows, n}, values));
}

double cosine(double t) { return std::cos(t); }
double sine(double t) { return std::sin(t); }

void expandDft(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &y = ctx.requireOutput("output");
  if (ctx.input("dft_length"))
    ctx.fail("a dft_length input is not supported");
  if (x.dtype != ir::DType::F32 && x.dtype != ir::DType::F64)
    ctx.fail("the input must be float32 or float64");
  std::size_t rank = x.shape.size();
  if (rank < 3 || y.shape.size() != rank)
    ctx.fail("the input must be [batch, ..., N, ..., 1 or 2]");
  std::int64_t parts = ctx.constantDim(x.shape[rank - 1]);
  if ((parts != 1 && parts != 2) || ctx.constantDim(y.shape[rank - 1]) != 2)
    ctx.fail("the last axis must hold a real or complex value");
  std::int64_t axis = ctx.intAttr("axis", 1);
  if (axis < 1 || axis >= std::int64_t(rank) - 1)
    ctx.fail("axis must name a signal axis, between the batch and the last");
  auto a = static_cast<std::size_t>(axis);
  bool inverse = ctx.intAttr("inverse", 0) != 0;
  bool onesided = ctx.intAttr("onesided", 0) != 0;
  if (inverse && onesided)
    ctx.fail("an inverse one-sided transform is not supported");
  std::int64_t n = ctx.constantDim(x.shape[a]);
  std::int64_t outputs = onesided ? n / 2 + 1 : n;
  if (ctx.constantDim(y.shape[a]) != outputs)
    ctx.fail("the output's signal axis should hold " + std::to_string(outputs));

  std::string cos = table(ctx, "cos", x.dtype, outputs, n, cosine);
  std::string sin = table(ctx, "sin", x.dtype, outputs, n, sine);
  auto params = ExpansionContext::params(rank - 1);
  auto idx = ExpansionContext::indices(params);
  std::vector<ir::Expr> shape(y.shape.begin(), y.shape.end() - 1);
  auto at = [&](std::vector<Expr> i, std::int64_t part) {
    i.push_back(Expr(part));
    return i;
  };
  std::string zero = std::string(ir::dtypeName(x.dtype)) + "(0)";
  ctx.addMap("init", params, ExpansionContext::fullRanges(shape), {},
             "re = " + zero + "\nim = " + zero,
             {{"re", y.name, at(idx, 0)}, {"im", y.name, at(idx, 1)}});
  std::vector<std::string> all = params;
  all.push_back("j");
  auto ranges = ExpansionContext::fullRanges(shape);
  ranges.emplace_back(Expr(0), Expr(n));
  std::vector<Expr> from = idx;
  from[a] = Expr::symbol("j");
  std::vector<ir::MappedInput> in{{"xr", x.name, at(from, 0)},
                                  {"c", cos, {idx[a], Expr::symbol("j")}},
                                  {"s", sin, {idx[a], Expr::symbol("j")}}};
  std::string xi = "0.0";
  if (parts == 2) {
    in.push_back({"xi", x.name, at(from, 1)});
    xi = "xi";
  }
  // e^{-it} forward, e^{+it} inverse (scaled by 1/N).
  std::string scale =
      inverse ? " / " + ExpansionContext::floatLiteral(double(n)) : "";
  std::string code = "re = (xr * c " + std::string(inverse ? "-" : "+") + " " +
                     xi + " * s)" + scale + "\nim = (" + xi + " * c " +
                     std::string(inverse ? "+" : "-") + " xr * s)" + scale;
  ctx.addMap("transform", all, ranges, in, code,
             {{"re", y.name, at(idx, 0), ir::Wcr::Sum},
              {"im", y.name, at(idx, 1), ir::Wcr::Sum}});
}

void expandStft(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("signal");
  const ir::Container &y = ctx.requireOutput("output");
  if (x.dtype != ir::DType::F32 && x.dtype != ir::DType::F64)
    ctx.fail("the signal must be float32 or float64");
  if (x.shape.size() != 3 || y.shape.size() != 4)
    ctx.fail("the signal must be [batch, length, 1 or 2]");
  std::int64_t parts = ctx.constantDim(x.shape[2]);
  if (parts != 1 && parts != 2)
    ctx.fail("the signal's last axis must hold a real or complex value");
  auto step = ctx.constantInts("frame_step");
  if (!step || step->size() != 1 || (*step)[0] < 1)
    ctx.fail("frame_step must be a positive constant (an input is fixed at "
             "load: weir run --inputs)");
  const ir::Container *window = ctx.input("window");
  std::int64_t length = 0;
  if (auto l = ctx.constantInts("frame_length"); l && l->size() == 1)
    length = (*l)[0];
  else if (ctx.input("frame_length"))
    ctx.fail("frame_length must be a constant (an input is fixed at load: "
             "weir run --inputs)");
  if (window) {
    if (window->shape.size() != 1)
      ctx.fail("the window must be one-dimensional");
    std::int64_t w = ctx.constantDim(window->shape[0]);
    if (length != 0 && length != w)
      ctx.fail("frame_length " + std::to_string(length) +
               " differs from the window's length " + std::to_string(w));
    length = w;
  }
  if (length < 1)
    ctx.fail("the frame length must be given, by frame_length or a window");
  bool onesided = ctx.intAttr("onesided", 1) != 0;
  std::int64_t bins = onesided ? length / 2 + 1 : length;
  std::int64_t frames = ctx.constantDim(y.shape[1]);
  if (ctx.constantDim(y.shape[2]) != bins || ctx.constantDim(y.shape[3]) != 2 ||
      (frames - 1) * (*step)[0] + length > ctx.constantDim(x.shape[1]))
    ctx.fail("the output must be [batch, frames, " + std::to_string(bins) +
             ", 2] with every frame inside the signal");

  std::string cos = table(ctx, "cos", x.dtype, bins, length, cosine);
  std::string sin = table(ctx, "sin", x.dtype, bins, length, sine);
  std::vector<std::string> params{"b", "f", "k"};
  auto idx = ExpansionContext::indices(params);
  auto at = [](std::vector<Expr> i, std::int64_t part) {
    i.push_back(Expr(part));
    return i;
  };
  std::vector<Expr> shape(y.shape.begin(), y.shape.end() - 1);
  std::string zero = std::string(ir::dtypeName(x.dtype)) + "(0)";
  ctx.addMap("init", params, ExpansionContext::fullRanges(shape), {},
             "re = " + zero + "\nim = " + zero,
             {{"re", y.name, at(idx, 0)}, {"im", y.name, at(idx, 1)}});
  std::vector<std::string> all{"b", "f", "k", "n"};
  auto ranges = ExpansionContext::fullRanges(shape);
  ranges.emplace_back(Expr(0), Expr(length));
  const Expr b = Expr::symbol("b"), f = Expr::symbol("f"),
             k = Expr::symbol("k"), n = Expr::symbol("n");
  const Expr sample = f * Expr((*step)[0]) + n;
  std::vector<ir::MappedInput> in{{"xr", x.name, {b, sample, Expr(0)}},
                                  {"c", cos, {k, n}},
                                  {"s", sin, {k, n}}};
  std::string xi = "0.0", w = "";
  if (parts == 2) {
    in.push_back({"xi", x.name, {b, sample, Expr(1)}});
    xi = "xi";
  }
  if (window) {
    in.push_back({"w", window->name, {n}});
    w = " * w";
  }
  ctx.addMap("transform", all, ranges, in,
             "re = (xr * c + " + xi + " * s)" + w + "\nim = (" + xi +
                 " * c - xr * s)" + w,
             {{"re", y.name, at(idx, 0), ir::Wcr::Sum},
              {"im", y.name, at(idx, 1), ir::Wcr::Sum}});
}

const ExpansionRegistrar kDft{
    {"DFT", "pure", "contraction with constant cosine and sine tables",
     expandDft},
    true};
const ExpansionRegistrar kStft{
    {"STFT", "pure",
     "contraction of each frame with constant cosine and sine tables",
     expandStft},
    true};

} // namespace
} // namespace weir::operators
