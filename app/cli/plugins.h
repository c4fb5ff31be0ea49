#pragma once
/// \file
/// Python plugin transformations for the command line: an embedded
/// interpreter imports the `weir` package (the same package `import weir`
/// gives, bound to this process's libweir.so), which discovers Weir's
/// plugins/ folder, $WEIR_PLUGIN_PATH and ~/.local/share/weir/plugins, then
/// loads the folders given with --plugins. Their transformations land in
/// the registry the commands read.

#include <string>
#include <vector>

namespace weir::cli {

class PluginHost {
public:
  /// Starts Python and loads the plugins; with `discover` false only
  /// `folders`. A plugin file that fails to load is reported on stderr and
  /// skipped. Throws weir::Error when Python or the weir package cannot be
  /// started.
  PluginHost(const std::vector<std::string> &folders, bool discover);
  /// Unregisters the plugins and flushes what they printed; the
  /// interpreter stays until the process ends.
  ~PluginHost();
  PluginHost(const PluginHost &) = delete;
  PluginHost &operator=(const PluginHost &) = delete;
};

} // namespace weir::cli
