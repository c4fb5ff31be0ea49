#pragma once
/// \file
/// The graph view of the current program: asks the layout thread for a
/// layout whenever the program or the shown state changes, keeps showing
/// the previous scene until the new layout arrives, rebuilds the scene and
/// restores the selection (mapped through the step's id map after an
/// apply). It reports what the user selected; it changes nothing.

#include "app/studio/glyph.h"
#include "app/studio/graph_scene.h"
#include "app/studio/graph_view.h"
#include "app/studio/layout_runner.h"
#include "app/studio/minimap.h"
#include "app/studio/overlay.h"
#include "ir/program.h"
#include "transforms/transformation.h"

#include <QTimer>
#include <QWidget>

class QShortcut;

#include <memory>
#include <optional>
#include <set>
#include <string>

namespace weir::studio {

class GraphPanel : public QWidget {
  Q_OBJECT

public:
  explicit GraphPanel(QWidget *parent = nullptr);
  /// The scene goes first, quietly: its items' destruction must not reach
  /// this half-destroyed panel through selectionChanged.
  ~GraphPanel() override;

  /// Shows state `stateIndex` of `program`. `idMap` maps the ids of what
  /// is shown now to `program`'s (after an apply), so the selection
  /// follows the node.
  void showProgram(std::shared_ptr<const ir::Program> program, int stateIndex,
                   const transforms::IdMap *idMap = nullptr);
  /// Forgets the shown program, its selection and highlights (another
  /// document: its node ids mean other nodes); the next layout is fitted.
  void reset();
  /// The program and state the scene shows (after its layout arrived).
  const std::shared_ptr<const ir::Program> &shownProgram() const {
    return shown_;
  }
  int shownState() const { return shownState_; }
  /// Whether a layout is being waited for.
  bool layingOut() const { return runner_.busy(); }
  /// Stops waiting for the layout in progress: its result is dropped (dot
  /// cannot be interrupted; it ends on its thread and is thrown away), the
  /// previous scene stays, and the next showProgram() lays out as usual.
  /// Does nothing when no layout is awaited.
  void cancelLayout();

  /// Collapses the map scope of entry `entry` into one box, or expands
  /// it, and lays the graph out again (view only: scope_view.h). Ids that
  /// are not map entries of the shown state are remembered but change
  /// nothing.
  void setScopeCollapsed(ir::NodeId entry, bool collapsed);
  void toggleScope(ir::NodeId entry);
  bool scopeCollapsed(ir::NodeId entry) const {
    return collapsed_.count(entry) > 0;
  }

  /// Collapses operator group `name` (scope_view.h) into one box, or
  /// expands it, and lays the graph out again (view only). A name that is
  /// no group of the shown state is remembered but changes nothing, so a
  /// group stays collapsed across apply and undo while its nodes exist.
  void setGroupCollapsed(const std::string &name, bool collapsed);
  void toggleGroup(const QString &name);
  bool groupCollapsed(const std::string &name) const {
    return collapsedGroups_.count(name) > 0;
  }
  /// Collapses every operator group of the shown state.
  void collapseAllGroups();
  /// Expands every collapsed scope and group.
  void expandAll();

  /// Selects node `id`, or the box of the collapsed scope or group hiding
  /// it.
  void selectNode(ir::NodeId id);
  /// Selects the next node after the selected one (in program order,
  /// wrapping) whose name, operator or container contains `text`, case
  /// ignored; false when none does.
  bool findNext(const QString &text);
  void highlight(const std::vector<ir::NodeId> &ids);
  /// Writes the whole graph as SVG (`.svg`) or PNG (anything else; at most
  /// 16,384 pixels a side, scaled down past that). False when the file
  /// cannot be written or nothing is shown.
  bool exportImage(const QString &path);
  /// Colours the graph by an analysis (overlay.h), now and after every
  /// layout; Overlay::None for the usual colours.
  void setOverlay(Overlay overlay);
  Overlay overlay() const { return overlay_; }
  OverlayLegend *legend() { return legend_; }
  void fit() { view_->fitGraph(); }
  void zoomBy(double factor) { view_->zoomBy(factor); }

  /// The nodes whose boxes the view shows now, at least in part, in id
  /// order; the nodes hidden in a collapsed scope count where its box is.
  std::vector<ir::NodeId> visibleNodes() const;

  GraphScene *scene() { return scene_; }
  GraphView *view() { return view_; }
  Minimap *minimap() { return minimap_; }

signals:
  void nodeSelected(weir::ir::NodeId id);
  void edgeSelected(weir::ir::EdgeId id);
  void selectionCleared();
  /// The scene was rebuilt from a new layout.
  void laidOut(double seconds, std::size_t nodes);
  void layoutFailed(const QString &message);
  /// cancelLayout() dropped the layout in progress.
  void layoutCancelled();
  /// layingOut() changed: a layout was asked for, arrived, failed or was
  /// cancelled.
  void layingOutChanged(bool busy);
  /// What visibleNodes() returns changed: after a scroll, zoom, resize or
  /// layout, once the view has been still for a moment.
  void visibleNodesChanged(const std::vector<weir::ir::NodeId> &ids);

private:
  void onLaidOut(std::uint64_t ticket,
                 std::shared_ptr<const LayoutResult> result);
  void onSelectionChanged();

  struct Pending {
    std::uint64_t ticket = 0;
    std::shared_ptr<const ir::Program> program;
    int state = 0;
    SceneGraph graph;
  };

  void applyOverlay();
  void updateVisibleNodes();
  /// Lays out again what is shown, or what is about to be.
  void relayout();
  /// Emits layingOutChanged when layingOut() differs from last time.
  void noteBusy();

  GraphView *view_;
  GraphScene *scene_;
  OverlayLegend *legend_;
  Minimap *minimap_;
  Overlay overlay_ = Overlay::None;
  /// The shown state's analysis, for the overlay.
  std::optional<ir::StateAnalysis> analysis_;
  LayoutRunner runner_;
  Pending pending_;
  std::shared_ptr<const ir::Program> shown_;
  int shownState_ = 0;
  std::optional<ir::NodeId> selectedNode_;
  std::optional<ir::EdgeId> selectedEdge_;
  std::vector<ir::NodeId> highlighted_;
  /// Map entries whose scopes are drawn collapsed.
  std::set<ir::NodeId> collapsed_;
  /// Operator groups drawn collapsed, by name.
  std::set<std::string> collapsedGroups_;
  bool rebuilding_ = false; ///< selection changes are ours, not the user's
  bool busy_ = false;       ///< layingOut() as last reported
  /// Esc: enabled only while a layout runs, so it takes the key from no
  /// one otherwise.
  QShortcut *cancelShortcut_;
  /// Debounces visibleNodesChanged while the user scrolls or zooms.
  QTimer *visibleTimer_;
  std::vector<ir::NodeId> visible_; ///< as last reported
};

} // namespace weir::studio
