#pragma once
/// \file
/// The preview of one step: the program the transformation would make
/// (applied to a copy with transforms::applyChecked; the workspace is not
/// touched), drawn with the nodes it adds or changes highlighted, the nodes
/// it removes listed, and the transformation's description beside it.
/// Apply accepts the dialog (the Transformations dock then applies the
/// step through the document); Cancel drops it.

#include "app/studio/program_diff.h"
#include "ir/program.h"

#include <QDialog>

#include <memory>

class QLabel;
class QListWidget;
class QPushButton;

namespace weir::studio {

class GraphPanel;

class PreviewDialog : public QDialog {
  Q_OBJECT

public:
  /// `after` is the step's result from `before`; `state` names the state
  /// to show ("" for the first).
  PreviewDialog(const ir::Program &before,
                std::shared_ptr<const ir::Program> after,
                const transforms::IdMap &idMap, const std::string &state,
                const QString &title, const QString &description,
                QWidget *parent = nullptr);

  const ProgramDiff &diff() const { return diff_; }
  const std::shared_ptr<const ir::Program> &after() const { return after_; }
  GraphPanel *graphPanel() { return panel_; }
  QListWidget *removedList() { return removed_; }
  QPushButton *applyButton() { return apply_; }
  QPushButton *cancelButton() { return cancel_; }

private:
  std::shared_ptr<const ir::Program> after_;
  ProgramDiff diff_;
  GraphPanel *panel_;
  QListWidget *removed_;
  QPushButton *apply_;
  QPushButton *cancel_;
};

} // namespace weir::studio
