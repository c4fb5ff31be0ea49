#include "onnx/import.h"

#include "ir/error.h"
#include "ir/validate.h"
#include "onnx/model_file.h"
#include "onnx/op_catalog.h"
#include "onnx/onnx_passes.h"
#include "onnx/tensor_data.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

namespace weir::onnx_import {
namespace {

using ir::Expr;

std::string quote(const std::string &s) { return "'" + s + "'"; }

/// A symbol name from arbitrary ONNX text ("batch size" -> "batch_size").
std::string identifier(const std::string &text) {
  std::string s;
  for (char c : text)
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    s = "s_" + s;
  return s;
}

/// What is known about a value before it becomes a container.
struct ValueType {
  const onnx::TypeProto *type = nullptr;
  const onnx::TensorProto *initializer = nullptr;
};

using TypeTable = std::map<std::string, ValueType>;

void collectTypes(const onnx::GraphProto &g, TypeTable &table) {
  for (const onnx::ValueInfoProto &v : g.input())
    table[v.name()].type = &v.type();
  for (const onnx::ValueInfoProto &v : g.value_info())
    table[v.name()].type = &v.type();
  for (const onnx::ValueInfoProto &v : g.output())
    if (v.has_type())
      table[v.name()].type = &v.type();
  for (const onnx::TensorProto &t : g.initializer())
    table[t.name()].initializer = &t;
}

int defaultOpset(const onnx::ModelProto &m) {
  for (const onnx::OperatorSetIdProto &o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      return static_cast<int>(o.version());
  return 0;
}

class GraphImporter {
public:
  GraphImporter(const std::map<std::string, int> &opsets, ImportReport &report,
                int depth)
      : opsets_(opsets), report_(report), depth_(depth) {}

  ir::Program run(const onnx::GraphProto &g, const TypeTable &outer,
                  const std::string &name) {
    types_ = outer;
    collectTypes(g, types_);
    p_.name = name;
    ir::State state;
    state.name = "main";

    std::set<std::string> initializers;
    for (const onnx::TensorProto &t : g.initializer()) {
      initializers.insert(t.name());
      addConstant(t);
    }
    for (const onnx::ValueInfoProto &v : g.input()) {
      if (initializers.count(v.name()))
        continue; // an input with a default (IR < 4): a constant here
      addValue(v.name(), /*transient=*/false);
      p_.inputs.push_back(v.name());
    }
    std::set<std::string> local(initializers);
    for (const std::string &in : p_.inputs)
      local.insert(in);
    for (const onnx::NodeProto &n : g.node())
      for (const std::string &out : n.output())
        if (!out.empty())
          local.insert(out);
    // Values read from an enclosing graph become extra inputs.
    std::vector<std::string> captured;
    for (const onnx::NodeProto &n : g.node())
      for (const std::string &in : n.input())
        if (!in.empty() && !local.count(in)) {
          local.insert(in);
          addValue(in, /*transient=*/false);
          p_.inputs.push_back(in);
          captured.push_back(in);
        }
    if (!captured.empty()) {
      std::string list;
      for (const std::string &c : captured)
        list += (list.empty() ? "" : ",") + c;
      p_.metadata["captured"] = list;
    }

    std::set<std::string> graphOutputs;
    for (const onnx::ValueInfoProto &v : g.output())
      graphOutputs.insert(v.name());
    int index = 0;
    for (const onnx::NodeProto &n : g.node()) {
      // A Constant node holding a tensor is a constant container, as an
      // initializer would be, so that operators reading it (Reshape's shape,
      // ReduceSum's axes) see its value when they are expanded.
      if (const onnx::TensorProto *t = constantTensor(n);
          t && !graphOutputs.count(n.output(0))) {
        addConstant(*t, n.output(0));
        ++index;
        continue;
      }
      addNode(n, index++, state);
    }

    for (const onnx::ValueInfoProto &v : g.output()) {
      if (auto it = p_.containers.find(v.name()); it != p_.containers.end())
        it->second.transient = false;
      p_.outputs.push_back(v.name());
      accessNode(v.name(), state);
    }
    p_.states.push_back(std::move(state));
    return std::move(p_);
  }

private:
  std::vector<Expr> shapeOf(const std::string &value,
                            const onnx::TensorShapeProto &shape) {
    std::vector<Expr> dims;
    int k = 0;
    for (const auto &d : shape.dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0)
          throw Error("value " + quote(value) + " has negative dimension " +
                      std::to_string(d.dim_value()));
        dims.push_back(Expr(static_cast<std::int64_t>(d.dim_value())));
      } else {
        std::string sym =
            d.has_dim_param() && !d.dim_param().empty()
                ? identifier(d.dim_param())
                : identifier("d_" + value + "_" + std::to_string(k));
        addSymbol(sym);
        dims.push_back(Expr::symbol(sym));
      }
      ++k;
    }
    return dims;
  }

