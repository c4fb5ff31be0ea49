#pragma once
/// \file
/// What a node looks like, worked out before layout: its DaCe-style shape,
/// the lines of text it carries and the size that text needs. Graphviz is
/// given these sizes; NodeItem draws them.
///
/// - access: ellipse with the container's name and shape;
/// - tasklet: octagon with its label and code;
/// - map entry / exit: trapezoid (wide side towards the scope's inside)
///   with the ranges and the schedule;
/// - library: box with the operator, its label and implementation;
/// - primitive: box with cut corners and the primitive's name.

#include "ir/program.h"

#include <QFont>
#include <QSizeF>
#include <QString>
#include <QStringList>

namespace weir::studio {

struct Glyph {
  ir::NodeKind kind = ir::NodeKind::Access;
  QString title;       ///< drawn bold
  QStringList details; ///< the lines under the title
  /// Access nodes: an argument (input or output) or a constant are drawn
  /// differently from transients.
  bool argument = false;
  bool constant = false;
  QSizeF size; ///< in scene units (points)
};

/// The fonts glyphs use (the title font is the bold one).
QFont glyphFont();
QFont glyphTitleFont();

Glyph makeGlyph(const ir::Program &program, const ir::Node &node);

} // namespace weir::studio
