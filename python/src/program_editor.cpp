/// \file
/// See program_editor.h.

#include "python/src/program_editor.h"

#include "ir/error.h"
#include "onnx/op_catalog.h"
#include "transforms/rewrite.h"

#include <algorithm>
#include <set>

namespace weir::python {

ProgramEditor::ProgramEditor(const ir::Program &program)
    : program_(program), idMap_(),
      firstNewId_(program.nextNodeId()) {}

void ProgramEditor::live() const {
  if (finished_)
    throw Error("this editor's apply() has ended; its edits are in the "
                "result, and it cannot edit any more");
}

const ir::Program &ProgramEditor::program() const {
  live();
  return program_;
}

ir::State &ProgramEditor::state(const std::string &name) {
  live();
  return transforms::stateNamed(program_, name);
}

ir::Node &ProgramEditor::node(const std::string &s, ir::NodeId id) {
  ir::Node *n = state(s).findNode(id);
  if (!n)
    throw Error("state '" + s + "' has no node %" + std::to_string(id));
  return *n;
}

void ProgramEditor::addContainer(const std::string &name, ir::DType dtype,
                                 std::vector<ir::Expr> shape, bool transient) {
  live();
  ir::Container c;
  c.name = name;
  c.dtype = dtype;
  c.strides = ir::rowMajorStrides(shape);
  c.shape = std::move(shape);
  c.transient = transient;
  program_.addContainer(std::move(c));
}

std::string ProgramEditor::freshName(const std::string &base) const {
  live();
  return transforms::freshContainerName(program_, base);
}

ir::NodeId ProgramEditor::addAccess(const std::string &s,
                                    const std::string &container) {
  live();
  program_.container(container); // names it in the error when missing
  return ir::addAccess(program_, state(s), container);
}

ir::NodeId ProgramEditor::addTasklet(const std::string &s,
                                     const std::string &label,
                                     std::vector<ir::Connector> inputs,
                                     std::vector<ir::Connector> outputs,
                                     const std::string &code) {
  return ir::addTasklet(program_, state(s), label, std::move(inputs),
                        std::move(outputs), code);
}

ir::NodeId ProgramEditor::addLibrary(
    const std::string &s, const std::string &op, const std::string &label,
    std::vector<ir::Connector> inputs, std::vector<ir::Connector> outputs,
    ir::Attributes attributes, int opset, const std::string &domain) {
  ir::State &st = state(s);
  ir::Node n;
  n.id = program_.newNodeId();
  n.kind = ir::NodeKind::Library;
  n.label = label.empty() ? op : label;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  ir::LibraryData lib;
  lib.op = op;
  lib.domain = domain;
  lib.opsetVersion = opset;
  lib.attributes = std::move(attributes);
  lib.unknown = !onnx_import::findOp(domain, op);
  n.payload = std::move(lib);
  st.nodes.push_back(std::move(n));
  return st.nodes.back().id;
}

std::pair<ir::NodeId, ir::NodeId>
ProgramEditor::addMap(const std::string &s, const std::string &label,
                      std::vector<std::string> params,
                      std::vector<ir::Range> ranges, ir::Schedule schedule) {
  if (params.size() != ranges.size())
    throw Error("map '" + label + "' has " + std::to_string(params.size()) +
                " parameters but " + std::to_string(ranges.size()) + " ranges");
  return ir::addMap(program_, state(s), label, std::move(params),
                    std::move(ranges), schedule);
}

ir::EdgeId ProgramEditor::addEdge(const std::string &s, ir::NodeId src,
                                  const std::string &srcConn, ir::NodeId dst,
                                  const std::string &dstConn,
                                  const std::string &memlet,
                                  std::optional<ir::Wcr> wcr) {
  node(s, src);
  node(s, dst);
  ir::Memlet m;
  std::string text = memlet;
  if (!text.empty()) {
    auto open = text.find('[');
    if (open == std::string::npos) {
      m.container = text;
      m.subset = ir::Subset::full(program_.container(text).shape);
    } else {
      if (text.back() != ']')
        throw Error("memlet '" + memlet + "' must look like A[i, 0:64]");
      m.container = text.substr(0, open);
      program_.container(m.container);
      m.subset = ir::parseSubset(text.substr(open + 1, text.size() - open - 2));
    }
  }
  m.wcr = wcr;
  return ir::addEdge(program_, state(s), src, srcConn, dst, dstConn,
                     std::move(m));
}

void ProgramEditor::removeNode(const std::string &s, ir::NodeId id) {
  node(s, id);
  transforms::removeNode(state(s), id, &idMap_);
}

void ProgramEditor::removeEdge(const std::string &s, ir::EdgeId id) {
  ir::State &st = state(s);
  auto it = std::find_if(st.edges.begin(), st.edges.end(),
                         [&](const ir::Edge &e) { return e.id == id; });
  if (it == st.edges.end())
    throw Error("state '" + s + "' has no edge " + std::to_string(id));
  st.edges.erase(it);
}

void ProgramEditor::replace(const std::string &s,
                            const std::vector<ir::NodeId> &old,
                            ir::NodeId replacement) {
  node(s, replacement);
  for (ir::NodeId id : old) {
    if (id == replacement)
      continue;
    removeNode(s, id);
    // Nodes of the original program now stand for the replacement (ids the
    // editor created are not keys of the map).
    if (id < firstNewId_)
      idMap_[id] = replacement;
  }
}

void ProgramEditor::setLabel(const std::string &s, ir::NodeId id,
                             std::string label) {
  node(s, id).label = std::move(label);
}

void ProgramEditor::setAttribute(const std::string &s, ir::NodeId id,
                                 const std::string &name,
                                 ir::AttributeValue value) {
  ir::Node &n = node(s, id);
  if (n.kind == ir::NodeKind::Library)
    n.library().attributes[name] = std::move(value);
  else if (n.kind == ir::NodeKind::Primitive)
    std::get<ir::PrimitiveData>(n.payload).attributes[name] = std::move(value);
  else
    throw Error("node %" + std::to_string(id) + " is a " +
                std::string(ir::nodeKindName(n.kind)) +
                "; only library nodes and primitives have attributes");
}

void ProgramEditor::setMap(const std::string &s, ir::NodeId id,
                           std::optional<std::vector<std::string>> params,
                           std::optional<std::vector<ir::Range>> ranges,
                           std::optional<ir::Schedule> schedule) {
  ir::Node &a = node(s, id);
  if (a.kind != ir::NodeKind::MapEntry && a.kind != ir::NodeKind::MapExit)
    throw Error("node %" + std::to_string(id) + " is not a map entry or exit");
  ir::Node &b = node(s, a.map().partner);
  for (ir::Node *n : {&a, &b}) {
    ir::MapData &m = n->map();
    if (params)
      m.params = *params;
    if (ranges)
      m.ranges = *ranges;
    if (schedule)
      m.schedule = *schedule;
    if (m.params.size() != m.ranges.size())
      throw Error("map '" + n->label + "' would have " +
                  std::to_string(m.params.size()) + " parameters but " +
                  std::to_string(m.ranges.size()) + " ranges");
  }
}

std::vector<std::string> ProgramEditor::removeUnused() {
  live();
  return transforms::removeUnused(program_, &idMap_);
}

namespace {

void estimate(const ir::Program &program, const ir::State &s, ir::Node &n) {
  ir::LibraryData &lib = n.library();
  auto info = onnx_import::findOp(lib.domain, lib.op);
  if (!info)
    return;
  // Operands in connector order, from the containers the edges name.
  onnx_import::OpOperands ops;
  ops.attributes = &lib.attributes;
  for (const ir::Connector &c : n.inputs) {
    std::string name = transforms::inputContainer(s, n.id, c.name);
    ops.inputs.push_back(name.empty() ? nullptr : program.findContainer(name));
  }
  for (const ir::Connector &c : n.outputs) {
    std::string name = transforms::outputContainer(s, n.id, c.name);
    ops.outputs.push_back(name.empty() ? nullptr : program.findContainer(name));
  }
  try {
    lib.flops = onnx_import::estimateFlops(*info, ops);
  } catch (const Error &) {
    // Left as it was; validation reports what is really wrong.
  }
}

} // namespace

void ProgramEditor::updateFlops(const std::string &s, ir::NodeId id) {
  ir::Node &n = node(s, id);
  if (n.kind != ir::NodeKind::Library)
    throw Error("node %" + std::to_string(id) + " is not a library node");
  n.library().flops.reset();
  estimate(program_, state(s), n);
}

transforms::ApplyResult ProgramEditor::finish() {
  live();
  finished_ = true;
  for (ir::State &s : program_.states)
    s.nodes.editWhere(
        [](const ir::Node &n) {
          return n.kind == ir::NodeKind::Library && !n.library().flops;
        },
        [&](ir::Node &n) { estimate(program_, s, n); });
  return {std::move(program_), std::move(idMap_)};
}

} // namespace weir::python
