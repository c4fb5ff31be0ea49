#include "app/studio/run_dock.h"

#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "codegen/cpu/compile.h"
#include "core/interp/interpreter.h"
#include "core/runtime/compare.h"
#include "core/runtime/npy.h"
#include "core/runtime/random_tensor.h"
#include "core/runtime/tensor_pb.h"
#include "ir/error.h"
#include "transforms/operators/expansion.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>

namespace weir::studio {

namespace {

/// `p` as expand-all makes it; throws weir::Error naming an operator no
/// implementation handles.
ir::Program expanded(const ir::Program &p) {
  ir::Program copy = p;
  operators::ExpandAllReport report = operators::expandAll(copy);
  if (!report.skipped.empty())
    throw Error("cannot run: " + report.skipped.front());
  return copy;
}

codegen::Executable
compileForRun(const ir::Program &p,
              std::function<void(int, int)> progress = {},
              const std::atomic<bool> *cancel = nullptr) {
  codegen::CompileOptions options;
  options.keepLLVMIR = false;
  options.progress = std::move(progress);
  options.cancel = cancel;
  return codegen::compile(expanded(p), options);
}

/// Shape, the first elements, and min/max over all of them.
QString describeValues(const runtime::Tensor &t) {
  constexpr std::int64_t kShown = 8;
  QString first;
  for (std::int64_t i = 0; i < std::min(kShown, t.elementCount()); ++i)
    first += (i ? ", " : "") + QString::number(t.getAsDouble(i), 'g', 6);
  if (t.elementCount() > kShown)
    first += ", …";
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::int64_t i = 0; i < t.elementCount(); ++i) {
    lo = std::min(lo, t.getAsDouble(i));
    hi = std::max(hi, t.getAsDouble(i));
  }
  return QObject::tr("%1\n[%2]\nmin %3 · max %4")
      .arg(QString::fromStdString(t.describe()), first)
      .arg(lo, 0, 'g', 6)
      .arg(hi, 0, 'g', 6);
}

} // namespace

RunDock::RunDock(Document &document, GraphPanel &panel, QWidget *parent)
    : QDockWidget(tr("Run"), parent), doc_(document), panel_(panel),
      seed_(new QSpinBox), repeats_(new QSpinBox), inputForm_(new QFormLayout),
      run_(new QPushButton(tr("&Run"))), step_(new QPushButton(tr("S&tep"))),
      stop_(new QPushButton(tr("Stop stepping"))),
      cancel_(new QPushButton(tr("Cancel"))), busy_(new QProgressBar),
      status_(new QLabel), latency_(new QLabel), error_(new QLabel),
      values_(new QLabel) {
  setObjectName("run-dock");
  auto *body = new QWidget;
  auto *layout = new QVBoxLayout(body);
  auto *options = new QFormLayout;
  seed_->setRange(0, std::numeric_limits<int>::max());
  seed_->setToolTip(tr("Seed of the random inputs (the same as `weir run "
                       "--random SEED`)"));
  repeats_->setRange(1, 100);
  repeats_->setValue(5);
  repeats_->setToolTip(tr("Timed runs; the latency is their median"));
  options->addRow(tr("Seed"), seed_);
  options->addRow(tr("Runs"), repeats_);
  layout->addLayout(options);
  auto *inputsLabel = new QLabel(tr("<b>Inputs</b> (empty: random)"));
  layout->addWidget(inputsLabel);
  layout->addLayout(inputForm_);
  auto *buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addWidget(step_);
  buttons->addWidget(stop_);
  buttons->addWidget(cancel_);
  layout->addLayout(buttons);
  // A busy bar until the compile reports how many pieces it has.
  busy_->setRange(0, 0);
  busy_->setMaximumHeight(8);
  busy_->setTextVisible(false);
  busy_->hide();
  layout->addWidget(busy_);
  for (QLabel *l : {status_, latency_, error_, values_}) {
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(l);
  }
  values_->setFont(QFont("monospace"));
  layout->addStretch(1);
  setWidget(body);
  run_->setToolTip(tr("Compile this version for the CPU and run it (F5)"));
  run_->setShortcut(QKeySequence(Qt::Key_F5));
  step_->setToolTip(tr("Run the next node on the reference interpreter "
                       "(F10)"));
  step_->setShortcut(QKeySequence(Qt::Key_F10));
  stop_->setEnabled(false);
  run_->setEnabled(false);
  step_->setEnabled(false);

  connect(run_, &QPushButton::clicked, this, &RunDock::run);
  connect(step_, &QPushButton::clicked, this, &RunDock::step);
  connect(stop_, &QPushButton::clicked, this, &RunDock::stopStepping);
  cancel_->setToolTip(tr("Stop compiling this version"));
  cancel_->hide();
  connect(cancel_, &QPushButton::clicked, this, &RunDock::cancel);
  connect(this, &RunDock::compileProgress, this, [this](int done, int total) {
    if (!runner_.isRunning())
      return;
    busy_->setRange(0, total);
    busy_->setValue(done);
    status_->setText(tr("Compiling: %1 of %2 pieces…").arg(done).arg(total));
  });
  connect(&runner_, &QFutureWatcher<Result>::finished, this,
          &RunDock::onFinished);
  connect(&stepper_, &QFutureWatcher<StepOutcome>::finished, this,
          &RunDock::onStepped);
  connect(&document, &Document::opened, this, &RunDock::onOpened);
  // Another version: the stepped run no longer belongs to what is shown.
  connect(&document, &Document::programChanged, this, [this] {
    if (stepping()) {
      interpreter_.reset();
      stepProgram_.reset();
      steps_ = 0;
      lastNode_ = 0;
      stop_->setEnabled(false);
      status_->setText(tr("Stepping ended: the program changed."));
    }
  });
  connect(&panel, &GraphPanel::edgeSelected, this, &RunDock::onEdgeSelected);
}

