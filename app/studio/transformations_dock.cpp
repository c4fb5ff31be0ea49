#include "app/studio/transformations_dock.h"

#include "app/studio/document.h"
#include "app/studio/preview_dialog.h"
#include "app/studio/text_format.h"
#include "ir/error.h"
#include "transforms/registry.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <limits>

namespace weir::studio {

namespace {

constexpr int kEntryRole = Qt::UserRole; ///< index into the listing
constexpr int kTransformationRole = Qt::UserRole + 1;
bool binds(const transforms::Match &m, ir::NodeId id) {
  for (const auto &role : m.roles)
    if (role.second == id)
      return true;
  return false;
}

std::vector<ir::NodeId> nodesOf(const transforms::Match &m) {
  std::vector<ir::NodeId> ids;
  for (const auto &role : m.roles)
    ids.push_back(role.second);
  return ids;
}

} // namespace

TransformationsDock::TransformationsDock(Document &document, QWidget *parent)
    : QDockWidget(tr("Transformations"), parent), doc_(document),
      tree_(new QTreeWidget), scope_(new QComboBox), description_(new QLabel),
      paramBox_(new QWidget), paramForm_(new QFormLayout(paramBox_)),
      apply_(new QPushButton(tr("Apply"))),
      preview_(new QPushButton(tr("Preview…"))), status_(new QLabel) {
  setObjectName("transformations");
  tree_->setColumnCount(2);
  tree_->setHeaderLabels({tr("Transformation / match"), tr("Check")});
  // The match text is long and the reason longer: both columns share the
  // width, and the full text is in the tooltips.
  tree_->header()->setSectionResizeMode(QHeaderView::Interactive);
  tree_->header()->resizeSection(0, 260);
  tree_->header()->setStretchLastSection(true);
  description_->setWordWrap(true);
  description_->setTextFormat(Qt::PlainText);
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::PlainText);
  status_->setStyleSheet("color: #b00020");
  paramForm_->setContentsMargins(0, 0, 0, 0);
  apply_->setEnabled(false);
  preview_->setEnabled(false);
  preview_->setToolTip(tr("Show what the step would make, before applying "
                          "it"));

  auto *body = new QWidget;
  auto *layout = new QVBoxLayout(body);
  auto *scopeRow = new QHBoxLayout;
  scopeRow->addWidget(new QLabel(tr("Scope")));
  scope_->addItem(tr("Whole program"), int(Scope::WholeProgram));
  scope_->addItem(tr("Selected node"), int(Scope::SelectedNode));
  scope_->addItem(tr("Visible region"), int(Scope::VisibleRegion));
  scope_->setToolTip(tr("Which matches to list: all, those that bind the "
                        "node selected in the graph, or those that bind any "
                        "node the graph view shows"));
  scopeRow->addWidget(scope_, 1);
  layout->addLayout(scopeRow);
  layout->addWidget(tree_, 1);
  layout->addWidget(description_);
  layout->addWidget(paramBox_);
  auto *buttons = new QHBoxLayout;
  buttons->addWidget(preview_);
  buttons->addWidget(apply_);
  layout->addLayout(buttons);
  layout->addWidget(status_);
  setWidget(body);

  connect(&watcher_, &QFutureWatcher<Listing>::finished, this,
          &TransformationsDock::finished);
  connect(tree_, &QTreeWidget::currentItemChanged, this,
          [this](QTreeWidgetItem *item) { onCurrentChanged(item); });
  connect(scope_, &QComboBox::currentIndexChanged, this,
          [this] { populate(); });
  connect(apply_, &QPushButton::clicked, this,
          &TransformationsDock::applyCurrent);
  connect(preview_, &QPushButton::clicked, this,
          &TransformationsDock::previewCurrent);
}

QString TransformationsDock::lastError() const { return status_->text(); }

void TransformationsDock::refresh() {
  if (running_) {
    again_ = true;
    return;
  }
  start();
}

void TransformationsDock::start() {
  std::shared_ptr<workspace::Workspace> ws = doc_.sharedWorkspace();
  if (!ws)
    return;
  running_ = true;
  again_ = false;
  watcher_.setFuture(QtConcurrent::run([ws] {
    // One lock for the whole listing, so every check sees the version the
    // matches came from.
    auto lock = ws->lock();
    Listing l;
    l.program = ws->programPtr();
    for (auto &[id, matches] : ws->allMatches())
      for (transforms::Match &m : matches) {
        transforms::CheckResult check = ws->check(id, m);
        l.entries.push_back({id, std::move(m), std::move(check)});
      }
    return l;
  }));
}

