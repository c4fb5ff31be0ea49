/// \file
/// defineEditor: `weir.Editor`, the graph-editing API of a plugin's apply()
/// (program_editor.h). Every id is a node id of the named state; memlets
/// are written as text ("A[i, 0:64]").

#include "ir/error.h"
#include "python/src/bindings.h"
#include "python/src/convert.h"
#include "python/src/program_editor.h"

#include <pybind11/stl.h>

namespace weir::python {

namespace {

ir::DType dtypeOf(const std::string &name) {
  auto t = ir::parseDType(name);
  if (!t)
    throw Error("unknown dtype '" + name + "' (f32, f16, bf16, f64, i8, u8, "
                "i16, u16, i32, u32, i64, u64, bool)");
  return *t;
}

/// Connectors as ["x", ("y", "i64"), ...]; a bare name is f32.
std::vector<ir::Connector> connectorsOf(const py::list &l) {
  std::vector<ir::Connector> out;
  for (py::handle h : l) {
    if (py::isinstance<py::str>(h)) {
      out.push_back({h.cast<std::string>(), ir::DType::F32});
    } else {
      auto t = h.cast<std::pair<std::string, std::string>>();
      out.push_back({t.first, dtypeOf(t.second)});
    }
  }
  return out;
}

std::vector<ir::Expr> shapeOf(const py::list &l) {
  std::vector<ir::Expr> out;
  for (py::handle h : l)
    out.push_back(py::isinstance<py::int_>(h) ? ir::Expr(h.cast<std::int64_t>())
                                              : ir::parseExpr(h.cast<std::string>()));
  return out;
}

/// Ranges as ["0:64", "0:N:2", 16]; an int n is 0:n.
std::vector<ir::Range> rangesOf(const py::list &l) {
  std::vector<ir::Range> out;
  for (py::handle h : l)
    out.push_back(py::isinstance<py::int_>(h)
                      ? ir::Range(ir::Expr(0), ir::Expr(h.cast<std::int64_t>()))
                      : ir::parseRange(h.cast<std::string>()));
  return out;
}

ir::Schedule scheduleOf(const std::string &name) {
  auto s = ir::parseSchedule(name);
  if (!s)
    throw Error("unknown schedule '" + name + "' (sequential, cpu-parallel, "
                "vectorized, ...)");
  return *s;
}

} // namespace

void defineEditor(py::module_ &m) {
  using E = ProgramEditor;
  py::class_<E, std::shared_ptr<E>>(
      m, "Editor",
      "Edits a copy of the program inside a plugin's apply(). The result is "
      "validated before it reaches the workspace; an invalid edit makes the "
      "step fail with the validator's message and changes nothing.")
      .def_property_readonly(
          "program", [](const E &e) { return std::make_shared<ir::Program>(e.program()); },
          "A snapshot of the program as edited so far.")
      .def(
          "node",
          [](E &e, const std::string &s, ir::NodeId id) {
            const ir::Node *n = e.state(s).findNode(id);
            if (!n)
              throw Error("state '" + s + "' has no node %" + std::to_string(id));
            return *n;
          },
          py::arg("state"), py::arg("id"), "A copy of the node.")
      .def(
          "in_edges",
          [](E &e, const std::string &s, ir::NodeId id) {
            std::vector<ir::Edge> out;
            for (const ir::Edge *x : e.state(s).inEdges(id))
              out.push_back(*x);
            return out;
          },
          py::arg("state"), py::arg("id"), "Edges into the node (copies).")
      .def(
          "out_edges",
          [](E &e, const std::string &s, ir::NodeId id) {
            std::vector<ir::Edge> out;
            for (const ir::Edge *x : e.state(s).outEdges(id))
              out.push_back(*x);
            return out;
          },
          py::arg("state"), py::arg("id"), "Edges out of the node (copies).")
      .def(
          "container",
          [](const E &e, const std::string &name) { return e.program().container(name); },
          py::arg("name"), "A copy of the container.")
      .def(
          "add_container",
          [](E &e, const std::string &name, const std::string &dtype,
             const py::list &shape, bool transient) {
            e.addContainer(name, dtypeOf(dtype), shapeOf(shape), transient);
            return name;
          },
          py::arg("name"), py::arg("dtype"), py::arg("shape"),
          py::arg("transient") = true,
          "Adds a container (shape: ints or expressions such as 'N').")
      .def("fresh_name", &E::freshName, py::arg("base"),
           "A container name not yet used: base, base_1, ...")
      .def("add_access", &E::addAccess, py::arg("state"), py::arg("container"),
           "Adds an access node for a container; returns its id.")
      .def(
          "add_tasklet",
          [](E &e, const std::string &s, const std::string &label,
             const py::list &inputs, const py::list &outputs,
             const std::string &code) {
            return e.addTasklet(s, label, connectorsOf(inputs),
                                connectorsOf(outputs), code);
          },
          py::arg("state"), py::arg("label"), py::arg("inputs"),
          py::arg("outputs"), py::arg("code"),
          "Adds a tasklet: connectors as names (f32) or (name, dtype) pairs, "
          "code in Weir's tasklet language ('y = max(x, 0.0)').")
      .def(
          "add_library",
          [](E &e, const std::string &s, const std::string &op,
             const py::list &inputs, const py::list &outputs,
             const std::string &label, const py::dict &attributes, int opset,
             const std::string &domain) {
            ir::Attributes attrs;
            for (auto [k, v] : attributes) {
              auto name = py::cast<std::string>(k);
              attrs.emplace(name, toAttribute(v, "attribute '" + name + "'"));
            }
            return e.addLibrary(s, op, label, connectorsOf(inputs),
                                connectorsOf(outputs), std::move(attrs), opset,
                                domain);
          },
          py::arg("state"), py::arg("op"), py::arg("inputs"),
          py::arg("outputs"), py::arg("label") = "",
          py::arg("attributes") = py::dict(), py::arg("opset") = 0,
          py::arg("domain") = "",
          "Adds an operator node (ONNX op type and connector names).")
      .def(
          "add_map",
          [](E &e, const std::string &s, const std::string &label,
             const std::vector<std::string> &params, const py::list &ranges,
             const std::string &schedule) {
            return e.addMap(s, label, params, rangesOf(ranges),
                            scheduleOf(schedule));
          },
          py::arg("state"), py::arg("label"), py::arg("params"),
          py::arg("ranges"), py::arg("schedule") = "sequential",
          "Adds a map scope; returns (entry id, exit id).")
      .def(
          "add_edge",
          [](E &e, const std::string &s, ir::NodeId src,
             const std::string &srcConn, ir::NodeId dst,
             const std::string &dstConn, const std::string &memlet,
             std::optional<std::string> wcr) {
            std::optional<ir::Wcr> w;
            if (wcr) {
              w = ir::parseWcr(*wcr);
              if (!w)
                throw Error("unknown write-conflict resolution '" + *wcr +
                            "' (sum, max, min, prod)");
            }
            return e.addEdge(s, src, srcConn, dst, dstConn, memlet, w);
          },
          py::arg("state"), py::arg("src"), py::arg("src_conn"), py::arg("dst"),
          py::arg("dst_conn"), py::arg("memlet"), py::arg("wcr") = py::none(),
          "Adds a memlet edge ('A[i, 0:64]', 'A' for all of A, '' for an "
          "ordering edge); connectors are '' at access nodes.")
      .def("remove_node", &E::removeNode, py::arg("state"), py::arg("id"),
           "Removes a node and its edges.")
      .def("remove_edge", &E::removeEdge, py::arg("state"), py::arg("id"),
           "Removes one edge by its id.")
      .def("replace", &E::replace, py::arg("state"), py::arg("old"),
           py::arg("replacement"),
           "Replaces a subgraph: removes the `old` nodes and records that "
           "`replacement` stands for them (selections and later recipe "
           "steps follow).")
      .def("set_label", &E::setLabel, py::arg("state"), py::arg("id"),
           py::arg("label"), "Renames a node (labels are for people).")
      .def(
          "set_attribute",
          [](E &e, const std::string &s, ir::NodeId id, const std::string &name,
             const py::object &value) {
            e.setAttribute(s, id, name, toAttribute(value, "attribute '" + name + "'"));
          },
          py::arg("state"), py::arg("id"), py::arg("name"), py::arg("value"),
          "Sets an attribute of a library node or primitive (int, float, str "
          "or a list of one of them).")
      .def(
          "set_map",
          [](E &e, const std::string &s, ir::NodeId id,
             std::optional<std::vector<std::string>> params,
             std::optional<py::list> ranges, std::optional<std::string> schedule) {
            std::optional<std::vector<ir::Range>> r;
            if (ranges)
              r = rangesOf(*ranges);
            std::optional<ir::Schedule> sc;
            if (schedule)
              sc = scheduleOf(*schedule);
            e.setMap(s, id, params, r, sc);
          },
          py::arg("state"), py::arg("id"), py::kw_only(),
          py::arg("params") = py::none(), py::arg("ranges") = py::none(),
          py::arg("schedule") = py::none(),
          "Changes a map's parameters, ranges or schedule (entry and exit "
          "together; `id` may name either).")
      .def("update_flops", &E::updateFlops, py::arg("state"), py::arg("id"),
           "Re-estimates a library node's FLOPs from its operands now (after "
           "rewiring it to smaller or larger data).")
      .def("remove_unused", &E::removeUnused,
           "Removes access nodes without edges and transient containers "
           "nothing uses; returns the containers removed.");
}

} // namespace weir::python