RunDock::~RunDock() {
  cancel();
  runner_.waitForFinished();
  stepper_.waitForFinished();
}

void RunDock::onOpened() {
  // Input rows of the new program.
  while (inputForm_->rowCount() > 0)
    inputForm_->removeRow(0);
  inputFiles_.clear();
  interpreter_.reset();
  stepProgram_.reset();
  steps_ = 0;
  lastNode_ = 0;
  stop_->setEnabled(false);
  result_ = {};
  latency_->clear();
  error_->clear();
  values_->clear();
  status_->clear();
  const ir::Program &p = doc_.workspace()->program();
  for (const std::string &name : p.inputs) {
    QString n = QString::fromStdString(name);
    auto *row = new QWidget;
    auto *h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    auto *file = new QLineEdit;
    file->setPlaceholderText(tr("random"));
    file->setClearButtonEnabled(true);
    auto *browse = new QToolButton;
    browse->setText("…");
    h->addWidget(file, 1);
    h->addWidget(browse);
    connect(browse, &QToolButton::clicked, this, [this, file, n] {
      QString path = QFileDialog::getOpenFileName(
          this, tr("Input %1").arg(n), QString(),
          tr("Tensors (*.npy *.pb);;All files (*)"));
      if (!path.isEmpty())
        file->setText(path);
    });
    inputForm_->addRow(n, row);
    inputFiles_[n] = file;
  }
  run_->setEnabled(true);
  step_->setEnabled(true);
}

void RunDock::setSeed(int seed) { seed_->setValue(seed); }

void RunDock::setInputFile(const QString &name, const QString &path) {
  if (QLineEdit *file = inputFiles_.value(name))
    file->setText(path);
}

interp::TensorMap RunDock::makeInputs(const ir::Program &program) const {
  ir::Bindings dims;
  for (const std::string &symbol : program.symbols)
    dims.emplace(symbol, 1);
  interp::TensorMap inputs = runtime::randomInputs(
      program, static_cast<std::uint64_t>(seed_->value()), dims);
  for (auto it = inputFiles_.begin(); it != inputFiles_.end(); ++it) {
    std::string path = it.value()->text().trimmed().toStdString();
    if (path.empty())
      continue;
    inputs[it.key().toStdString()] =
        QFileInfo(it.value()->text()).suffix() == "npy"
            ? runtime::readNpy(path)
            : runtime::readTensorPb(path);
  }
  return inputs;
}