void TransformationsDock::finished() {
  running_ = false;
  Listing l = watcher_.result();
  std::shared_ptr<workspace::Workspace> ws = doc_.sharedWorkspace();
  if (again_ || !ws || l.program != ws->programPtr()) {
    start();
    return;
  }
  listing_ = std::move(l);
  populate();
  emit refreshed();
}

void TransformationsDock::populate() {
  // Keep the user's place: the same transformation and match if they are
  // still listed.
  QString currentKey;
  if (QTreeWidgetItem *c = tree_->currentItem())
    currentKey = c->data(0, kTransformationRole).toString() + "|" + c->text(0);
  tree_->clear();
  QTreeWidgetItem *restore = nullptr;
  QFont bold = tree_->font();
  bold.setBold(true);
  // Dark red on a light list, light red on a dark one (theme.h).
  QColor failure = tree_->palette().color(QPalette::Base).lightness() < 128
                       ? QColor(0xff, 0x8a, 0x80)
                       : QColor(0xb0, 0x00, 0x20);
  const Scope scope = this->scope();
  auto inScope = [&](const transforms::Match &m) {
    switch (scope) {
    case Scope::WholeProgram:
      return true;
    case Scope::SelectedNode:
      return selected_ && binds(m, *selected_);
    case Scope::VisibleRegion:
      for (const auto &role : m.roles)
        if (visible_.count(role.second))
          return true;
      return false;
    }
    return true;
  };
  for (const transforms::TierInfo &info : transforms::tiers()) {
    transforms::Tier tier = info.tier;
    auto *tierItem = new QTreeWidgetItem(
        tree_, {QString("%1 %2").arg(info.number).arg(qstr(info.title))});
    tierItem->setFont(0, bold);
    int shown = 0;
    for (const auto &t : transforms::transformations()) {
      if (t->tier() != tier)
        continue;
      QString id = qstr(t->id());
      auto *tItem = new QTreeWidgetItem(tierItem, {id});
      tItem->setData(0, kTransformationRole, id);
      tItem->setToolTip(0, qstr(t->description()));
      int ok = 0, listed = 0;
      for (std::size_t i = 0; i < listing_.entries.size(); ++i) {
        const Entry &e = listing_.entries[i];
        if (e.transformation != t->id())
          continue;
        if (!inScope(e.match))
          continue;
        auto *mItem = new QTreeWidgetItem(
            tItem, {QString::fromStdString(e.match.str()),
                    e.check.ok ? tr("applies")
                               : QString::fromStdString(e.check.reason)});
        mItem->setData(0, kEntryRole, qulonglong(i));
        mItem->setData(0, kTransformationRole, id);
        mItem->setToolTip(0, mItem->text(0));
        mItem->setToolTip(1, mItem->text(1));
        if (!e.check.ok)
          mItem->setForeground(1, failure);
        ++listed;
        ok += e.check.ok;
        if (id + "|" + mItem->text(0) == currentKey)
          restore = mItem;
      }
      tItem->setText(1, listed ? tr("%1 of %2 apply").arg(ok).arg(listed)
                               : tr("no match"));
      tItem->setExpanded(listed > 0 && listed <= 20);
      if (id + "|" + id == currentKey)
        restore = tItem;
      ++shown;
    }
    tierItem->setText(1, shown ? QString() : tr("none yet"));
    tierItem->setExpanded(true);
  }
  if (restore)
    tree_->setCurrentItem(restore);
  else
    onCurrentChanged(nullptr);
}

void TransformationsDock::setSelectedNode(std::optional<ir::NodeId> id) {
  selected_ = id;
  if (scope() == Scope::SelectedNode)
    populate();
}

void TransformationsDock::setVisibleNodes(const std::vector<ir::NodeId> &ids) {
  visible_ = {ids.begin(), ids.end()};
  if (scope() == Scope::VisibleRegion)
    populate();
}

void TransformationsDock::setScope(Scope scope) {
  scope_->setCurrentIndex(scope_->findData(int(scope)));
}

TransformationsDock::Scope TransformationsDock::scope() const {
  return Scope(scope_->currentData().toInt());
}