  void addSymbol(const std::string &sym) {
    for (const std::string &s : p_.symbols)
      if (s == sym)
        return;
    p_.symbols.push_back(sym);
  }

  /// The tensor of a default-domain Constant node given by its `value`
  /// attribute; null for any other node.
  static const onnx::TensorProto *constantTensor(const onnx::NodeProto &n) {
    if (n.op_type() != "Constant" ||
        !(n.domain().empty() || n.domain() == "ai.onnx") ||
        n.output_size() != 1 || n.attribute_size() != 1 ||
        n.attribute(0).name() != "value" || !n.attribute(0).has_t())
      return nullptr;
    return &n.attribute(0).t();
  }

  void addConstant(const onnx::TensorProto &t, const std::string &name = "") {
    std::string cname = name.empty() ? t.name() : name;
    ir::TensorValue v = tensorValue(
        t, (name.empty() ? "initializer " : "constant node output ") +
               quote(cname));
    ir::Container c;
    c.name = cname;
    c.dtype = v.dtype;
    for (std::int64_t d : v.shape)
      c.shape.push_back(Expr(d));
    c.transient = true;
    c.constant = v.data;
    p_.addContainer(std::move(c));
  }

  void addValue(const std::string &name, bool transient) {
    if (p_.findContainer(name))
      return;
    ir::Container c;
    c.name = name;
    c.transient = transient;
    auto it = types_.find(name);
    const onnx::TypeProto *type =
        it == types_.end() ? nullptr : it->second.type;
    if (it != types_.end() && it->second.initializer && !type) {
      // An outer-scope initializer read by a subgraph.
      const onnx::TensorProto &t = *it->second.initializer;
      auto dtype = dtypeFromOnnx(t.data_type());
      if (!dtype)
        throw Error("value " + quote(name) + " has element type " +
                    onnxTypeName(t.data_type()) +
                    ", which Weir does not support");
      c.dtype = *dtype;
      for (std::int64_t d : t.dims())
        c.shape.push_back(Expr(d));
      p_.addContainer(std::move(c));
      return;
    }
    if (!type || type->value_case() == onnx::TypeProto::VALUE_NOT_SET) {
      report_.notes.push_back("the type of value " + quote(name) +
                              " could not be inferred; imported as an f32 "
                              "scalar placeholder");
      if (report_.unverifiedShapes.empty())
        report_.unverifiedShapes = report_.notes.back();
      p_.addContainer(std::move(c));
      return;
    }
    if (!type->has_tensor_type()) {
      const char *kind = type->has_sequence_type()   ? "a sequence"
                         : type->has_optional_type() ? "an optional"
                         : type->has_map_type()      ? "a map"
                                                     : "a non-tensor";
      throw Error("value " + quote(name) + " has " + kind +
                  " type; Weir supports tensors only");
    }
    const auto &tt = type->tensor_type();
    auto dtype = dtypeFromOnnx(tt.elem_type());
    if (!dtype)
      throw Error("value " + quote(name) + " has element type " +
                  onnxTypeName(tt.elem_type()) +
                  ", which Weir does not support");
    c.dtype = *dtype;
    if (tt.has_shape())
      c.shape = shapeOf(name, tt.shape());
    else
    {
      report_.notes.push_back("the rank of value " + quote(name) +
                              " could not be inferred; imported as a scalar "
                              "placeholder");
      if (report_.unverifiedShapes.empty())
        report_.unverifiedShapes = report_.notes.back();
    }
    p_.addContainer(std::move(c));
  }

  ir::NodeId accessNode(const std::string &value, ir::State &state) {
    auto it = access_.find(value);
    if (it != access_.end())
      return it->second;
    ir::NodeId id = ir::addAccess(p_, state, value);
    access_[value] = id;
    return id;
  }

