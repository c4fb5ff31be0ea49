/// \file
/// defineProgram: the dataflow IR, read-only — programs, containers,
/// states, nodes, memlets — with the analyses (bytes moved, FLOPs), the text
/// form, validation and `weir.load`. Programs are edited only through
/// transformations (and, inside a plugin, through weir.Editor).

#include "core/runtime/tensor.h"
#include "ir/analysis.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/json.h"
#include "ir/memory.h"
#include "ir/print.h"
#include "ir/validate.h"
#include "python/src/bindings.h"
#include "python/src/convert.h"
#include "python/src/numpy_tensor.h"
#include "workspace/session.h"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

namespace weir::python {

namespace {

using ir::Program;

py::list exprList(const std::vector<ir::Expr> &v) {
  py::list l;
  for (const ir::Expr &e : v)
    l.append(exprValue(e));
  return l;
}

py::list connectors(const std::vector<ir::Connector> &v) {
  py::list l;
  for (const ir::Connector &c : v)
    l.append(py::make_tuple(c.name, std::string(ir::dtypeName(c.dtype))));
  return l;
}

void defineContainer(py::module_ &m) {
  py::class_<ir::Container>(m, "Container",
                            "A named array (or scalar) of the program.")
      .def_readonly("name", &ir::Container::name, "The container's name.")
      .def_property_readonly(
          "dtype",
          [](const ir::Container &c) {
            return std::string(ir::dtypeName(c.dtype));
          },
          "Element type: 'f32', 'i64', ...")
      .def_property_readonly(
          "shape", [](const ir::Container &c) { return exprList(c.shape); },
          "Dimensions: ints, or text for symbolic ones ('N').")
      .def_property_readonly(
          "strides", [](const ir::Container &c) { return exprList(c.strides); },
          "Element strides.")
      .def_property_readonly(
          "storage",
          [](const ir::Container &c) {
            return std::string(ir::storageName(c.storage));
          },
          "'host', 'register', 'gpu-global', ...")
      .def_readonly("transient", &ir::Container::transient,
                    "True for program-internal data; False for arguments.")
      .def_property_readonly("is_constant", &ir::Container::isConstant,
                             "True when the program holds its data (weights).")
      .def_property_readonly(
          "view_of",
          [](const ir::Container &c) {
            return c.isView() ? py::object(py::str(c.viewOf))
                              : py::object(py::none());
          },
          "The container this one is a reshaped view of, or None.")
      .def_property_readonly(
          "nbytes",
          [](const ir::Container &c) { return exprValue(c.byteSize()); },
          "Size in bytes (text when symbolic).")
      .def(
          "value",
          [](const ir::Container &c) -> py::object {
            if (!c.isConstant())
              return py::none();
            std::vector<std::int64_t> shape;
            for (const ir::Expr &d : c.shape)
              shape.push_back(d.evaluate());
            return toArray(
                runtime::Tensor::fromBlob(c.dtype, shape, c.constant));
          },
          "The constant contents as a read-only numpy array (no copy), or "
          "None for a container that is not constant.")
      .def("__repr__", [](const ir::Container &c) {
        std::string s = "<Container " + c.name + ": " +
                        std::string(ir::dtypeName(c.dtype)) + "[";
        for (std::size_t i = 0; i < c.shape.size(); ++i)
          s += (i ? ", " : "") + c.shape[i].str();
        return s + "]>";
      });
}

void defineNode(py::module_ &m) {
  py::class_<ir::Node>(m, "Node",
                       "A node of a state: access, tasklet, map entry/exit, "
                       "library (an operator) or primitive.")
      .def_readonly("id", &ir::Node::id, "Stable id (kept across versions).")
      .def_readonly("label", &ir::Node::label,
                    "A name for people (ONNX node name, container name).")
      .def_property_readonly(
          "kind",
          [](const ir::Node &n) {
            return std::string(ir::nodeKindName(n.kind));
          },
          "'access', 'tasklet', 'map-entry', 'map-exit', 'library' or "
          "'primitive'.")
      .def_property_readonly(
          "inputs", [](const ir::Node &n) { return connectors(n.inputs); },
          "Input connectors as (name, dtype) pairs.")
      .def_property_readonly(
          "outputs", [](const ir::Node &n) { return connectors(n.outputs); },
          "Output connectors as (name, dtype) pairs.")
      .def_property_readonly(
          "container",
          [](const ir::Node &n) -> py::object {
            if (n.kind != ir::NodeKind::Access)
              return py::none();
            return py::str(n.access().container);
          },
          "The container an access node stands for (None otherwise).")
      .def_property_readonly(
          "op",
          [](const ir::Node &n) -> py::object {
            if (n.kind == ir::NodeKind::Library)
              return py::str(n.library().op);
            if (n.kind == ir::NodeKind::Primitive)
              return py::str(n.primitive().primitive);
            return py::none();
          },
          "Operator type of a library node ('Conv'), primitive name of a "
          "primitive; None otherwise.")
      .def_property_readonly(
          "implementation",
          [](const ir::Node &n) -> py::object {
            if (n.kind != ir::NodeKind::Library)
              return py::none();
            return py::str(n.library().implementation);
          },
          "A library node's chosen expansion ('' = not chosen); None "
          "otherwise.")
      .def_property_readonly(
          "attributes",
          [](const ir::Node &n) {
            py::dict d;
            const ir::Attributes *a =
                n.kind == ir::NodeKind::Library     ? &n.library().attributes
                : n.kind == ir::NodeKind::Primitive ? &n.primitive().attributes
                                                    : nullptr;
            if (a)
              for (const auto &[k, v] : *a)
                d[py::str(k)] = attributeValue(v);
            return d;
          },
          "Attributes of a library node or primitive as a dict.")
      .def_property_readonly(
          "code",
          [](const ir::Node &n) -> py::object {
            if (n.kind != ir::NodeKind::Tasklet)
              return py::none();
            return py::str(n.tasklet().source);
          },
          "A tasklet's code ('y = max(x, 0.0)').")
      .def_property_readonly(
          "params",
          [](const ir::Node &n) -> py::object {
            if (n.kind != ir::NodeKind::MapEntry &&
                n.kind != ir::NodeKind::MapExit)
              return py::none();
            return py::cast(n.map().params);
          },
          "A map's iteration variables.")
      .def_property_readonly(
          "ranges",
          [](const ir::Node &n) -> py::object {
            if (n.kind != ir::NodeKind::MapEntry &&
                n.kind != ir::NodeKind::MapExit)
              return py::none();
            py::list l;
            for (const ir::Range &r : n.map().ranges)
              l.append(r.str());
            return l;
          },
          "A map's ranges as text ('0:64', '0:N:2').")
      .def_property_readonly(
          "schedule",
          [](const ir::Node &n) -> py::object {
            if (n.kind != ir::NodeKind::MapEntry &&
                n.kind != ir::NodeKind::MapExit)
              return py::none();
            return py::str(std::string(ir::scheduleName(n.map().schedule)));
          },
          "A map's schedule: 'sequential', 'cpu-parallel', ...")
      .def_property_readonly(
          "partner",
          [](const ir::Node &n) -> py::object {
            if (n.kind != ir::NodeKind::MapEntry &&
                n.kind != ir::NodeKind::MapExit)
              return py::none();
            return py::int_(n.map().partner);
          },
          "The id of a map entry's exit, or an exit's entry.")
      .def("__repr__", [](const ir::Node &n) {
        return "<Node %" + std::to_string(n.id) + " " +
               std::string(ir::nodeKindName(n.kind)) + " '" + n.label + "'>";
      });
}

void defineEdge(py::module_ &m) {
  py::class_<ir::Edge>(m, "Edge",
                       "A memlet: what moves from one node to another.")
      .def_readonly("id", &ir::Edge::id, "Edge id.")
      .def_readonly("src", &ir::Edge::src, "Source node id.")
      .def_readonly("src_conn", &ir::Edge::srcConn,
                    "Source connector ('' at an access node).")
      .def_readonly("dst", &ir::Edge::dst, "Destination node id.")
      .def_readonly("dst_conn", &ir::Edge::dstConn,
                    "Destination connector ('' at an access node).")
      .def_property_readonly(
          "container", [](const ir::Edge &e) { return e.memlet.container; },
          "The container the memlet names ('' for an ordering edge).")
      .def_property_readonly(
          "subset", [](const ir::Edge &e) { return e.memlet.subset.str(); },
          "The subset as text: 'i, 0:64'.")
      .def_property_readonly(
          "wcr",
          [](const ir::Edge &e) -> py::object {
            if (!e.memlet.wcr)
              return py::none();
            return py::str(std::string(ir::wcrName(*e.memlet.wcr)));
          },
          "Write-conflict resolution ('sum', ...) or None.")
      .def_property_readonly(
          "volume",
          [](const ir::Edge &e) { return exprValue(e.memlet.volume()); },
          "Elements moved per execution of the edge.")
      .def_property_readonly(
          "memlet", [](const ir::Edge &e) { return e.memlet.str(); },
          "Text form: 'A[i, 0:64]'.")
      .def("__repr__", [](const ir::Edge &e) {
        return "<Edge " + std::to_string(e.src) + " -> " +
               std::to_string(e.dst) + ": " + e.memlet.str() + ">";
      });
}

void defineState(py::module_ &m) {
  py::class_<ir::State>(m, "State", "An acyclic dataflow graph.")
      .def_readonly("name", &ir::State::name, "The state's name.")
      .def_property_readonly(
          "nodes", [](const ir::State &s) { return s.nodes.toVector(); },
          "Nodes in insertion order.")
      .def_property_readonly(
          "edges", [](const ir::State &s) { return s.edges.toVector(); },
          "Edges (memlets).")
      .def(
          "node",
          [](const ir::State &s, ir::NodeId id) -> const ir::Node & {
            const ir::Node *n = s.findNode(id);
            if (!n)
              throw weir::Error("state '" + s.name + "' has no node %" +
                                std::to_string(id));
            return *n;
          },
          py::arg("id"), py::return_value_policy::reference_internal,
          "The node with this id; weir.Error when there is none.")
      .def(
          "in_edges",
          [](const ir::State &s, ir::NodeId id) {
            std::vector<ir::Edge> out;
            for (const ir::Edge *e : s.inEdges(id))
              out.push_back(*e);
            return out;
          },
          py::arg("id"), "Edges into the node (copies).")
      .def(
          "out_edges",
          [](const ir::State &s, ir::NodeId id) {
            std::vector<ir::Edge> out;
            for (const ir::Edge *e : s.outEdges(id))
              out.push_back(*e);
            return out;
          },
          py::arg("id"), "Edges out of the node (copies).")
      .def("__repr__", [](const ir::State &s) {
        return "<State " + s.name + ": " + std::to_string(s.nodes.size()) +
               " nodes, " + std::to_string(s.edges.size()) + " edges>";
      });
}

/// The analysis with its totals as numbers (text when symbolic).
struct Analysis {
  ir::ProgramAnalysis a;
};

void defineAnalysis(py::module_ &m) {
  py::class_<Analysis>(m, "Analysis",
                       "Bytes moved and FLOPs of a program (ir/analysis.h "
                       "states the counting rules). Totals are ints, or text "
                       "when they depend on a symbol such as a batch size N.")
      .def_property_readonly(
          "bytes_moved",
          [](const Analysis &x) { return exprValue(x.a.bytesMoved); },
          "Bytes moved to and from containers, in total.")
      .def_property_readonly(
          "flops", [](const Analysis &x) { return exprValue(x.a.flops); },
          "Floating-point operations, in total.")
      .def(
          "arithmetic_intensity",
          [](const Analysis &x, const ir::Bindings &dims) {
            return x.a.arithmeticIntensity(dims);
          },
          py::arg("dims") = ir::Bindings{},
          "FLOPs per byte moved (None when nothing moves or a symbol is "
          "unbound).")
      .def_property_readonly(
          "edges",
          [](const Analysis &x) {
            py::dict d;
            for (const auto &s : x.a.states)
              for (const auto &e : s.edges)
                d[py::int_(e.edge)] =
                    py::make_tuple(exprValue(e.elements), exprValue(e.bytes));
            return d;
          },
          "{edge id: (elements, bytes)} over all executions.")
      .def_property_readonly(
          "nodes",
          [](const Analysis &x) {
            py::dict d;
            for (const auto &s : x.a.states)
              for (const auto &n : s.nodes)
                d[py::int_(n.node)] =
                    py::make_tuple(exprValue(n.flops), exprValue(n.bytesIn),
                                   exprValue(n.bytesOut));
            return d;
          },
          "{node id: (flops, bytes in, bytes out)}.")
      .def("__repr__", [](const Analysis &x) {
        return "<Analysis bytes_moved=" + x.a.bytesMoved.str() +
               " flops=" + x.a.flops.str() + ">";
      });
}

} // namespace

void defineProgram(py::module_ &m) {
  defineContainer(m);
  defineNode(m);
  defineEdge(m);
  defineState(m);
  defineAnalysis(m);

  py::class_<Program, ProgramPtr>(
      m, "Program", py::dynamic_attr(),
      "A dataflow program (read-only): symbols, containers, arguments and "
      "states. Transformations make new programs; they never change one.")
      .def_readonly("name", &Program::name, "The model's name.")
      .def_readonly("symbols", &Program::symbols,
                    "Free symbols of the shapes (a batch size N).")
      .def_readonly("inputs", &Program::inputs, "Input container names.")
      .def_readonly("outputs", &Program::outputs, "Output container names.")
      .def_readonly("states", &Program::states, "The states, in order.")
      .def_readonly("containers", &Program::containers,
                    "{name: Container}, ordered by name.")
      .def_readonly("metadata", &Program::metadata,
                    "Producer, source file, opset imports.")
      .def(
          "state",
          [](const Program &p, const std::string &name) -> const ir::State & {
            for (const ir::State &s : p.states)
              if (s.name == name)
                return s;
            throw weir::Error("program '" + p.name + "' has no state '" + name +
                              "'");
          },
          py::arg("name"), py::return_value_policy::reference_internal,
          "The state with this name; weir.Error when there is none.")
      .def("container", &Program::container, py::arg("name"),
           py::return_value_policy::reference_internal,
           "The container; weir.Error naming it when there is none.")
      .def_property_readonly("node_count", &Program::nodeCount,
                             "Nodes over all states.")
      .def(
          "analysis", [](const Program &p) { return Analysis{ir::analyze(p)}; },
          "Bytes moved and FLOPs, per edge, node and in total.")
      .def(
          "memory",
          [](const Program &p, const ir::Bindings &dims) {
            ir::MemoryReport r = ir::transientMemory(p, dims);
            py::dict d;
            d["allocated"] = r.allocated;
            d["peak"] = r.peak;
            d["buffers"] = r.buffers;
            return d;
          },
          py::arg("dims") = ir::Bindings{},
          "Transient memory (ir/memory.h): {'allocated': bytes the CPU "
          "backend allocates for transients, 'peak': most bytes live at "
          "once in its run order, 'buffers': how many}; symbols not in "
          "`dims` count as 1.")
      .def_property_readonly(
          "hash",
          [](const Program &p) { return ir::hashHex(ir::structuralHash(p)); },
          "Structural hash as 16 hex digits: equal programs, equal hashes.")
      .def(
          "validate",
          [](const Program &p) {
            std::vector<std::string> out;
            for (const ir::Diagnostic &d : ir::validate(p))
              out.push_back(d.str());
            return out;
          },
          "Structural checks; a list of messages ('error: ...', "
          "'warning: ...'), empty when the program is valid.")
      .def(
          "text", [](const Program &p) { return ir::print(p); },
          "The readable text form.")
      .def(
          "save",
          [](const Program &p, const std::filesystem::path &path) {
            ir::saveProgram(p, path);
          },
          py::arg("path"),
          "Writes the program as JSON (+ PATH.bin with the weights), "
          "atomically.")
      .def("__repr__", [](const Program &p) {
        return "<Program " + p.name + ": " + std::to_string(p.nodeCount()) +
               " nodes>";
      });

  m.def(
      "load",
      [](const std::filesystem::path &path) {
        std::unique_ptr<workspace::Workspace> ws;
        {
          py::gil_scoped_release release;
          ws = workspace::openModel(path);
        }
        py::object p = py::cast(share(ws->programPtr()));
        p.attr("_source") =
            py::make_tuple(ws->source().modelPath, ws->source().sha256);
        return p;
      },
      py::arg("path"),
      "Imports an ONNX model (or reads a Weir program .json) into a Program. "
      "The program remembers the file and its SHA-256, so a Workspace made "
      "from it can be saved as a session.");
}

} // namespace weir::python
