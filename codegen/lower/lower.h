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
/// Loop kinds come from map schedules. A cpu-parallel map's outermost loop
/// becomes `parallel` when nothing else encloses it in parallel and every
/// store in its body is provably private to one iteration (some dimension of
/// the stored subset is the loop variable plus terms that do not vary inside
/// the loop, and every other access of that container in the body uses the
/// same index there); otherwise it stays serial. A vectorized map's
/// innermost loop becomes `vectorized` under the same proof.

#include "codegen/lower/loop_ir.h"
#include "ir/program.h"

namespace weir::codegen {

struct LowerOptions {
  /// Treat sequential maps as cpu-parallel (the proof above still decides).
  bool parallelizeSequentialMaps = false;
};

/// Throws weir::Error listing the problems when the program does not
/// validate, and naming the node when the program still holds a library
/// or primitive node, or holds something lowering cannot express (a tasklet
/// memlet wider than one element, a value handed across a map boundary).
LoopFunction lower(const ir::Program &program,
                   const LowerOptions &options = {});

} // namespace weir::codegen
