#pragma once
/// \file
/// Transient memory: what the CPU backend allocates for a program's
/// transients, and how much of it is live at once.
///
/// - Allocated: lowering (codegen/lower/lower.cpp) allocates one buffer for
///   the whole run per container that is not an input or output argument,
///   not constant and not a view — whether or not anything uses it.
/// - Live: a buffer is live from the first top-level node that accesses it
///   to the last one, in the order the backend runs nodes: states in
///   order, and in each state the order of ir/state_view.h at the top
///   level, where a map with everything inside it
///   counts as one node. That is normally from its first write to its last
///   read; a view's reads keep its target live. A node reads a container
///   on an edge out of one of its access nodes and writes it on an edge
///   into one (empty memlets move nothing); an access-to-access copy
///   happens when the destination access node runs.
/// - Peak: the largest sum of live bytes at any one top-level node — what
///   a planner that gives each transient its own buffer only while it is
///   live would need. A container that holds several values one after
///   another (after `buffer-reuse`) counts as live from its first access
///   to its last, so sharing can only raise the peak while it lowers the
///   allocation towards it.
///
/// Sizes are symbolic when shapes are; both figures are evaluated under
/// bindings, and symbols the bindings leave out are taken as 1 (batch 1,
/// as `workspace::verify` does).

#include "ir/expr.h"
#include "ir/program.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace weir::ir {

/// Whether the CPU backend allocates a buffer of its own for `c` (not an
/// argument, not constant, not a view).
bool allocatesBuffer(const Program &program, const Container &c);

/// A state's top level as the backend runs it.
struct TopLevel {
  /// Top-level members in run order: topological, ties going to the node
  /// earlier in `State::nodes` (`viewState(s).order[0]`).
  std::vector<NodeId> order;
  /// Every node -> the top-level member it runs as part of: itself, or the
  /// entry of the outermost map around it (a map's exit -> its entry).
  std::map<NodeId, NodeId> member;
  /// Member -> its index in `order`.
  std::map<NodeId, std::size_t> index;
};
/// Throws weir::Error naming the state when its top level has a cycle.
TopLevel topLevel(const State &state);

/// One allocated buffer and when it is live.
struct TransientLifetime {
  std::string container;
  std::int64_t bytes = 0;
  /// First and last top-level node (positions in the program's run order,
  /// from 0, states one after another) that access it; -1 when nothing
  /// does (allocated, never live).
  std::int64_t first = -1, last = -1;
};

struct MemoryReport {
  std::int64_t allocated = 0; ///< bytes of all transient buffers
  std::int64_t peak = 0;      ///< most bytes live at one top-level node
  std::int64_t buffers = 0;   ///< how many buffers are allocated
  std::int64_t steps = 0;     ///< top-level nodes over all states
  /// Every allocated buffer, by container name.
  std::vector<TransientLifetime> transients;

  /// "allocated 12.5 MiB in 40 buffers, peak 3.1 MiB".
  std::string str() const;
};

/// The allocation and live peak of `program`'s transients, sizes evaluated
/// under `symbols` (unbound symbols are 1). Throws weir::Error when a size
/// cannot be evaluated (overflow) or a state's top level has a cycle.
MemoryReport transientMemory(const Program &program,
                             const Bindings &symbols = {});

/// A byte count for people: "512 B", "3.1 KiB", "12.5 MiB", "1.2 GiB".
std::string formatBytes(std::int64_t bytes);

} // namespace weir::ir
