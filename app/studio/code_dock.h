#pragma once
/// \file
/// The Code dock: the whole program as the readable C++ export
/// (codegen/c/export.h) and as LLVM IR from the CPU backend
/// (codegen/cpu/compile.h). A program that still holds operators is shown
/// as `expand-all` would make it — on a copy; the workspace is untouched.
/// The C++ follows every change while the dock is visible; LLVM IR needs a
/// JIT compile, so it is made on request. Both are made on worker threads,
/// and a result for a version that is no longer shown is dropped.
///
/// The C++ is mapped back to the graph: the export starts each node's loop
/// nest or library call with `// node: <label>` (codegen/c/export.h), and
/// the lines up to that statement's end belong to the node of that label
/// in the shown program (the innermost region wins). Clicking a line asks
/// for its node to be selected (nodeActivated); showNode() highlights a
/// node's lines and scrolls to them, and "Selected node only" shows just
/// those lines.

#include "ir/program.h"

#include <QDockWidget>
#include <QFutureWatcher>

#include <memory>
#include <optional>
#include <vector>

class QCheckBox;
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

  /// Highlights the lines of node `id` (none for nullopt) and scrolls to
  /// them; with "Selected node only", shows only them.
  void showNode(std::optional<ir::NodeId> id);

  /// The whole C++ text, whatever the filter shows.
  QString cppText() const;
  QString llvmText() const;
  bool busy() const { return cpp_.isRunning() || llvm_.isRunning(); }

  /// The node line `line` (0-based, of cppText()) belongs to.
  std::optional<ir::NodeId> nodeAtLine(int line) const;
  /// The lines (0-based, of cppText()) of node `id`, in order.
  std::vector<int> linesOf(ir::NodeId id) const;
  /// The lines of cppText() the view shows now, in order (all of them
  /// unless "Selected node only" is checked).
  const std::vector<int> &shownLines() const { return shown_; }
  /// The lines of cppText() highlighted now.
  std::vector<int> highlightedLines() const;

  QPlainTextEdit *cppView() { return cppText_; }
  QCheckBox *selectedOnly() { return selectedOnly_; }

signals:
  void cppReady();
  void llvmReady();
  /// The user clicked (or moved the cursor to) a line of node `id`.
  void nodeActivated(weir::ir::NodeId id);

public:
  /// The lines `first`..`last` (0-based, inclusive) of the C++ came from
  /// the node labelled `label`: `node` in the shown program, when found.
  struct Region {
    QString label;
    std::optional<ir::NodeId> node;
    int first = 0, last = 0;
  };

private:
  /// Text to show, or the reason there is none.
  struct Result {
    std::shared_ptr<const ir::Program> program;
    QString text;
    QString optimized; ///< LLVM only
    QString note;
    std::vector<Region> regions; ///< C++ only
  };

  void generateCpp();
  void showCpp();
  void showLLVM();
  /// Fills the C++ view from the full text, the filter and the node.
  void fillCpp();
  void onCursorMoved();

  std::shared_ptr<const ir::Program> program_;
  std::shared_ptr<const ir::Program> cppOf_; ///< what the C++ tab shows
  QTabWidget *tabs_;
  QLabel *cppNote_;
  QPlainTextEdit *cppText_;
  QCheckBox *selectedOnly_;
  QLabel *mapNote_;
  QString cppFull_;
  std::vector<Region> regions_;
  std::optional<ir::NodeId> node_; ///< the node showNode() was given
  std::vector<int> shown_;         ///< view line → line of cppFull_
  bool filling_ = false;           ///< cursor moves are ours
  QLabel *llvmNote_;
  QComboBox *llvmStage_;
  QPushButton *compile_;
  QPlainTextEdit *llvmText_;
  Result llvmResult_;
  QFutureWatcher<Result> cpp_, llvm_;
};

} // namespace weir::studio
