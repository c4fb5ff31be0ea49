#pragma once
/// \file
/// An interactive Python console on the front end's embedded interpreter
/// (plugin_host.h starts it): Python's own `code.InteractiveConsole`, with
/// `weir` imported and `ws` bound to a workspace the front end owns (the
/// same C++ object, so what a script applies the front end sees through the
/// workspace's observers). Free of Qt: weir-studio's Python dock wraps it.
///
/// Every call takes Python's global lock itself, so it may be used while
/// the lock is released (PluginHost with releaseLock).

#include <memory>
#include <string>

namespace weir::workspace {
class Workspace;
}

namespace weir::app {

class PythonConsole {
public:
  /// Throws weir::Error when the interpreter is not running or `weir`
  /// cannot be imported.
  PythonConsole();
  ~PythonConsole();
  PythonConsole(const PythonConsole &) = delete;
  PythonConsole &operator=(const PythonConsole &) = delete;

  /// Binds `ws` (None for null). Python shares ownership while bound.
  void bindWorkspace(std::shared_ptr<workspace::Workspace> ws);

  struct Result {
    std::string output; ///< what the line printed, tracebacks included
    bool more = false;  ///< the statement continues on the next line
  };
  /// One line, as typed at `>>>` or `...`. A failing statement prints its
  /// traceback into `output`; nothing throws for errors in user code.
  Result push(const std::string &line);

private:
  struct State;
  std::unique_ptr<State> state_;
};

} // namespace weir::app
