#pragma once
/// \file
/// View → Theme: Light or Dark, both on the Fusion style (the dark one
/// with a dark QPalette), remembered in QSettings (`view/theme`). The
/// graph canvas stays light in both, so the glyphs' pale fills and black
/// text read the same way.

#include <QPalette>
#include <QString>

namespace weir::studio {

enum class Theme { Light, Dark };

/// "light" / "dark", as stored.
QString themeName(Theme theme);
/// The stored theme; Light when none or an unknown one is stored.
Theme savedTheme();
/// Applies `theme` to the application (Fusion style and its palette) and
/// stores it.
void setTheme(Theme theme);
/// Applies the stored theme without storing anything.
void applySavedTheme();
/// The palette of `theme` (Fusion's standard one for Light).
QPalette themePalette(Theme theme);

} // namespace weir::studio
