#pragma once
/// \file
/// The pybind11 bindings of `weir._weir`, one define<Area> function per
/// file, each mirroring a part of the core (python/README.md lists them).
/// module.cpp calls them in dependency order.

#include <pybind11/pybind11.h>

namespace weir::python {

namespace py = pybind11;

void defineErrors(py::module_ &m);     ///< errors.cpp
void defineTensors(py::module_ &m);    ///< numpy_tensor.cpp
void defineProgram(py::module_ &m);    ///< program_bindings.cpp
void defineTransforms(py::module_ &m); ///< transform_bindings.cpp
void defineCodegen(py::module_ &m);    ///< codegen_bindings.cpp
void defineWorkspace(py::module_ &m);  ///< workspace_bindings.cpp
void defineEditor(py::module_ &m);     ///< editor_bindings.cpp
void definePlugins(py::module_ &m);    ///< plugin_bindings.cpp

} // namespace weir::python
