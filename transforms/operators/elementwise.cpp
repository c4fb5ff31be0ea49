/// \file
/// Pure expansions of elementwise operators: one map over the output, one
/// tasklet, inputs read through broadcasting memlets. This file holds the
/// shared helpers (elementwise.h) and the operators that move or convert
/// values — Identity, Dropout, Cast, CastLike, Constant, Where — and the
/// variadic ones, Sum, Mean, Max and Min. Math lives in
/// elementwise_unary.cpp and elementwise_binary.cpp.

#include "transforms/operators/elementwise.h"

#include "transforms/operators/broadcast.h"
#include "transforms/operators/random.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace weir::operators::elementwise {

void addMap(ExpansionContext &ctx, const std::vector<Port> &inputs,
            const std::string &code, const std::vector<Port> &outputs) {
  const std::vector<ir::Expr> &shape = outputs.at(0).second->shape;
  auto params = ExpansionContext::params(shape.size());
  auto idx = ExpansionContext::indices(params);
  std::vector<ir::MappedInput> in;
  for (const auto &[connector, container] : inputs) {
    // Numpy broadcasting, aligned on the right: each dimension is the
    // output's or 1. (Two symbolic sizes that differ cannot be proven
    // apart and are taken as equal, as shape inference does.)
    const std::vector<ir::Expr> &from = container->shape;
    bool fits = from.size() <= shape.size();
    for (std::size_t d = 0; fits && d < from.size(); ++d) {
      const ir::Expr &to = shape[shape.size() - from.size() + d];
      auto a = from[d].asConstant(), b = to.asConstant();
      fits = from[d] == to || a == 1 || !a || !b;
    }
    if (!fits) {
      auto text = [](const std::vector<ir::Expr> &s) {
        std::string t = "[";
        for (std::size_t d = 0; d < s.size(); ++d)
          t += (d ? ", " : "") + s[d].str();
        return t + "]";
      };
      ctx.fail("input '" + container->name + "' of shape " + text(from) +
               " does not broadcast to the output shape " + text(shape));
    }
    in.push_back({connector, container->name,
                  broadcastIndex(container->shape, shape, idx)});
  }
  std::vector<ir::MappedOutput> out;
  for (const auto &[connector, container] : outputs)
    out.push_back({connector, container->name, idx, std::nullopt});
  ctx.addMap("map", params, ExpansionContext::fullRanges(shape), in, code, out);
}

std::string floatLiteral(const ExpansionContext &ctx, double value) {
  if (!std::isfinite(value))
    ctx.fail("the non-finite attribute value " + std::to_string(value) +
             " cannot be written in a tasklet");
  return ExpansionContext::floatLiteral(value);
}

std::string maxFiniteLiteral(ir::DType t) {
  switch (t) {
  case ir::DType::F16:
    return "65504.0";
  case ir::DType::BF16:
    return "3.3895313892515355e38";
  case ir::DType::F32:
    return "3.4028234663852886e38";
  default:
    return "1.7976931348623157e308";
  }
}

void requireFloat(const ExpansionContext &ctx, ir::DType t) {
  if (!ir::isFloat(t))
    ctx.fail("needs a floating-point input, got " +
             std::string(ir::dtypeName(t)));
}

Expander unary(CodeGen code) {
  return [code](ExpansionContext &ctx) {
    const ir::Container &x = ctx.requireInputAt(0);
    const ir::Container &y = ctx.requireOutputAt(0);
    addMap(ctx, {{"x", &x}}, code(ctx, x.dtype), {{"y", &y}});
  };
}

Expander binary(CodeGen code) {
  return [code](ExpansionContext &ctx) {
    const ir::Container &a = ctx.requireInputAt(0);
    const ir::Container &b = ctx.requireInputAt(1);
    const ir::Container &c = ctx.requireOutputAt(0);
    addMap(ctx, {{"a", &a}, {"b", &b}}, code(ctx, a.dtype), {{"c", &c}});
  };
}

