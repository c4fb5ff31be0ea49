#include "app/studio/glyph.h"

#include "app/studio/text_format.h"

#include <QFontMetricsF>

#include <algorithm>

namespace weir::studio {

namespace {

constexpr int kCodeLines = 4;
constexpr int kLineChars = 48;

QString elide(QString s) {
  if (s.size() > kLineChars)
    s = s.left(kLineChars - 1) + "…";
  return s;
}

QString rangesText(const ir::MapData &m) {
  QStringList parts;
  for (std::size_t i = 0; i < m.params.size() && i < m.ranges.size(); ++i)
    parts << QString::fromStdString(m.params[i]) + "=" +
                 QString::fromStdString(m.ranges[i].str());
  return "[" + parts.join(", ") + "]";
}

void describe(const ir::Program &program, const ir::Node &node, Glyph &g) {
  switch (node.kind) {
  case ir::NodeKind::Access: {
    const std::string &name = node.access().container;
    g.title = QString::fromStdString(name);
    if (const ir::Container *c = program.findContainer(name)) {
      g.details << shapeText(*c);
      if (c->isView())
        g.details << "view of " + QString::fromStdString(c->viewOf);
      g.argument = !c->transient;
      g.constant = c->isConstant();
    }
    break;
  }
  case ir::NodeKind::Tasklet: {
    g.title = QString::fromStdString(node.label);
    QStringList lines = QString::fromStdString(node.tasklet().source)
                            .split('\n', Qt::SkipEmptyParts);
    for (int i = 0; i < lines.size() && i < kCodeLines; ++i)
      g.details << elide(lines[i].trimmed());
    if (lines.size() > kCodeLines)
      g.details << QString("… %1 more lines").arg(lines.size() - kCodeLines);
    break;
  }
  case ir::NodeKind::MapEntry:
  case ir::NodeKind::MapExit: {
    const ir::MapData &m = node.map();
    g.title = QString::fromStdString(node.label);
    g.details << elide(rangesText(m));
    if (node.kind == ir::NodeKind::MapEntry)
      g.details << qstr(ir::scheduleName(m.schedule));
    break;
  }
  case ir::NodeKind::Library: {
    const ir::LibraryData &l = node.library();
    g.title = QString::fromStdString(l.op);
    g.details << elide(QString::fromStdString(node.label));
    g.details << (l.unknown ? QString("unknown operator")
                  : l.implementation.empty()
                      ? QString("not expanded")
                      : "impl: " + QString::fromStdString(l.implementation));
    break;
  }
  case ir::NodeKind::Primitive:
    g.title = QString::fromStdString(node.primitive().primitive);
    g.details << elide(QString::fromStdString(node.label));
    break;
  }
  if (g.title.isEmpty())
    g.title = QString("%%1").arg(node.id);
}

} // namespace

QFont glyphFont() {
  QFont f("DejaVu Sans");
  f.setPointSizeF(8);
  return f;
}

QFont glyphTitleFont() {
  QFont f = glyphFont();
  f.setBold(true);
  return f;
}

Glyph makeGlyph(const ir::Program &program, const ir::Node &node) {
  Glyph g;
  g.kind = node.kind;
  describe(program, node, g);

  QFontMetricsF title(glyphTitleFont()), detail(glyphFont());
  double w = title.horizontalAdvance(g.title);
  for (const QString &line : g.details)
    w = std::max(w, detail.horizontalAdvance(line));
  double h = title.height() + detail.height() * double(g.details.size());
  // Room for the outline around the text: an ellipse needs the most, a
  // trapezoid its slanted sides, an octagon its cut corners.
  switch (g.kind) {
  case ir::NodeKind::Access:
    w = w * 1.2 + 16;
    h += 10;
    break;
  case ir::NodeKind::MapEntry:
  case ir::NodeKind::MapExit:
    h += 8;
    w += h + 16;
    break;
  case ir::NodeKind::Tasklet:
  case ir::NodeKind::Primitive:
    w += 24;
    h += 12;
    break;
  case ir::NodeKind::Library:
    w += 20;
    h += 10;
    break;
  }
  g.size = QSizeF(std::max(w, 40.0), std::max(h, 24.0));
  return g;
}

} // namespace weir::studio
