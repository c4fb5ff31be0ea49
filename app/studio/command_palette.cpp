#include "app/studio/command_palette.h"

#include "app/studio/text_format.h"
#include "transforms/registry.h"

#include <QAction>
#include <QApplication>
#include <QKeyEvent>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QSet>
#include <QToolBar>
#include <QVBoxLayout>

namespace weir::studio {

namespace {
constexpr int kEntryRole = Qt::UserRole + 1;
}

CommandPalette::CommandPalette(QWidget *window)
    : QFrame(window), window_(window), filter_(new QLineEdit(this)),
      list_(new QListWidget(this)) {
  setObjectName("command-palette");
  setFrameStyle(QFrame::StyledPanel | QFrame::Raised);
  setAutoFillBackground(true);
  hide();
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(filter_);
  layout->addWidget(list_);
  filter_->setPlaceholderText(tr("Type a command or a transformation"));
  list_->setFocusPolicy(Qt::NoFocus); // the keys go to the filter
  list_->setUniformItemSizes(true);
  filter_->installEventFilter(this);
  connect(filter_, &QLineEdit::textChanged, this, &CommandPalette::filter);
  connect(list_, &QListWidget::itemActivated, this, &CommandPalette::run);
}

void CommandPalette::popup() {
  if (!isVisible())
    returnFocus_ = QApplication::focusWidget();
  collect();
  filter_->clear();
  filter();
  // Over the top middle of the window, below the menus and toolbar.
  int width = std::min(640, window_->width() - 40);
  int height = std::min(420, window_->height() - 80);
  setGeometry((window_->width() - width) / 2, 60, width, height);
  show();
  raise();
  filter_->setFocus(Qt::ShortcutFocusReason);
}

void CommandPalette::dismiss() {
  hide();
  if (returnFocus_)
    returnFocus_->setFocus();
}

void CommandPalette::collect() {
  entries_.clear();
  QSet<QString> seen;
  // Menus and toolbars share actions, and the toolbar's own undo and redo
  // repeat the menu's: one entry per text.
  for (QAction *a : window_->findChildren<QAction *>()) {
    QString text = a->text();
    text.remove('&');
    // Only what the user can reach: in a menu, a toolbar or the window's
    // shortcuts (not a line edit's inner actions, say).
    const QList<QObject *> where = a->associatedObjects();
    bool reachable = std::any_of(where.begin(), where.end(), [&](QObject *o) {
      return o == window_ || qobject_cast<QMenu *>(o) ||
             qobject_cast<QToolBar *>(o);
    });
    if (!reachable || a->isSeparator() || a->menu() || text.isEmpty() ||
        !a->isEnabled() || seen.contains(text))
      continue;
    seen.insert(text);
    // Named after its menu: "Overlay › None" says more than "None".
    for (QObject *o : where)
      if (auto *menu = qobject_cast<QMenu *>(o)) {
        text = menu->title().remove('&') + " › " + text;
        break;
      }
    QString shortcut = a->shortcut().toString(QKeySequence::NativeText);
    entries_.push_back(
        {shortcut.isEmpty() ? text : text + "    (" + shortcut + ")", a, {}});
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const Entry &a, const Entry &b) {
              return a.text.compare(b.text, Qt::CaseInsensitive) < 0;
            });
  for (const auto &t : transforms::transformations()) {
    QString id = qstr(t->id());
    entries_.push_back(
        {tr("Transformation: %1 — %2").arg(id, qstr(t->summary())), nullptr,
         id});
  }
  list_->clear();
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    auto *item = new QListWidgetItem(entries_[i].text, list_);
    item->setData(kEntryRole, qulonglong(i));
  }
}

void CommandPalette::filter() {
  QStringList words = filter_->text().split(' ', Qt::SkipEmptyParts);
  QListWidgetItem *first = nullptr;
  for (int r = 0; r < list_->count(); ++r) {
    QListWidgetItem *item = list_->item(r);
    bool shown = std::all_of(words.begin(), words.end(), [&](const QString &w) {
      return item->text().contains(w, Qt::CaseInsensitive);
    });
    item->setHidden(!shown);
    if (shown && !first)
      first = item;
  }
  list_->setCurrentItem(first);
}

QStringList CommandPalette::visibleEntries() const {
  QStringList out;
  for (int r = 0; r < list_->count(); ++r)
    if (!list_->item(r)->isHidden())
      out << list_->item(r)->text();
  return out;
}

void CommandPalette::step(int rows) {
  int row = list_->currentRow();
  int last = -1;
  // Moves |rows| visible rows, stopping at either end.
  for (int r = row + (rows > 0 ? 1 : -1), left = std::abs(rows);
       r >= 0 && r < list_->count() && left > 0; r += rows > 0 ? 1 : -1)
    if (!list_->item(r)->isHidden()) {
      last = r;
      --left;
    }
  if (last >= 0)
    list_->setCurrentRow(last);
}

bool CommandPalette::eventFilter(QObject *watched, QEvent *event) {
  if (watched == filter_ && event->type() == QEvent::FocusOut) {
    // Clicked or tabbed away: the palette is done.
    auto reason = static_cast<QFocusEvent *>(event)->reason();
    if (reason == Qt::MouseFocusReason || reason == Qt::TabFocusReason ||
        reason == Qt::BacktabFocusReason)
      hide();
  }
  if (watched == filter_ && event->type() == QEvent::KeyPress) {
    switch (static_cast<QKeyEvent *>(event)->key()) {
    case Qt::Key_Down:
      step(1);
      return true;
    case Qt::Key_Up:
      step(-1);
      return true;
    case Qt::Key_PageDown:
      step(10);
      return true;
    case Qt::Key_PageUp:
      step(-10);
      return true;
    case Qt::Key_Escape:
      dismiss();
      return true;
    case Qt::Key_Return:
    case Qt::Key_Enter:
      run();
      return true;
    default:
      break;
    }
  }
  return QFrame::eventFilter(watched, event);
}

void CommandPalette::run() {
  QListWidgetItem *item = list_->currentItem();
  if (!item || item->isHidden())
    return;
  Entry entry = entries_.at(item->data(kEntryRole).toULongLong());
  // Closed first: what runs may open a dialog of its own.
  dismiss();
  if (!entry.transformation.isEmpty())
    emit transformationChosen(entry.transformation);
  else if (entry.action)
    entry.action->trigger();
}

} // namespace weir::studio
