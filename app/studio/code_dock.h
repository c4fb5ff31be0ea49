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
/// Both are mapped back to the graph. The export starts each node's loop
/// nest or library call with `// node: <label>` (codegen/c/export.h), and
/// the lines up to that statement's end belong to the node of that label
/// in the shown program (the innermost region wins). In the LLVM IR, a
/// basic block named `<label>$…` (codegen/cpu/llvm_emit.h) and the blocks
/// after it, up to the next such block or the function's end, belong to
/// the node of that label. Clicking a line asks for its node to be
/// selected (nodeActivated); showNode() highlights a node's lines in both
/// tabs and scrolls to them, and "Selected node only" shows just those
/// lines.

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

  /// Which text a line number refers to.
  enum class Tab { Cpp, LLVM };

  /// The whole C++ text, whatever the filter shows.
  QString cppText() const;
  /// The whole LLVM IR of the chosen stage, whatever the filter shows.
  QString llvmText() const;
  bool busy() const { return cpp_.isRunning() || llvm_.isRunning(); }

  /// The node line `line` (0-based, of the tab's whole text) belongs to.
  std::optional<ir::NodeId> nodeAtLine(int line, Tab tab = Tab::Cpp) const;
  /// The lines (0-based, of the tab's whole text) of node `id`, in order.
  std::vector<int> linesOf(ir::NodeId id, Tab tab = Tab::Cpp) const;
  /// The lines of the tab's whole text the view shows now, in order (all
  /// of them unless "Selected node only" is checked).
  const std::vector<int> &shownLines(Tab tab = Tab::Cpp) const {
    return mapOf(tab).shown;
  }
  /// The lines of the tab's whole text highlighted now.
  std::vector<int> highlightedLines(Tab tab = Tab::Cpp) const;

  QPlainTextEdit *cppView() { return cppMap_.view; }
  QPlainTextEdit *llvmView() { return llvmMap_.view; }
  QCheckBox *selectedOnly() { return selectedOnly_; }

signals:
  void cppReady();
  void llvmReady();
  /// The user clicked (or moved the cursor to) a line of node `id`.
  void nodeActivated(weir::ir::NodeId id);

public:
  /// The lines `first`..`last` (0-based, inclusive) of a text came from
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
    std::vector<Region> regions;          ///< of `text`
    std::vector<Region> optimizedRegions; ///< of `optimized`
  };
  /// A view, its whole text and how that maps to the graph.
  struct CodeMap {
    QPlainTextEdit *view = nullptr;
    std::shared_ptr<const ir::Program> program; ///< the one mapped to
    QString text;
    std::vector<Region> regions;
    std::vector<int> shown; ///< view line → line of `text`
  };

  const CodeMap &mapOf(Tab tab) const {
    return tab == Tab::Cpp ? cppMap_ : llvmMap_;
  }
  void generateCpp();
  void showCpp();
  void showLLVM();
  /// Shows the LLVM IR of the chosen stage.
  void showLLVMStage();
  /// Fills both views from their text, the filter and the node.
  void fill();
  void fill(CodeMap &m);
  void onCursorMoved(CodeMap &m);

  std::shared_ptr<const ir::Program> program_;
  QTabWidget *tabs_;
  QLabel *cppNote_;
  QCheckBox *selectedOnly_;
  QLabel *mapNote_;
  CodeMap cppMap_;                 ///< its program: what the C++ shows
  std::optional<ir::NodeId> node_; ///< the node showNode() was given
  bool filling_ = false;           ///< cursor moves are ours
  QLabel *llvmNote_;
  QComboBox *llvmStage_;
  QPushButton *compile_;
  CodeMap llvmMap_;
  Result llvmResult_;
  QFutureWatcher<Result> cpp_, llvm_;
};

} // namespace weir::studio
