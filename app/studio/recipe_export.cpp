#include "app/studio/recipe_export.h"

#include "ir/error.h"
#include "workspace/workspace.h"

#include <QSaveFile>

namespace weir::studio {

QString recipeAsPython(const workspace::Workspace &ws) {
  auto lock = ws.lock();
  const std::string &model = ws.source().modelPath;
  if (model.empty())
    throw Error("the workspace has no model file to replay its recipe on "
                "(it was opened from a snapshot)");
  return QString::fromStdString(ws.recipe().asPython(model));
}

void exportRecipeAsPython(const workspace::Workspace &ws, const QString &path) {
  QByteArray text = recipeAsPython(ws).toUtf8();
  // Temporary file, then rename: an existing script is replaced whole or
  // not at all.
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size() ||
      !file.commit())
    throw Error("cannot write '" + path.toStdString() +
                "': " + file.errorString().toStdString());
}

} // namespace weir::studio
