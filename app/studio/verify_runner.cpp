#include "app/studio/verify_runner.h"

#include "workspace/workspace.h"

#include <QtConcurrent/QtConcurrentRun>

#include <exception>

namespace weir::studio {

VerifyRunner::VerifyRunner(QObject *parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcher<Outcome>::finished, this, [this] {
    outcome_ = watcher_.result();
    emit finished();
  });
}

VerifyRunner::~VerifyRunner() { watcher_.waitForFinished(); }

bool VerifyRunner::start(const workspace::Workspace &ws) {
  std::shared_ptr<const ir::Program> first, now;
  std::vector<transforms::Exactness> steps;
  std::size_t version = 0;
  {
    auto lock = ws.lock();
    version = ws.current();
    for (std::size_t i = 1; i <= version; ++i)
      steps.push_back(ws.versions()[i].exactness);
    first = ws.versions().front().program();
    now = ws.programPtr();
  }
  if (version == 0)
    return false;
  return start(first, now, workspace::combineTolerances(steps), version);
}

bool VerifyRunner::start(std::shared_ptr<const ir::Program> before,
                         std::shared_ptr<const ir::Program> after,
                         const transforms::Exactness &tolerance,
                         std::size_t version, std::size_t reference) {
  if (busy() || !before || !after)
    return false;
  // Copies of the pointers only: the workspace may move on meanwhile.
  watcher_.setFuture(QtConcurrent::run(
      [before, after, tolerance, version, reference]() -> Outcome {
        Outcome o;
        o.version = version;
        o.reference = reference;
        try {
          workspace::VerifyReport r =
              workspace::verifyPrograms(*before, *after, tolerance);
          o.ok = r.ok;
          o.text = QString::fromStdString(r.str());
          o.seconds = r.seconds;
        } catch (const std::exception &e) {
          o.ok = false;
          o.text = QString::fromUtf8(e.what());
        }
        return o;
      }));
  emit started(version);
  return true;
}

} // namespace weir::studio
