/// \file
/// weir::Error becomes `weir.Error` (a subclass of RuntimeError) carrying
/// the same message; weir::Interrupted (Ctrl+C or sys.exit inside a plugin)
/// becomes KeyboardInterrupt or SystemExit again; errors from the standard
/// library keep pybind11's usual translations (ValueError, IndexError, ...).

#include "ir/error.h"
#include "python/src/bindings.h"

namespace weir::python {

void defineErrors(py::module_ &m) {
  static py::exception<weir::Error> error(m, "Error", PyExc_RuntimeError);
  error.doc() = "A problem Weir reports: a bad model, program, transformation "
                "request, parameter or input. The message names it.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const weir::Error &e) {
      PyErr_SetString(error.ptr(), e.what());
    } catch (const weir::Interrupted &e) {
      // Ctrl+C or sys.exit inside a plugin: raised again as what it was.
      if (e.exit())
        PyErr_SetString(PyExc_SystemExit, e.what());
      else
        PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
  });
}

} // namespace weir::python
