/// \file
/// See python_transformation.h. The time limit: a watchdog thread waits
/// for the call to finish; past the limit it takes the GIL (the interpreter
/// hands it over between bytecodes) and raises PluginTimeLimit in the
/// plugin's thread with PyThreadState_SetAsyncExc, again every 100 ms until
/// the call returns. Code stuck inside a C extension is not interrupted.

#include "python/src/python_transformation.h"

#include "ir/error.h"
#include "python/src/convert.h"
#include "python/src/program_editor.h"

#include <pybind11/stl.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>

namespace weir::python {

namespace {

/// PluginTimeLimit. A plain pointer on purpose: created once and never
/// released, since a static py::object would be released at process exit,
/// after the interpreter is gone.
PyObject *gTimeLimit = nullptr;

/// Calls `f` (with the GIL held); raises PluginTimeLimit into it when it
/// runs longer than `seconds`.
py::object callWithLimit(const std::function<py::object()> &f, double seconds) {
  struct Shared {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    bool fired = false;
  };
  auto sh = std::make_shared<Shared>();
  unsigned long thread = PyThread_get_thread_ident();
  auto limit = std::chrono::duration<double>(seconds);
  std::thread watchdog([sh, thread, limit] {
    std::unique_lock lock(sh->m);
    if (sh->cv.wait_for(lock, limit, [&] { return sh->done; }))
      return;
    while (true) {
      lock.unlock();
      {
        py::gil_scoped_acquire gil;
        std::lock_guard guard(sh->m);
        if (sh->done)
          return;
        sh->fired = true;
        PyThreadState_SetAsyncExc(thread, gTimeLimit);
      }
      lock.lock();
      if (sh->cv.wait_for(lock, std::chrono::milliseconds(100),
                          [&] { return sh->done; }))
        return;
    }
  });
  // Tells the watchdog the call ended. On the normal and error paths the
  // watchdog is joined (the GIL released, since it may be waiting for it);
  // when the thread itself is being torn down (interpreter exit cancels
  // daemon threads), it is left to end on its own — it holds only `sh`.
  struct Stop {
    std::shared_ptr<Shared> sh;
    std::thread &watchdog;
    void signal() {
      {
        std::lock_guard guard(sh->m);
        sh->done = true;
      }
      sh->cv.notify_all();
    }
    ~Stop() {
      if (watchdog.joinable()) {
        signal();
        watchdog.detach();
      }
    }
  } stop{sh, watchdog};
  auto finish = [&] {
    stop.signal();
    {
      py::gil_scoped_release release;
      watchdog.join();
    }
    if (sh->fired) // an exception raised but not yet delivered must not leak
      PyThreadState_SetAsyncExc(thread, nullptr);
  };
  try {
    py::object result = f();
    finish();
    return result;
  } catch (py::error_already_set &) {
    finish();
    throw;
  } catch (const std::exception &) {
    finish();
    throw;
  }
}

/// Ctrl+C and sys.exit inside a plugin stop the command, not just the step.
[[noreturn]] void rethrowIfInterrupt(py::error_already_set &e,
                                     const std::string &id) {
  if (e.matches(PyExc_KeyboardInterrupt))
    throw Interrupted("interrupted in plugin '" + id + "'");
  if (e.matches(PyExc_SystemExit))
    throw Interrupted("plugin '" + id + "' asked to exit", true);
  throw;
}

/// "ValueError: bad node" from a Python exception.
std::string describe(py::error_already_set &e) {
  std::string type = py::str(e.type().attr("__name__")).cast<std::string>();
  std::string what = py::str(e.value()).cast<std::string>();
  return what.empty() ? type : type + ": " + what;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

} // namespace

py::handle timeLimitException() {
  if (!gTimeLimit) {
    PyObject *t = PyErr_NewExceptionWithDoc(
        "weir._weir.PluginTimeLimit",
        "Raised inside a plugin that runs past its time limit.",
        PyExc_BaseException, nullptr);
    if (!t)
      throw py::error_already_set();
    gTimeLimit = t;
  }
  return gTimeLimit;
}

PythonTransformation::PythonTransformation(PluginDeclaration declaration,
                                           py::object instance)
    : Transformation(declaration),
      timeLimitSeconds_(declaration.timeLimitSeconds),
      sourceFile_(std::move(declaration.sourceFile)),
      instance_(std::move(instance)) {}

PythonTransformation::~PythonTransformation() {
  // The registry may outlive the interpreter (a static); then the object
  // is left alone rather than released into a finalized interpreter.
  if (!Py_IsInitialized()) {
    instance_.release();
    return;
  }
  py::gil_scoped_acquire gil;
  instance_ = py::object();
}

transforms::CheckResult
PythonTransformation::check(const ir::Program &program,
                            const transforms::Match &match,
                            const transforms::Params &params) const {
  py::gil_scoped_acquire gil;
  if (!py::hasattr(instance_, "can_apply"))
    return transforms::CheckResult::success();
  std::vector<ir::NodeId> nodes;
  for (const auto &[role, id] : match.roles)
    nodes.push_back(id);
  try {
    auto copy = std::make_shared<ir::Program>(program);
    py::object r = callWithLimit(
        [&] {
          return instance_.attr("can_apply")(copy, match, paramsDict(params));
        },
        timeLimitSeconds_);
    if (py::isinstance<py::str>(r))
      return transforms::CheckResult::failure(r.cast<std::string>(), nodes);
    if (r.is_none() || py::bool_(r))
      return transforms::CheckResult::success();
    return transforms::CheckResult::failure("plugin '" + std::string(id()) +
                                                "': can_apply returned " +
                                                py::repr(r).cast<std::string>(),
                                            nodes);
  } catch (py::error_already_set &e) {
    if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit))
      rethrowIfInterrupt(e, std::string(id()));
    if (e.matches(gTimeLimit))
      return transforms::CheckResult::failure(
          "plugin '" + std::string(id()) + "' ran past its time limit of " +
              seconds(timeLimitSeconds_) + " s in can_apply",
          nodes);
    return transforms::CheckResult::failure(
        "plugin '" + std::string(id()) +
            "' raised in can_apply: " + describe(e),
        nodes);
  }
}

transforms::ApplyResult
PythonTransformation::apply(const ir::Program &program,
                            const transforms::Match &match,
                            const transforms::Params &params) const {
  py::gil_scoped_acquire gil;
  auto editor = std::make_shared<ProgramEditor>(program);
  try {
    callWithLimit(
        [&] {
          return instance_.attr("apply")(editor, match, paramsDict(params));
        },
        timeLimitSeconds_);
  } catch (py::error_already_set &e) {
    if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit))
      rethrowIfInterrupt(e, std::string(id()));
    if (e.matches(gTimeLimit))
      throw Error("plugin '" + std::string(id()) +
                  "' ran past its time limit of " + seconds(timeLimitSeconds_) +
                  " s in apply");
    throw Error("plugin '" + std::string(id()) +
                "' raised in apply: " + describe(e));
  }
  return editor->finish();
}

} // namespace weir::python
