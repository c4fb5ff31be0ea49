/// \file
/// Dropping values on a thread of their own (see background_release.h).

#include "workspace/background_release.h"

#include <system_error>

namespace weir::workspace {

BackgroundRelease::~BackgroundRelease() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_one();
  if (thread_.joinable())
    thread_.join();
}

void BackgroundRelease::release(std::shared_ptr<const void> value) {
  if (!value)
    return;
  std::shared_ptr<const void> behind; // freed here, outside the lock
  {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) {
      try {
        thread_ = std::thread([this] { run(); });
      } catch (const std::system_error &) {
        behind = std::move(value); // no thread to be had: free it here
        return;
      }
    }
    if (waiting_.size() >= kBacklog) {
      behind = std::move(waiting_.front());
      waiting_.pop_front();
    }
    waiting_.push_back(std::move(value));
  }
  ready_.notify_one();
}

void BackgroundRelease::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ready_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty())
      return; // stopping, and nothing left
    std::shared_ptr<const void> next = std::move(waiting_.front());
    waiting_.pop_front();
    lock.unlock();
    next.reset();
    lock.lock();
  }
}

} // namespace weir::workspace
