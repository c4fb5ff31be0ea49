#pragma once
/// \file
/// The Run dock: compiles the current version with the CPU backend (LLVM
/// JIT, codegen/cpu/compile.h) and runs it on seeded random inputs
/// (runtime::randomInputs, the inputs `weir run --random` and
/// Workspace::verify draw) or on `.npy`/`.pb` files the user picks. It
/// shows the median latency of a few runs and the largest absolute and
/// relative error against the workspace's first version run on the same
/// inputs. Compiling and running happen on a worker thread; a result for
/// a version that is no longer current is still shown, labelled with its
/// version.
///
/// Teaching mode steps the reference interpreter (core/interp/
/// interpreter.h) node by node on the same inputs. It runs the program as
/// expand-all makes it (the interpreter runs no operators), so the graph
/// panel shows that program while stepping; the node that ran last is
/// highlighted, and selecting an edge shows its container's values.

#include "core/interp/bind_inputs.h"
#include "ir/program.h"

#include <QDockWidget>
#include <QFutureWatcher>

#include <atomic>
#include <memory>
#include <QMap>

#include <memory>
#include <vector>

class QFormLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace weir::interp {
class Interpreter;
}

namespace weir::studio {

class Document;
class GraphPanel;

class RunDock : public QDockWidget {
  Q_OBJECT

public:
  RunDock(Document &document, GraphPanel &panel, QWidget *parent = nullptr);
  /// Waits for a compile, run or step in progress: its result would land
  /// in a destroyed dock.
  ~RunDock() override;

  /// Compiles and runs the current version (and the first, for the error)
  /// on a worker thread; finished() follows.
  void run();
  bool running() const { return runner_.isRunning(); }
  /// Seed of the random inputs.
  void setSeed(int seed);
  /// Reads input `name` from `path` (.npy, else TensorProto .pb) instead
  /// of drawing it; "" draws it again.
  void setInputFile(const QString &name, const QString &path);

  /// The last finished run: median latency in ms and the largest errors
  /// over every output; negative before the first run.
  double medianMs() const { return result_.medianMs; }
  double maxAbsError() const { return result_.maxAbs; }
  double maxRelError() const { return result_.maxRel; }
  QString latencyText() const;
  QString errorText() const;
  QString statusText() const;

  /// Teaching mode: runs the next top-level node on the interpreter (the
  /// first call starts it). stepped() follows.
  void step();
  /// Leaves teaching mode and shows the current version again.
  void stopStepping();
  bool stepping() const { return interpreter_ != nullptr; }
  bool stepBusy() const { return stepper_.isRunning(); }
  /// The program being stepped (expanded), null when not stepping.
  const std::shared_ptr<const ir::Program> &steppedProgram() const {
    return stepProgram_;
  }
  /// Nodes run so far, and the last of them (0 before the first).
  int stepsDone() const { return steps_; }
  ir::NodeId lastStepNode() const { return lastNode_; }
  /// The interpreter, for reading values; null when not stepping.
  const interp::Interpreter *interpreter() const { return interpreter_.get(); }
  /// What the values box shows for the selected edge's container.
  QString valuesText() const;
  /// Shows the values of `container` (the selected edge's).
  void showValues(const QString &container);

  QPushButton *runButton() { return run_; }
  QPushButton *stepButton() { return step_; }
  QPushButton *cancelButton() { return cancel_; }
  /// Stops the compile in progress: the run then ends with "compilation
  /// cancelled".
  void cancel();

signals:
  void finished();
  void stepped();
  /// Pieces compiled so far, of `total` (codegen::CompileOptions::progress).
  void compileProgress(int done, int total);

private:
  struct Result {
    std::size_t version = 0;
    QString error;
    double medianMs = -1, compileSeconds = 0;
    int runs = 0;
    double maxAbs = -1, maxRel = -1;
    QStringList perOutput;
  };
  struct StepOutcome {
    ir::NodeId node = 0;
    QString error;
  };

  void onOpened();
  void onFinished();
  void onStepped();
  void onEdgeSelected(ir::EdgeId id);
  /// The inputs a run or a step uses: drawn with the seed, or read.
  interp::TensorMap makeInputs(const ir::Program &program) const;
  void refreshValues();

  Document &doc_;
  GraphPanel &panel_;
  QSpinBox *seed_;
  QSpinBox *repeats_;
  QFormLayout *inputForm_;
  QMap<QString, QLineEdit *> inputFiles_;
  QPushButton *run_;
  QPushButton *step_;
  QPushButton *stop_;
  QPushButton *cancel_;
  QProgressBar *busy_;
  QLabel *status_;
  QLabel *latency_;
  QLabel *error_;
  QLabel *values_;
  QString valuesOf_; ///< the container the values box shows

  QFutureWatcher<Result> runner_;
  /// Set to stop the run's compile; a fresh flag per run.
  std::shared_ptr<std::atomic<bool>> cancelled_;
  Result result_;

  QFutureWatcher<StepOutcome> stepper_;
  /// Declared first: the interpreter goes before the program it runs.
  std::shared_ptr<const ir::Program> stepProgram_;
  std::shared_ptr<interp::Interpreter> interpreter_;
  int steps_ = 0;
  ir::NodeId lastNode_ = 0;
};

} // namespace weir::studio
