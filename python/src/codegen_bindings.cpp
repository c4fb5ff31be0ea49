/// \file
/// defineCodegen: `weir.compile(program, target="cpu", ...)` and the
/// Executable it returns — run on numpy arrays, the loop IR, the LLVM IR
/// and the readable C++ export. Compiling and running release the GIL.

#include "codegen/c/export.h"
#include "codegen/cpu/compile.h"
#include "codegen/lower/lower.h"
#include "ir/error.h"
#include "python/src/bindings.h"
#include "python/src/convert.h"
#include "python/src/numpy_tensor.h"
#include "transforms/expansion/expand_all.h"
#include "transforms/operators/expansion.h"

#include <pybind11/stl.h>

namespace weir::python {

namespace {

/// An executable with the program it runs (inputs convert to its dtypes).
struct PyExecutable {
  codegen::Executable exe;
  ProgramPtr program; ///< as compiled (fully expanded)
};

PyExecutable compileProgram(const ProgramPtr &program,
                            const std::string &target, int threads,
                            const std::string &gemm,
                            const std::map<std::string, std::string> &impl,
                            bool checked) {
  if (target != "cpu")
    throw Error("target '" + target + "' is not available yet; targets: cpu");
  auto engine = codegen::cpu::parseGemmEngine(gemm);
  if (!engine)
    throw Error("gemm engine '" + gemm +
                "' is unknown; use auto, weir or "
                "openblas");
  auto expanded = std::make_shared<ir::Program>(*program);
  codegen::CompileOptions options;
  options.threads = threads;
  options.gemm = *engine;
  options.lower.checkAllAccesses = checked;
  py::gil_scoped_release release;
  // Operators still left are expanded with the default implementations,
  // as `weir run` does.
  operators::ExpandAllReport report = operators::expandAll(*expanded, impl);
  if (!report.skipped.empty())
    throw Error("cannot compile: " + report.skipped.front());
  return PyExecutable{codegen::compile(*expanded, options), expanded};
}

} // namespace

void defineCodegen(py::module_ &m) {
  py::class_<PyExecutable>(m, "Executable",
                           "A compiled program. run() takes and returns "
                           "numpy arrays by input/output name.")
      .def(
          "run",
          [](const PyExecutable &x, const py::dict &inputs,
             const ir::Bindings &symbols) {
            interp::TensorMap in = toTensorMap(inputs, *x.program);
            interp::TensorMap out;
            {
              py::gil_scoped_release release;
              codegen::RunOptions options;
              options.symbols = symbols;
              out = x.exe.run(in, options);
            }
            return toDict(out);
          },
          py::arg("inputs"), py::arg("symbols") = ir::Bindings{},
          "Runs on {name: numpy array}; returns {name: numpy array}. "
          "C-contiguous arrays of the input's dtype are used without a copy; "
          "other arrays are converted when that is safe (numpy's same_kind "
          "casting). Outputs are arrays over Weir's own buffers.")
      .def_property_readonly(
          "program", [](const PyExecutable &x) { return x.program; },
          "The program as compiled (every operator expanded).")
      .def_property_readonly(
          "loop_ir", [](const PyExecutable &x) { return x.exe.loopIR(); },
          "The loop IR the backend compiled, printed.")
      .def_property_readonly(
          "llvm_ir", [](const PyExecutable &x) { return x.exe.llvmIR(); },
          "The LLVM IR as generated.")
      .def_property_readonly(
          "optimized_llvm_ir",
          [](const PyExecutable &x) { return x.exe.optimizedLLVMIR(); },
          "The LLVM IR after the -O3 pipeline.")
      .def_property_readonly(
          "compile_seconds",
          [](const PyExecutable &x) { return x.exe.compileSeconds(); },
          "Time spent lowering and compiling (0 on a cache hit).")
      .def_property_readonly(
          "threads", [](const PyExecutable &x) { return x.exe.threads(); },
          "Threads parallel loops run on.")
      .def(
          "cpp",
          [](const PyExecutable &x) {
            py::gil_scoped_release release;
            return codegen::exportCpp(codegen::lower(*x.program));
          },
          "The same program as standalone, readable C++ with OpenMP.");

  m.def("compile", &compileProgram, py::arg("program"), py::kw_only(),
        py::arg("target") = "cpu", py::arg("threads") = 0,
        py::arg("gemm") = "auto",
        py::arg("impl") = std::map<std::string, std::string>{},
        py::arg("checked") = false,
        "Compiles `program` for `target` ('cpu': LLVM JIT). Operators still "
        "in the program are expanded first with their default "
        "implementations, or those `impl` names ({'Conv': 'direct'}). "
        "threads=0 uses every core; gemm picks what runs GEMMs: 'auto' "
        "(OpenBLAS), 'weir' (Weir's AVX-512 kernel) or 'openblas'. "
        "checked=True bounds-checks every load and store, not only those "
        "not proven in bounds (for debugging; slower).");
}

} // namespace weir::python
