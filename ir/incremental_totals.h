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
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace weir::ir {

class ContainerIndex;

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
  std::size_t units() const { return units_.size(); }

private:
  /// A unit's elements in the state's order, what they count, and the
  /// elements outside it that its counts read (a top-level edge's
  /// endpoints: whether one is an Access node).
  struct Unit {
    const void *head = nullptr;
    std::vector<const void *> nodes, edges, context;
    Expr flops{0}, bytes{0};
  };

  /// Whether the previous program's counts may be kept under `program`'s
  /// containers: no container both hold changed dtype or storage. `added`
  /// gets the names the previous program lacked.
  bool containersKept(const Program &program,
                      std::vector<std::string_view> &added) const;
  /// `s`'s units, with the counts of those equal to one in `previous`
  /// (by head) taken from it.
  std::vector<Unit> countState(
      const ContainerIndex &containers, const State &s,
      const std::unordered_map<const void *, const Unit *> &previous,
      const std::vector<std::string_view> &added);

  std::shared_ptr<const Program> previous_;
  std::vector<Unit> units_; ///< the previous program's, every state's
  std::size_t recounted_ = 0;
};

} // namespace weir::ir
