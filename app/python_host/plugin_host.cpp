/// \file
/// See plugin_host.h. The package is found next to an installed binary
/// (<prefix>/bin/weir → <prefix>/lib/python3.11/site-packages), else in the
/// build tree's python/ folder; PYTHONPATH still comes first.

#include "app/python_host/plugin_host.h"

#include "ir/error.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

namespace py = pybind11;
using namespace pybind11::literals;

namespace weir::app {
namespace {

namespace fs = std::filesystem;

/// Where the `weir` package is: installed next to the binary
/// (<prefix>/bin/weir and <prefix>/<python dir>/weir; an absolute python
/// dir is used as it is), else the build tree.
fs::path packageFolder() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  fs::path installed =
      exe.parent_path().parent_path() / WEIR_PYTHON_INSTALL_DIR;
  return !ec && fs::exists(installed / "weir" / "__init__.py")
             ? installed
             : fs::path(WEIR_PYTHON_BUILD_DIR);
}

/// The first line of a Python error ("ModuleNotFoundError: No module named
/// 'weir._weir'"), without pybind11's traceback.
std::string firstLine(const std::string &s) {
  return s.substr(0, s.find('\n'));
}

/// Whether `file` lies in `folder` (both as given to or by the package).
bool inFolder(const std::string &file, const std::string &folder) {
  std::error_code ec;
  fs::path f = fs::weakly_canonical(file, ec).parent_path();
  fs::path d = fs::weakly_canonical(folder, ec);
  return f == d || file == folder;
}

/// Imports `weir` without its own plugin discovery (the host loads the
/// default folders itself, so that it can tell their problems from those
/// of the folders the user named); WEIR_NO_PLUGINS is restored after.
py::module_ importPackage() {
  py::object environ = py::module_::import("os").attr("environ");
  py::object before = environ.attr("get")("WEIR_NO_PLUGINS");
  environ["WEIR_NO_PLUGINS"] = "1";
  auto restore = [&] {
    if (before.is_none())
      environ.attr("pop")("WEIR_NO_PLUGINS", py::none());
    else
      environ["WEIR_NO_PLUGINS"] = before;
  };
  try {
    py::module_ weir = py::module_::import("weir");
    restore();
    return weir;
  } catch (...) {
    restore();
    throw;
  }
}

} // namespace

PluginHost::PluginHost(const std::vector<std::string> &folders, bool discover,
                       bool releaseLock) {
  // No Python signal handlers (Ctrl+C stops the command as before), and
  // nothing imported from the current folder: sys.path gets no '' entry.
  if (!Py_IsInitialized())
    py::initialize_interpreter(false, 0, nullptr, false);
  if (const char *no = std::getenv("WEIR_NO_PLUGINS");
      no && std::string(no) == "1")
    discover = false;
  fs::path package = packageFolder();
  std::optional<py::module_> weir;
  try {
    // Appended, so PYTHONPATH still wins.
    py::module_::import("sys").attr("path").attr("append")(package.string());
    // Failed plugin files are printed below, on one line each.
    py::module_::import("warnings")
        .attr("filterwarnings")("ignore",
                                "message"_a = "weir: plugin not loaded");
    weir = importPackage();
  } catch (py::error_already_set &e) {
    packageProblem_ = "the weir Python package (" + package.string() +
                      ") did not load: " + firstLine(e.what());
    if (!folders.empty())
      throw Error("cannot load the plugins of " + folders.front() + ": " +
                  packageProblem_);
    if (discover)
      std::fprintf(stderr,
                   "weir: warning: default plugin folders (Weir's plugins/, "
                   "$WEIR_PLUGIN_PATH, ~/.local/share/weir/plugins) not "
                   "loaded: %s\n",
                   packageProblem_.c_str());
  }
  if (weir) {
    try {
      if (discover) {
        weir->attr("load_plugins")();
        for (py::handle e : weir->attr("plugin_errors")()) {
          auto entry = e.cast<py::tuple>();
          std::string file = entry[0].cast<std::string>();
          std::fprintf(stderr,
                       "weir: warning: plugin in default folder %s not "
                       "loaded: %s\n",
                       fs::path(file).parent_path().string().c_str(),
                       entry[1].cast<std::string>().c_str());
        }
      }
      if (!folders.empty()) {
        weir->attr("load_plugins")(folders);
        for (py::handle e : weir->attr("plugin_errors")()) {
          auto entry = e.cast<py::tuple>();
          std::string file = entry[0].cast<std::string>();
          for (const std::string &folder : folders)
            if (inFolder(file, folder))
              throw Error("cannot load the plugins of " + folder + ": " +
                          entry[1].cast<std::string>());
        }
      }
    } catch (py::error_already_set &e) {
      throw Error(std::string("cannot load Python plugins: ") +
                  firstLine(e.what()));
    }
  }
  if (releaseLock)
    savedThread_ = PyEval_SaveThread();
}

// The interpreter is not finalized: that would only free memory the process
// is about to give back (and report what Python and pybind11 keep on
// purpose as leaks under LeakSanitizer). The plugins leave the registry, and
// what they printed is flushed.
PluginHost::~PluginHost() {
  if (savedThread_)
    PyEval_RestoreThread(static_cast<PyThreadState *>(savedThread_));
  try {
    if (packageProblem_.empty())
      py::module_::import("weir._weir").attr("_unregister_plugins")();
    py::module_ sys = py::module_::import("sys");
    sys.attr("stdout").attr("flush")();
    sys.attr("stderr").attr("flush")();
  } catch (...) {
    // Nothing left to release.
  }
}

} // namespace weir::app
