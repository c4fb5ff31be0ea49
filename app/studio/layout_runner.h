#pragma once
/// \file
/// Graph layouts off the GUI thread: one worker thread that owns the
/// Graphviz context (cgraph is not thread-safe, so there is exactly one per
/// runner, and the runners' Graphviz calls take turns under one lock).
/// The newest request wins: a request that has not started is replaced by
/// a newer one, and the result of one that was running when a newer request
/// (or cancel()) came is discarded. A running dot layout cannot be
/// interrupted, so cancelling means not waiting for it.

#include "app/studio/graph_layout.h"

#include <QObject>
#include <QString>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace weir::studio {

class LayoutRunner : public QObject {
  Q_OBJECT

public:
  explicit LayoutRunner(QObject *parent = nullptr);
  /// Waits for a layout in progress to end (dot cannot be stopped).
  ~LayoutRunner() override;

  /// Queues a layout; returns its ticket, which finished() carries.
  std::uint64_t request(LayoutGraph graph);
  /// Forgets every request: nothing already asked for will be reported.
  void cancel();
  /// Whether a reported result is still awaited.
  bool busy() const { return awaited_ != 0; }

signals:
  /// The newest request's layout (on the GUI thread).
  void finished(std::uint64_t ticket,
                std::shared_ptr<const weir::studio::LayoutResult> result);
  void failed(std::uint64_t ticket, const QString &message);

private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<std::pair<std::uint64_t, LayoutGraph>> next_;
  bool stop_ = false;
  std::uint64_t lastTicket_ = 0; ///< GUI thread only
  std::uint64_t awaited_ = 0;    ///< GUI thread only; 0 = none
  std::thread thread_;
};

} // namespace weir::studio
