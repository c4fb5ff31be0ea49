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

} // namespace weir
