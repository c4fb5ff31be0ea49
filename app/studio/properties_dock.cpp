#include "app/studio/properties_dock.h"

#include "app/studio/text_format.h"
#include "ir/hash.h"

#include <QHeaderView>
#include <QTreeWidget>

namespace weir::studio {

namespace {

QString connectorsText(const std::vector<ir::Connector> &cs) {
  QStringList parts;
  for (const ir::Connector &c : cs)
    parts << QString::fromStdString(c.name) + ": " +
                 qstr(ir::dtypeName(c.dtype));
  return parts.join(", ");
}

void appendLines(const QTreeWidgetItem *item, int depth, QStringList &out) {
  for (int i = 0; i < item->childCount(); ++i) {
    const QTreeWidgetItem *c = item->child(i);
    out << QString(depth * 2, ' ') + c->text(0) + ": " + c->text(1);
    appendLines(c, depth + 1, out);
  }
}

} // namespace

PropertiesDock::PropertiesDock(QWidget *parent)
    : QDockWidget(tr("Properties"), parent), tree_(new QTreeWidget(this)) {
  setObjectName("properties");
  tree_->setColumnCount(2);
  tree_->setHeaderLabels({tr("Property"), tr("Value")});
  tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  tree_->setWordWrap(true);
  setWidget(tree_);
}

QTreeWidgetItem *PropertiesDock::row(const QString &key, const QString &value,
                                     QTreeWidgetItem *parent) {
  auto *item =
      parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(tree_);
  item->setText(0, key);
  item->setText(1, value);
  item->setToolTip(1, value);
  return item;
}

const ir::ProgramAnalysis &
PropertiesDock::analysisOf(const ProgramPtr &program) {
  if (analyzed_ != program) {
    analysis_ = ir::analyze(*program);
    analyzed_ = program;
  }
  return analysis_;
}

void PropertiesDock::clear() {
  tree_->clear();
  analyzed_.reset();
}

void PropertiesDock::containerRows(const ir::Program &program,
                                   const std::string &name,
                                   QTreeWidgetItem *parent) {
  const ir::Container *c = program.findContainer(name);
  if (!c)
    return;
  QTreeWidgetItem *item =
      row(tr("container"), QString::fromStdString(name), parent);
  row(tr("type"), shapeText(*c), item);
  QStringList strides;
  for (const ir::Expr &s : c->strides)
    strides << QString::fromStdString(s.str());
  row(tr("strides"), "[" + strides.join(", ") + "]", item);
  row(tr("storage"), qstr(ir::storageName(c->storage)), item);
  QString role = c->isConstant() ? tr("constant")
                 : c->transient  ? tr("transient")
                                 : tr("argument");
  if (std::find(program.inputs.begin(), program.inputs.end(), name) !=
      program.inputs.end())
    role = tr("input");
  if (std::find(program.outputs.begin(), program.outputs.end(), name) !=
      program.outputs.end())
    role = tr("output");
  row(tr("role"), role, item);
  row(tr("size"), bytesText(c->byteSize()), item);
  if (c->isView())
    row(tr("view of"), QString::fromStdString(c->viewOf), item);
  item->setExpanded(true);
}

void PropertiesDock::showProgram(const ProgramPtr &program,
                                 std::uint64_t hash) {
  tree_->clear();
  if (!program)
    return;
  const ir::ProgramAnalysis &a = analysisOf(program);
  row(tr("program"), QString::fromStdString(program->name));
  row(tr("hash"), QString::fromStdString(ir::hashHex(hash)));
  row(tr("states"), QString::number(program->states.size()));
  row(tr("nodes"), QString::number(program->nodeCount()));
  row(tr("containers"), QString::number(program->containers.size()));
  QTreeWidgetItem *inputs =
      row(tr("inputs"), QString::number(program->inputs.size()));
  for (const std::string &n : program->inputs)
    if (const ir::Container *c = program->findContainer(n))
      row(QString::fromStdString(n), shapeText(*c), inputs);
  QTreeWidgetItem *outputs =
      row(tr("outputs"), QString::number(program->outputs.size()));
  for (const std::string &n : program->outputs)
    if (const ir::Container *c = program->findContainer(n))
      row(QString::fromStdString(n), shapeText(*c), outputs);
  row(tr("FLOPs"), countText(a.flops));
  row(tr("bytes moved"),
      countText(a.bytesMoved) + " (" + bytesText(a.bytesMoved) + ")");
  if (auto i = a.arithmeticIntensity())
    row(tr("intensity"), QString("%1 FLOP/byte").arg(*i, 0, 'f', 3));
  tree_->expandAll();
}

void PropertiesDock::showNode(const ProgramPtr &programPtr, int state,
                              ir::NodeId id) {
  tree_->clear();
  const ir::Program &program = *programPtr;
  const ir::State &s = program.states.at(std::size_t(state));
  const ir::Node *n = s.findNode(id);
  if (!n)
    return;
  row(tr("node"), QString("%%1").arg(id));
  row(tr("kind"), qstr(ir::nodeKindName(n->kind)));
  row(tr("label"), QString::fromStdString(n->label));
  row(tr("state"), QString::fromStdString(s.name));
  if (!n->inputs.empty())
    row(tr("inputs"), connectorsText(n->inputs));
  if (!n->outputs.empty())
    row(tr("outputs"), connectorsText(n->outputs));
  switch (n->kind) {
  case ir::NodeKind::Access:
    containerRows(program, n->access().container, nullptr);
    break;
  case ir::NodeKind::Tasklet:
    row(tr("code"), QString::fromStdString(n->tasklet().source));
    break;
  case ir::NodeKind::MapEntry:
  case ir::NodeKind::MapExit: {
    const ir::MapData &m = n->map();
    for (std::size_t i = 0; i < m.params.size() && i < m.ranges.size(); ++i)
      row(QString::fromStdString(m.params[i]),
          QString::fromStdString(m.ranges[i].str()));
    row(tr("schedule"), qstr(ir::scheduleName(m.schedule)));
    row(n->kind == ir::NodeKind::MapEntry ? tr("exit") : tr("entry"),
        QString("%%1").arg(m.partner));
    break;
  }
  case ir::NodeKind::Library: {
    const ir::LibraryData &l = n->library();
    row(tr("operator"), QString::fromStdString(
                            l.domain.empty() ? l.op : l.domain + "." + l.op));
    row(tr("opset"), QString::number(l.opsetVersion));
    row(tr("implementation"), l.implementation.empty()
                                  ? tr("(not expanded)")
                                  : QString::fromStdString(l.implementation));
    if (l.unknown)
      row(tr("note"), tr("unknown operator (imported as a placeholder)"));
    QTreeWidgetItem *attrs =
        row(tr("attributes"), QString::number(l.attributes.size()));
    for (const auto &[name, value] : l.attributes)
      row(QString::fromStdString(name), attributeText(value), attrs);
    break;
  }
  case ir::NodeKind::Primitive: {
    const ir::PrimitiveData &p = n->primitive();
    row(tr("primitive"), QString::fromStdString(p.primitive));
    QTreeWidgetItem *attrs =
        row(tr("attributes"), QString::number(p.attributes.size()));
    for (const auto &[name, value] : p.attributes)
      row(QString::fromStdString(name), attributeText(value), attrs);
    break;
  }
  }
  for (const ir::StateAnalysis &sa : analysisOf(programPtr).states) {
    if (sa.state != s.name)
      continue;
    for (const ir::NodeCost &c : sa.nodes) {
      if (c.node != id)
        continue;
      row(tr("FLOPs"), countText(c.flops));
      row(tr("bytes in"), bytesText(c.bytesIn));
      row(tr("bytes out"), bytesText(c.bytesOut));
    }
  }
  QTreeWidgetItem *in =
      row(tr("in edges"), QString::number(s.inEdges(id).size()));
  for (const ir::Edge *e : s.inEdges(id))
    row(QString("%%1").arg(e->src), QString::fromStdString(e->memlet.str()),
        in);
  QTreeWidgetItem *out =
      row(tr("out edges"), QString::number(s.outEdges(id).size()));
  for (const ir::Edge *e : s.outEdges(id))
    row(QString("%%1").arg(e->dst), QString::fromStdString(e->memlet.str()),
        out);
  tree_->expandAll();
}

void PropertiesDock::showEdge(const ProgramPtr &programPtr, int state,
                              ir::EdgeId id) {
  tree_->clear();
  const ir::Program &program = *programPtr;
  const ir::State &s = program.states.at(std::size_t(state));
  const ir::Edge *e = s.findEdge(id);
  if (!e)
    return;
  auto end = [&](ir::NodeId node, const std::string &conn) {
    const ir::Node *n = s.findNode(node);
    QString name = QString("%%1").arg(node);
    if (n && !n->label.empty())
      name += " " + QString::fromStdString(n->label);
    return conn.empty() ? name : name + "." + QString::fromStdString(conn);
  };
  row(tr("edge"), QString("#%1").arg(id));
  row(tr("from"), end(e->src, e->srcConn));
  row(tr("to"), end(e->dst, e->dstConn));
  row(tr("memlet"), QString::fromStdString(e->memlet.str()));
  if (!e->memlet.empty()) {
    row(tr("volume"),
        countText(e->memlet.volume()) + tr(" elements per execution"));
    if (e->memlet.wcr)
      row(tr("write conflicts"), qstr(ir::wcrName(*e->memlet.wcr)));
    containerRows(program, e->memlet.container, nullptr);
  }
  for (const ir::StateAnalysis &sa : analysisOf(programPtr).states) {
    if (sa.state != s.name)
      continue;
    for (const ir::EdgeTraffic &t : sa.edges) {
      if (t.edge != id)
        continue;
      row(tr("elements moved"), countText(t.elements));
      row(tr("bytes moved"), bytesText(t.bytes));
    }
  }
  tree_->expandAll();
}

QString PropertiesDock::text() const {
  QStringList lines;
  appendLines(tree_->invisibleRootItem(), 0, lines);
  return lines.join('\n');
}

} // namespace weir::studio
