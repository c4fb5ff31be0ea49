#pragma once
/// \file
/// A program's total FLOPs and bytes moved (analyze()'s totals) for each
/// program of a sequence in which every one is a step from the one before,
/// as `weir optimize` reports after each step of a recipe.
///
/// analyze() counts every node and edge, and on a recipe of thousands of
/// steps over a program of thousands of nodes that was the larger half of
/// the work. A step changes a few nodes and shares the rest with the
/// program before it (ir/cow_list.h: an element at the same address is the
/// same element). So IncrementalTotals splits each state into units — a
/// top-level node; a top-level map with its whole body; an edge between
/// two top-level nodes — whose counts depend on nothing outside them but
/// the containers' dtypes and storage, and counts again only the units
/// whose elements are not exactly the previous program's.
///
/// It keeps the previous program alive, so no address it compares can have
/// been freed and reused for another element.

#include "ir/expr.h"
#include "ir/program.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace weir::ir {

class StateCost;

class IncrementalTotals {
public:
  struct Totals {
    Expr flops;
    Expr bytesMoved;
  };
  /// The totals of `program`, equal in value to analyze(*program)'s.
  Totals operator()(std::shared_ptr<const Program> program);

  /// Units the last call counted again, and its units in all.
  std::size_t recounted() const { return recounted_; }
  std::size_t units() const { return units_.heads.size(); }

private:
  /// A program's units, flat: vectors apiece, allocated for thousands of
  /// units on every step, were dropped for this (the 4,000-node chain's
  /// optimize went from about 20 s to about 14 s). Unit u's members are
  /// members[begin[u] .. begin[u + 1]): its nodes, then its edges, in the
  /// state's order, then the elements outside it that its counts read (a
  /// top-level edge's endpoints: whether one is an Access node).
  struct Units {
    /// The head's id, times two, plus one for an edge: stable while a step
    /// edits the head (a fused map keeps its entry's id).
    std::vector<std::uint64_t> heads;
    std::vector<std::uint32_t> begin{0};
    std::vector<std::uint32_t> nodes, edges; ///< how many of each
    std::vector<Expr> flops, bytes;
    std::vector<const void *> members;
    /// Per member: a tasklet's operations per execution, else -1
    /// (counting a tasklet's code was most of counting a long fused map
    /// again).
    std::vector<std::int64_t> ops;
  };

  /// Whether the previous program's counts may be kept under `program`'s
  /// containers: no container both hold changed dtype or storage. `added`
  /// gets the names the previous program lacked.
  bool containersKept(const Program &program,
                      std::vector<std::string_view> &added) const;
  /// Adds `s`'s units to `out`, uncounted.
  static void layOut(const StateCost &cost, const State &s, Units &out);
  /// Counts unit `u` of `out` (of state `cost`'s), taking what it can from
  /// unit `was` of units_ (the previous program's), when it has one.
  void count(StateCost &cost, Units &out, std::size_t u,
             std::optional<std::size_t> was,
             const std::vector<std::string_view> &added);

  std::shared_ptr<const Program> previous_;
  Units units_; ///< the previous program's, every state's
  std::unordered_map<std::uint64_t, std::size_t> byHead_; ///< into units_
  std::size_t recounted_ = 0;
};

} // namespace weir::ir
