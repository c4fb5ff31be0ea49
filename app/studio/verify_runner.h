#pragma once
/// \file
/// Verification off the GUI thread: runs workspace::verifyPrograms (both
/// programs compiled with the CPU backend and run on the same seeded random
/// inputs, verify.h) on a worker thread. The job holds shared pointers to
/// the two programs only, never the workspace or a widget, so nothing it
/// reads can be freed under it; the runner still waits for it when
/// destroyed, because its result would land in a destroyed object.
///
/// The studio verifies the current version against version 0, with the
/// loosest tolerance any step up to it declared: the same check as
/// Workspace::verify and `weir optimize --verify`.

#include "ir/program.h"
#include "workspace/verify.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <memory>

namespace weir::workspace {
class Workspace;
}

namespace weir::studio {

class VerifyRunner : public QObject {
  Q_OBJECT

public:
  explicit VerifyRunner(QObject *parent = nullptr);
  /// Waits for a verification in progress (a compile cannot be stopped).
  ~VerifyRunner() override;

  /// What a finished verification found.
  struct Outcome {
    std::size_t version = 0; ///< the version checked against `reference`
    std::size_t reference = 0;
    bool ok = false;
    /// VerifyReport::str(), or why the programs could not be run.
    QString text;
    double seconds = 0;
  };

  /// Verifies the workspace's current version against version 0 (see the
  /// file comment). False, and nothing started, when a verification is
  /// already running or the workspace is at version 0.
  bool start(const workspace::Workspace &ws);
  /// Verifies `after` against `before`, labelled as version `version`.
  bool start(std::shared_ptr<const ir::Program> before,
             std::shared_ptr<const ir::Program> after,
             const transforms::Exactness &tolerance, std::size_t version,
             std::size_t reference = 0);
  bool busy() const { return watcher_.isRunning(); }
  /// The last finished verification.
  const Outcome &outcome() const { return outcome_; }

signals:
  void started(std::size_t version);
  /// outcome() holds the result.
  void finished();

private:
  QFutureWatcher<Outcome> watcher_;
  Outcome outcome_;
};

} // namespace weir::studio
