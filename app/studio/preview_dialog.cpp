#include "app/studio/preview_dialog.h"

#include "app/studio/graph_panel.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

namespace weir::studio {

PreviewDialog::PreviewDialog(const ir::Program &before,
                             std::shared_ptr<const ir::Program> after,
                             const transforms::IdMap &idMap,
                             const std::string &state, const QString &title,
                             const QString &description, QWidget *parent)
    : QDialog(parent), after_(std::move(after)),
      diff_(diffPrograms(before, *after_, idMap)), panel_(new GraphPanel),
      removed_(new QListWidget), apply_(new QPushButton(tr("&Apply"))),
      cancel_(new QPushButton(tr("Cancel"))) {
  setWindowTitle(tr("Preview: %1").arg(title));
  setObjectName("preview");

  auto *side = new QWidget;
  auto *sideLayout = new QVBoxLayout(side);
  auto *text = new QLabel(description);
  text->setWordWrap(true);
  text->setTextFormat(Qt::PlainText);
  text->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  sideLayout->addWidget(text);
  auto *summary = new QLabel(tr("%1 nodes added, %2 changed (highlighted), "
                                "%3 removed:")
                                 .arg(diff_.added.size())
                                 .arg(diff_.changed.size())
                                 .arg(diff_.removed.size()));
  summary->setWordWrap(true);
  sideLayout->addWidget(summary);
  for (const std::string &r : diff_.removed)
    removed_->addItem(QString::fromStdString(r));
  sideLayout->addWidget(removed_, 1);

  auto *split = new QSplitter;
  split->addWidget(panel_);
  split->addWidget(side);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);

  auto *buttons = new QDialogButtonBox;
  buttons->addButton(apply_, QDialogButtonBox::AcceptRole);
  buttons->addButton(cancel_, QDialogButtonBox::RejectRole);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

  auto *layout = new QVBoxLayout(this);
  layout->addWidget(split, 1);
  layout->addWidget(buttons);
  resize(1100, 700);

  int index = 0;
  for (std::size_t i = 0; i < after_->states.size(); ++i)
    if (after_->states[i].name == state)
      index = int(i);
  std::vector<ir::NodeId> marked = diff_.added;
  marked.insert(marked.end(), diff_.changed.begin(), diff_.changed.end());
  panel_->showProgram(after_, index);
  panel_->highlight(marked);
}

} // namespace weir::studio
