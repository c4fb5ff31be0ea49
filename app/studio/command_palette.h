#pragma once
/// \file
/// The command palette (Ctrl+Shift+P): one filterable list of every action
/// of the window (menus, toolbar, docks' toggles; "Menu › Action") and
/// every registered transformation. Typing filters (every word must appear,
/// case ignored), Up/Down/PageUp/PageDown move, Enter runs the highlighted
/// entry, Escape closes. An action is triggered; a transformation is reported
/// through transformationChosen() (the window applies its first applicable
/// match). It is a panel over the top of the window, not a window of its own,
/// so the keyboard stays in the main window.

#include <QFrame>
#include <QPointer>

#include <vector>

class QAction;
class QLineEdit;
class QListWidget;

namespace weir::studio {

class CommandPalette : public QFrame {
  Q_OBJECT

public:
  /// Lists the actions of `window` (which is also the parent); hidden
  /// until popup().
  explicit CommandPalette(QWidget *window);

  /// Lists the entries afresh (actions change: the undo action names its
  /// step), clears the filter and shows the palette with the focus in it.
  void popup();

  QLineEdit *filterField() { return filter_; }
  QListWidget *list() { return list_; }
  /// The entries' texts that the filter leaves, in order.
  QStringList visibleEntries() const;

signals:
  void transformationChosen(const QString &id);

protected:
  bool eventFilter(QObject *watched, QEvent *event) override;

private:
  struct Entry {
    QString text;
    QPointer<QAction> action; ///< null for a transformation
    QString transformation;
  };
  void collect();
  void filter();
  void step(int rows);
  void run();
  void dismiss();

  QWidget *window_;
  QLineEdit *filter_;
  QListWidget *list_;
  std::vector<Entry> entries_;
  QPointer<QWidget> returnFocus_; ///< where the focus was before popup()
};

} // namespace weir::studio
