#pragma once
/// \file
/// Loop nests that only move elements from one buffer to another: what a
/// Concat, a pad or a layout change lowers to. The CPU backend emits such a
/// nest as one call of the runtime's strided copy (strided_copy.h) instead
/// of loops: LLVM spends milliseconds optimizing each copy loop nest
/// (DenseNet-121 has 535 of them, half of its compile time), and the copy
/// runs at memcpy speed where rows are contiguous. Private to codegen/cpu.
///
/// A copy nest is a perfect nest of serial or vectorized loops, each from
/// a begin to an end that do not depend on the nest's variables, by step 1,
/// whose innermost body reads one element and stores it unchanged:
///
///     for i in 0:32 { for j in 0:196 {
///       t = x[i*196 + j]; y[i*196 + j + 6272] = t } }
///
/// Both indices are affine in the nest's variables (coefficients and
/// offsets may hold program symbols and the variables of loops around the
/// nest), and the innermost loop walks both buffers contiguously, so that
/// rows go by memcpy (a strided innermost loop runs faster as vectorized
/// loops than element by element). The load and the store are proven in bounds (no guard), so the
/// copy touches exactly the elements the loops would. The buffers differ
/// (distinct buffers never overlap), and the element type is one whose
/// load and store move its bits unchanged: f32, f64 and the integers, not
/// f16/bf16 (rounded through float) or bool (normalized to 0/1). The locals
/// the body assigns hold the element on its way to the store; the caller
/// checks that nothing else reads them (CopyNest::localReads).

#include "codegen/lower/loop_ir.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weir::codegen::cpu {

/// The most loops a copy nest may have (the runtime's limit).
inline constexpr std::size_t kMaxCopyRank = 8;

struct CopyNest {
  std::string dst, src;
  ir::DType dtype = ir::DType::F32;
  /// Element offsets of the first element each side touches.
  ir::Expr dstOffset, srcOffset;
  /// Per loop, outermost first: its trip count and the elements one
  /// iteration moves each side by.
  struct Dim {
    ir::Expr extent, dstStride, srcStride;
  };
  std::vector<Dim> dims;
  /// The locals the body assigns, each with the reads of it in the nest.
  std::vector<std::pair<std::string, int>> localReads;
};

/// `s` as a copy nest, or nullopt when it is not one (see the file comment).
std::optional<CopyNest> copyNest(const Stmt &s);

/// Reads of each local in `s` and everything in it.
using LocalReads = std::map<std::string, int, std::less<>>;
LocalReads localReads(const Stmt &s);

/// copyNest(s) when nothing but the nest reads the locals it assigns:
/// `functionReads` (localReads of the whole function) counts no other read.
std::optional<CopyNest> copyNestOnly(const Stmt &s,
                                     const LocalReads &functionReads);

} // namespace weir::codegen::cpu