std::vector<std::pair<std::string, transforms::Match>>
TransformationsDock::shownMatches() const {
  std::vector<std::pair<std::string, transforms::Match>> shown;
  for (int t = 0; t < tree_->topLevelItemCount(); ++t) {
    QTreeWidgetItem *tier = tree_->topLevelItem(t);
    for (int i = 0; i < tier->childCount(); ++i)
      for (int k = 0; k < tier->child(i)->childCount(); ++k) {
        QVariant index = tier->child(i)->child(k)->data(0, kEntryRole);
        if (!index.isValid())
          continue;
        const Entry &e = listing_.entries.at(index.toULongLong());
        shown.emplace_back(e.transformation, e.match);
      }
  }
  return shown;
}

void TransformationsDock::onCurrentChanged(QTreeWidgetItem *item) {
  QString id = item ? item->data(0, kTransformationRole).toString() : QString();
  std::shared_ptr<const transforms::Transformation> t =
      id.isEmpty() ? nullptr : transforms::findTransformation(id.toStdString());
  const Entry *entry = nullptr;
  if (item && item->data(0, kEntryRole).isValid())
    entry = &listing_.entries.at(item->data(0, kEntryRole).toULongLong());
  if (t) {
    const transforms::Exactness x = t->exactness();
    description_->setText(
        qstr(t->summary()) + "\n\n" + qstr(t->description()) +
        (x.exact
             ? tr("\n\nExact: results bit for bit.")
             : tr("\n\nWithin rtol %1 / atol %2.").arg(x.rtol).arg(x.atol)));
  } else {
    description_->clear();
  }
  if (t != editing_)
    buildParamEditor(t.get());
  editing_ = t;
  apply_->setEnabled(entry && entry->check.ok);
  preview_->setEnabled(entry && entry->check.ok);
  if (entry)
    emit highlightRequested(entry->check.ok || entry->check.nodes.empty()
                                ? nodesOf(entry->match)
                                : entry->check.nodes);
  else
    emit highlightRequested({});
}

void TransformationsDock::buildParamEditor(
    const transforms::Transformation *t) {
  while (paramForm_->rowCount() > 0)
    paramForm_->removeRow(0);
  editors_.clear();
  if (!t)
    return;
  for (const transforms::ParamSpec &p : t->params()) {
    QWidget *w = nullptr;
    switch (p.kind) {
    case transforms::ParamSpec::Kind::Bool: {
      auto *box = new QCheckBox;
      box->setChecked(std::get<bool>(p.defaultValue));
      w = box;
      break;
    }
    case transforms::ParamSpec::Kind::Int: {
      auto *spin = new QSpinBox;
      spin->setRange(p.min ? int(*p.min) : std::numeric_limits<int>::min(),
                     p.max ? int(*p.max) : std::numeric_limits<int>::max());
      spin->setValue(int(std::get<std::int64_t>(p.defaultValue)));
      w = spin;
      break;
    }
    case transforms::ParamSpec::Kind::Float: {
      auto *spin = new QDoubleSpinBox;
      spin->setDecimals(6);
      spin->setRange(p.min.value_or(-1e12), p.max.value_or(1e12));
      spin->setValue(std::get<double>(p.defaultValue));
      w = spin;
      break;
    }
    case transforms::ParamSpec::Kind::String: {
      QString value =
          QString::fromStdString(std::get<std::string>(p.defaultValue));
      if (!p.choices.empty()) {
        auto *combo = new QComboBox;
        for (const std::string &c : p.choices)
          combo->addItem(QString::fromStdString(c));
        combo->setCurrentText(value);
        w = combo;
      } else {
        w = new QLineEdit(value);
      }
      break;
    }
    case transforms::ParamSpec::Kind::IntList: {
      // "16, 0, 8"; resolveParams reads the text (and names a bad one).
      std::string text = transforms::paramValueText(p.defaultValue);
      w = new QLineEdit(
          QString::fromStdString(text.substr(1, text.size() - 2)));
      break;
    }
    }
    w->setToolTip(QString::fromStdString(p.description));
    paramForm_->addRow(QString::fromStdString(p.name), w);
    editors_.emplace_back(p, w);
  }
}

