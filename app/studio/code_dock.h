#pragma once
/// \file
/// The Code dock: the whole program as the readable C++ export
/// (codegen/c/export.h) and as LLVM IR from the CPU backend
/// (codegen/cpu/compile.h). A program that still holds operators is shown
/// as `expand-all` would make it — on a copy; the workspace is untouched.
/// The C++ follows every change while the dock is visible; LLVM IR needs a
/// JIT compile, so it is made on request. Both are made on worker threads,
/// and a result for a version that is no longer shown is dropped.

#include "ir/program.h"

#include <QDockWidget>
#include <QFutureWatcher>

#include <memory>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;

namespace weir::studio {

class CodeDock : public QDockWidget {
  Q_OBJECT

public:
  explicit CodeDock(QWidget *parent = nullptr);

  void setProgram(std::shared_ptr<const ir::Program> program);
  /// Compiles the shown program and shows its LLVM IR.
  void generateLLVMIR();

  QString cppText() const;
  QString llvmText() const;
  bool busy() const { return cpp_.isRunning() || llvm_.isRunning(); }

signals:
  void cppReady();
  void llvmReady();

private:
  /// Text to show, or the reason there is none.
  struct Result {
    std::shared_ptr<const ir::Program> program;
    QString text;
    QString optimized; ///< LLVM only
    QString note;
  };

  void generateCpp();
  void showCpp();
  void showLLVM();

  std::shared_ptr<const ir::Program> program_;
  std::shared_ptr<const ir::Program> cppOf_; ///< what the C++ tab shows
  QTabWidget *tabs_;
  QLabel *cppNote_;
  QPlainTextEdit *cppText_;
  QLabel *llvmNote_;
  QComboBox *llvmStage_;
  QPushButton *compile_;
  QPlainTextEdit *llvmText_;
  Result llvmResult_;
  QFutureWatcher<Result> cpp_, llvm_;
};

} // namespace weir::studio
