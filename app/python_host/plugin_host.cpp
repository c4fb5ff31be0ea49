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

namespace py = pybind11;
using namespace pybind11::literals;

namespace weir::app {

PluginHost::PluginHost(const std::vector<std::string> &folders, bool discover,
                       bool releaseLock) {
  // No Python signal handlers (Ctrl+C stops the command as before), and
  // nothing imported from the current folder: sys.path gets no '' entry.
  if (!Py_IsInitialized())
    py::initialize_interpreter(false, 0, nullptr, false);
  try {
    py::module_ sys = py::module_::import("sys");
    // Installed: <prefix>/bin/weir and <prefix>/<python dir>/weir (an
    // absolute python dir is used as it is); else the build tree.
    // Appended, so PYTHONPATH still wins.
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    fs::path installed =
        exe.parent_path().parent_path() / WEIR_PYTHON_INSTALL_DIR;
    fs::path dir = !ec && fs::exists(installed / "weir" / "__init__.py")
                       ? installed
                       : fs::path(WEIR_PYTHON_BUILD_DIR);
    sys.attr("path").attr("append")(dir.string());
    // Failed plugin files are printed below, on one line each.
    py::module_::import("warnings")
        .attr("filterwarnings")("ignore",
                                "message"_a = "weir: plugin not loaded");
    if (!discover)
      py::module_::import("os").attr("environ")["WEIR_NO_PLUGINS"] = "1";
    py::module_ weir = py::module_::import("weir");
    if (!folders.empty())
      weir.attr("load_plugins")(folders);
    for (py::handle e : weir.attr("plugin_errors")())
      std::fprintf(stderr, "weir: plugin not loaded: %s\n",
                   e.cast<py::tuple>()[1].cast<std::string>().c_str());
  } catch (py::error_already_set &e) {
    throw Error(std::string("cannot load Python plugins: ") + e.what());
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
    py::module_::import("weir._weir").attr("_unregister_plugins")();
    py::module_ sys = py::module_::import("sys");
    sys.attr("stdout").attr("flush")();
    sys.attr("stderr").attr("flush")();
  } catch (...) {
    // Nothing left to release.
  }
}

} // namespace weir::app
