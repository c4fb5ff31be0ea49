#pragma once
/// \file
/// File → Export recipe as Python: the workspace's steps up to the current
/// version as the script workspace::Recipe::asPython renders (it replays
/// them with the `weir` package on the model file), written atomically.

#include <QString>

namespace weir::workspace {
class Workspace;
}

namespace weir::studio {

/// The script for `ws`'s history. Throws weir::Error when the workspace
/// has no model file to replay on (it was opened from a snapshot).
QString recipeAsPython(const workspace::Workspace &ws);
/// Writes recipeAsPython(ws) to `path` atomically (QSaveFile). Throws
/// weir::Error naming the file when it cannot be written.
void exportRecipeAsPython(const workspace::Workspace &ws, const QString &path);

} // namespace weir::studio
