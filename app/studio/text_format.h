#pragma once
/// \file
/// How the studio writes IR values for people: shapes, counts, byte sizes
/// and attributes. Symbolic amounts (batch size N) stay expressions.

#include "ir/attribute.h"
#include "ir/expr.h"
#include "ir/program.h"

#include <QString>

#include <string_view>

namespace weir::studio {

/// UTF-8 text from the core as a QString.
QString qstr(std::string_view s);
/// `f32[1, 3, 32, 32]`; `f32` for a scalar.
QString shapeText(const ir::Container &c);
/// `3,613,322`, or the expression when it is symbolic.
QString countText(const ir::Expr &e);
/// `16.0 KiB`, `807,504 B` below a KiB; the expression when symbolic.
QString bytesText(const ir::Expr &e);
/// An attribute's value, lists shortened past a dozen elements.
QString attributeText(const ir::AttributeValue &v);

} // namespace weir::studio
