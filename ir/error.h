#pragma once
/// \file
/// weir::Error — the one exception type for problems a user can cause
/// (bad model, bad program, bad expression, bad parameter). Its message names
/// the file, node or parameter involved. Internal invariants use assert.

#include <stdexcept>
#include <string>

namespace weir {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// The user asked to stop (Ctrl+C, or sys.exit in a Python plugin). Not a
/// weir::Error: layers that turn failures into messages let it through.
class Interrupted : public std::runtime_error {
public:
  explicit Interrupted(const std::string &message, bool exit = false)
      : std::runtime_error(message), exit_(exit) {}
  /// True for a request to exit (SystemExit), false for an interrupt.
  bool exit() const { return exit_; }

private:
  bool exit_;
};

} // namespace weir
