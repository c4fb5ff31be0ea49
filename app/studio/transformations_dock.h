#pragma once
/// \file
/// The Transformations dock: every registered transformation's matches in
/// the current version, grouped by tier, each with "applies" or the reason
/// its check fails (from the workspace: Workspace::allMatches and check).
/// Listing runs on a worker thread under the workspace's lock, one listing
/// at a time; a listing of a version that is no longer current is dropped.
/// Selecting a match highlights its nodes (or those a failed check names);
/// Apply applies it through the document, with the parameters edited below
/// the list. The scope above the list narrows it: the whole program, the
/// matches that bind the node selected in the graph, or the matches that
/// bind any node the graph view shows (the visible region: a match that
/// touches what the user looks at is listed even when some of its nodes
/// are off screen). Narrowing filters the listing; it never matches again.
/// Preview applies the selected match to a copy and shows the result
/// (preview_dialog.h); nothing is committed until its Apply.

#include "ir/program.h"
#include "transforms/transformation.h"

#include <QDockWidget>
#include <QFutureWatcher>
#include <QPointer>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;
class QWidget;

namespace weir::studio {

class Document;
class PreviewDialog;

class TransformationsDock : public QDockWidget {
  Q_OBJECT

public:
  /// Which matches the list shows.
  enum class Scope { WholeProgram, SelectedNode, VisibleRegion };

  TransformationsDock(Document &document, QWidget *parent = nullptr);

  /// Lists the matches of the current version again.
  void refresh();
  /// The node Scope::SelectedNode filters by.
  void setSelectedNode(std::optional<ir::NodeId> id);
  /// The nodes the graph view shows, for Scope::VisibleRegion.
  void setVisibleNodes(const std::vector<ir::NodeId> &ids);
  void setScope(Scope scope);
  Scope scope() const;
  QComboBox *scopeBox() { return scope_; }
  /// The matches the list shows now, with their transformations' ids.
  std::vector<std::pair<std::string, transforms::Match>> shownMatches() const;
  bool refreshing() const { return running_; }
  /// The version the list shows.
  const std::shared_ptr<const ir::Program> &listedProgram() const {
    return listing_.program;
  }

  QTreeWidget *tree() { return tree_; }
  QPushButton *applyButton() { return apply_; }
  QPushButton *previewButton() { return preview_; }
  /// Opens the preview of the selected match (window-modal, not
  /// blocking); its Apply applies the step. False, with the reason in
  /// lastError(), when the match does not apply.
  bool previewCurrent();
  /// The preview open now, or null.
  PreviewDialog *preview() const;
  /// Selects the transformation `id` in the list.
  void selectTransformation(const QString &id);
  /// Applies the first match of `id` that the listing of the current
  /// version says applies, with default parameters (the command palette's
  /// choice). False, with the reason in lastError(), when the listing is
  /// not of the current version yet or no match applies.
  bool applyFirstApplicable(const QString &id);
  /// The error of the last failed apply, "" after a success.
  QString lastError() const;

signals:
  void highlightRequested(const std::vector<weir::ir::NodeId> &ids);
  /// A listing of the current version is shown.
  void refreshed();

private:
  struct Entry {
    std::string transformation;
    transforms::Match match;
    transforms::CheckResult check;
  };
  struct Listing {
    std::shared_ptr<const ir::Program> program;
    std::vector<Entry> entries;
  };

  void start();
  void finished();
  void populate();
  void onCurrentChanged(QTreeWidgetItem *item);
  void buildParamEditor(const transforms::Transformation *t);
  transforms::Params editedParams() const;
  void applyCurrent();

  Document &doc_;
  QTreeWidget *tree_;
  QComboBox *scope_;
  QLabel *description_;
  QWidget *paramBox_;
  QFormLayout *paramForm_;
  QPushButton *apply_;
  QPushButton *preview_;
  QLabel *status_;
  QPointer<PreviewDialog> previewDialog_;

  QFutureWatcher<Listing> watcher_;
  bool running_ = false;
  bool again_ = false; ///< the version changed while listing
  Listing listing_;
  std::optional<ir::NodeId> selected_;
  std::set<ir::NodeId> visible_;
  /// The transformation whose parameters the editor shows.
  std::shared_ptr<const transforms::Transformation> editing_;
  std::vector<std::pair<transforms::ParamSpec, QWidget *>> editors_;
};

} // namespace weir::studio
