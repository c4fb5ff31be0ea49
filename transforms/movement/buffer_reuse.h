#pragma once
/// \file
/// `buffer-reuse` (DaCe's TransientReuse): transients of the same dtype,
/// shape, strides and storage whose lifetimes are ordered by the dataflow
/// share one container, so the backend allocates fewer buffers.
///
/// Container B is merged into A (B's uses renamed to A) only when every
/// access of A happens before every access of B in every order the backend
/// may run the program: A's states come before B's, or, in the one state
/// they share, there is a path in the state's top-level dataflow graph (a
/// map with its body counting as one node) from each top-level node
/// touching A to each touching B. The lowering order is only one
/// topological order; a path is what every order keeps, so the rename
/// creates no write-after-read or write-after-write hazard. B must also
/// never read the zeros its own buffer starts with: one write with no
/// write-conflict resolution covers all of B before anything else touches
/// it. Arguments, constants, views and the targets of views are never
/// merged. With parameter `order`, lifetimes the dataflow leaves unordered
/// (in one state, no use of B reaching a use of A) are ordered first by empty
/// edges from the earlier one's last uses to the later one's first uses,
/// so that every order the backend may choose keeps them apart. Whole
/// program; exact.

#include "transforms/transformation.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace weir::transforms {

/// What buffer-reuse would do to a program.
struct BufferReusePlan {
  /// {B, A}: B's uses become A's, in the order they are applied (an A is
  /// never itself renamed).
  std::vector<std::pair<std::string, std::string>> renames;
  /// Empty edges that order lifetimes the dataflow left unordered (only
  /// with `addOrdering`): from a map's exit or a node to a map's entry or
  /// a node, at the top level of `state`.
  struct OrderingEdge {
    std::string state;
    ir::NodeId from = 0, to = 0;
    friend bool operator==(const OrderingEdge &,
                           const OrderingEdge &) = default;
  };
  std::vector<OrderingEdge> edges;
  /// Transient bytes allocated before and after (ir::transientMemory,
  /// symbols 1).
  std::int64_t allocatedBefore = 0, allocatedAfter = 0;
  /// "merges 12 transients into 5 others: allocated 9.2 MiB -> 3.1 MiB"
  std::string str() const;
};

/// The merges buffer-reuse makes (none when nothing can share). With
/// `addOrdering`, a transient whose lifetime the dataflow leaves unordered
/// with a slot's (in one state, nothing of it reaching the slot) may share
/// too, once edges from the slot's last uses to its first make every order
/// keep them apart. Throws weir::Error when a state's top level has a
/// cycle.
BufferReusePlan planBufferReuse(const ir::Program &program,
                                bool addOrdering = false);

} // namespace weir::transforms