void RunDock::run() {
  workspace::Workspace *ws = doc_.workspace();
  if (!ws || running())
    return;
  std::shared_ptr<const ir::Program> current, reference;
  std::size_t version = 0;
  {
    auto lock = ws->lock();
    current = ws->programPtr();
    reference = ws->versions().front().program();
    version = ws->current();
  }
  interp::TensorMap inputs;
  try {
    inputs = makeInputs(*current);
  } catch (const std::exception &e) {
    status_->setText(
        tr("Cannot read the inputs: %1").arg(QString::fromUtf8(e.what())));
    return;
  }
  int repeats = repeats_->value();
  run_->setEnabled(false);
  busy_->setRange(0, 0);
  busy_->show();
  cancel_->show();
  cancelled_ = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<std::atomic<bool>> cancelled = cancelled_;
  // From the compile threads' caller (the worker) to the dock's thread.
  QPointer<RunDock> self(this);
  auto progress = [self](int done, int total) {
    if (self)
      QMetaObject::invokeMethod(
          self, [self, done, total] {
            if (self)
              emit self->compileProgress(done, total);
          },
          Qt::QueuedConnection);
  };
  status_->setText(tr("Compiling and running version %1 (seed %2)…")
                       .arg(version)
                       .arg(seed_->value()));
  runner_.setFuture(QtConcurrent::run([=]() -> Result {
    Result r;
    r.version = version;
    try {
      using Clock = std::chrono::steady_clock;
      codegen::Executable exe =
          compileForRun(*current, progress, cancelled.get());
      r.compileSeconds = exe.compileSeconds();
      // One untimed run first: it pays for page faults and cold caches.
      interp::TensorMap got = exe.run(inputs);
      std::vector<double> ms;
      for (int i = 0; i < repeats; ++i) {
        auto start = Clock::now();
        got = exe.run(inputs);
        ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start)
                .count());
      }
      std::sort(ms.begin(), ms.end());
      r.runs = repeats;
      r.medianMs = ms.size() % 2
                       ? ms[ms.size() / 2]
                       : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
      interp::TensorMap want =
          reference == current
              ? got
              : compileForRun(*reference, {}, cancelled.get()).run(inputs);
      r.maxAbs = r.maxRel = 0;
      for (const auto &[name, t] : got) {
        auto w = want.find(name);
        if (w == want.end())
          throw Error("output '" + name + "' is not an output of version 0");
        runtime::Comparison c = runtime::compareTensors(t, w->second, 0, 0);
        if (!c.problem.empty())
          throw Error("output '" + name + "': " + c.problem);
        r.maxAbs = std::max(r.maxAbs, c.maxAbs);
        r.maxRel = std::max(r.maxRel, c.maxRel);
        r.perOutput << QObject::tr("%1: max abs %2, max rel %3")
                           .arg(QString::fromStdString(name))
                           .arg(c.maxAbs, 0, 'g', 3)
                           .arg(c.maxRel, 0, 'g', 3);
      }
    } catch (const std::exception &e) {
      r.error = QString::fromUtf8(e.what());
    }
    return r;
  }));
}

void RunDock::cancel() {
  if (cancelled_)
    cancelled_->store(true);
}

void RunDock::onFinished() {
  Result r = runner_.result();
  busy_->hide();
  cancel_->hide();
  run_->setEnabled(doc_.workspace() != nullptr);
  if (!r.error.isEmpty()) {
    status_->setText(
        tr("Version %1 did not run: %2").arg(r.version).arg(r.error));
    emit finished();
    return;
  }
  result_ = r;
  status_->setText(
      tr("Version %1 ran on %2 (compiled in %3 s).")
          .arg(r.version)
          .arg(std::all_of(
                   inputFiles_.begin(), inputFiles_.end(),
                   [](QLineEdit *f) { return f->text().trimmed().isEmpty(); })
                   ? tr("random inputs, seed %1").arg(seed_->value())
                   : tr("the chosen inputs"))
          .arg(r.compileSeconds, 0, 'f', 2));
  latency_->setText(latencyText());
  error_->setText(errorText() + "\n" + r.perOutput.join("\n"));
  emit finished();
}

QString RunDock::latencyText() const {
  if (result_.medianMs < 0)
    return {};
  return tr("Latency: %1 ms (median of %2 runs)")
      .arg(result_.medianMs, 0, 'f', 3)
      .arg(result_.runs);
}

QString RunDock::errorText() const {
  if (result_.maxAbs < 0)
    return {};
  return tr("Error against version 0: max abs %1, max rel %2")
      .arg(result_.maxAbs, 0, 'g', 3)
      .arg(result_.maxRel, 0, 'g', 3);
}