transforms::Params TransformationsDock::editedParams() const {
  // Only what differs from the default, as a recipe records it.
  transforms::Params params;
  for (const auto &[spec, w] : editors_) {
    transforms::ParamValue v;
    if (auto *box = qobject_cast<QCheckBox *>(w))
      v = box->isChecked();
    else if (auto *spin = qobject_cast<QSpinBox *>(w))
      v = std::int64_t(spin->value());
    else if (auto *dspin = qobject_cast<QDoubleSpinBox *>(w))
      v = dspin->value();
    else if (auto *combo = qobject_cast<QComboBox *>(w))
      v = combo->currentText().toStdString();
    else if (auto *line = qobject_cast<QLineEdit *>(w)) {
      v = line->text().toStdString();
      if (spec.kind == transforms::ParamSpec::Kind::IntList)
        if (auto list = transforms::parseIntList(std::get<std::string>(v)))
          v = std::move(*list);
    }
    if (v != spec.defaultValue)
      params[spec.name] = v;
  }
  return params;
}

void TransformationsDock::selectTransformation(const QString &id) {
  for (int t = 0; t < tree_->topLevelItemCount(); ++t) {
    QTreeWidgetItem *tier = tree_->topLevelItem(t);
    for (int i = 0; i < tier->childCount(); ++i)
      if (tier->child(i)->data(0, kTransformationRole).toString() == id) {
        tree_->setCurrentItem(tier->child(i));
        tree_->scrollToItem(tier->child(i));
        return;
      }
  }
}

bool TransformationsDock::applyFirstApplicable(const QString &id) {
  selectTransformation(id);
  std::shared_ptr<workspace::Workspace> ws = doc_.sharedWorkspace();
  if (!ws || listing_.program != ws->programPtr()) {
    status_->setText(tr("%1: the matches of this version are still being "
                        "listed; try again in a moment")
                         .arg(id));
    return false;
  }
  for (const Entry &e : listing_.entries)
    if (qstr(e.transformation) == id && e.check.ok) {
      Entry entry = e; // apply refreshes the listing
      try {
        doc_.apply(entry.transformation, entry.match);
        status_->clear();
        return true;
      } catch (const std::exception &ex) {
        status_->setText(QString::fromUtf8(ex.what()));
        return false;
      }
    }
  status_->setText(tr("%1: no match applies in this version").arg(id));
  return false;
}

void TransformationsDock::applyCurrent() {
  QTreeWidgetItem *item = tree_->currentItem();
  if (!item || !item->data(0, kEntryRole).isValid())
    return;
  Entry entry = listing_.entries.at(item->data(0, kEntryRole).toULongLong());
  try {
    doc_.apply(entry.transformation, entry.match, editedParams());
    status_->clear();
  } catch (const std::exception &e) {
    // weir::Error with the workspace's reason; the workspace is unchanged.
    status_->setText(QString::fromUtf8(e.what()));
  }
}

PreviewDialog *TransformationsDock::preview() const { return previewDialog_; }

bool TransformationsDock::previewCurrent() {
  QTreeWidgetItem *item = tree_->currentItem();
  std::shared_ptr<workspace::Workspace> ws = doc_.sharedWorkspace();
  if (!ws || !item || !item->data(0, kEntryRole).isValid())
    return false;
  Entry entry = listing_.entries.at(item->data(0, kEntryRole).toULongLong());
  transforms::Params params = editedParams();
  std::shared_ptr<const ir::Program> before = listing_.program;
  auto t = transforms::findTransformation(entry.transformation);
  if (!t || before != ws->programPtr()) {
    status_->setText(tr("The list is not of the current version yet; try "
                        "again in a moment"));
    return false;
  }
  transforms::ApplyResult result;
  try {
    // On a copy: the workspace's own program is immutable and shared.
    result = transforms::applyChecked(*before, *t, entry.match, params);
  } catch (const std::exception &e) {
    status_->setText(QString::fromUtf8(e.what()));
    return false;
  }
  status_->clear();
  delete previewDialog_;
  auto after = std::make_shared<const ir::Program>(std::move(result.program));
  previewDialog_ = new PreviewDialog(
      *before, after, result.idMap, entry.match.state,
      qstr(t->id()) + " at " + QString::fromStdString(entry.match.str()),
      description_->text(), this);
  previewDialog_->setAttribute(Qt::WA_DeleteOnClose);
  connect(previewDialog_, &QDialog::accepted, this,
          [this, entry, params, before] {
            std::shared_ptr<workspace::Workspace> ws = doc_.sharedWorkspace();
            try {
              if (!ws || ws->programPtr() != before)
                throw Error("the program changed since the preview; "
                            "preview it again");
              doc_.apply(entry.transformation, entry.match, params);
              status_->clear();
            } catch (const std::exception &e) {
              status_->setText(QString::fromUtf8(e.what()));
            }
          });
  previewDialog_->open();
  return true;
}

} // namespace weir::studio
