/// \file
/// The arithmetic-intensity overlay (FLOPs over the bytes on a node's
/// access edges) on the sample model, and the Transformations dock's
/// scope: the whole program, the selected node, or what the graph view
/// shows.

#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/overlay.h"
#include "app/studio/transformations_dock.h"
#include "ir/analysis.h"
#include "ir/scope.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QMenuBar>
#include <QTest>
#include <QTreeWidget>

#include <cmath>

using namespace weir;
using namespace weir::studio;
using namespace weir::studio::testing;

namespace {

/// The View ▸ Overlay action whose text contains `text`.
QAction *overlayAction(MainWindow &w, const QString &text) {
  for (QAction *menu : w.menuBar()->actions())
    if (menu->menu())
      for (QAction *a : menu->menu()->actions())
        if (a->menu() && a->text().contains("Overlay"))
          for (QAction *o : a->menu()->actions())
            if (o->text().remove('&').contains(text, Qt::CaseInsensitive))
              return o;
  return nullptr;
}

using Shown = std::vector<std::pair<std::string, transforms::Match>>;

bool touches(const transforms::Match &m, const std::vector<ir::NodeId> &ids) {
  for (const auto &role : m.roles)
    if (std::find(ids.begin(), ids.end(), role.second) != ids.end())
      return true;
  return false;
}

/// The matches of `all` that bind a node of `ids`, as text.
QStringList touching(const Shown &all, const std::vector<ir::NodeId> &ids) {
  QStringList out;
  for (const auto &[t, m] : all)
    if (touches(m, ids))
      out << QString::fromStdString(t + " " + m.str());
  return out;
}

QStringList texts(const Shown &shown) {
  QStringList out;
  for (const auto &[t, m] : shown)
    out << QString::fromStdString(t + " " + m.str());
  return out;
}

std::optional<double> known(const ir::Expr &e) {
  auto v = e.asConstant();
  return v && *v > 0 ? std::optional(double(*v)) : std::nullopt;
}

} // namespace

class OverlayTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() { env_ = std::make_unique<testing::TestEnvironment>(); }
  void cleanup() { env_->clear(); }
  void cleanupTestCase() { env_.reset(); }
  void intensityColoursNodesByFlopsPerByte();
  void menuSetsTheIntensityOverlay();
  void visibleRegionScopesTheMatches();
  void collapsedScopeIsVisibleWhereItsBoxIs();

private:
  std::unique_ptr<testing::TestEnvironment> env_;
};

void OverlayTest::intensityColoursNodesByFlopsPerByte() {
  MainWindow w;
  w.openFile(kSample);
  ir::ProgramAnalysis analysis = ir::analyze(wsOf(w).program());
  QVERIFY(!analysis.states.empty());
  const ir::StateAnalysis &state = analysis.states.front();
  OverlayColors c = overlayColors(Overlay::Intensity, state);
  QCOMPARE(c.overlay, Overlay::Intensity);
  QVERIFY(c.edges.empty());
  QVERIFY(!c.nodes.empty());

  double most = 0;
  std::optional<ir::NodeId> hottest;
  int uncoloured = 0;
  for (const ir::NodeCost &n : state.nodes) {
    auto flops = known(n.flops), bytes = known(n.bytesIn + n.bytesOut);
    if (!flops || !bytes) {
      // Nothing known: the node keeps its own colour.
      QVERIFY(!c.nodes.count(n.node));
      ++uncoloured;
      continue;
    }
    QVERIFY2(c.nodes.count(n.node), qPrintable(QString::number(n.node)));
    QVERIFY(std::abs(c.intensity.at(n.node) - *flops / *bytes) <=
            1e-9 * (*flops / *bytes));
    if (*flops / *bytes > most) {
      most = *flops / *bytes;
      hottest = n.node;
    }
  }
  QVERIFY(uncoloured > 0); // the access nodes compute nothing
  QVERIFY(hottest);
  QCOMPARE(c.maximum, most);
  QCOMPARE(c.nodes.at(*hottest), heatColor(1));
  // A less intense node is cooler.
  for (const auto &[node, v] : c.intensity)
    if (v < most)
      QVERIFY(c.nodes.at(node) != heatColor(1));
}

void OverlayTest::menuSetsTheIntensityOverlay() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  QVERIFY(waitForGraph(w));
  QAction *intensity = overlayAction(w, "intensity");
  QVERIFY(intensity);
  QVERIFY(intensity->isCheckable());
  intensity->trigger();
  QVERIFY(intensity->isChecked());
  GraphPanel *panel = w.graphPanel();
  QCOMPARE(panel->overlay(), Overlay::Intensity);
  QVERIFY(panel->legend()->isVisible());
  QVERIFY2(panel->legend()->text().contains("FLOP/byte"),
           qPrintable(panel->legend()->text()));

  ir::ProgramAnalysis analysis = ir::analyze(wsOf(w).program());
  OverlayColors c = overlayColors(Overlay::Intensity, analysis.states.front());
  QVERIFY(!c.nodes.empty());
  for (const auto &[node, colour] : c.nodes) {
    NodeItem *item = panel->scene()->nodeItem(node);
    QVERIFY(item);
    QCOMPARE(item->overlayColor(), colour);
  }
  // Back to None: the usual colours.
  overlayAction(w, "none")->trigger();
  QCOMPARE(panel->overlay(), Overlay::None);
  for (const auto &entry : c.nodes)
    QVERIFY(!panel->scene()->nodeItem(entry.first)->overlayColor().isValid());
}