  /// Connector names from the operator schema: formal names, with an index
  /// suffix for variadic parameters; in0/out0 when there is no schema.
  static std::string
  connectorName(const std::vector<onnx::OpSchema::FormalParameter> *formals,
                std::size_t i, const char *fallback) {
    if (!formals || formals->empty())
      return fallback + std::to_string(i);
    std::size_t f = std::min(i, formals->size() - 1);
    const auto &formal = (*formals)[f];
    if (formal.GetOption() == onnx::OpSchema::Variadic)
      return formal.GetName() + "_" + std::to_string(i - f);
    if (i >= formals->size())
      return fallback + std::to_string(i);
    return formal.GetName();
  }

  ir::AttributeValue attribute(const onnx::AttributeProto &a,
                               const std::string &who) {
    using A = onnx::AttributeProto;
    switch (a.type()) {
    case A::FLOAT:
      return static_cast<double>(a.f());
    case A::INT:
      return static_cast<std::int64_t>(a.i());
    case A::STRING:
      return a.s();
    case A::TENSOR:
      return tensorValue(a.t(), who + " attribute " + quote(a.name()));
    case A::GRAPH: {
      if (depth_ + 1 > 64)
        throw Error(who + ": subgraphs nested too deep");
      GraphImporter inner(opsets_, report_, depth_ + 1);
      return std::make_shared<const ir::Program>(
          inner.run(a.g(), types_, a.g().name()));
    }
    case A::FLOATS:
      return std::vector<double>(a.floats().begin(), a.floats().end());
    case A::INTS:
      return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
    case A::STRINGS:
      return std::vector<std::string>(a.strings().begin(), a.strings().end());
    default:
      throw Error(who + " attribute " + quote(a.name()) + " has type " +
                  A::AttributeType_Name(a.type()) +
                  ", which Weir does not support");
    }
  }

  void addNode(const onnx::NodeProto &n, int index, ir::State &state) {
    std::string label =
        n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
    std::string who = "node " + quote(label);
    ir::LibraryData lib;
    lib.op = n.op_type();
    lib.domain = n.domain() == "ai.onnx" ? "" : n.domain();
    auto opset = opsets_.find(lib.domain);
    lib.opsetVersion = opset == opsets_.end() ? 0 : opset->second;
    for (const onnx::AttributeProto &a : n.attribute())
      lib.attributes.emplace(a.name(), attribute(a, who));

    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
        n.op_type(), lib.opsetVersion, n.domain());
    auto info = findOp(lib.domain, lib.op);
    if (!info) {
      lib.unknown = true;
      std::string key = lib.domain.empty() ? lib.op : lib.domain + "." + lib.op;
      auto &u = report_.unsupportedOps;
      if (std::find(u.begin(), u.end(), key) == u.end())
        u.insert(std::upper_bound(u.begin(), u.end(), key), key);
    }

    ir::Node node;
    node.kind = ir::NodeKind::Library;
    node.label = label;
    OpOperands operands;
    operands.attributes = &lib.attributes;
    std::vector<std::pair<std::string, std::string>> inEdges, outEdges;
    for (int i = 0; i < n.input_size(); ++i) {
      const std::string &value = n.input(i);
      if (value.empty()) {
        operands.inputs.push_back(nullptr);
        continue;
      }
      addValue(value, /*transient=*/true);
      const ir::Container &c = p_.container(value);
      std::string conn = connectorName(schema ? &schema->inputs() : nullptr,
                                       static_cast<std::size_t>(i), "in");
      node.inputs.push_back({conn, c.dtype});
      operands.inputs.push_back(&c);
      inEdges.emplace_back(value, conn);
    }
    for (int i = 0; i < n.output_size(); ++i) {
      const std::string &value = n.output(i);
      if (value.empty()) {
        operands.outputs.push_back(nullptr);
        continue;
      }
      addValue(value, /*transient=*/true);
      const ir::Container &c = p_.container(value);
      std::string conn = connectorName(schema ? &schema->outputs() : nullptr,
                                       static_cast<std::size_t>(i), "out");
      node.outputs.push_back({conn, c.dtype});
      operands.outputs.push_back(&c);
      outEdges.emplace_back(value, conn);
    }
    if (info)
      lib.flops = estimateFlops(*info, operands);
    node.payload = std::move(lib);
    // Access nodes of inputs first so ids follow the data flow.
    std::vector<ir::NodeId> inAccess;
    for (const auto &[value, conn] : inEdges)
      inAccess.push_back(accessNode(value, state));
    node.id = p_.newNodeId();
    ir::NodeId id = node.id;
    state.nodes.push_back(std::move(node));
    for (std::size_t i = 0; i < inEdges.size(); ++i) {
      const auto &[value, conn] = inEdges[i];
      ir::addEdge(p_, state, inAccess[i], "", id, conn, fullMemlet(value));
    }
    for (const auto &[value, conn] : outEdges)
      ir::addEdge(p_, state, id, conn, accessNode(value, state), "",
                  fullMemlet(value));
  }

