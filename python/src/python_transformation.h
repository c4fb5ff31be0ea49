#pragma once
/// \file
/// A transformation written in Python (a plugin): its declaration comes from
/// the `@weir.transformation` decorator, its pattern is an ordinary
/// transforms::Pattern, and check()/apply() call the plugin object's
/// can_apply()/apply() with the GIL held and a time limit. Whatever the
/// plugin does — raise, run too long, build an invalid program — becomes a
/// CheckResult or a weir::Error naming the plugin, and the framework's
/// validation (transforms::applyChecked) keeps a bad result out of every
/// workspace.

#include "transforms/transformation.h"

#include <pybind11/pybind11.h>

#include <string>

namespace weir::python {

namespace py = pybind11;

/// A plugin's declaration: what every transformation declares, plus the
/// plugin's time limit and the file that defined it.
struct PluginDeclaration : transforms::Declaration {
  double timeLimitSeconds = 10;
  std::string sourceFile; ///< where the class was defined
};

class PythonTransformation final : public transforms::Transformation {
public:
  PythonTransformation(PluginDeclaration declaration, py::object instance);
  ~PythonTransformation() override;

  /// can_apply(program, match, params): True applies; False or a string
  /// (the reason) does not. A plugin without can_apply always applies once
  /// its pattern matches.
  transforms::CheckResult
  check(const ir::Program &program, const transforms::Match &match,
        const transforms::Params &params) const override;
  /// apply(editor, match, params) edits a weir.Editor over a copy.
  transforms::ApplyResult
  apply(const ir::Program &program, const transforms::Match &match,
        const transforms::Params &params) const override;

  /// Python code may read the clock, a file or a random number: the
  /// workspace keeps what a plugin made rather than rebuilding it.
  bool replaysExactly() const override { return false; }

  const std::string &sourceFile() const { return sourceFile_; }

private:
  double timeLimitSeconds_;
  std::string sourceFile_;
  py::object instance_;
};

/// The Python exception a plugin receives when it runs past its time limit
/// (a BaseException, so `except Exception` in the plugin does not swallow
/// it). Created by definePlugins.
py::handle timeLimitException();

} // namespace weir::python
