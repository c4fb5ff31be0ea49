#include "app/studio/text_format.h"

#include <QLocale>
#include <QStringList>

#include <type_traits>

namespace weir::studio {

namespace {

constexpr int kListShown = 12;

template <typename T, typename F>
QString listText(const std::vector<T> &v, F item) {
  QStringList parts;
  for (std::size_t i = 0; i < v.size() && i < kListShown; ++i)
    parts << item(v[i]);
  if (v.size() > kListShown)
    parts << QString("… (%1 in all)").arg(v.size());
  return "[" + parts.join(", ") + "]";
}

} // namespace

QString qstr(std::string_view s) {
  return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QString shapeText(const ir::Container &c) {
  QString dtype = qstr(ir::dtypeName(c.dtype));
  if (c.shape.empty())
    return dtype;
  QStringList dims;
  for (const ir::Expr &d : c.shape)
    dims << QString::fromStdString(d.str());
  return dtype + "[" + dims.join(", ") + "]";
}

QString countText(const ir::Expr &e) {
  if (auto v = e.asConstant())
    // English grouping (3,613,322), as the command line prints totals.
    return QLocale(QLocale::English).toString(qlonglong(*v));
  return QString::fromStdString(e.str());
}

QString bytesText(const ir::Expr &e) {
  auto v = e.asConstant();
  if (!v)
    return QString::fromStdString(e.str()) + " B";
  const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (*v < 1024)
    return QString("%1 B").arg(*v);
  double x = double(*v);
  int u = -1;
  while (x >= 1024 && u < 3) {
    x /= 1024;
    ++u;
  }
  return QString("%1 %2").arg(x, 0, 'f', 1).arg(units[u]);
}

QString attributeText(const ir::AttributeValue &v) {
  return std::visit(
      [](const auto &x) -> QString {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::int64_t>)
          return QString::number(x);
        else if constexpr (std::is_same_v<T, double>)
          return QString::number(x, 'g', 8);
        else if constexpr (std::is_same_v<T, std::string>)
          return "\"" + QString::fromStdString(x) + "\"";
        else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>)
          return listText(x, [](std::int64_t i) { return QString::number(i); });
        else if constexpr (std::is_same_v<T, std::vector<double>>)
          return listText(x,
                          [](double d) { return QString::number(d, 'g', 8); });
        else if constexpr (std::is_same_v<T, std::vector<std::string>>)
          return listText(x, [](const std::string &s) {
            return "\"" + QString::fromStdString(s) + "\"";
          });
        else if constexpr (std::is_same_v<T, ir::TensorValue>)
          return QString("tensor %1%2")
              .arg(qstr(ir::dtypeName(x.dtype)))
              .arg(listText(x.shape,
                            [](std::int64_t i) { return QString::number(i); }));
        else
          return QString("subgraph (%1 nodes)").arg(x ? x->nodeCount() : 0);
      },
      v);
}

} // namespace weir::studio
