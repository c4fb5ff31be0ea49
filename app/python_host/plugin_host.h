#pragma once
/// \file
/// Python inside the front ends (the `weir` command line and weir-studio):
/// an embedded interpreter imports the `weir` package (the same package
/// `import weir` gives, bound to this process's libweir.so), loads the
/// default plugin folders (Weir's plugins/ folder, $WEIR_PLUGIN_PATH and
/// ~/.local/share/weir/plugins), then the folders given (--plugins).
/// Their transformations land in the registry the front end reads.
/// weir-studio's Python console runs in the same interpreter.
///
/// The default folders are a convenience: when they cannot be loaded (the
/// package is missing, a plugin file is broken) each problem is one warning
/// line on stderr and the front end goes on without them. A folder the user
/// named is a request: when it cannot be loaded, the constructor throws.

#include <string>
#include <vector>

namespace weir::app {

class PluginHost {
public:
  /// Starts Python and loads the plugins; with `discover` false only
  /// `folders`. Throws weir::Error naming the folder and the reason when
  /// one of `folders` (or the package they need) cannot be loaded; the
  /// default folders only warn (see the file comment).
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

  /// Empty when the `weir` package was imported; else why not (the
  /// front end then runs without Python plugins or a console).
  const std::string &packageProblem() const { return packageProblem_; }

private:
  void *savedThread_ = nullptr; ///< PyThreadState while the lock is released
  std::string packageProblem_;
};

} // namespace weir::app