  ir::Memlet fullMemlet(const std::string &value) {
    ir::Memlet m;
    m.container = value;
    m.subset = ir::Subset::full(p_.container(value).shape);
    return m;
  }

  const std::map<std::string, int> &opsets_;
  ImportReport &report_;
  int depth_;
  TypeTable types_;
  ir::Program p_;
  std::map<std::string, ir::NodeId> access_;
};

/// Sets every dimension named in `dims` to its value, in the graph's
/// inputs, outputs and declared values alike (one name is one size).
void fixDimensions(onnx::ModelProto &model,
                   const std::map<std::string, std::int64_t, std::less<>> &dims) {
  if (dims.empty())
    return;
  onnx::GraphProto &g = *model.mutable_graph();
  for (auto *list : {g.mutable_input(), g.mutable_output(),
                     g.mutable_value_info()})
    for (onnx::ValueInfoProto &v : *list) {
      if (!v.type().has_tensor_type() ||
          !v.type().tensor_type().has_shape())
        continue;
      for (onnx::TensorShapeProto::Dimension &d : *v.mutable_type()
                                                       ->mutable_tensor_type()
                                                       ->mutable_shape()
                                                       ->mutable_dim())
        if (auto it = dims.find(d.dim_param());
            d.has_dim_param() && it != dims.end())
          d.set_dim_value(it->second);
    }
}

} // namespace

ImportResult importModel(const std::filesystem::path &path,
                         const ImportOptions &options) {
  const std::string file = quote(path.string());
  try {
    onnx::ModelProto model;
    parseModelFile(path, options.limits, model);
    checkAndInlineModel(model, path.parent_path(), options.limits);

    ImportResult result;
    ImportReport &report = result.report;
    report.originalOpset = defaultOpset(model);
    fixDimensions(model, options.dims);
    const std::vector<ShapeInput> deciding = shapeInputs(model.graph());
    fixInputs(model, options.values);
    for (const ShapeInput &s : deciding)
      if (!options.values.count(s.name))
        report.shapeInputs.push_back(s);
    for (const auto &[input, value] : options.values) {
      auto s = std::find_if(deciding.begin(), deciding.end(),
                            [&](const ShapeInput &d) { return d.name == input; });
      report.notes.push_back(
          "input '" + input + "' fixed at load to " + describeValue(value) +
          (s == deciding.end() ? "" : " (it decides " + s->decides + ")"));
    }
    runOnnxPasses(model, options, report);
    report.opset = defaultOpset(model);

    std::map<std::string, int> opsets;
    for (const onnx::OperatorSetIdProto &o : model.opset_import())
      opsets[o.domain() == "ai.onnx" ? "" : o.domain()] =
          static_cast<int>(o.version());
    GraphImporter importer(opsets, report, 0);
    std::string name = model.graph().name().empty() ? path.stem().string()
                                                    : model.graph().name();
    result.program = importer.run(model.graph(), {}, name);
    ir::Program &p = result.program;
    p.metadata["source"] = path.filename().string();
    p.metadata["producer"] =
        model.producer_name() + (model.producer_version().empty()
                                     ? ""
                                     : " " + model.producer_version());
    p.metadata["ir_version"] = std::to_string(model.ir_version());
    p.metadata["opset"] = std::to_string(report.opset);
    if (report.originalOpset != report.opset)
      p.metadata["original_opset"] = std::to_string(report.originalOpset);
    if (!options.values.empty()) {
      std::string fixed;
      for (const auto &[input, value] : options.values)
        fixed += (fixed.empty() ? "" : ", ") + input + "=" + describeValue(value);
      p.metadata["fixed_inputs"] = fixed;
    }
    if (!report.unverifiedShapes.empty())
      p.metadata[std::string(ir::kShapesUnverified)] = report.unverifiedShapes;
    return result;
  } catch (const Error &e) {
    throw Error(file + ": " + e.what());
  }
}

} // namespace weir::onnx_import
