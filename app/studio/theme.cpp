#include "app/studio/theme.h"

#include <QApplication>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>

namespace weir::studio {

namespace {

const char *const kKey = "view/theme";

void apply(Theme theme) {
  auto *app = qobject_cast<QApplication *>(QCoreApplication::instance());
  if (!app)
    return;
  if (QApplication::style()->name().compare("fusion", Qt::CaseInsensitive))
    QApplication::setStyle(QStyleFactory::create("Fusion"));
  QApplication::setPalette(themePalette(theme));
}

} // namespace

QString themeName(Theme theme) {
  return theme == Theme::Dark ? "dark" : "light";
}

Theme savedTheme() {
  return QSettings().value(kKey).toString() == "dark" ? Theme::Dark
                                                      : Theme::Light;
}

void setTheme(Theme theme) {
  apply(theme);
  QSettings().setValue(kKey, themeName(theme));
}

void applySavedTheme() { apply(savedTheme()); }

QPalette themePalette(Theme theme) {
  QStyle *fusion = QStyleFactory::create("Fusion");
  QPalette light = fusion->standardPalette();
  delete fusion;
  if (theme == Theme::Light)
    return light;
  // The usual dark Fusion palette: dark surfaces, light text, a blue
  // highlight; disabled text dimmed.
  QPalette p;
  const QColor window(0x35, 0x35, 0x35), base(0x25, 0x25, 0x25),
      text(0xe6, 0xe6, 0xe6), dim(0x80, 0x80, 0x80);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, window);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, dim);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::red);
  p.setColor(QPalette::Link, QColor(0x6a, 0xb0, 0xff));
  p.setColor(QPalette::Highlight, QColor(0x2a, 0x82, 0xda));
  p.setColor(QPalette::HighlightedText, Qt::black);
  p.setColor(QPalette::Light, QColor(0x50, 0x50, 0x50));
  p.setColor(QPalette::Midlight, QColor(0x45, 0x45, 0x45));
  p.setColor(QPalette::Mid, QColor(0x2a, 0x2a, 0x2a));
  p.setColor(QPalette::Dark, QColor(0x1e, 0x1e, 0x1e));
  p.setColor(QPalette::Shadow, Qt::black);
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, dim);
  return p;
}

} // namespace weir::studio
