/// \file
/// See plugin_host.h. The package is found next to an installed binary
/// (<prefix>/bin/weir → <prefix>/lib/python3.11/site-packages), else in the
/// build tree's python/ folder; PYTHONPATH still comes first.

#include "app/python_host/plugin_host.h"

#include "ir/error.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

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

/// A message on one line (a plugin's exception text may hold several).
std::string oneLine(std::string s) {
  for (char &c : s)
    if (c == '\n' || c == '\r')
      c = ' ';
  return s;
}

/// A plugin file that did not load, and why (weir.plugin_errors()).
using PluginErrors = std::vector<std::pair<std::string, std::string>>;

PluginErrors pluginErrors(const py::module_ &weir) {
  PluginErrors out;
  for (py::handle e : weir.attr("plugin_errors")()) {
    auto entry = e.cast<py::tuple>();
    out.emplace_back(entry[0].cast<std::string>(),
                     oneLine(entry[1].cast<std::string>()));
  }
  return out;
}

/// Whether `file` (as the package names it: the folder joined with the
/// file's name, or the folder itself when it is missing) is in `folder`.
/// Compared as written, so a file that is a link still counts as the
/// folder's.
bool inFolder(const std::string &file, const std::string &folder) {
  fs::path f = fs::path(file).lexically_normal();
  fs::path d = fs::path(folder).lexically_normal();
  if (!d.empty() && !d.has_filename())
    d = d.parent_path(); // "dir/" -> "dir"
  return f == d || f.parent_path() == d;
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
    if (discover && folders.empty())
      std::fprintf(stderr,
                   "weir: warning: default plugin folders (Weir's plugins/, "
                   "$WEIR_PLUGIN_PATH, ~/.local/share/weir/plugins) not "
                   "loaded: %s\n",
                   packageProblem_.c_str());
  }
  // A folder the user named that cannot be loaded: nothing this host
  // loaded stays registered, Python's lock is released as promised, and
  // the error names the folder.
  auto fail = [&](const std::string &folder, const std::string &why) {
    if (weir) {
      try {
        py::module_::import("weir._weir").attr("_unregister_plugins")();
      } catch (py::error_already_set &) {
      }
    }
    if (releaseLock)
      savedThread_ = PyEval_SaveThread();
    return Error("cannot load the plugins of " + folder + ": " + why);
  };
  if (weir && discover) {
    // Only what this load adds is reported (plugin_errors() is the
    // process's, and an earlier host's failures are not this one's).
    try {
      PluginErrors before = pluginErrors(*weir);
      weir->attr("load_plugins")();
      for (const auto &[file, message] : pluginErrors(*weir))
        if (std::find(before.begin(), before.end(), std::pair(file, message)) ==
            before.end())
          std::fprintf(stderr,
                       "weir: warning: plugin in default folder %s not "
                       "loaded: %s\n",
                       fs::path(file).parent_path().string().c_str(),
                       message.c_str());
    } catch (py::error_already_set &e) {
      std::fprintf(stderr,
                   "weir: warning: default plugin folders not loaded: %s\n",
                   oneLine(firstLine(e.what())).c_str());
    }
  }
  if (!folders.empty()) {
    if (!weir)
      throw fail(folders.front(), packageProblem_);
    try {
      weir->attr("load_plugins")(folders);
    } catch (py::error_already_set &e) {
      throw fail(folders.front(), oneLine(firstLine(e.what())));
    }
    for (const auto &[file, message] : pluginErrors(*weir))
      for (const std::string &folder : folders)
        if (inFolder(file, folder))
          throw fail(folder, message);
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
