/// \file
/// `weir-studio [MODEL|SESSION]` — the Qt desktop workbench. With no
/// argument it opens the bundled sample CNN.

#include "app/studio/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>

namespace {

/// The bundled sample: installed beside the binary's prefix, or in the
/// source tree of the build that made the binary.
QString sampleModel() {
  QString installed = QDir(QCoreApplication::applicationDirPath())
                          .filePath("../" WEIR_INSTALLED_SAMPLE);
  if (QFileInfo::exists(installed))
    return QDir::cleanPath(installed);
  return WEIR_SAMPLE_MODEL;
}

} // namespace

int main(int argc, char **argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("weir-studio");
  QApplication::setOrganizationName("weir");

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Weir Studio: view and transform a model's dataflow.");
  parser.addHelpOption();
  parser.addPositionalArgument(
      "file",
      "An ONNX model, a Weir program (.json) or a session (.weir); "
      "the bundled sample CNN when absent.",
      "[MODEL|SESSION]");
  parser.process(app);
  QStringList args = parser.positionalArguments();
  if (args.size() > 1)
    parser.showHelp(2);
  QString path = args.isEmpty() ? sampleModel() : args.front();

  weir::studio::MainWindow window;
  window.show();
  window.openInBackground(path);
  return app.exec();
}
