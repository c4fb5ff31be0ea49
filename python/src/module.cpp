/// \file
/// The extension module `weir._weir`. The `weir` package (python/weir/)
/// re-exports it and adds the plugin decorator and discovery.

#include "python/src/bindings.h"

PYBIND11_MODULE(_weir, m) {
  using namespace weir::python;
  m.doc() = "Weir's C++ core: programs, transformations, the workspace, "
            "the CPU backend and plugin transformations.";
  defineErrors(m);
  defineTensors(m);
  defineProgram(m);
  defineTransforms(m);
  defineCodegen(m);
  defineWorkspace(m);
  defineEditor(m);
  definePlugins(m);
}