void OverlayTest::visibleRegionScopesTheMatches() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  QVERIFY(waitForGraph(w));
  QVERIFY(waitForMatches(w));
  TransformationsDock *dock = w.transformationsDock();
  QCOMPARE(dock->scope(), TransformationsDock::Scope::WholeProgram);
  const Shown all = dock->shownMatches();
  QVERIFY(all.size() >= 3);

  // The first and the last node some match binds, far apart in the graph.
  GraphPanel *panel = w.graphPanel();
  std::vector<ir::NodeId> bound;
  for (const auto &[t, m] : all)
    for (const auto &role : m.roles)
      if (panel->scene()->nodeItem(role.second))
        bound.push_back(role.second);
  QVERIFY(!bound.empty());
  std::sort(bound.begin(), bound.end());
  ir::NodeId near = bound.front(), far = bound.back();
  QVERIFY(near != far);

  // Zoomed into one node: only what touches the nodes in view.
  GraphView *view = panel->view();
  view->resetTransform();
  view->zoomBy(8);
  view->centerOn(panel->scene()->nodeItem(near));
  dock->setScope(TransformationsDock::Scope::VisibleRegion);
  std::vector<ir::NodeId> visible = panel->visibleNodes();
  QVERIFY(std::binary_search(visible.begin(), visible.end(), near));
  QVERIFY(!std::binary_search(visible.begin(), visible.end(), far));
  QStringList expected = touching(all, visible);
  QVERIFY(!expected.isEmpty());
  QVERIFY(expected.size() < int(all.size()));
  // Debounced: listed once the view has rested.
  QVERIFY2(QTest::qWaitFor(
               [&] { return texts(dock->shownMatches()) == expected; }, 5000),
           qPrintable(texts(dock->shownMatches()).join('\n') + "\n---\n" +
                      expected.join('\n')));
  for (const auto &[t, m] : all)
    if (touches(m, {near}))
      QVERIFY(texts(dock->shownMatches())
                  .contains(QString::fromStdString(t + " " + m.str())));

  // Scrolled elsewhere: listed again without matching again.
  view->centerOn(panel->scene()->nodeItem(far));
  visible = panel->visibleNodes();
  QVERIFY(std::binary_search(visible.begin(), visible.end(), far));
  expected = touching(all, visible);
  QVERIFY(QTest::qWaitFor(
      [&] { return texts(dock->shownMatches()) == expected; }, 5000));
  QVERIFY(!dock->refreshing());

  // The selected node, and the whole program again.
  panel->selectNode(far);
  dock->setScope(TransformationsDock::Scope::SelectedNode);
  QCOMPARE(texts(dock->shownMatches()), touching(all, {far}));
  QVERIFY(dock->scope() == TransformationsDock::Scope::SelectedNode);
  QCOMPARE(dock->scopeBox()->currentData().toInt(),
           int(TransformationsDock::Scope::SelectedNode));
  dock->setScope(TransformationsDock::Scope::WholeProgram);
  QCOMPARE(texts(dock->shownMatches()), texts(all));
  QVERIFY(dock->scope() == TransformationsDock::Scope::WholeProgram);
  QCOMPARE(dock->scopeBox()->currentData().toInt(),
           int(TransformationsDock::Scope::WholeProgram));
}

void OverlayTest::collapsedScopeIsVisibleWhereItsBoxIs() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  QVERIFY(waitForGraph(w));
  transforms::Match all;
  for (const transforms::Match &m : wsOf(w).matches("expand-all"))
    if (wsOf(w).check("expand-all", m))
      all = m;
  w.document()->apply("expand-all", all);
  QVERIFY(waitForGraph(w));
  const ir::State &state = wsOf(w).program().states.front();
  ir::ScopeParents parents = ir::scopeParents(state);
  // A top-level map and a node inside it.
  std::optional<ir::NodeId> entry, inner;
  for (const ir::Node &n : state.nodes)
    if (!entry && n.kind == ir::NodeKind::MapEntry && parents[n.id] == 0)
      entry = n.id;
  QVERIFY(entry);
  for (ir::NodeId node : parents.childrenOf(*entry))
    if (state.findNode(node)->kind == ir::NodeKind::Tasklet)
      inner = node;
  QVERIFY(inner);
  GraphPanel *panel = w.graphPanel();
  panel->setScopeCollapsed(*entry, true);
  QVERIFY(QTest::qWaitFor([&] { return !panel->layingOut(); }, kTimeoutMs));
  QVERIFY(!panel->scene()->nodeItem(*inner));
  GraphView *view = panel->view();
  view->resetTransform();
  view->zoomBy(8);
  view->centerOn(panel->scene()->nodeItem(*entry));
  std::vector<ir::NodeId> visible = panel->visibleNodes();
  QVERIFY(std::binary_search(visible.begin(), visible.end(), *entry));
  QVERIFY(std::binary_search(visible.begin(), visible.end(), *inner));
}

QTEST_MAIN(OverlayTest)
#include "overlay_test.moc"
