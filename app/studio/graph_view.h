#pragma once
/// \file
/// The QGraphicsView over a GraphScene: zoom with the wheel (about the
/// pointer), pan by dragging the background, fit the whole graph.

#include <QGraphicsView>

namespace weir::studio {

class GraphView : public QGraphicsView {
  Q_OBJECT

public:
  explicit GraphView(QWidget *parent = nullptr);

  void zoomBy(double factor);
  /// The whole graph; a graph too large to read whole is shown from its
  /// top (its inputs) at a readable scale instead.
  void fitGraph();
  double zoom() const { return transform().m11(); }

protected:
  void wheelEvent(QWheelEvent *event) override;
};

} // namespace weir::studio
