/// \file
/// numpy <-> runtime::Tensor (see numpy_tensor.h), and the module function
/// weir.random_inputs.

#include "python/src/numpy_tensor.h"

#include "core/runtime/random_tensor.h"
#include "ir/error.h"
#include "python/src/bindings.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <memory>

namespace weir::python {

using namespace pybind11::literals;

py::dtype numpyDType(ir::DType t) {
  switch (t) {
  case ir::DType::F32:
  case ir::DType::BF16:
    return py::dtype("float32");
  case ir::DType::F16:
    return py::dtype("float16");
  case ir::DType::F64:
    return py::dtype("float64");
  case ir::DType::I8:
    return py::dtype("int8");
  case ir::DType::U8:
    return py::dtype("uint8");
  case ir::DType::I16:
    return py::dtype("int16");
  case ir::DType::U16:
    return py::dtype("uint16");
  case ir::DType::I32:
    return py::dtype("int32");
  case ir::DType::U32:
    return py::dtype("uint32");
  case ir::DType::I64:
    return py::dtype("int64");
  case ir::DType::U64:
    return py::dtype("uint64");
  case ir::DType::Bool:
    return py::dtype("bool");
  }
  throw Error("unknown dtype");
}

namespace {

std::vector<std::int64_t> shapeOf(const py::array &a) {
  return {a.shape(), a.shape() + a.ndim()};
}

/// The tensor keeps the array alive; dropping that reference needs the GIL,
/// wherever the last copy of the tensor dies.
std::shared_ptr<const void> holdArray(const py::array &a) {
  auto *ref = new py::object(a);
  return std::shared_ptr<const void>(ref, [](const void *p) {
    py::gil_scoped_acquire gil;
    delete static_cast<const py::object *>(p);
  });
}

} // namespace

runtime::Tensor toTensor(const py::array &array, ir::DType want,
                         const std::string &what) {
  py::dtype target = numpyDType(want);
  py::array a = array;
  if (!a.dtype().is(target) && !a.dtype().equal(target)) {
    bool canCast =
        py::module_::import("numpy")
            .attr("can_cast")(a.dtype(), target, "same_kind")
            .cast<bool>();
    bool lowPrecision = want == ir::DType::BF16 || want == ir::DType::F16;
    if (!canCast && !(lowPrecision && a.dtype().kind() == 'f'))
      throw Error(what + " is " + py::str(a.dtype()).cast<std::string>() +
                  " but the program wants " +
                  std::string(ir::dtypeName(want)) + " (" +
                  py::str(target).cast<std::string>() + ")");
    a = a.attr("astype")(target);
  }
  // Wrapped only when C-contiguous and aligned to the element size (as
  // Tensor::wrap requires, and the bf16 rounding below reads floats): a
  // misaligned buffer, e.g. np.frombuffer at an odd offset, becomes an
  // aligned C-ordered copy.
  bool aligned =
      (a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_) &&
      reinterpret_cast<std::uintptr_t>(a.data()) %
              static_cast<std::uintptr_t>(std::max<py::ssize_t>(a.itemsize(), 1)) ==
          0;
  if (!(a.flags() & py::array::c_style) || !aligned)
    a = py::module_::import("numpy").attr("array")(a, "order"_a = "C",
                                                   "copy"_a = true);
  if (want == ir::DType::BF16) {
    // float32 values, rounded to bf16 into a tensor of its own.
    auto f = py::array_t<float, py::array::c_style | py::array::forcecast>(a);
    runtime::Tensor t(want, shapeOf(f));
    for (std::int64_t i = 0; i < t.elementCount(); ++i)
      t.setFromDouble(i, f.data()[i]);
    return t;
  }
  return runtime::Tensor::wrap(want, shapeOf(a), holdArray(a),
                               static_cast<const std::byte *>(a.data()));
}

py::array toArray(const runtime::Tensor &tensor) {
  if (tensor.dtype() == ir::DType::BF16) {
    py::array_t<float> out(tensor.shape());
    for (std::int64_t i = 0; i < tensor.elementCount(); ++i)
      out.mutable_data()[i] = static_cast<float>(tensor.getAsDouble(i));
    return out;
  }
  auto *keep = new runtime::Tensor(tensor);
  py::capsule owner(keep, [](void *p) {
    delete static_cast<runtime::Tensor *>(p);
  });
  std::vector<py::ssize_t> strides;
  for (std::int64_t s : tensor.strides())
    strides.push_back(s * static_cast<py::ssize_t>(ir::dtypeSize(tensor.dtype())));
  py::array a(numpyDType(tensor.dtype()),
              std::vector<py::ssize_t>(tensor.shape().begin(),
                                       tensor.shape().end()),
              strides, tensor.data(), owner);
  if (tensor.readOnly())
    py::detail::array_proxy(a.ptr())->flags &=
        ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

interp::TensorMap toTensorMap(const py::dict &inputs,
                              const ir::Program &program) {
  interp::TensorMap out;
  for (auto [key, value] : inputs) {
    if (!py::isinstance<py::str>(key))
      throw Error("input names are strings, not " +
                  py::repr(key).cast<std::string>() + " (a " +
                  py::str(py::type::of(key).attr("__name__"))
                      .cast<std::string>() +
                  ")");
    auto name = key.cast<std::string>();
    if (std::find(program.inputs.begin(), program.inputs.end(), name) ==
        program.inputs.end()) {
      std::string known;
      for (const std::string &i : program.inputs)
        known += (known.empty() ? "" : ", ") + i;
      throw Error("'" + name + "' is not an input of program '" +
                  program.name + "' (inputs: " + known + ")");
    }
    py::array a = py::array::ensure(value);
    if (!a)
      throw Error("input '" + name + "' is not an array (a " +
                  py::str(py::type::of(value).attr("__name__"))
                      .cast<std::string>() +
                  ")");
    out.emplace(name, toTensor(a, program.container(name).dtype,
                               "input '" + name + "'"));
  }
  return out;
}

py::dict toDict(const interp::TensorMap &tensors) {
  py::dict d;
  for (const auto &[name, t] : tensors)
    d[py::str(name)] = toArray(t);
  return d;
}

void defineTensors(py::module_ &m) {
  m.def(
      "random_inputs",
      [](const std::shared_ptr<ir::Program> &program, std::uint64_t seed,
         ir::Bindings dims) {
        for (const std::string &s : program->symbols)
          dims.emplace(s, 1); // as verify() sizes them
        return toDict(runtime::randomInputs(*program, seed, dims));
      },
      py::arg("program"), py::arg("seed") = 0,
      py::arg("dims") = ir::Bindings{},
      "Seeded random inputs for every input of `program`, as Weir's "
      "verification and `weir run --random` draw them: floats uniform in "
      "[-1, 1), integers in [0, 10). `dims` sizes symbolic dimensions "
      "(default 1). Returns {name: numpy array}.");
}

} // namespace weir::python
