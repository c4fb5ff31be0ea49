#include "app/studio/layout_runner.h"

#include <exception>

namespace weir::studio {

namespace {

/// cgraph and gvc are not thread-safe: with several runners alive (the
/// main graph and a preview's), their Graphviz calls take turns.
std::mutex &graphvizMutex() {
  static std::mutex m;
  return m;
}

} // namespace

LayoutRunner::LayoutRunner(QObject *parent)
    : QObject(parent), thread_([this] { work(); }) {}

LayoutRunner::~LayoutRunner() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    next_.reset();
  }
  wake_.notify_one();
  thread_.join();
}

std::uint64_t LayoutRunner::request(LayoutGraph graph) {
  std::uint64_t ticket = ++lastTicket_;
  awaited_ = ticket;
  {
    std::lock_guard lock(mutex_);
    next_.emplace(ticket, std::move(graph));
  }
  wake_.notify_one();
  return ticket;
}

void LayoutRunner::cancel() {
  awaited_ = 0;
  std::lock_guard lock(mutex_);
  next_.reset();
}

void LayoutRunner::work() {
  // Created on this thread and used only here.
  std::optional<GraphvizLayout> dot;
  std::string setupError;
  try {
    std::lock_guard graphviz(graphvizMutex());
    dot.emplace();
  } catch (const std::exception &e) {
    setupError = e.what();
  }
  struct Release { // the context goes under the lock too
    std::optional<GraphvizLayout> &dot;
    ~Release() {
      std::lock_guard graphviz(graphvizMutex());
      dot.reset();
    }
  } release{dot};
  for (;;) {
    std::pair<std::uint64_t, LayoutGraph> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || next_; });
      if (stop_)
        return;
      job = std::move(*next_);
      next_.reset();
    }
    std::shared_ptr<const LayoutResult> result;
    QString error = QString::fromStdString(setupError);
    if (dot) {
      try {
        std::lock_guard graphviz(graphvizMutex());
        result = std::make_shared<const LayoutResult>(dot->run(job.second));
      } catch (const std::exception &e) {
        error = QString::fromUtf8(e.what());
      }
    }
    // Back on the GUI thread, where awaited_ says whether anyone still
    // wants this one.
    std::uint64_t ticket = job.first;
    QMetaObject::invokeMethod(
        this,
        [this, ticket, result, error] {
          if (ticket != awaited_)
            return;
          awaited_ = 0;
          if (result)
            emit finished(ticket, result);
          else
            emit failed(ticket, error);
        },
        Qt::QueuedConnection);
  }
}

} // namespace weir::studio
