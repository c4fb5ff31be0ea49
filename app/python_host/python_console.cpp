/// \file
/// See python_console.h. The console is a small subclass of
/// code.InteractiveConsole that runs each line with stdout and stderr
/// redirected into a string, so prints and tracebacks come back to the
/// caller instead of the process's terminal.

#include "app/python_host/python_console.h"

#include "ir/error.h"
#include "workspace/workspace.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace weir::app {

namespace {

constexpr const char *kConsoleClass = R"(
import code, contextlib, io

class WeirConsole(code.InteractiveConsole):
    """Runs one line at a time and returns what it printed."""

    def run_line(self, line):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                more = self.push(line)
            except SystemExit:
                self.resetbuffer()
                more = False
                print("exit() does not close the window; the console goes on")
        return out.getvalue(), more
)";

} // namespace

struct PythonConsole::State {
  py::object console;
  py::dict names;
};

PythonConsole::PythonConsole() {
  if (!Py_IsInitialized())
    throw Error("the Python console needs the embedded interpreter, which "
                "is not running");
  py::gil_scoped_acquire gil;
  try {
    auto state = std::make_unique<State>();
    py::dict scope;
    py::exec(kConsoleClass, scope);
    state->names["__name__"] = "__console__";
    state->names["weir"] = py::module_::import("weir");
    state->names["ws"] = py::none();
    state->console = scope["WeirConsole"](state->names);
    state_ = std::move(state);
  } catch (py::error_already_set &e) {
    throw Error(std::string("cannot start the Python console: ") + e.what());
  }
}

PythonConsole::~PythonConsole() {
  py::gil_scoped_acquire gil;
  // The interpreter outlives the console, and what the user made can be
  // held from outside the namespace (the last traceback's frames, `_`):
  // let go of it all, so the workspaces bound here are freed now.
  try {
    state_->names.clear();
    py::module_ sys = py::module_::import("sys");
    for (const char *last : {"last_type", "last_value", "last_traceback"})
      if (py::hasattr(sys, last))
        py::delattr(sys, last);
    py::module_ builtins = py::module_::import("builtins");
    if (py::hasattr(builtins, "_"))
      py::delattr(builtins, "_");
    py::module_::import("gc").attr("collect")();
  } catch (py::error_already_set &) {
    // Nothing more to release.
  }
  state_.reset();
}

void PythonConsole::bindWorkspace(std::shared_ptr<workspace::Workspace> ws) {
  py::gil_scoped_acquire gil;
  try {
    state_->names["ws"] = ws ? py::cast(std::move(ws)) : py::none();
  } catch (py::error_already_set &e) {
    throw Error(std::string("cannot bind `ws` in the Python console: ") +
                e.what());
  }
}

PythonConsole::Result PythonConsole::push(const std::string &line) {
  py::gil_scoped_acquire gil;
  try {
    auto [output, more] = state_->console.attr("run_line")(line)
                              .cast<std::pair<std::string, bool>>();
    return {std::move(output), more};
  } catch (py::error_already_set &e) {
    // Only the console's own machinery gets here (user errors print a
    // traceback inside run_line); say so and keep the console usable.
    return {std::string("console error: ") + e.what() + "\n", false};
  }
}

} // namespace weir::app