namespace {

/// Cast and CastLike: the output container already has the target dtype.
std::string castCode(ExpansionContext &ctx, ir::DType) {
  if (ctx.hasAttr("saturate") && ctx.intAttr("saturate", 1) != 1)
    ctx.fail("saturate=0 (float8 targets) is not supported");
  const ir::Container &y = ctx.requireOutputAt(0);
  return "y = " + std::string(ir::dtypeName(y.dtype)) + "(x)";
}

/// Dropout in inference: the identity, and a mask of all true. In training
/// (training_mode a constant true): random.h.
void expandDropout(ExpansionContext &ctx) {
  if (const ir::Container *training = ctx.input("training_mode")) {
    // A bool tensor: any byte not 0 means training.
    if (!training->constant)
      ctx.fail("training_mode is not a constant (an input is fixed at load: "
               "weir run --inputs)");
    for (std::byte b : *training->constant)
      if (b != std::byte{0}) {
        expandTrainingDropout(ctx);
        return;
      }
  }
  const ir::Container &x = ctx.requireInputAt(0);
  const ir::Container &y = ctx.requireOutput("output");
  if (const ir::Container *mask = ctx.output("mask"))
    addMap(ctx, {{"x", &x}}, "y = x\nmask = true", {{"y", &y}, {"mask", mask}});
  else
    addMap(ctx, {{"x", &x}}, "y = x", {{"y", &y}});
}

template <typename T>
ir::TensorValue scalarsTensor(ir::DType dtype, const std::vector<T> &values,
                              bool scalar) {
  auto bytes =
      std::make_shared<std::vector<std::byte>>(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(bytes->data(), values.data(), bytes->size());
  ir::TensorValue t;
  t.dtype = dtype;
  if (!scalar)
    t.shape = {static_cast<std::int64_t>(values.size())};
  t.data = std::move(bytes);
  return t;
}

/// Constant: a constant container with the attribute's value, copied into
/// the output by a map (so the output stays the node's result).
void expandConstant(ExpansionContext &ctx) {
  const ir::Attributes &attrs = ctx.library().attributes;
  ir::TensorValue value;
  if (auto it = attrs.find("value"); it != attrs.end()) {
    const auto *t = std::get_if<ir::TensorValue>(&it->second);
    if (!t)
      ctx.fail("attribute 'value' is not a tensor");
    value = *t;
  } else if (auto it = attrs.find("value_float"); it != attrs.end()) {
    value = scalarsTensor<float>(
        ir::DType::F32, {static_cast<float>(ctx.floatAttr("value_float", 0))},
        true);
  } else if (auto it = attrs.find("value_int"); it != attrs.end()) {
    value = scalarsTensor<std::int64_t>(ir::DType::I64,
                                        {ctx.intAttr("value_int", 0)}, true);
  } else if (auto it = attrs.find("value_ints"); it != attrs.end()) {
    value = scalarsTensor<std::int64_t>(ir::DType::I64,
                                        ctx.intsAttr("value_ints", {}), false);
  } else if (auto it = attrs.find("value_floats"); it != attrs.end()) {
    const auto *d = std::get_if<std::vector<double>>(&it->second);
    if (!d)
      ctx.fail("attribute 'value_floats' is not a list of floats");
    std::vector<float> f(d->begin(), d->end());
    value = scalarsTensor<float>(ir::DType::F32, f, false);
  } else {
    ctx.fail("only the value, value_float(s) and value_int(s) attributes "
             "are supported");
  }
  const ir::Container &y = ctx.requireOutputAt(0);
  if (value.dtype != y.dtype || value.shape.size() != y.shape.size())
    ctx.fail("the constant's type disagrees with the output's");
  std::string name = ctx.addConstant("value", value);
  addMap(ctx, {{"x", &ctx.program().container(name)}}, "y = x", {{"y", &y}});
}

/// Sum, Mean, Max, Min over one or more broadcast inputs.
Expander variadic(std::string op) {
  return [op](ExpansionContext &ctx) {
    std::vector<Port> ins;
    for (const ir::Connector &c : ctx.node().inputs)
      ins.push_back(
          {"in" + std::to_string(ins.size()), &ctx.requireInput(c.name)});
    if (ins.empty())
      ctx.fail("needs at least one input");
    std::string expr = ins[0].first;
    for (std::size_t i = 1; i < ins.size(); ++i) {
      if (op == "Sum" || op == "Mean")
        expr += " + " + ins[i].first;
      else
        expr =
            (op == "Max" ? "max(" : "min(") + expr + ", " + ins[i].first + ")";
    }
    if (op == "Mean") {
      requireFloat(ctx, ins[0].second->dtype);
      expr = "(" + expr + ") / " + std::to_string(ins.size()) + ".0";
    }
    const ir::Container &y = ctx.requireOutputAt(0);
    addMap(ctx, ins, "y = " + expr, {{"y", &y}});
  };
}

void expandWhere(ExpansionContext &ctx) {
  const ir::Container &c = ctx.requireInput("condition");
  const ir::Container &a = ctx.requireInput("X");
  const ir::Container &b = ctx.requireInput("Y");
  const ir::Container &y = ctx.requireOutputAt(0);
  addMap(ctx, {{"c", &c}, {"a", &a}, {"b", &b}}, "y = select(c, a, b)",
         {{"y", &y}});
}

const ExpansionRegistrar kIdentity{
    {"Identity", "pure", "y = x", unary([](auto &, auto) { return "y = x"; })},
    true};
const ExpansionRegistrar kDropout{
    {"Dropout", "pure",
     "inference: y = x, mask all true; training: a counter-based random "
     "mask",
     expandDropout},
    true};
const ExpansionRegistrar kCast{
    {"Cast", "pure", "y = T(x), the tasklet cast", unary(castCode)}, true};
const ExpansionRegistrar kCastLike{
    {"CastLike", "pure", "y = T(x), the tasklet cast", unary(castCode)}, true};
const ExpansionRegistrar kConstant{
    {"Constant", "pure", "a constant container copied into the output",
     expandConstant},
    true};
const ExpansionRegistrar kWhere{
    {"Where", "pure", "y = select(c, a, b), broadcasting", expandWhere}, true};
const ExpansionRegistrar kSum{
    {"Sum", "pure", "y = x0 + x1 + ..., broadcasting", variadic("Sum")}, true};
const ExpansionRegistrar kMean{
    {"Mean", "pure", "y = (x0 + x1 + ...) / n, broadcasting", variadic("Mean")},
    true};
const ExpansionRegistrar kMax{
    {"Max", "pure", "y = max(x0, x1, ...), broadcasting", variadic("Max")},
    true};
const ExpansionRegistrar kMin{
    {"Min", "pure", "y = min(x0, x1, ...), broadcasting", variadic("Min")},
    true};

} // namespace
} // namespace weir::operators::elementwise
