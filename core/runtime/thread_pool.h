#pragma once
/// \file
/// Weir's thread pool: runs the parallel loops of compiled programs. A
/// parallelFor splits [0, count) into one contiguous chunk per thread; the
/// calling thread runs the first chunk itself and waits for the others.
/// Calls from inside a running parallelFor (nested parallelism) run
/// serially on the calling thread.

#include <condition_variable>
#include <cstdint>
#include <functional>
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

  std::vector<std::thread> workers_;
  std::mutex runMutex_; ///< one parallelFor at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  // The job being run, valid while pending_ > 0.
  Body body_ = nullptr;
  void *context_ = nullptr;
  std::int64_t count_ = 0;
  std::uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

} // namespace weir::runtime
