// The signal operators of opset 17 whose sizes come from input values
// (window functions, STFT), training-mode BatchNormalization and
// MaxUnpool: expanded, validated and run on the interpreter against values
// computed here from the operators' definitions. Their ONNX node tests run
// in the conformance suite as well.

#include "expansion/single_op.h"

#include <cmath>
#include <numbers>

namespace weir::expansion_testing {
namespace {

runtime::Tensor expandAndRun(Program p, const interp::TensorMap &inputs,
                             const std::string &output) {
  operators::ExpandAllReport r = operators::expandAll(p);
  EXPECT_TRUE(r.skipped.empty()) << (r.skipped.empty() ? "" : r.skipped[0]);
  expectValid(p);
  return interp::interpret(p, inputs).at(output);
}

std::string refusal(Program p) {
  operators::ExpandAllReport r = operators::expandAll(p);
  return r.skipped.empty() ? "expanded" : r.skipped[0];
}

Program window(const std::string &op, std::int64_t size, bool periodic,
               bool constantSize = true) {
  Arg s{"size", "size", {}, DType::I64};
  if (constantSize)
    s.constant = {size};
  return single(op, {{"periodic", std::int64_t(periodic)}}, {s},
                {{"output", "y", {size}}});
}

TEST(SignalExpansion, WindowsHaveTheirDefinitionsValues) {
  expectNear(expandAndRun(window("HannWindow", 4, true), {}, "y"),
             {0, 0.5, 1, 0.5});
  expectNear(expandAndRun(window("HannWindow", 5, false), {}, "y"),
             {0, 0.5, 1, 0.5, 0});
  // Hamming: a0 = 25/46, so the ends are 4/46.
  expectNear(expandAndRun(window("HammingWindow", 3, false), {}, "y"),
             {4.0 / 46, 1, 4.0 / 46});
  // Blackman: 0.42 - 0.5 cos t + 0.08 cos 2t.
  expectNear(expandAndRun(window("BlackmanWindow", 4, true), {}, "y"),
             {0, 0.34, 1, 0.34});
}

TEST(SignalExpansion, AWindowSizeThatIsDataIsRefused) {
  EXPECT_NE(refusal(window("HannWindow", 4, true, false))
                .find("size must be a constant (an input is fixed at load"),
            std::string::npos);
}

/// STFT of a real [1, 20, 1] signal with frames of 8 every 4 samples and a
/// window read as data, against the transform summed here in double.
TEST(SignalExpansion, StftIsTheTransformOfEachWindowedFrame) {
  const std::int64_t length = 20, frame = 8, step = 4, frames = 4,
                     bins = frame / 2 + 1;
  Program p = single(
      "STFT", {},
      {{"signal", "x", {1, length, 1}},
       {"frame_step", "step", {}, DType::I64, {step}},
       {"window", "w", {frame}},
       {"frame_length", "len", {}, DType::I64, {frame}}},
      {{"output", "y", {1, frames, bins, 2}}});
  interp::TensorMap in{{"x", random({1, length, 1}, 3)},
                       {"w", random({frame}, 4)}};
  runtime::Tensor y = expandAndRun(p, in, "y");
  std::vector<double> want;
  for (std::int64_t f = 0; f < frames; ++f)
    for (std::int64_t k = 0; k < bins; ++k) {
      double re = 0, im = 0;
      for (std::int64_t n = 0; n < frame; ++n) {
        double v = in["x"].getAsDouble(f * step + n) * in["w"].getAsDouble(n);
        double t = 2 * std::numbers::pi * double(k * n) / double(frame);
        re += v * std::cos(t);
        im -= v * std::sin(t);
      }
      want.push_back(re);
      want.push_back(im);
    }
  expectNear(y, want);
}

TEST(SignalExpansion, StftRefusesAFrameStepThatIsData) {
  Program p = single("STFT", {},
                     {{"signal", "x", {1, 16, 1}},
                      {"frame_step", "step", {}, DType::I64},
                      {"frame_length", "len", {}, DType::I64, {8}}},
                     {{"output", "y", {1, 3, 5, 2}}});
  EXPECT_NE(refusal(p).find("frame_step must be a positive constant"),
            std::string::npos);
}

/// Training mode: the batch's statistics normalize, and the running ones
/// move toward them by 1 - momentum.
TEST(SignalExpansion, BatchNormalizationInTrainingModeUsesTheBatch) {
  const std::int64_t n = 2, c = 3, h = 2;
  Program p = single("BatchNormalization",
                     {{"training_mode", std::int64_t(1)},
                      {"momentum", 0.8},
                      {"epsilon", 1e-3}},
                     {{"X", "x", {n, c, h}},
                      {"scale", "s", {c}},
                      {"B", "b", {c}},
                      {"input_mean", "m", {c}},
                      {"input_var", "v", {c}}},
                     {{"Y", "y", {n, c, h}},
                      {"running_mean", "rm", {c}},
                      {"running_var", "rv", {c}}});
  interp::TensorMap in = randomInputs(p, 7);
  operators::ExpandAllReport r = operators::expandAll(p);
  ASSERT_TRUE(r.skipped.empty()) << r.skipped[0];
  expectValid(p);
  interp::TensorMap out = interp::interpret(p, in);
  std::vector<double> y(std::size_t(n * c * h)), rm, rv;
  for (std::int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    auto at = [&](std::int64_t i, std::int64_t k) { return (i * c + ch) * h + k; };
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < h; ++k)
        sum += in["x"].getAsDouble(at(i, k));
    double mean = sum / double(n * h);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < h; ++k)
        sq += std::pow(in["x"].getAsDouble(at(i, k)) - mean, 2);
    double var = sq / double(n * h);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < h; ++k)
        y[std::size_t(at(i, k))] =
            (in["x"].getAsDouble(at(i, k)) - mean) / std::sqrt(var + 1e-3) *
                in["s"].getAsDouble(ch) +
            in["b"].getAsDouble(ch);
    rm.push_back(in["m"].getAsDouble(ch) * 0.8 + mean * 0.2);
    rv.push_back(in["v"].getAsDouble(ch) * 0.8 + var * 0.2);
  }
  expectNear(out.at("y"), y);
  expectNear(out.at("rm"), rm);
  expectNear(out.at("rv"), rv);
}

/// MaxPool's indices count positions of a 3x3 block; a 4x4 output_shape
/// pads that block with zeros at the end of each axis.
TEST(SignalExpansion, MaxUnpoolPutsValuesBackInThePooledBlock) {
  Program p = single("MaxUnpool",
                     {{"kernel_shape", std::vector<std::int64_t>{2, 2}}},
                     {{"X", "x", {1, 1, 2, 2}},
                      {"I", "i", {1, 1, 2, 2}, DType::I64, {0, 5, 7, 8}}},
                     {{"output", "y", {1, 1, 4, 4}}});
  runtime::Tensor x(DType::F32, {1, 1, 2, 2});
  for (std::int64_t k = 0; k < 4; ++k)
    x.setFromDouble(k, double(k + 1));
  expectNear(expandAndRun(p, {{"x", x}}, "y"),
             {1, 0, 0, 0, //
              0, 0, 2, 0, //
              0, 3, 4, 0, //
              0, 0, 0, 0});
}

} // namespace
} // namespace weir::expansion_testing
