/// \file
/// `weir-studio [--plugins DIR]... [--no-plugins] [MODEL|SESSION]` — the
/// Qt desktop workbench. With no argument it opens the bundled sample CNN.
/// Python starts first: it loads the plugin transformations (as the `weir`
/// command does) and runs the Python dock.

#include "app/python_host/plugin_host.h"
#include "app/python_host/python_console.h"
#include "app/studio/main_window.h"
#include "app/studio/python_dock.h"
#include "ir/error.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QThreadPool>

#include <cstdio>
#include <memory>
#include <optional>

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
  QCommandLineOption pluginsOption(
      "plugins", "Also load the Python plugin transformations in DIR.", "DIR");
  QCommandLineOption noPluginsOption(
      "no-plugins", "Load no plugins from Weir's plugins/ folder, "
                    "$WEIR_PLUGIN_PATH or ~/.local/share/weir/plugins.");
  parser.addOption(pluginsOption);
  parser.addOption(noPluginsOption);
  parser.process(app);
  QStringList args = parser.positionalArguments();
  if (args.size() > 1)
    parser.showHelp(2);
  QString path = args.isEmpty() ? sampleModel() : args.front();

  // Python before the window (whose workers may run plugin code) and
  // destroyed after it. Without Python the window still works; the
  // Python dock says why.
  std::optional<weir::app::PluginHost> python;
  std::unique_ptr<weir::app::PythonConsole> console;
  QString noPython;
  try {
    std::vector<std::string> folders;
    for (const QString &f : parser.values(pluginsOption))
      folders.push_back(f.toStdString());
    python.emplace(folders, !parser.isSet(noPluginsOption), true);
    if (python->packageProblem().empty())
      console = std::make_unique<weir::app::PythonConsole>();
    else
      noPython = QString::fromStdString(python->packageProblem());
  } catch (const weir::Error &e) {
    noPython = QString::fromUtf8(e.what());
    std::fprintf(stderr, "weir-studio: %s\n", e.what());
  }

  weir::studio::MainWindow window;
  weir::studio::installPythonDock(window, std::move(console), noPython);
  window.show();
  window.openInBackground(path);
  int status = app.exec();
  // Work still on Qt's pool (a plugin's matches, a compile) may need
  // Python's lock, which the plugin host takes back for good when it goes:
  // let the work finish first (QApplication would wait for it only after,
  // and wait forever).
  QThreadPool::globalInstance()->waitForDone();
  return status;
}
