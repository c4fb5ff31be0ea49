/// \file
/// See convert.h.

#include "python/src/convert.h"

#include "ir/error.h"
#include "python/src/numpy_tensor.h"

#include <pybind11/stl.h>

namespace weir::python {

py::object exprValue(const ir::Expr &e) {
  if (auto c = e.asConstant())
    return py::int_(*c);
  return py::str(e.str());
}

py::object attributeValue(const ir::AttributeValue &v) {
  return std::visit(
      [](const auto &x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, ir::TensorValue>) {
          return toArray(runtime::Tensor::fromBlob(x.dtype, x.shape, x.data));
        } else if constexpr (std::is_same_v<
                                 T, std::shared_ptr<const ir::Program>>) {
          return py::cast(share(x));
        } else {
          return py::cast(x);
        }
      },
      v);
}

ir::AttributeValue toAttribute(const py::handle &v, const std::string &what) {
  if (py::isinstance<py::bool_>(v) || py::isinstance<py::int_>(v))
    return v.cast<std::int64_t>();
  if (py::isinstance<py::float_>(v))
    return v.cast<double>();
  if (py::isinstance<py::str>(v))
    return v.cast<std::string>();
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    auto seq = v.cast<py::sequence>();
    bool allInt = true, allNum = true, allStr = true;
    for (py::handle x : seq) {
      bool isInt = py::isinstance<py::int_>(x);
      allInt &= isInt;
      allNum &= isInt || py::isinstance<py::float_>(x);
      allStr &= py::isinstance<py::str>(x);
    }
    if (allInt)
      return seq.cast<std::vector<std::int64_t>>();
    if (allNum)
      return seq.cast<std::vector<double>>();
    if (allStr)
      return seq.cast<std::vector<std::string>>();
  }
  if (py::isinstance<py::array>(v)) {
    throw Error(what + ": tensor attributes from Python are not supported; "
                       "add a constant container instead");
  }
  throw Error(what + ": cannot be an attribute (a " +
              py::str(py::type::of(v).attr("__name__")).cast<std::string>() +
              "); use int, float, str or a list of one of them");
}

transforms::ParamValue toParamValue(const py::handle &v,
                                    const std::string &name) {
  if (py::isinstance<py::bool_>(v))
    return v.cast<bool>();
  if (py::isinstance<py::int_>(v))
    return v.cast<std::int64_t>();
  if (py::isinstance<py::float_>(v))
    return v.cast<double>();
  if (py::isinstance<py::str>(v))
    return v.cast<std::string>();
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    transforms::IntList list;
    for (py::handle x : v) {
      if (!py::isinstance<py::int_>(x) || py::isinstance<py::bool_>(x))
        throw Error("parameter '" + name + "' must be a list of int");
      list.push_back(x.cast<std::int64_t>());
    }
    return list;
  }
  throw Error("parameter '" + name +
              "' must be a bool, int, float, str or list of int, not " +
              py::str(py::type::of(v).attr("__name__")).cast<std::string>());
}

py::object paramValue(const transforms::ParamValue &v) {
  return std::visit([](const auto &x) -> py::object { return py::cast(x); }, v);
}

transforms::Params toParams(const py::dict &kwargs) {
  transforms::Params p;
  for (auto [k, v] : kwargs) {
    auto name = py::cast<std::string>(py::str(k));
    p.emplace(name, toParamValue(v, name));
  }
  return p;
}

py::dict paramsDict(const transforms::Params &p) {
  py::dict d;
  for (const auto &[k, v] : p)
    d[py::str(k)] = paramValue(v);
  return d;
}

transforms::Match toMatch(const py::handle &m,
                          const transforms::Transformation &t) {
  if (m.is_none())
    return {};
  if (py::isinstance<transforms::Match>(m))
    return m.cast<transforms::Match>();
  if (!py::isinstance<py::dict>(m))
    throw Error(std::string(t.id()) +
                ": a match is a weir.Match or a dict "
                "{\"state\": ..., role: node id}, not " +
                py::str(py::type::of(m).attr("__name__")).cast<std::string>());
  auto d = m.cast<py::dict>();
  transforms::Match match;
  std::map<std::string, ir::NodeId> roles;
  for (auto [k, v] : d) {
    auto key = py::cast<std::string>(py::str(k));
    if (key == "state") {
      match.state = py::cast<std::string>(v);
      continue;
    }
    if (!py::isinstance<py::int_>(v))
      throw Error(std::string(t.id()) + ": role '" + key +
                  "' must be a node id (an int)");
    roles.emplace(key, v.cast<ir::NodeId>());
  }
  // The pattern's order first; roles it does not have stay (in name order),
  // so checkMatch reports them by name.
  for (const auto &node : t.pattern().nodes)
    if (auto it = roles.find(node.role); it != roles.end()) {
      match.roles.emplace_back(it->first, it->second);
      roles.erase(it);
    }
  for (const auto &[role, id] : roles)
    match.roles.emplace_back(role, id);
  return match;
}

} // namespace weir::python
