/// \file
/// The thread pool behind compiled parallel loops.

#include "core/runtime/thread_pool.h"

#include <algorithm>

namespace weir::runtime {
namespace {
/// Set while this thread runs a chunk, so nested parallelFor calls run
/// inline instead of waiting on a pool they occupy.
thread_local bool tInsideParallel = false;

void runChunk(ThreadPool::Body body, void *context, std::int64_t count,
              int chunks, int index) {
  std::int64_t begin = count * index / chunks;
  std::int64_t end = count * (index + 1) / chunks;
  if (begin < end) {
    tInsideParallel = true;
    body(context, begin, end);
    tInsideParallel = false;
  }
}
} // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < threads; ++i)
    workers_.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::parallelFor(std::int64_t count, Body body, void *context) {
  if (count <= 0)
    return;
  if (workers_.empty() || count == 1 || tInsideParallel) {
    body(context, 0, count);
    return;
  }
  std::lock_guard run(runMutex_);
  {
    std::lock_guard lock(mutex_);
    body_ = body;
    context_ = context;
    count_ = count;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  runChunk(body, context, count, threads(), 0);
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
}

void ThreadPool::workerLoop(int index) {
  std::uint64_t seen = 0;
  for (;;) {
    Body body;
    void *context;
    std::int64_t count;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
      body = body_;
      context = context_;
      count = count_;
    }
    runChunk(body, context, count, threads(), index);
    {
      std::lock_guard lock(mutex_);
      if (--pending_ == 0)
        done_.notify_one();
    }
  }
}

} // namespace weir::runtime
