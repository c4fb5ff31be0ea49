#pragma once
/// \file
/// Lowering: a fully expanded program (maps, tasklets, memlets and access
/// nodes only) becomes one LoopFunction with the semantics of the reference
/// interpreter (core/interp/interpreter.h):
/// - states run in order; within a state and each map scope, nodes run in the
///   interpreter's topological order, each map becoming a loop nest (first
///   parameter outermost);
/// - a tasklet's inputs are loads of single elements at the flattened
///   offsets of their memlets (indices times the container's strides), its
///   outputs stores, combined with the stored value under a write-conflict
///   resolution; an empty memlet between tasklets hands a value over as a
///   local;
/// - an access-to-access edge becomes a copy loop;
/// - transients are allocated, zero-filled, around the whole body.
///
/// Loop kinds come from map schedules. In a cpu-parallel map of at least
/// LowerOptions::minParallelIterations iterations that no other
/// parallel loop encloses and that calls no library routine, the outermost
/// loop with more than one iteration becomes `parallel` if its iterations are
/// provably private (private: for every container the body writes, some
/// dimension of every access to it is the loop variable plus terms that do
/// not vary inside the loop, or maps distinct iterations to disjoint
/// intervals; parallel_proof.h). The other loops stay serial. A vectorized
/// map's innermost loop becomes `vectorized` under the same proof.

#include "codegen/lower/loop_ir.h"
#include "ir/limits.h"
#include "ir/program.h"

#include <cstdint>

namespace weir::codegen {

struct LowerOptions {
  /// Treat sequential maps as cpu-parallel (the proof above still decides).
  bool parallelizeSequentialMaps = false;
  /// Maps with fewer iterations (all loops together, when the count is
  /// known; an iteration of k element accesses counts as k / 2) stay
  /// serial: waking the thread pool costs microseconds, an iteration
  /// nanoseconds. Tests lower it to exercise parallel loops on small
  /// programs.
  std::int64_t minParallelIterations = 32768;
  /// Guard every load and store (`weir run --checked`), not only those the
  /// bounds proof cannot show in bounds (bounds_proof.h).
  bool checkAllAccesses = false;
  /// Refuse a program that lowers to more statements than this
  /// (ir/limits.h); tests lower it.
  std::size_t maxStatements = ir::kMaxLoopStatements;
};

/// Throws weir::Error listing the problems when the program does not
/// validate, and naming the node when the program still holds a library
/// or primitive node, or holds something lowering cannot express (a tasklet
/// memlet wider than one element, a value handed across a map boundary).
LoopFunction lower(const ir::Program &program,
                   const LowerOptions &options = {});

} // namespace weir::codegen
