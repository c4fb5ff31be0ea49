#pragma once
/// \file
/// The line `weir optimize` prints for each step:
///
///     step 12  map-fusion  3.1 ms  FLOPs +0 (+0.0%)  bytes moved -1024 (-0.3%)
///
/// Each line needs the totals of the step's result. A StepReport counts
/// them on a thread of its own, in step order, while the next steps apply,
/// and prints the lines in order; it counts again only what each step
/// changed (ir/incremental_totals.h: analyzing whole programs was more than
/// half of a 2,000-node chain's recipe). At most kAhead steps wait for it,
/// so the programs they hold stay few.
///
/// The programs go back to the caller's thread to be freed: glibc's
/// allocator makes a thread that frees another thread's blocks take that
/// thread's arena lock, and freeing whole programs beside a recipe that
/// allocates made it slower than doing both on one thread.

#include "ir/expr.h"
#include "ir/incremental_totals.h"
#include "ir/state_memo.h"
#include "workspace/workspace.h"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace weir::cli {

/// A symbolic total as a number where it is one.
std::string amount(const ir::Expr &e);
/// "+1024 (+0.3%)", or "a -> b" when either is symbolic.
std::string delta(const ir::Expr &before, const ir::Expr &after);

class StepReport {
public:
  static constexpr std::size_t kAhead = 8;

  StepReport() = default;
  /// finish(), an error dropped (the command is failing already).
  ~StepReport();
  StepReport(const StepReport &) = delete;
  StepReport &operator=(const StepReport &) = delete;

  /// Queues the line of the step that made `after` from `before` (both
  /// programs are taken now). `memo`, when given, holds indexes of
  /// `after`'s states to count it with (Workspace::sharedMemo).
  void add(const workspace::Version &before, const workspace::Version &after,
           std::shared_ptr<const ir::StateMemo> memo = nullptr);
  /// Prints every queued line and returns after the last; rethrows the
  /// first error an analysis threw. Call before printing anything else.
  void finish();
  /// Steps added so far.
  int steps() const { return added_; }

private:
  struct Line {
    int number = 0;
    std::string transformation;
    double seconds = 0;
    std::shared_ptr<const ir::Program> before, after;
    std::shared_ptr<const ir::StateMemo> memo; ///< after's, or null
  };
  /// A program's totals, kept for the next line (its "before").
  struct Totals {
    std::shared_ptr<const ir::Program> program;
    ir::Expr flops, bytesMoved;
  };
  void run();
  void print(const Line &line);
  const Totals &totalsOf(const std::shared_ptr<const ir::Program> &p);

  int added_ = 0;
  ir::IncrementalTotals totals_; ///< the worker's
  Totals last_;                  ///< the worker's
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Line> waiting_;
  /// Programs (and memos) the worker is done with, freed by the caller's
  /// thread.
  std::vector<std::shared_ptr<const void>> done_;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

} // namespace weir::cli
