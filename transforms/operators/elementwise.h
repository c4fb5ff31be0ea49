#pragma once
/// \file
/// Helpers shared by the elementwise expansions (elementwise*.cpp): one map
/// over the output's shape, one tasklet, inputs read through broadcasting
/// memlets. Internal to the expansion tier.

#include "transforms/operators/expansion.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace weir::operators::elementwise {

/// A tasklet connector and the container it reads or writes.
using Port = std::pair<std::string, const ir::Container *>;

/// Adds one map over the shape of `outputs[0]` (every output has that
/// shape) running `code`; each input is read at its broadcast index.
void addMap(ExpansionContext &ctx, const std::vector<Port> &inputs,
            const std::string &code, const std::vector<Port> &outputs);

/// `value` as a tasklet float literal that reads back as the same double
/// (`0.5`, `1.0`, `(-2.5)`); fails the expansion for NaN and infinities,
/// which the tasklet language cannot spell.
std::string floatLiteral(const ExpansionContext &ctx, double value);

/// The largest finite value of float dtype `t`, as a literal.
std::string maxFiniteLiteral(ir::DType t);

/// Fails the expansion unless `t` is a float dtype.
void requireFloat(const ExpansionContext &ctx, ir::DType t);

/// Tasklet code computed from the node and its first input's dtype.
using CodeGen = std::function<std::string(ExpansionContext &, ir::DType)>;

/// y = f(x): the node's first input and first output as `x` and `y`.
Expander unary(CodeGen code);
/// c = f(a, b) with broadcasting over the node's first two inputs.
Expander binary(CodeGen code);

} // namespace weir::operators::elementwise
