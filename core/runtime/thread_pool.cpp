/// \file
/// The thread pool behind compiled parallel loops: spin, then sleep.
///
/// The hand-offs are Dekker-style and sequentially consistent: a sleeper
/// announces itself (sleepingWorkers_, callerSleeping_) under mutex_ and
/// then re-checks the condition; a signaller changes the condition and then
/// reads the announcement. One of the two sees the other, and a signaller
/// that sees a sleeper takes mutex_ before notifying, so the wake-up cannot
/// fall between the sleeper's check and its wait.

#include "core/runtime/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WEIR_CPU_RELAX() _mm_pause()
#else
#define WEIR_CPU_RELAX() std::this_thread::yield()
#endif

namespace weir::runtime {
namespace {

/// How long a thread watches before it sleeps. Longer than the gap
/// between two loops of a model, short enough that an idle pool gives the
/// cores back at once to anybody else.
constexpr auto kSpin = std::chrono::microseconds(100);

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

/// Calls `ready` until it holds or kSpin has passed; the clock is read
/// once per 64 checks. Past the first quarter of the budget the thread
/// yields between checks, so a spinning thread gives way to a runnable
/// one on an oversubscribed machine.
template <typename Ready> bool spinUntil(Ready ready) {
  auto start = std::chrono::steady_clock::now();
  auto patient = start + kSpin / 4, deadline = start + kSpin;
  bool yielding = false;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready())
        return true;
      if (yielding)
        std::this_thread::yield();
      else
        WEIR_CPU_RELAX();
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      return false;
    yielding = now >= patient;
  }
}

} // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0)
    threads =
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
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
  body_ = body;
  context_ = context;
  count_ = count;
  pending_ = static_cast<int>(workers_.size());
  ++generation_;
  if (sleepingWorkers_ > 0) {
    std::lock_guard lock(mutex_);
    wake_.notify_all();
  }
  runChunk(body, context, count, threads(), 0);
  awaitWorkers();
}

void ThreadPool::awaitWorkers() {
  if (spinUntil([this] { return pending_ == 0; }))
    return;
  std::unique_lock lock(mutex_);
  callerSleeping_ = true;
  done_.wait(lock, [this] { return pending_ == 0; });
  callerSleeping_ = false;
}

std::uint64_t ThreadPool::awaitJob(std::uint64_t seen) {
  if (spinUntil([&] { return generation_ != seen || stop_; }))
    return generation_;
  std::unique_lock lock(mutex_);
  ++sleepingWorkers_;
  wake_.wait(lock, [&] { return generation_ != seen || stop_; });
  --sleepingWorkers_;
  return generation_;
}

void ThreadPool::workerLoop(int index) {
  std::uint64_t seen = 0;
  for (;;) {
    seen = awaitJob(seen);
    if (stop_)
      return;
    runChunk(body_, context_, count_, threads(), index);
    if (--pending_ == 0 && callerSleeping_) {
      std::lock_guard lock(mutex_);
      done_.notify_one();
    }
  }
}

} // namespace weir::runtime
