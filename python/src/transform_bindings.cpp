/// \file
/// defineTransforms: the registry (`weir.transformations()`,
/// `weir.transformation_info(id)`), each transformation's declaration (tier,
/// summary, description, parameters, exactness, pattern), matches and check
/// results.

#include "python/src/bindings.h"
#include "python/src/convert.h"
#include "transforms/registry.h"

#include <pybind11/operators.h>
#include <pybind11/stl.h>

namespace weir::python {

namespace {

using transforms::Transformation;
/// Read-only in Python; pybind11 holders cannot be pointers to const.
using TransformationPtr = std::shared_ptr<Transformation>;
TransformationPtr share(std::shared_ptr<const Transformation> t) {
  return std::const_pointer_cast<Transformation>(std::move(t));
}

py::dict paramSpec(const transforms::ParamSpec &s) {
  py::dict d;
  d["name"] = s.name;
  d["kind"] = std::string(transforms::paramKindName(s.kind));
  d["default"] = paramValue(s.defaultValue);
  d["description"] = s.description;
  d["min"] = s.min ? py::object(py::float_(*s.min)) : py::object(py::none());
  d["max"] = s.max ? py::object(py::float_(*s.max)) : py::object(py::none());
  d["choices"] = s.choices;
  return d;
}

} // namespace

void defineTransforms(py::module_ &m) {
  py::class_<transforms::Match>(
      m, "Match",
      "Where a transformation applies: a state and the nodes bound to its "
      "pattern's roles. Index it by role (m['conv'] is a node id).")
      .def(py::init([](const std::string &state, const py::dict &roles) {
             transforms::Match match{state, {}};
             for (auto [k, v] : roles)
               match.roles.emplace_back(py::cast<std::string>(k),
                                        v.cast<ir::NodeId>());
             return match;
           }),
           py::arg("state"), py::arg("roles"),
           "A match by hand; roles in the pattern's order.")
      .def_readonly("state", &transforms::Match::state, "The state's name.")
      .def_property_readonly(
          "roles",
          [](const transforms::Match &x) {
            py::dict d;
            for (const auto &[role, id] : x.roles)
              d[py::str(role)] = id;
            return d;
          },
          "{role: node id} in the pattern's order.")
      .def("__getitem__", &transforms::Match::node, py::arg("role"))
      .def("__str__", &transforms::Match::str)
      .def("__repr__",
           [](const transforms::Match &x) { return "<Match " + x.str() + ">"; })
      .def(py::self == py::self) // NOLINT
      .def("__hash__", [](const transforms::Match &x) {
        return py::hash(py::str(x.str()));
      });

  py::class_<transforms::CheckResult>(
      m, "CheckResult",
      "Whether a step applies: true when it does; otherwise `reason` says "
      "why and `nodes` lists the node ids involved.")
      .def_readonly("ok", &transforms::CheckResult::ok, "Whether it applies.")
      .def_readonly("reason", &transforms::CheckResult::reason,
                    "Why not ('' when it applies).")
      .def_readonly("nodes", &transforms::CheckResult::nodes,
                    "Node ids involved (a viewer highlights them).")
      .def("__bool__", [](const transforms::CheckResult &r) { return r.ok; })
      .def("__str__",
           [](const transforms::CheckResult &r) {
             return r.ok ? std::string("applies") : r.reason;
           })
      .def("__repr__", [](const transforms::CheckResult &r) {
        return r.ok ? std::string("<CheckResult ok>")
                    : "<CheckResult: " + r.reason + ">";
      });

  py::class_<Transformation, TransformationPtr>(
      m, "TransformationInfo",
      "A registered transformation's declaration (C++ or plugin).")
      .def_property_readonly(
          "id", [](const Transformation &t) { return std::string(t.id()); },
          "Kebab-case id ('map-fusion').")
      .def_property_readonly(
          "tier",
          [](const Transformation &t) { return std::string(transforms::tierName(t.tier())); },
          "'expansion', 'fusion', 'movement' or 'tensorize'.")
      .def_property_readonly(
          "summary", [](const Transformation &t) { return std::string(t.summary()); },
          "One line.")
      .def_property_readonly(
          "description",
          [](const Transformation &t) { return std::string(t.description()); },
          "What it does and when it applies, for people.")
      .def_property_readonly(
          "params",
          [](const Transformation &t) {
            py::list l;
            for (const auto &s : t.params())
              l.append(paramSpec(s));
            return l;
          },
          "Parameters: dicts with name, kind, default, description, min, "
          "max, choices.")
      .def_property_readonly(
          "exact", [](const Transformation &t) { return t.exactness().exact; },
          "True when results stay bit-identical.")
      .def_property_readonly("tolerance",
                             [](const Transformation &t) {
                               return py::make_tuple(t.exactness().rtol,
                                                     t.exactness().atol);
                             },
                             "(rtol, atol) declared for inexact steps.")
      .def_property_readonly(
          "roles",
          [](const Transformation &t) {
            std::vector<std::string> r;
            for (const auto &n : t.pattern().nodes)
              r.push_back(n.role);
            return r;
          },
          "The pattern's roles, in order (empty: one match per program).")
      .def(
          "matches",
          [](const Transformation &t, const ProgramPtr &p) {
            return transforms::findMatches(*p, t);
          },
          py::arg("program"),
          "Every match in `program`, not yet checked.")
      .def(
          "check",
          [](const Transformation &t, const ProgramPtr &p, py::object match,
             const py::kwargs &params) {
            return transforms::checkMatch(*p, t, toMatch(match, t),
                                          toParams(params));
          },
          py::arg("program"), py::arg("match") = py::none(), py::pos_only(),
          "Whether it applies to `program` at `match`, and if not why.")
      .def("__repr__", [](const Transformation &t) {
        return "<Transformation " + std::string(t.id()) + " (" +
               std::string(transforms::tierName(t.tier())) + ")>";
      });

  m.def(
      "transformations",
      [] {
        std::vector<TransformationPtr> out;
        for (auto &t : transforms::transformations())
          out.push_back(share(t));
        return out;
      },
        "Every registered transformation (C++ and plugins), by tier then id.");
  m.def(
      "transformation_info",
      [](const std::string &id) {
        return share(transforms::requireTransformation(id));
      },
        py::arg("id"),
        "The transformation with this id; weir.Error listing the known ids "
        "when there is none.");
}

} // namespace weir::python
