#pragma once
/// \file
/// Drops what the workspace lets go of on a thread of its own.
///
/// A long recipe drops a program of thousands of nodes at nearly every step
/// (the versions that leave the resident set, the indexes of the version
/// before), and freeing one took a tenth of the step: every node, edge and
/// string is a heap block. The step need not wait for that. A
/// BackgroundRelease takes the last reference and lets it go on its thread;
/// when that thread falls behind by kBacklog values, the caller frees one
/// itself, so the memory waiting to be freed stays bounded.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace weir::workspace {

class BackgroundRelease {
public:
  /// Values waiting before release() frees them on the caller's thread.
  static constexpr std::size_t kBacklog = 4;

  BackgroundRelease() = default;
  /// Frees what is still waiting, then ends the thread.
  ~BackgroundRelease();
  BackgroundRelease(const BackgroundRelease &) = delete;
  BackgroundRelease &operator=(const BackgroundRelease &) = delete;

  /// Lets `value` go on the thread (started on first use). Whatever else
  /// still holds it keeps it alive as before.
  void release(std::shared_ptr<const void> value);

private:
  void run();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::shared_ptr<const void>> waiting_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace weir::workspace
