#pragma once
/// \file
/// Which buffers need no zero-fill: a transient is allocated zero-filled
/// (the IR's transients start at zero), which costs a pass over its memory
/// on every run (ResNet-50's 61 MB of transients took about 3 ms at two
/// threads). A buffer whose first touch in execution order writes every
/// element before anything reads it can skip that pass. The proof is
/// deliberately narrow:
/// - the first statement that names the buffer (top-level statements in
///   order, a loop of one iteration read as its body) is either
/// - an `sgemm` call with beta 0 whose C is the whole buffer (offset 0,
///   ldc = N, M·N elements) and whose A and B are other buffers, or
/// - a perfect nest of loops with constant bounds and unit steps around
///   assignments, stores and sgemm calls (beta 0, C a contiguous M·N
///   block) that never reads the buffer, whose writes to it, at offsets
///   affine in the loop variables with one set of coefficients, number
///   every element once: runs of equal length at their offsets, each loop a
///   digit, which must tile [0, size) exactly (an im2col's columns, a
///   Winograd tile map's α² stores at constant offsets, its α² products).

#include "codegen/lower/loop_ir.h"

#include <map>
#include <set>
#include <string>

namespace weir::codegen {

/// The buffers of `sizes` (name → element count) that `body` writes whole
/// at their first touch, before any read (see the file comment).
std::set<std::string, std::less<>>
writtenWholeFirst(const StmtPtr &body,
                  const std::map<std::string, ir::Expr, std::less<>> &sizes);

} // namespace weir::codegen
