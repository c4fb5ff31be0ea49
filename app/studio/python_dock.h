#pragma once
/// \file
/// The Python dock: an interactive console on weir-studio's embedded
/// interpreter (app/python_host/python_console.h), with `weir` imported and
/// `ws` bound to the open workspace — the same object the window shows, so
/// `ws.apply(...)`, `ws.undo()` or a recipe redraw the graph and join the
/// History dock. Plugins loaded at start-up (app/python_host/plugin_host.h)
/// are in the registry the Transformations dock lists.
///
/// Up and Down walk the lines typed before; a statement that goes on
/// (`for ...:`) is continued at the `...` prompt and run on an empty line.
/// A line runs on the GUI thread: a long script holds the window until it
/// ends.

#include <QDockWidget>

#include <memory>

class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace weir::app {
class PythonConsole;
}

namespace weir::studio {

class Document;
class MainWindow;

class PythonDock : public QDockWidget {
  Q_OBJECT

public:
  /// `console` null: the dock says why (`unavailable`) and takes no input.
  PythonDock(std::unique_ptr<app::PythonConsole> console,
             const QString &unavailable, QWidget *parent = nullptr);
  ~PythonDock() override;

  /// Runs one line as if typed at the prompt; returns what it printed.
  QString run(const QString &line);
  bool available() const { return console_ != nullptr; }
  /// Binds `ws` to the document's workspace, now and whenever another
  /// opens.
  void follow(Document *document);

  QPlainTextEdit *output() { return output_; }
  QLineEdit *input() { return input_; }

signals:
  /// After each line: the workspace may have changed.
  void executed();

protected:
  bool eventFilter(QObject *watched, QEvent *event) override;

private:
  void submit();

  std::unique_ptr<app::PythonConsole> console_;
  QPlainTextEdit *output_;
  QLabel *prompt_;
  QLineEdit *input_;
  QStringList history_;
  int historyAt_ = 0;
  Document *document_ = nullptr;
};

/// Adds the dock to the window (bottom, hidden until View → Python
/// console or Ctrl+Shift+Y), keeps `ws` bound to the open workspace, and
/// brings the History dock in step after each line.
void installPythonDock(MainWindow &window,
                       std::unique_ptr<app::PythonConsole> console,
                       const QString &unavailable = {});

} // namespace weir::studio
