#pragma once
/// \file
/// Tensors to and from numpy without copies where the layout allows: a
/// C-contiguous, aligned array of the right dtype is wrapped (the tensor holds a
/// reference to it), and an output tensor becomes an array over its own
/// buffer. numpy has no bfloat16, so bf16 tensors travel as float32 copies.

#include "core/interp/bind_inputs.h"
#include "core/runtime/tensor.h"
#include "ir/program.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

namespace weir::python {

namespace py = pybind11;

/// numpy's dtype for a Weir dtype (float32 for bf16).
py::dtype numpyDType(ir::DType t);
/// A tensor over `array`'s memory when it is C-contiguous with dtype
/// `want`, otherwise a converted copy when the conversion is safe
/// (numpy's "same_kind" casting, or any float for bf16/f16). Throws
/// weir::Error naming `what` when the dtype cannot be converted.
runtime::Tensor toTensor(const py::array &array, ir::DType want,
                         const std::string &what);
/// An array over the tensor's buffer (read-only when the tensor is).
py::array toArray(const runtime::Tensor &tensor);

/// A dict {name: array} as the inputs of `program`: names must be inputs of
/// the program; each array converts to the container's dtype.
interp::TensorMap toTensorMap(const py::dict &inputs,
                              const ir::Program &program);
py::dict toDict(const interp::TensorMap &tensors);

} // namespace weir::python
