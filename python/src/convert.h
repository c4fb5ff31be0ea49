#pragma once
/// \file
/// Conversions shared by the binding files: attribute values, expressions,
/// transformation parameters and matches between C++ and Python.

#include "ir/program.h"
#include "transforms/transformation.h"

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

namespace weir::python {

namespace py = pybind11;

/// A program the bindings hand out. Programs are values in the core
/// (shared_ptr<const Program> in the workspace); Python sees them read-only
/// through this holder type, so the const_cast never leads to a write.
using ProgramPtr = std::shared_ptr<ir::Program>;
inline ProgramPtr share(std::shared_ptr<const ir::Program> p) {
  return std::const_pointer_cast<ir::Program>(std::move(p));
}

/// An int when the expression is a constant, else its text ("N*64").
py::object exprValue(const ir::Expr &e);
py::object attributeValue(const ir::AttributeValue &v);
/// Python int, float, str, bytes-free lists of those, or a numpy array
/// (a tensor attribute). Throws weir::Error naming `what`.
ir::AttributeValue toAttribute(const py::handle &v, const std::string &what);

/// Python bool/int/float/str → a parameter value (bool before int).
transforms::ParamValue toParamValue(const py::handle &v,
                                    const std::string &name);
py::object paramValue(const transforms::ParamValue &v);
transforms::Params toParams(const py::dict &kwargs);
py::dict paramsDict(const transforms::Params &p);

/// A match from Python: None (a whole-program transformation), a
/// weir.Match, or a dict {"state": name, role: node id, ...}; dict roles
/// are put in the pattern's role order of `transformation`.
transforms::Match toMatch(const py::handle &m,
                          const transforms::Transformation &transformation);

} // namespace weir::python
