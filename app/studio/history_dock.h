#pragma once
/// \file
/// The History dock: the document's undo stack (one entry per workspace
/// version, the imported model first) in a QUndoView. Clicking an entry
/// reverts to that version; later ones stay for redo until the next apply.

#include <QDockWidget>

class QUndoStack;
class QUndoView;

namespace weir::studio {

class HistoryDock : public QDockWidget {
  Q_OBJECT

public:
  HistoryDock(QUndoStack *stack, QWidget *parent = nullptr);

  QUndoView *view() { return view_; }

private:
  QUndoView *view_;
};

} // namespace weir::studio
