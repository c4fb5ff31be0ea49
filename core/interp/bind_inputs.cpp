/// \file
/// Checking a program's inputs and binding its symbols, shared by the
/// reference interpreter and the compiled backends.

#include "core/interp/bind_inputs.h"

#include "ir/error.h"

#include <algorithm>

namespace weir::interp {
namespace {

std::string shapeText(const std::vector<std::int64_t> &shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string shapeText(const std::vector<ir::Expr> &shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

} // namespace

ir::Bindings bindInputs(const ir::Program &program, const TensorMap &inputs,
                        ir::Bindings given) {
  for (const auto &[name, t] : inputs)
    if (std::find(program.inputs.begin(), program.inputs.end(), name) ==
        program.inputs.end())
      throw Error("'" + name + "' is not an input of program '" + program.name +
                  "' (its inputs: " + joinNames(program.inputs) + ")");
  ir::Bindings symbols = std::move(given);
  std::map<std::string, std::string, std::less<>> origin;
  for (const auto &[name, value] : symbols)
    origin[name] = "the symbols options";

  for (const std::string &name : program.inputs) {
    const ir::Container &c = program.container(name);
    auto it = inputs.find(name);
    if (it == inputs.end())
      throw Error("input '" + name + "' of program '" + program.name +
                  "' is missing");
    const runtime::Tensor &t = it->second;
    if (t.dtype() != c.dtype)
      throw Error("input '" + name + "' is " +
                  std::string(ir::dtypeName(t.dtype())) + " but program '" +
                  program.name + "' declares it " +
                  std::string(ir::dtypeName(c.dtype)));
    if (t.rank() != c.shape.size())
      throw Error("input '" + name + "' has shape " + shapeText(t.shape()) +
                  " but program '" + program.name + "' declares rank " +
                  std::to_string(c.shape.size()) + " " + shapeText(c.shape));
    for (std::size_t d = 0; d < c.shape.size(); ++d) {
      if (c.shape[d].kind() != ir::ExprKind::Sym)
        continue;
      const std::string &sym = c.shape[d].symbolName();
      std::string here = "input '" + name + "' dimension " + std::to_string(d);
      std::int64_t extent = t.shape()[d];
      auto [bound, fresh] = symbols.emplace(sym, extent);
      if (fresh) {
        origin[sym] = here;
      } else if (bound->second != extent) {
        throw Error("symbol '" + sym + "' is " + std::to_string(bound->second) +
                    " from " + origin[sym] + " but " + here + " has extent " +
                    std::to_string(extent));
      }
    }
  }

  for (const std::string &name : program.inputs) {
    std::vector<std::int64_t> want =
        containerShape(program.container(name), symbols);
    const runtime::Tensor &t = inputs.find(name)->second;
    // The declared form adds something only when it has symbols.
    std::string declared = shapeText(program.container(name).shape);
    if (t.shape() != want)
      throw Error("input '" + name + "' has shape " + shapeText(t.shape()) +
                  " but program '" + program.name + "' expects " +
                  shapeText(want) +
                  (declared == shapeText(want) ? "" : " (" + declared + ")"));
  }
  return symbols;
}

std::vector<std::int64_t> containerShape(const ir::Container &c,
                                         const ir::Bindings &symbols) {
  std::vector<std::int64_t> shape;
  for (const ir::Expr &d : c.shape) {
    std::int64_t v;
    try {
      v = d.evaluate(symbols);
    } catch (const Error &err) {
      throw Error("cannot size container '" + c.name + "' " +
                  shapeText(c.shape) + ": " + err.what() +
                  "; bind it with the symbols option");
    }
    if (v < 0)
      throw Error("container '" + c.name + "' " + shapeText(c.shape) +
                  " has negative extent " + std::to_string(v) + " (" + d.str() +
                  ")");
    shape.push_back(v);
  }
  return shape;
}

} // namespace weir::interp
