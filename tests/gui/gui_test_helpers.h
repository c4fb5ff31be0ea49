#pragma once
/// \file
/// Helpers the GUI tests share: the time allowed for background work, the
/// open workspace of a MainWindow, waiting for the graph and the
/// Transformations dock to catch up with the current version, finding a
/// transformation's first applicable match and its row in the dock, and a
/// large synthetic program for layout tests.

#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/transformations_dock.h"
#include "ir/error.h"
#include "workspace/workspace.h"

#include <QString>
#include <QTest>
#include <QTreeWidget>
#include <QTreeWidgetItem>

#include <memory>
#include <string>

namespace weir::studio::testing {

/// How long a test waits for background work (layout, matching, ...).
constexpr int kTimeoutMs = 60000;

#ifdef WEIR_SAMPLE_MODEL
/// The sample model the tests open.
inline const QString kSample = WEIR_SAMPLE_MODEL;
#endif

/// The workspace open in `w`.
inline workspace::Workspace &wsOf(MainWindow &w) {
  return *w.document()->workspace();
}

/// Waits until the graph shows the workspace's current version.
inline bool waitForGraph(MainWindow &w, int timeoutMs = kTimeoutMs) {
  return QTest::qWaitFor(
      [&] {
        return !w.graphPanel()->layingOut() &&
               w.graphPanel()->shownProgram() == wsOf(w).programPtr();
      },
      timeoutMs);
}

/// Waits until the graph shows `program`.
inline bool waitForGraph(MainWindow &w,
                         const std::shared_ptr<const ir::Program> &program,
                         int timeoutMs = kTimeoutMs) {
  return QTest::qWaitFor(
      [&] {
        return !w.graphPanel()->layingOut() &&
               w.graphPanel()->shownProgram() == program;
      },
      timeoutMs);
}

/// Waits until the Transformations dock lists the current version.
inline bool waitForMatches(MainWindow &w, int timeoutMs = kTimeoutMs) {
  return QTest::qWaitFor(
      [&] {
        TransformationsDock *d = w.transformationsDock();
        return !d->refreshing() && d->listedProgram() == wsOf(w).programPtr();
      },
      timeoutMs);
}

/// The first match of `transformation` that passes its check.
inline transforms::Match firstApplicable(workspace::Workspace &ws,
                                         const std::string &transformation) {
  for (const transforms::Match &m : ws.matches(transformation))
    if (ws.check(transformation, m))
      return m;
  throw Error("no applicable match of " + transformation);
}

/// The dock's row for `match` of `transformation`, or null.
inline QTreeWidgetItem *matchItem(MainWindow &w,
                                  const std::string &transformation,
                                  const transforms::Match &match) {
  QTreeWidget *tree = w.transformationsDock()->tree();
  for (int t = 0; t < tree->topLevelItemCount(); ++t) {
    QTreeWidgetItem *tier = tree->topLevelItem(t);
    for (int i = 0; i < tier->childCount(); ++i) {
      QTreeWidgetItem *tItem = tier->child(i);
      if (tItem->text(0) != QString::fromStdString(transformation))
        continue;
      for (int m = 0; m < tItem->childCount(); ++m)
        if (tItem->child(m)->text(0) == QString::fromStdString(match.str()))
          return tItem->child(m);
    }
  }
  return nullptr;
}

/// A network-shaped program of about `nodes` nodes: blocks of a
/// convolution (with its weight), a Relu and an Add of the block's input,
/// as library nodes between access nodes, the way import leaves a model.
inline std::shared_ptr<const ir::Program> syntheticNetwork(std::size_t nodes) {
  auto p = std::make_shared<ir::Program>();
  p->name = "synthetic";
  ir::State s;
  s.name = "main";
  std::vector<ir::Expr> shape = {1, 16, 8, 8};
  auto container = [&](const std::string &name) {
    ir::Container c;
    c.name = name;
    c.shape = shape;
    c.strides = ir::rowMajorStrides(shape);
    p->addContainer(c);
    return ir::addAccess(*p, s, name);
  };
  auto op = [&](const std::string &type, std::vector<ir::NodeId> inputs,
                std::vector<std::string> names, const std::string &out) {
    ir::Node n;
    n.id = p->newNodeId();
    n.kind = ir::NodeKind::Library;
    n.label = type + "_" + out;
    n.payload = ir::LibraryData{type};
    for (std::size_t i = 0; i < inputs.size(); ++i)
      n.inputs.push_back({"in" + std::to_string(i)});
    n.outputs.push_back({"out"});
    s.nodes.push_back(n);
    for (std::size_t i = 0; i < inputs.size(); ++i)
      ir::addEdge(*p, s, inputs[i], "", n.id, "in" + std::to_string(i),
                  {names[i], ir::Subset::full(shape)});
    ir::NodeId o = container(out);
    ir::addEdge(*p, s, n.id, "out", o, "", {out, ir::Subset::full(shape)});
    return o;
  };
  std::string x = "x0";
  ir::NodeId xs = container(x);
  for (int b = 0; s.nodes.size() < nodes; ++b) {
    std::string i = std::to_string(b);
    ir::NodeId w = container("w" + i);
    ir::NodeId c = op("Conv", {xs, w}, {x, "w" + i}, "c" + i);
    ir::NodeId r = op("Relu", {c}, {"c" + i}, "r" + i);
    xs = op("Add", {r, xs}, {"r" + i, x}, "x" + std::to_string(b + 1));
    x = "x" + std::to_string(b + 1);
  }
  p->states.push_back(std::move(s));
  return p;
}

} // namespace weir::studio::testing