QString RunDock::statusText() const { return status_->text(); }

void RunDock::step() {
  workspace::Workspace *ws = doc_.workspace();
  if (!ws || stepBusy())
    return;
  if (!interpreter_) {
    try {
      std::shared_ptr<const ir::Program> current;
      {
        auto lock = ws->lock();
        current = ws->programPtr();
      }
      auto program = std::make_shared<const ir::Program>(expanded(*current));
      interpreter_ =
          std::make_shared<interp::Interpreter>(*program, makeInputs(*program));
      stepProgram_ = program;
    } catch (const std::exception &e) {
      status_->setText(tr("Cannot step: %1").arg(QString::fromUtf8(e.what())));
      return;
    }
    steps_ = 0;
    lastNode_ = 0;
    stop_->setEnabled(true);
    panel_.showProgram(stepProgram_, int(interpreter_->currentState()));
  }
  if (interpreter_->done()) {
    status_->setText(tr("Every node has run (%1 steps).").arg(steps_));
    return;
  }
  step_->setEnabled(false);
  status_->setText(tr("Running the next node…"));
  auto interpreter = interpreter_;
  auto program = stepProgram_;
  stepper_.setFuture(QtConcurrent::run([interpreter, program] {
    StepOutcome out;
    out.node = interpreter->nextNode();
    try {
      interpreter->step();
    } catch (const std::exception &e) {
      out.error = QString::fromUtf8(e.what());
    }
    return out;
  }));
}

void RunDock::onStepped() {
  StepOutcome out = stepper_.result();
  step_->setEnabled(doc_.workspace() != nullptr);
  if (!interpreter_)
    return; // stopped or the program changed meanwhile
  if (!out.error.isEmpty()) {
    status_->setText(tr("The node failed: %1").arg(out.error));
    emit stepped();
    return;
  }
  ++steps_;
  lastNode_ = out.node;
  std::vector<ir::NodeId> marked{out.node};
  QString label;
  for (const ir::State &s : stepProgram_->states)
    if (const ir::Node *n = s.findNode(out.node)) {
      label = QString::fromStdString(n->label);
      if (n->kind == ir::NodeKind::MapEntry)
        marked.push_back(n->map().partner);
    }
  // The interpreter may have moved on to the next state.
  if (!interpreter_->done() &&
      int(interpreter_->currentState()) != panel_.shownState())
    panel_.showProgram(stepProgram_, int(interpreter_->currentState()));
  panel_.highlight(marked);
  status_->setText(
      interpreter_->done()
          ? tr("Step %1: ran '%2'; every node has run.").arg(steps_).arg(label)
          : tr("Step %1: ran '%2'.").arg(steps_).arg(label));
  refreshValues();
  emit stepped();
}

void RunDock::stopStepping() {
  if (!interpreter_)
    return;
  stepper_.waitForFinished();
  interpreter_.reset();
  stepProgram_.reset();
  steps_ = 0;
  lastNode_ = 0;
  stop_->setEnabled(false);
  values_->clear();
  status_->setText(tr("Stepping stopped."));
  panel_.highlight({});
  if (workspace::Workspace *ws = doc_.workspace())
    panel_.showProgram(ws->programPtr(), std::max(0, panel_.shownState()));
}

void RunDock::onEdgeSelected(ir::EdgeId id) {
  const auto &shown = panel_.shownProgram();
  if (!shown || !stepping() || shown != stepProgram_)
    return;
  const ir::Edge *e =
      shown->states[std::size_t(panel_.shownState())].findEdge(id);
  if (e && !e->memlet.empty())
    showValues(QString::fromStdString(e->memlet.container));
}

void RunDock::showValues(const QString &container) {
  valuesOf_ = container;
  refreshValues();
}

void RunDock::refreshValues() {
  if (!interpreter_ || valuesOf_.isEmpty() || stepBusy())
    return;
  try {
    values_->setText(
        valuesOf_ + ": " +
        describeValues(interpreter_->value(valuesOf_.toStdString())));
  } catch (const std::exception &e) {
    values_->setText(QString::fromUtf8(e.what()));
  }
}

QString RunDock::valuesText() const { return values_->text(); }

} // namespace weir::studio
