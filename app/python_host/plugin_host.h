#pragma once
/// \file
/// Python inside the front ends (the `weir` command line and weir-studio):
/// an embedded interpreter imports the `weir` package (the same package
/// `import weir` gives, bound to this process's libweir.so), which
/// discovers Weir's plugins/ folder, $WEIR_PLUGIN_PATH and
/// ~/.local/share/weir/plugins, then loads the folders given (--plugins).
/// Their transformations land in the registry the front end reads.
/// weir-studio's Python console runs in the same interpreter.

#include <string>
#include <vector>

namespace weir::app {

class PluginHost {
public:
  /// Starts Python and loads the plugins; with `discover` false only
  /// `folders`. A plugin file that fails to load is reported on stderr and
  /// skipped. Throws weir::Error when Python or the weir package cannot be
  /// started.
  /// The calling thread keeps Python's global lock (GIL) unless
  /// `releaseLock`: a program with other threads that may run plugin
  /// code (the GUI's workers) releases it and takes it (pybind11's
  /// gil_scoped_acquire) around each use.
  PluginHost(const std::vector<std::string> &folders, bool discover,
             bool releaseLock = false);
  /// Unregisters the plugins and flushes what they printed; the
  /// interpreter stays until the process ends.
  ~PluginHost();
  PluginHost(const PluginHost &) = delete;
  PluginHost &operator=(const PluginHost &) = delete;

private:
  void *savedThread_ = nullptr; ///< PyThreadState while the lock is released
};

} // namespace weir::app
