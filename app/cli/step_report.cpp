/// \file
/// `weir optimize`'s per-step lines, analyzed beside the recipe (see
/// step_report.h).

#include "app/cli/step_report.h"

#include <cstdio>
#include <system_error>
#include <utility>

namespace weir::cli {

std::string amount(const ir::Expr &e) {
  if (auto v = e.asConstant())
    return std::to_string(*v);
  return e.str();
}

std::string delta(const ir::Expr &before, const ir::Expr &after) {
  auto a = before.asConstant(), b = after.asConstant();
  if (!a || !b)
    return amount(before) + " -> " + amount(after);
  char buf[96];
  double pct = *a ? 100.0 * double(*b - *a) / double(*a) : 0.0;
  std::snprintf(buf, sizeof buf, "%+lld (%+.1f%%)", (long long)(*b - *a), pct);
  return buf;
}

StepReport::~StepReport() {
  try {
    finish();
  } catch (...) {
    // The command is already failing (or its output is): nothing to add.
  }
}

void StepReport::add(const workspace::Version &before,
                     const workspace::Version &after,
                     std::shared_ptr<const ir::StateMemo> memo) {
  Line line{++added_,          after.step->transformation,
            after.seconds,     before.program(),
            after.program(),   std::move(memo)};
  std::vector<std::shared_ptr<const void>> done; // freed here, unlocked
  std::unique_lock lock(mutex_);
  done.swap(done_);
  if (!thread_.joinable()) {
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error &) {
      lock.unlock();
      print(line); // no thread to be had: the line now
      return;
    }
  }
  changed_.wait(lock, [&] { return waiting_.size() < kAhead; });
  waiting_.push_back(std::move(line));
  changed_.notify_all();
}

void StepReport::finish() {
  {
    std::unique_lock lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  if (thread_.joinable())
    thread_.join();
  stopping_ = false;
  last_ = {};
  totals_ = {};
  done_.clear();
  if (std::exception_ptr e = std::exchange(error_, nullptr))
    std::rethrow_exception(e);
}

void StepReport::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty())
      return;
    Line line = std::move(waiting_.front());
    waiting_.pop_front();
    changed_.notify_all(); // room for add()
    lock.unlock();
    std::shared_ptr<const ir::Program> previous = last_.program;
    try {
      if (!error_)
        print(line);
    } catch (...) {
      error_ = std::current_exception(); // read by finish() after the join
    }
    lock.lock();
    // Back to the caller's thread to be freed (see the header).
    for (std::shared_ptr<const ir::Program> *p :
         {&line.before, &line.after, &previous})
      if (*p)
        done_.push_back(std::move(*p));
    if (line.memo)
      done_.push_back(std::move(line.memo));
  }
}

const StepReport::Totals &
StepReport::totalsOf(const std::shared_ptr<const ir::Program> &p) {
  if (p != last_.program) {
    ir::IncrementalTotals::Totals t = totals_(p);
    last_ = {p, std::move(t.flops), std::move(t.bytesMoved)};
  }
  return last_;
}

void StepReport::print(const Line &line) {
  Totals a = totalsOf(line.before);
  ir::UseStateMemo use(line.memo && &line.memo->program() == line.after.get()
                           ? line.memo.get()
                           : nullptr);
  const Totals &b = totalsOf(line.after);
  std::printf("step %-3d %-16s %8.1f ms  FLOPs %s  bytes moved %s\n",
              line.number, line.transformation.c_str(), line.seconds * 1e3,
              delta(a.flops, b.flops).c_str(),
              delta(a.bytesMoved, b.bytesMoved).c_str());
  std::fflush(stdout);
}

} // namespace weir::cli
