#pragma once
/// \file
/// View → Overlay: colours the graph by a static analysis (ir::analyze) —
/// the bytes each edge moves, the FLOPs each node performs, or each node's
/// arithmetic intensity (its FLOPs over the bytes on its access edges,
/// NodeCost::bytesIn + bytesOut) — on a heat
/// scale from pale yellow (little) to red (the most in the state), with a
/// legend in the corner of the view. The scale is logarithmic (amounts
/// span orders of magnitude); what moves or computes nothing, or only a
/// symbolic amount, keeps its usual colour.

#include "ir/analysis.h"

#include <QColor>
#include <QWidget>

#include <unordered_map>

namespace weir::studio {

enum class Overlay { None, BytesMoved, Flops, Intensity };

/// The heat colour of `t` in [0, 1] (clamped): 0 coolest, 1 hottest.
QColor heatColor(double t);

struct OverlayColors {
  Overlay overlay = Overlay::None;
  std::unordered_map<ir::EdgeId, QColor> edges;
  std::unordered_map<ir::NodeId, QColor> nodes;
  /// The largest amount (bytes, FLOPs or FLOP/byte) in the state; 0 when
  /// none.
  double maximum = 0;
  /// Intensity: each coloured node's FLOP/byte.
  std::unordered_map<ir::NodeId, double> intensity;
};

/// The colours `overlay` gives the edges (BytesMoved) or nodes (Flops,
/// Intensity) of one state's analysis. Intensity colours only the nodes
/// whose FLOPs and bytes are both known and positive.
OverlayColors overlayColors(Overlay overlay, const ir::StateAnalysis &analysis);

/// The legend: the overlay's name and the scale from 0 to the maximum.
class OverlayLegend : public QWidget {
  Q_OBJECT

public:
  explicit OverlayLegend(QWidget *parent = nullptr);
  /// Hidden for Overlay::None.
  void showFor(const OverlayColors &colors);
  QString text() const { return text_; }

protected:
  void paintEvent(QPaintEvent *event) override;

private:
  QString text_;
};

} // namespace weir::studio
