#include "app/studio/overlay.h"

#include "app/studio/text_format.h"

#include <QLinearGradient>
#include <QPainter>

#include <cmath>

namespace weir::studio {

namespace {

/// Pale yellow, orange, red: light enough that black text stays readable
/// on a node filled with any of them.
constexpr QRgb kStops[] = {qRgb(0xff, 0xf1, 0xa8), qRgb(0xfd, 0xa0, 0x3a),
                           qRgb(0xf0, 0x3e, 0x2e)};

/// A known, positive amount; nullopt for zero or a symbolic one.
std::optional<double> amount(const ir::Expr &e) {
  std::optional<std::int64_t> v = e.asConstant();
  if (!v || *v <= 0)
    return std::nullopt;
  return double(*v);
}

} // namespace

QColor heatColor(double t) {
  t = std::clamp(t, 0.0, 1.0);
  double at = t * 2;
  int i = std::min(1, int(at));
  double f = at - i;
  QColor a(kStops[i]), b(kStops[i + 1]);
  return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * f),
                          float(a.greenF() + (b.greenF() - a.greenF()) * f),
                          float(a.blueF() + (b.blueF() - a.blueF()) * f));
}

OverlayColors overlayColors(Overlay overlay,
                            const ir::StateAnalysis &analysis) {
  OverlayColors c;
  c.overlay = overlay;
  auto scale = [&](double v) {
    return c.maximum > 1 ? std::log1p(v) / std::log1p(c.maximum) : 1.0;
  };
  if (overlay == Overlay::BytesMoved) {
    for (const ir::EdgeTraffic &t : analysis.edges)
      if (auto v = amount(t.bytes))
        c.maximum = std::max(c.maximum, *v);
    for (const ir::EdgeTraffic &t : analysis.edges)
      if (auto v = amount(t.bytes))
        c.edges[t.edge] = heatColor(scale(*v));
  } else if (overlay == Overlay::Flops) {
    for (const ir::NodeCost &n : analysis.nodes)
      if (auto v = amount(n.flops))
        c.maximum = std::max(c.maximum, *v);
    for (const ir::NodeCost &n : analysis.nodes)
      if (auto v = amount(n.flops))
        c.nodes[n.node] = heatColor(scale(*v));
  } else if (overlay == Overlay::Intensity) {
    for (const ir::NodeCost &n : analysis.nodes) {
      auto flops = amount(n.flops);
      auto bytes = amount(n.bytesIn + n.bytesOut);
      if (flops && bytes) {
        c.intensity[n.node] = *flops / *bytes;
        c.maximum = std::max(c.maximum, *flops / *bytes);
      }
    }
    // Intensities are often below 1 FLOP/byte: the scale is relative to
    // the most intense node whatever its value.
    for (const auto &[node, v] : c.intensity)
      c.nodes[node] = heatColor(std::log1p(v) / std::log1p(c.maximum));
  }
  return c;
}

OverlayLegend::OverlayLegend(QWidget *parent) : QWidget(parent) {
  setAttribute(Qt::WA_TransparentForMouseEvents);
  hide();
}

void OverlayLegend::showFor(const OverlayColors &colors) {
  if (colors.overlay == Overlay::None) {
    text_.clear();
    hide();
    return;
  }
  ir::Expr most(std::int64_t(colors.maximum));
  switch (colors.overlay) {
  case Overlay::BytesMoved:
    text_ = tr("bytes moved per edge: 0 … %1").arg(bytesText(most));
    break;
  case Overlay::Flops:
    text_ = tr("FLOPs per node: 0 … %1").arg(countText(most));
    break;
  default:
    text_ = tr("FLOP/byte per node: 0 … %1")
                .arg(QString::number(colors.maximum, 'g', 3));
    break;
  }
  QFontMetrics fm(font());
  resize(std::max(180, fm.horizontalAdvance(text_) + 16), fm.height() * 2 + 16);
  move(8, 8);
  QWidget::show();
  raise();
  update();
}

void OverlayLegend::paintEvent(QPaintEvent *) {
  QPainter p(this);
  QRect r = rect().adjusted(0, 0, -1, -1);
  p.setPen(palette().color(QPalette::Mid));
  p.setBrush(palette().color(QPalette::Window));
  p.drawRect(r);
  QFontMetrics fm(font());
  p.setPen(palette().color(QPalette::WindowText));
  p.drawText(QPoint(8, 6 + fm.ascent()), text_);
  QRect bar(8, 10 + fm.height(), width() - 16, fm.height() - 2);
  QLinearGradient g(bar.topLeft(), bar.topRight());
  for (int i = 0; i <= 4; ++i)
    g.setColorAt(i / 4.0, heatColor(i / 4.0));
  p.setPen(Qt::NoPen);
  p.setBrush(g);
  p.drawRect(bar);
}

} // namespace weir::studio
