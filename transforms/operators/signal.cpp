/// \file
/// Pure expansions of the signal generators of opset 17: the window
/// functions (HannWindow, HammingWindow, BlackmanWindow) and
/// MelWeightMatrix. Their outputs depend on their inputs' values alone —
/// a size, a sample rate, edge frequencies — which are constants once
/// fixed at load (onnx/shape_inputs.h), so each output is computed once at
/// expansion, in double as the operators' definitions do, and copied into
/// place from a constant.

#include "transforms/operators/expansion.h"

#include <cmath>
#include <numbers>

namespace weir::operators {
namespace {

/// The generalized cosine window a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n /
/// N), N the size when periodic, the size - 1 when symmetric.
void expandCosineWindow(ExpansionContext &ctx, double a0, double a1,
                        double a2) {
  const ir::Container &y = ctx.requireOutput("output");
  if (y.shape.size() != 1)
    ctx.fail("the output must be one-dimensional");
  if (!ctx.constantInts("size"))
    ctx.fail("size must be a constant (an input is fixed at load: weir run "
             "--inputs)");
  std::int64_t size = ctx.constantDim(y.shape[0]);
  bool periodic = ctx.intAttr("periodic", 1) != 0;
  double n = double(periodic ? size : size - 1);
  std::vector<double> values;
  for (std::int64_t i = 0; i < size; ++i) {
    double t = n > 0 ? 2.0 * std::numbers::pi * double(i) / n : 0.0;
    values.push_back(a0 - a1 * std::cos(t) + a2 * std::cos(2.0 * t));
  }
  ctx.copyConstant(ctx.addConstant("window", ctx.tensorOf(y.dtype, {size},
                                                          values)),
                   y);
}

void expandHann(ExpansionContext &ctx) {
  expandCosineWindow(ctx, 0.5, 0.5, 0.0);
}
void expandHamming(ExpansionContext &ctx) {
  expandCosineWindow(ctx, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}
void expandBlackman(ExpansionContext &ctx) {
  expandCosineWindow(ctx, 0.42, 0.5, 0.08);
}

/// One scalar constant input.
double scalarInput(ExpansionContext &ctx, const char *name) {
  auto v = ctx.constantReals(name);
  if (!v || v->size() != 1)
    ctx.fail(std::string(name) +
             " must be a constant scalar (an input is fixed at load: weir "
             "run --inputs)");
  return (*v)[0];
}

/// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters
/// whose corners are num_mel_bins + 2 points evenly spaced on the mel
/// scale between the edge frequencies, mapped to spectrogram bins, as the
/// operator's definition computes them.
void expandMelWeightMatrix(ExpansionContext &ctx) {
  const ir::Container &y = ctx.requireOutput("output");
  auto bins = static_cast<std::int64_t>(scalarInput(ctx, "num_mel_bins"));
  auto dftLength = static_cast<std::int64_t>(scalarInput(ctx, "dft_length"));
  double sampleRate = scalarInput(ctx, "sample_rate");
  double lower = scalarInput(ctx, "lower_edge_hertz");
  double upper = scalarInput(ctx, "upper_edge_hertz");
  std::int64_t spectrogram = dftLength / 2 + 1;
  if (bins < 1 || dftLength < 1 || sampleRate <= 0 || lower < 0 ||
      upper <= lower)
    ctx.fail("needs num_mel_bins, dft_length and sample_rate above 0 and "
             "0 <= lower_edge_hertz < upper_edge_hertz");
  if (y.shape.size() != 2 || ctx.constantDim(y.shape[0]) != spectrogram ||
      ctx.constantDim(y.shape[1]) != bins)
    ctx.fail("the output must be [" + std::to_string(spectrogram) + ", " +
             std::to_string(bins) + "]");
  auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  double low = mel(lower), step = (mel(upper) - low) / double(bins + 2);
  std::vector<std::int64_t> corner;
  for (std::int64_t i = 0; i < bins + 2; ++i) {
    double hz = 700.0 * (std::pow(10.0, (double(i) * step + low) / 2595.0) -
                         1.0);
    corner.push_back(static_cast<std::int64_t>(
        std::floor(double(dftLength + 1) * hz / sampleRate)));
  }
  std::vector<double> w(std::size_t(spectrogram * bins), 0.0);
  auto put = [&](std::int64_t j, std::int64_t i, double v) {
    if (j < 0 || j >= spectrogram)
      ctx.fail("a filter's corner falls outside the spectrogram's bins");
    w[std::size_t(j * bins + i)] = v;
  };
  for (std::int64_t i = 0; i < bins; ++i) {
    std::int64_t left = corner[i], center = corner[i + 1],
                 right = corner[i + 2];
    if (center == left)
      put(center, i, 1.0);
    else
      for (std::int64_t j = left; j <= center; ++j)
        put(j, i, double(j - left) / double(center - left));
    for (std::int64_t j = center; j < right; ++j)
      put(j, i, double(right - j) / double(right - center));
  }
  ctx.copyConstant(
      ctx.addConstant("weights", ctx.tensorOf(y.dtype, {spectrogram, bins}, w)),
      y);
}

const ExpansionRegistrar kHann{
    {"HannWindow", "pure", "constant window computed at expansion",
     expandHann},
    true};
const ExpansionRegistrar kHamming{
    {"HammingWindow", "pure", "constant window computed at expansion",
     expandHamming},
    true};
const ExpansionRegistrar kBlackman{
    {"BlackmanWindow", "pure", "constant window computed at expansion",
     expandBlackman},
    true};
const ExpansionRegistrar kMel{
    {"MelWeightMatrix", "pure", "constant filter bank computed at expansion",
     expandMelWeightMatrix},
    true};

} // namespace
} // namespace weir::operators
