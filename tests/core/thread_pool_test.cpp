// The thread pool: every iteration runs exactly once, whatever the count
// and the number of threads; thousands of back-to-back loops (workers that
// spin between them) and loops with pauses long enough for the workers to
// sleep; nested loops run inline; a pool is destroyed while its workers
// spin and while they sleep.

#include "core/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace weir::runtime {
namespace {

struct Visits {
  std::vector<std::atomic<int>> hits;
  explicit Visits(std::int64_t n) : hits(static_cast<std::size_t>(n)) {}
  static void body(void *context, std::int64_t begin, std::int64_t end) {
    auto *v = static_cast<Visits *>(context);
    for (std::int64_t i = begin; i < end; ++i)
      ++v->hits[static_cast<std::size_t>(i)];
  }
  bool once() const {
    for (const auto &h : hits)
      if (h != 1)
        return false;
    return true;
  }
};

TEST(ThreadPool, EveryIterationOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (std::int64_t count : {1, 2, 3, 4, 7, 64, 1000}) {
      Visits v(count);
      pool.parallelFor(count, &Visits::body, &v);
      EXPECT_TRUE(v.once()) << threads << " threads, count " << count;
    }
    pool.parallelFor(0, &Visits::body, nullptr); // nothing to run
  }
}

struct Sum {
  std::atomic<std::int64_t> total{0};
  static void body(void *context, std::int64_t begin, std::int64_t end) {
    std::int64_t s = 0;
    for (std::int64_t i = begin; i < end; ++i)
      s += i;
    static_cast<Sum *>(context)->total += s;
  }
};

TEST(ThreadPool, BackToBackLoops) {
  ThreadPool pool(2);
  Sum sum;
  constexpr int kLoops = 20000;
  for (int i = 0; i < kLoops; ++i)
    pool.parallelFor(10, &Sum::body, &sum);
  EXPECT_EQ(sum.total, std::int64_t(kLoops) * 45);
}

TEST(ThreadPool, LoopsAfterTheWorkersSleep) {
  ThreadPool pool(3);
  Sum sum;
  for (int i = 0; i < 5; ++i) {
    // Longer than the workers watch for work: they are asleep now.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pool.parallelFor(100, &Sum::body, &sum);
  }
  EXPECT_EQ(sum.total, 5 * 4950);
}

// The caller finishes first and waits long enough to sleep; the slow
// worker has to wake it.
TEST(ThreadPool, CallerSleepsUntilASlowChunkEnds) {
  ThreadPool pool(2);
  std::atomic<int> done{0};
  auto body = [](void *context, std::int64_t begin, std::int64_t) {
    if (begin > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    ++*static_cast<std::atomic<int> *>(context);
  };
  for (int i = 0; i < 3; ++i)
    pool.parallelFor(2, body, &done);
  EXPECT_EQ(done, 6);
}

TEST(ThreadPool, NestedLoopsRunInline) {
  ThreadPool pool(2);
  struct Outer {
    ThreadPool *pool;
    std::atomic<std::int64_t> inner{0};
  } outer{&pool};
  auto body = [](void *context, std::int64_t begin, std::int64_t end) {
    auto *o = static_cast<Outer *>(context);
    for (std::int64_t i = begin; i < end; ++i) {
      Visits v(17);
      o->pool->parallelFor(17, &Visits::body, &v);
      if (v.once())
        o->inner += 17;
    }
  };
  pool.parallelFor(8, body, &outer);
  EXPECT_EQ(outer.inner, 8 * 17);
}

TEST(ThreadPool, DestroyedWhileSpinningOrSleeping) {
  Sum sum;
  {
    ThreadPool pool(2);
    pool.parallelFor(4, &Sum::body, &sum); // workers now watch for work
  }
  {
    ThreadPool pool(2);
    pool.parallelFor(4, &Sum::body, &sum);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  { ThreadPool idle(4); }
  EXPECT_EQ(sum.total, 12);
}

} // namespace
} // namespace weir::runtime
