/// \file
/// Pure expansions of the random generators: RandomUniform(Like),
/// RandomNormal(Like), Bernoulli, and Dropout in training mode. Each
/// element draws from the tasklet language's counter-based generator,
/// hash(seed, counter) (SplitMix64, ir/tasklet.h), with its flat index as
/// the counter, so a map's iterations stay independent and run in
/// parallel, and every engine draws the same numbers. A uniform in [0, 1)
/// is the top 53 bits of a draw; a normal value is Box-Muller's transform
/// of draws 2i and 2i + 1.
///
/// The seed is the operator's `seed` attribute. Without one, ONNX leaves
/// the seed to the runtime; Weir derives it from the node's name, so the
/// values differ between nodes and repeat from run to run (a compiled
/// program holds no generator state between runs).

#include "transforms/operators/random.h"

#include <bit>
#include <cstring>

namespace weir::operators {
namespace {

using ir::Expr;

/// 2^-53: a 53-bit integer times this is a double in [0, 1).
constexpr const char *kTwoToMinus53 = "1.1102230246251565e-16";

std::string store(ir::DType t, const std::string &value) {
  return "y = " + std::string(ir::dtypeName(t)) + "(" + value + ")";
}

void requireFloatOutput(ExpansionContext &ctx, const ir::Container &y) {
  if (!ir::isFloat(y.dtype))
    ctx.fail("the output must be a floating-point type");
}

/// y = a + b * draw: uniform on [low, high), or normal with a mean and a
/// scale.
void expandAffineDraw(ExpansionContext &ctx, bool normal) {
  const ir::Container &y = ctx.requireOutputAt(0);
  requireFloatOutput(ctx, y);
  double a = ctx.floatAttr(normal ? "mean" : "low", 0.0);
  double b = normal ? ctx.floatAttr("scale", 1.0)
                    : ctx.floatAttr("high", 1.0) - a;
  addRandomMap(ctx, y, seedOf(ctx), normal,
               store(y.dtype, ExpansionContext::floatLiteral(a) + " + " +
                                  ExpansionContext::floatLiteral(b) +
                                  (normal ? " * z" : " * u")),
               {}, {{"y", y.name, elementIndex(y)}});
}

void expandUniform(ExpansionContext &ctx) { expandAffineDraw(ctx, false); }
void expandNormal(ExpansionContext &ctx) { expandAffineDraw(ctx, true); }

/// Bernoulli: 1 with the input's probability, else 0.
void expandBernoulli(ExpansionContext &ctx) {
  const ir::Container &p = ctx.requireInput("input");
  const ir::Container &y = ctx.requireOutput("output");
  if (!ir::isFloat(p.dtype))
    ctx.fail("the probabilities must be a floating-point type");
  std::string value = y.dtype == ir::DType::Bool
                          ? "y = u < f64(p)"
                          : store(y.dtype, "select(u < f64(p), 1.0, 0.0)");
  addRandomMap(ctx, y, seedOf(ctx), false, value,
               {{"p", p.name, elementIndex(y)}},
               {{"y", y.name, elementIndex(y)}});
}

} // namespace

std::vector<Expr> elementIndex(const ir::Container &y) {
  return ExpansionContext::indices(ExpansionContext::params(y.shape.size()));
}

std::uint64_t seedOf(const ExpansionContext &ctx) {
  std::uint64_t bits = 0;
  if (ctx.hasAttr("seed")) {
    const ir::AttributeValue &v = ctx.library().attributes.find("seed")->second;
    if (const auto *i = std::get_if<std::int64_t>(&v))
      bits = std::uint64_t(*i);
    else if (const auto *f = std::get_if<double>(&v))
      bits = std::bit_cast<std::uint64_t>(*f);
  } else {
    bits = 0xCBF29CE484222325ull; // FNV-1a of the name
    for (char ch : ctx.node().label)
      bits = (bits ^ std::uint8_t(ch)) * 0x100000001B3ull;
  }
  // A literal of the tasklet language is a non-negative i64.
  return bits & 0x7FFFFFFFFFFFFFFFull;
}

void addRandomMap(ExpansionContext &ctx, const ir::Container &y,
                  std::uint64_t seed, bool normal, const std::string &code,
                  std::vector<ir::MappedInput> inputs,
                  const std::vector<ir::MappedOutput> &outputs) {
  auto params = ExpansionContext::params(y.shape.size());
  auto idx = ExpansionContext::indices(params);
  // The flat index, from one small position table per axis.
  std::string counter;
  std::int64_t stride = 1;
  for (std::size_t d = y.shape.size(); d-- > 0;) {
    std::int64_t n = ctx.constantDim(y.shape[d]);
    std::string a = "a" + std::to_string(d);
    inputs.push_back(
        {a, ctx.addIota("axis" + std::to_string(d), ir::DType::I64, n),
         {idx[d]}});
    counter = a + " * " + std::to_string(stride) +
              (counter.empty() ? "" : " + " + counter);
    stride *= n;
  }
  if (counter.empty())
    counter = "0";
  const std::string s = "u64(" + std::to_string(seed) + ")";
  auto uniform = [&](const std::string &c) {
    return "f64(hash(" + s + ", " + c + ") / u64(2048)) * " + kTwoToMinus53;
  };
  std::string draws = "c = u64(" + counter + ")\n";
  if (normal)
    draws += "u1 = " + uniform("c * u64(2)") + "\n" + "u2 = " +
             uniform("c * u64(2) + u64(1)") + "\n" +
             "z = sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2)\n";
  else
    draws += "u = " + uniform("c") + "\n";
  ctx.addMap(normal ? "normal" : "uniform", params,
             ExpansionContext::fullRanges(y.shape), inputs, draws + code,
             outputs);
}

void expandTrainingDropout(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInputAt(0);
  const ir::Container &y = ctx.requireOutput("output");
  if (!ir::isFloat(x.dtype))
    ctx.fail("training-mode dropout needs a floating-point input");
  std::vector<ir::MappedInput> in{{"x", x.name, elementIndex(y)}};
  std::string ratio = "0.5";
  if (const ir::Container *r = ctx.input("ratio")) {
    if (!r->shape.empty())
      ctx.fail("ratio must be a scalar");
    in.push_back({"r", r->name, {}});
    ratio = "f64(r)";
  }
  std::string code = "keep = u >= " + ratio + "\n" +
                     store(x.dtype, "select(keep, f64(x) / (1.0 - " + ratio +
                                        "), 0.0)");
  std::vector<ir::MappedOutput> out{{"y", y.name, elementIndex(y)}};
  if (const ir::Container *mask = ctx.output("mask")) {
    code += "\nmask = keep";
    out.push_back({"mask", mask->name, elementIndex(y)});
  }
  addRandomMap(ctx, y, seedOf(ctx), false, code, in, out);
}

namespace {

const ExpansionRegistrar kRandomUniform{
    {"RandomUniform", "pure", "counter-based uniform draws (SplitMix64)",
     expandUniform},
    true};
const ExpansionRegistrar kRandomUniformLike{
    {"RandomUniformLike", "pure", "counter-based uniform draws (SplitMix64)",
     expandUniform},
    true};
const ExpansionRegistrar kRandomNormal{
    {"RandomNormal", "pure",
     "Box-Muller transform of counter-based uniform draws", expandNormal},
    true};
const ExpansionRegistrar kRandomNormalLike{
    {"RandomNormalLike", "pure",
     "Box-Muller transform of counter-based uniform draws", expandNormal},
    true};
const ExpansionRegistrar kBernoulli{
    {"Bernoulli", "pure", "a counter-based uniform draw below p",
     expandBernoulli},
    true};

} // namespace
} // namespace weir::operators
