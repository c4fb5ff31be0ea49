/// \file
/// Pure expansions of elementwise operators: one map over the output, one
/// tasklet, inputs read through broadcasting memlets.

#include "transforms/expansion/broadcast.h"
#include "transforms/expansion/expansion.h"

namespace weir::expansion {
namespace {

/// out = f(x) for a unary operator written in the tasklet language with
/// input `x` and output `y`.
Expander unary(std::string code) {
  return [code](ExpansionContext &ctx) {
    const ir::Container &x = ctx.requireInput(ctx.node().inputs.at(0).name);
    const ir::Container &y = ctx.requireOutput(ctx.node().outputs.at(0).name);
    auto params = ExpansionContext::params(y.shape.size());
    auto idx = ExpansionContext::indices(params);
    ctx.addMap("map", params, ExpansionContext::fullRanges(y.shape),
               {{"x", x.name, broadcastIndex(x.shape, y.shape, idx)}}, code,
               {{"y", y.name, idx}});
  };
}

/// out = f(a, b) with broadcasting, inputs `a`, `b`, output `c`.
Expander binary(std::string code) {
  return [code](ExpansionContext &ctx) {
    const ir::Container &a = ctx.requireInput(ctx.node().inputs.at(0).name);
    const ir::Container &b = ctx.requireInput(ctx.node().inputs.at(1).name);
    const ir::Container &c = ctx.requireOutput(ctx.node().outputs.at(0).name);
    auto params = ExpansionContext::params(c.shape.size());
    auto idx = ExpansionContext::indices(params);
    ctx.addMap("map", params, ExpansionContext::fullRanges(c.shape),
               {{"a", a.name, broadcastIndex(a.shape, c.shape, idx)},
                {"b", b.name, broadcastIndex(b.shape, c.shape, idx)}},
               code, {{"c", c.name, idx}});
  };
}

const ExpansionRegistrar kRelu{
    {"Relu", "pure", "y = max(x, 0)", unary("y = max(x, 0)")}, true};
const ExpansionRegistrar kAdd{
    {"Add", "pure", "c = a + b, broadcasting", binary("c = a + b")}, true};

} // namespace
} // namespace weir::expansion
