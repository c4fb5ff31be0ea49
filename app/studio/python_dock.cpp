#include "app/studio/python_dock.h"

#include "app/python_host/python_console.h"
#include "app/studio/document.h"
#include "app/studio/main_window.h"

#include <QAction>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QVBoxLayout>

#include <algorithm>

namespace weir::studio {

namespace {

const QString kPrompt = QStringLiteral(">>>");
const QString kMore = QStringLiteral("...");

} // namespace

PythonDock::PythonDock(std::unique_ptr<app::PythonConsole> console,
                       const QString &unavailable, QWidget *parent)
    : QDockWidget(tr("Python"), parent), console_(std::move(console)),
      output_(new QPlainTextEdit(this)), prompt_(new QLabel(kPrompt, this)),
      input_(new QLineEdit(this)) {
  setObjectName("PythonDock");
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  output_->setReadOnly(true);
  output_->setFont(mono);
  output_->setMaximumBlockCount(5000);
  input_->setFont(mono);
  prompt_->setFont(mono);
  input_->installEventFilter(this);
  auto *box = new QWidget(this);
  auto *layout = new QVBoxLayout(box);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(output_);
  auto *line = new QHBoxLayout;
  line->addWidget(prompt_);
  line->addWidget(input_, 1);
  layout->addLayout(line);
  setWidget(box);
  if (console_) {
    output_->appendPlainText(
        tr("Python: `weir` is imported and `ws` is the open workspace.\n"
           "Try: ws.matches('expand-all'), ws.apply('expand-all', "
           "ws.matches('expand-all')[0]), ws.undo(), help(weir)"));
  } else {
    output_->appendPlainText(
        tr("Python is not available: %1").arg(unavailable));
    input_->setEnabled(false);
  }
  connect(input_, &QLineEdit::returnPressed, this, &PythonDock::submit);
}

PythonDock::~PythonDock() = default;

QString PythonDock::run(const QString &line) {
  if (!console_)
    return {};
  output_->appendPlainText(prompt_->text() + " " + line);
  app::PythonConsole::Result r = console_->push(line.toStdString());
  QString printed = QString::fromStdString(r.output);
  if (!printed.isEmpty()) {
    if (printed.endsWith('\n'))
      printed.chop(1);
    output_->appendPlainText(printed);
  }
  prompt_->setText(r.more ? kMore : kPrompt);
  output_->verticalScrollBar()->setValue(
      output_->verticalScrollBar()->maximum());
  emit executed();
  return QString::fromStdString(r.output);
}

void PythonDock::submit() {
  QString line = input_->text();
  input_->clear();
  if (!line.trimmed().isEmpty() &&
      (history_.isEmpty() || history_.back() != line))
    history_.append(line);
  historyAt_ = static_cast<int>(history_.size());
  run(line);
}

bool PythonDock::eventFilter(QObject *watched, QEvent *event) {
  if (watched == input_ && event->type() == QEvent::KeyPress) {
    auto *key = static_cast<QKeyEvent *>(event);
    int step = key->key() == Qt::Key_Up     ? -1
               : key->key() == Qt::Key_Down ? 1
                                            : 0;
    if (step != 0 && !history_.isEmpty()) {
      historyAt_ =
          std::clamp(historyAt_ + step, 0, static_cast<int>(history_.size()));
      input_->setText(historyAt_ < history_.size() ? history_[historyAt_]
                                                   : QString());
      return true;
    }
  }
  return QDockWidget::eventFilter(watched, event);
}

void PythonDock::follow(Document *document) {
  if (document_)
    disconnect(document_, nullptr, this, nullptr);
  document_ = document;
  auto bind = [this] {
    if (console_ && document_)
      console_->bindWorkspace(document_->sharedWorkspace());
  };
  bind();
  connect(document_, &Document::opened, this, bind);
}

void installPythonDock(MainWindow &window,
                       std::unique_ptr<app::PythonConsole> console,
                       const QString &unavailable) {
  auto *dock = new PythonDock(std::move(console), unavailable, &window);
  window.addDockWidget(Qt::BottomDockWidgetArea, dock);
  dock->hide();
  QAction *toggle = dock->toggleViewAction();
  toggle->setText(QObject::tr("&Python console"));
  toggle->setShortcut(QKeySequence(QObject::tr("Ctrl+Shift+Y")));
  for (QAction *a : window.menuBar()->actions())
    if (a->menu() && a->text().remove('&') == QObject::tr("View")) {
      a->menu()->addAction(toggle);
      break;
    }
  window.addAction(toggle); // the shortcut works with the menu closed
  dock->follow(window.document());
  QObject::connect(dock, &PythonDock::executed, window.document(),
                   &Document::syncHistory);
}

} // namespace weir::studio
