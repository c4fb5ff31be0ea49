#pragma once
/// \file
/// Checking a program's inputs against its declared arguments and binding
/// its symbols: the rules every way of running a program shares (the
/// reference interpreter, the compiled backends).

#include "core/runtime/tensor.h"
#include "ir/program.h"

#include <map>
#include <string>

namespace weir::interp {

/// Tensors by container name.
using TensorMap = std::map<std::string, runtime::Tensor, std::less<>>;

/// Checks that `inputs` holds exactly the program's inputs with their dtypes,
/// ranks and shapes, binding each shape dimension that is a bare symbol to
/// the given extent; `given` binds the rest (and must agree). Returns every
/// binding. Throws weir::Error naming the input, symbol or dimension.
ir::Bindings bindInputs(const ir::Program &program, const TensorMap &inputs,
                        ir::Bindings given);

/// The container's shape under `symbols`. Throws weir::Error for an unbound
/// symbol or a negative extent.
std::vector<std::int64_t> containerShape(const ir::Container &c,
                                         const ir::Bindings &symbols);

} // namespace weir::interp
