#pragma once
/// \file
/// The QGraphicsView over a GraphScene: zoom with the wheel (about the
/// pointer), pan by dragging the background, fit the whole graph. It says
/// when what it shows may have changed (viewChanged), for the views that
/// follow the visible region.

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
  /// The part of the scene the viewport shows.
  QRectF visibleSceneRect() const;

signals:
  /// Scrolled, zoomed or resized: what it shows may have changed.
  void viewChanged();

protected:
  void wheelEvent(QWheelEvent *event) override;
  void scrollContentsBy(int dx, int dy) override;
  void resizeEvent(QResizeEvent *event) override;
};

} // namespace weir::studio
