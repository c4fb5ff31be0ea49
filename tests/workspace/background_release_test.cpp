// What the workspace drops is freed on a thread of its own, all of it by the
// time the releaser is destroyed; what someone else still holds stays; and
// when the thread falls behind, the caller frees the oldest itself.

#include "workspace/background_release.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace weir::workspace {
namespace {

/// A value whose deleter records the thread that freed it.
struct Freed {
  std::mutex mutex;
  std::vector<std::thread::id> threads;

  std::shared_ptr<const void> make() {
    return std::shared_ptr<const int>(new int(0), [this](const int *p) {
      delete p;
      std::lock_guard lock(mutex);
      threads.push_back(std::this_thread::get_id());
    });
  }
};

TEST(BackgroundRelease, FreesOnItsOwnThreadAndEverythingByTheEnd) {
  Freed freed;
  {
    BackgroundRelease release;
    for (int i = 0; i < 3; ++i)
      release.release(freed.make());
  }
  ASSERT_EQ(freed.threads.size(), 3u);
  for (std::thread::id t : freed.threads)
    EXPECT_NE(t, std::this_thread::get_id());
}

TEST(BackgroundRelease, WhatOthersHoldStays) {
  Freed freed;
  std::shared_ptr<const void> kept = freed.make();
  {
    BackgroundRelease release;
    release.release(kept);
    release.release(nullptr);
  }
  EXPECT_TRUE(freed.threads.empty());
  kept.reset();
  EXPECT_EQ(freed.threads.size(), 1u);
}

TEST(BackgroundRelease, ACallerFreesTheOldestWhenTheThreadFallsBehind) {
  Freed freed;
  std::promise<void> go;
  std::shared_future<void> gate = go.get_future().share();
  std::atomic<bool> blocking = false;
  {
    BackgroundRelease release;
    // The thread's first value waits at the gate.
    release.release(std::shared_ptr<const int>(new int(0), [&](const int *p) {
      blocking = true;
      gate.wait();
      delete p;
    }));
    while (!blocking)
      std::this_thread::yield();
    for (std::size_t i = 0; i < BackgroundRelease::kBacklog + 2; ++i)
      release.release(freed.make());
    {
      std::lock_guard lock(freed.mutex);
      ASSERT_EQ(freed.threads.size(), 2u);
      for (std::thread::id t : freed.threads)
        EXPECT_EQ(t, std::this_thread::get_id());
    }
    go.set_value();
  }
  EXPECT_EQ(freed.threads.size(), BackgroundRelease::kBacklog + 2);
}

} // namespace
} // namespace weir::workspace
