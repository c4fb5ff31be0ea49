#include "app/studio/history_dock.h"

#include <QUndoView>

namespace weir::studio {

HistoryDock::HistoryDock(QUndoStack *stack, QWidget *parent)
    : QDockWidget(tr("History"), parent), view_(new QUndoView(stack)) {
  setObjectName("history");
  view_->setEmptyLabel(tr("imported model"));
  setWidget(view_);
}

} // namespace weir::studio
