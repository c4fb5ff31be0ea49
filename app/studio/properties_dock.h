#pragma once
/// \file
/// The Properties dock: the selected node's or edge's details — kind,
/// connectors, container shapes and dtypes, attributes, code, ranges, FLOPs
/// and bytes (ir/analysis.h) — or the whole program's summary when nothing
/// is selected.

#include "ir/analysis.h"
#include "ir/program.h"

#include <QDockWidget>

#include <memory>

class QTreeWidget;
class QTreeWidgetItem;

namespace weir::studio {

class PropertiesDock : public QDockWidget {
  Q_OBJECT

public:
  explicit PropertiesDock(QWidget *parent = nullptr);

  using ProgramPtr = std::shared_ptr<const ir::Program>;

  void showProgram(const ProgramPtr &program, std::uint64_t hash);
  void showNode(const ProgramPtr &program, int state, ir::NodeId id);
  void showEdge(const ProgramPtr &program, int state, ir::EdgeId id);
  void clear();

  /// The text shown, one "key: value" line per row (tests read it).
  QString text() const;

private:
  QTreeWidgetItem *row(const QString &key, const QString &value,
                       QTreeWidgetItem *parent = nullptr);
  void containerRows(const ir::Program &program, const std::string &name,
                     QTreeWidgetItem *parent);
  const ir::ProgramAnalysis &analysisOf(const ProgramPtr &program);

  QTreeWidget *tree_;
  /// The analysis of the last program shown, recomputed when it changes
  /// (held, so its address is not reused by another version).
  ProgramPtr analyzed_;
  ir::ProgramAnalysis analysis_;
};

} // namespace weir::studio
