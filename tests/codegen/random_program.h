#pragma once
/// \file
/// Seeded random programs for the differential test of the code generators
/// against the reference interpreter (tests/codegen/differential_test.cpp).
///
/// A generated program is small (no container holds more than 4,096
/// elements), valid (ir::validate reports no errors) and in bounds, and its
/// tasklets never divide an integer by zero, so the interpreter runs it to
/// the end. Across seeds the programs cover:
/// - one to three states, each with one to three operations;
/// - maps with one to three parameters per scope, ranges with non-zero
///   beginnings, steps above one and ends that the last index falls short of,
///   inner ranges that depend on outer parameters, maps nested two or three
///   deep, sibling tasklets and maps inside one scope, and every schedule;
/// - index expressions that shift, reverse, scale, floor-divide, take the
///   modulo of, clamp and add parameters;
/// - tasklets of one to three statements over every dtype (f32, f64, i32,
///   i64, u8, i8, u16 and bool mostly; f16, i16, u32, u64 and bf16 less
///   often) with casts, comparisons, select, `&&`, `||`, `!`, the math
///   functions (guarded where their domain is limited, and unguarded now and
///   then), integer division and remainder behind guards (`select(b != 0,
///   a / b, c)`, `a / max(b, 1)`, non-zero literal divisors, `&&`), literals
///   that adopt their neighbour's type (including ones that wrap), and
///   temporaries;
/// - two tasklets in one scope handing a value over an empty memlet;
/// - write-conflict resolution (sum, max, min, prod) on reductions over
///   extra map parameters and on plain writes;
/// - access-to-access copies: same-shape copies of a subset (the memlet
///   naming either side), compacting copies into a smaller container and
///   copies into a window of a larger one, now and then with a resolution;
/// - transients written in one state or map and read in a later one,
///   outputs read back, containers (inputs included) updated in place, and
///   in-place stencils whose reads run ahead of the writes;
/// - now and then a symbol `N`, bound by an input's dimension, in shapes
///   (`N`, `N + 2`) and map ranges.

#include "core/interp/interpreter.h"
#include "ir/program.h"

#include <cstdint>

namespace weir::randprog {

/// Program metadata key recording the symbol values a random program was
/// generated for, as `N=5` (empty when the program has no symbols).
inline constexpr const char *kSymbolsKey = "random_program.symbols";

/// The program for `seed`; the same seed always gives the same program.
ir::Program randomProgram(std::uint64_t seed);

/// The symbol values a generated program records under kSymbolsKey.
ir::Bindings symbolsOf(const ir::Program &program);

/// Inputs for a program made by randomProgram: every argument input with
/// its dtype and its shape at the symbol values in the program's metadata,
/// filled from `seed`. Integers are mostly small (zeros included), sometimes
/// any bit pattern; floats mostly lie in [-4, 4], with ties such as 2.5 and
/// now and then ±0, ±inf, NaN, huge values and subnormals.
interp::TensorMap randomInputs(const ir::Program &program, std::uint64_t seed);

} // namespace weir::randprog
