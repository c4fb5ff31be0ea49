#pragma once
/// \file
/// Weir's thread pool: runs the parallel loops of compiled programs. A
/// parallelFor splits [0, count) into one contiguous chunk per thread; the
/// calling thread runs the first chunk itself and waits for the others.
/// Calls from inside a running parallelFor (nested parallelism) run
/// serially on the calling thread.
///
/// A model runs hundreds of short parallel loops one after another, many
/// of them shorter than the time a sleeping thread takes to wake (tens of
/// microseconds on a virtual machine). So an idle worker first watches for
/// the next loop for a while (`kSpin`) and only then sleeps on a condition
/// variable, and the caller watches for the workers to finish before it
/// sleeps; the condition variables are signalled only when somebody sleeps.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace weir::runtime {

class ThreadPool {
public:
  /// `threads` = total threads including the caller; 0 = the number of
  /// cores (std::thread::hardware_concurrency).
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Body of a parallel loop: runs iterations [begin, end).
  using Body = void (*)(void *context, std::int64_t begin, std::int64_t end);
  /// Runs body over [0, count) in chunks; returns when all have finished.
  /// Serialized: one parallelFor at a time per pool.
  void parallelFor(std::int64_t count, Body body, void *context);

private:
  void workerLoop(int index);
  /// Waits (spinning, then sleeping) until generation_ differs from `seen`
  /// or the pool stops; returns the new generation.
  std::uint64_t awaitJob(std::uint64_t seen);
  void awaitWorkers();

  std::vector<std::thread> workers_;
  std::mutex runMutex_; ///< one parallelFor at a time
  // The job being run: written before generation_ is advanced, read by
  // a worker after it sees the new generation.
  Body body_ = nullptr;
  void *context_ = nullptr;
  std::int64_t count_ = 0;
  alignas(64) std::atomic<std::uint64_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  // Sleeping: counted under mutex_, so a signaller that sees nobody
  // asleep may skip the condition variable.
  alignas(64) std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<int> sleepingWorkers_{0};
  std::atomic<bool> callerSleeping_{false};
  std::atomic<bool> stop_{false};
};

} // namespace weir::runtime
