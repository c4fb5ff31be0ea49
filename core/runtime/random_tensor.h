#pragma once
/// \file
/// Seeded random inputs in the ranges models expect: floats uniform in
/// [-1, 1), integers in [0, 10), booleans fair coins. `weir run --random`
/// and Workspace::verify draw their inputs here, so the same seed gives the
/// same inputs everywhere.

#include "core/interp/bind_inputs.h"
#include "core/runtime/tensor.h"
#include "ir/program.h"

#include <cstdint>
#include <random>
#include <string_view>

namespace weir::runtime {

/// A tensor for container `c`, its symbolic dimensions taken from `dims`.
/// Throws weir::Error naming the input when a dimension is unbound; `hint`
/// says how to bind one ("--dim").
Tensor randomTensor(const ir::Container &c, const ir::Bindings &dims,
                    std::mt19937_64 &rng, std::string_view hint);

/// One random tensor per program input, drawn in input order from one
/// generator seeded with `seed`.
interp::TensorMap randomInputs(const ir::Program &program, std::uint64_t seed,
                               const ir::Bindings &dims = {});

} // namespace weir::runtime
