#include "transforms/operators/expansion.h"

#include "core/runtime/tensor.h"
#include "ir/error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <set>

namespace weir::operators {
namespace {

struct Registry {
  /// op -> implementations, the default first.
  std::map<std::string, std::vector<Implementation>, std::less<>> byOp;
};

Registry &registry() {
  static Registry r;
  return r;
}

const Implementation *findImpl(std::string_view op, std::string_view name) {
  auto it = registry().byOp.find(op);
  if (it == registry().byOp.end() || it->second.empty())
    return nullptr;
  if (name.empty())
    return &it->second.front();
  for (const Implementation &i : it->second)
    if (i.name == name)
      return &i;
  return nullptr;
}

std::string describeNode(const ir::Node &n) {
  return "node '" + n.label + "' (" + n.library().op + ")";
}

} // namespace

// ---------------------------------------------------------------------------
// ExpansionContext

ExpansionContext::ExpansionContext(ir::Program &program, ir::State &state,
                                   ir::Node node,
                                   std::map<std::string, std::string> inputs,
                                   std::map<std::string, std::string> outputs,
                                   ir::AccessNodes access)
    : program_(program), state_(state), node_(std::move(node)),
      inputs_(std::move(inputs)), outputs_(std::move(outputs)),
      access_(std::move(access)) {}

std::string ExpansionContext::describe() const { return describeNode(node_); }

void ExpansionContext::fail(const std::string &message) const {
  throw Error(describe() + ": " + message);
}

const ir::Container *ExpansionContext::input(std::string_view connector) const {
  auto it = inputs_.find(std::string(connector));
  return it == inputs_.end() ? nullptr : &program_.container(it->second);
}

const ir::Container &
ExpansionContext::requireInput(std::string_view connector) const {
  if (const ir::Container *c = input(connector))
    return *c;
  fail("input '" + std::string(connector) + "' is missing");
}

const ir::Container &ExpansionContext::requireInputAt(std::size_t k) const {
  if (k >= node_.inputs.size())
    fail("has " + std::to_string(node_.inputs.size()) +
         " inputs; it needs at least " + std::to_string(k + 1));
  return requireInput(node_.inputs[k].name);
}

const ir::Container &ExpansionContext::requireOutputAt(std::size_t k) const {
  if (k >= node_.outputs.size())
    fail("has " + std::to_string(node_.outputs.size()) +
         " outputs; it needs at least " + std::to_string(k + 1));
  return requireOutput(node_.outputs[k].name);
}

const ir::Container *
ExpansionContext::output(std::string_view connector) const {
  auto it = outputs_.find(std::string(connector));
  return it == outputs_.end() ? nullptr : &program_.container(it->second);
}

const ir::Container &
ExpansionContext::requireOutput(std::string_view connector) const {
  if (const ir::Container *c = output(connector))
    return *c;
  fail("output '" + std::string(connector) + "' is missing");
}

std::vector<const ir::Container *>
ExpansionContext::variadicInputs(std::string_view base) const {
  std::vector<const ir::Container *> out;
  for (const ir::Connector &c : node_.inputs) {
    std::string prefix = std::string(base) + "_";
    if (c.name.rfind(prefix, 0) == 0)
      out.push_back(input(c.name));
  }
  return out;
}

namespace {
template <typename T>
const T *attrAs(const ir::LibraryData &l, std::string_view name,
                const ExpansionContext &ctx, const char *kind) {
  auto it = l.attributes.find(name);
  if (it == l.attributes.end())
    return nullptr;
  const T *v = std::get_if<T>(&it->second);
  if (!v)
    ctx.fail("attribute '" + std::string(name) + "' is not " + kind);
  return v;
}
} // namespace

bool ExpansionContext::hasAttr(std::string_view name) const {
  return library().attributes.count(name) > 0;
}

std::int64_t ExpansionContext::intAttr(std::string_view name,
                                       std::int64_t fallback) const {
  const auto *v = attrAs<std::int64_t>(library(), name, *this, "an integer");
  return v ? *v : fallback;
}

double ExpansionContext::floatAttr(std::string_view name,
                                   double fallback) const {
  const auto *v = attrAs<double>(library(), name, *this, "a float");
  return v ? *v : fallback;
}

std::string ExpansionContext::stringAttr(std::string_view name,
                                         std::string fallback) const {
  const auto *v = attrAs<std::string>(library(), name, *this, "a string");
  return v ? *v : fallback;
}

std::vector<std::int64_t>
ExpansionContext::intsAttr(std::string_view name,
                           std::vector<std::int64_t> fallback) const {
  const auto *v = attrAs<std::vector<std::int64_t>>(library(), name, *this,
                                                    "a list of integers");
  return v ? *v : fallback;
}

std::vector<double>
ExpansionContext::floatsAttr(std::string_view name,
                             std::vector<double> fallback) const {
  const auto *v = attrAs<std::vector<double>>(library(), name, *this,
                                              "a list of floats");
  return v ? *v : fallback;
}

std::optional<std::vector<std::int64_t>>
ExpansionContext::constantInts(std::string_view connector) const {
  const ir::Container *c = input(connector);
  if (!c || !c->constant)
    return std::nullopt;
  if (!ir::isInteger(c->dtype))
    fail("input '" + std::string(connector) + "' is not an integer tensor");
  std::vector<std::int64_t> out;
  const std::size_t size = ir::dtypeSize(c->dtype);
  const std::byte *data = c->constant->data();
  for (std::size_t off = 0; off + size <= c->constant->size(); off += size) {
    auto read = [&](auto v) {
      std::memcpy(&v, data + off, sizeof v);
      return static_cast<std::int64_t>(v);
    };
    switch (c->dtype) {
    case ir::DType::I8: out.push_back(read(std::int8_t{})); break;
    case ir::DType::I16: out.push_back(read(std::int16_t{})); break;
    case ir::DType::I32: out.push_back(read(std::int32_t{})); break;
    case ir::DType::I64: out.push_back(read(std::int64_t{})); break;
    case ir::DType::U8: out.push_back(read(std::uint8_t{})); break;
    case ir::DType::U16: out.push_back(read(std::uint16_t{})); break;
    case ir::DType::U32: out.push_back(read(std::uint32_t{})); break;
    default: out.push_back(read(std::uint64_t{})); break;
    }
  }
  return out;
}

std::optional<std::vector<double>>
ExpansionContext::constantReals(std::string_view connector) const {
  const ir::Container *c = input(connector);
  if (!c || !c->constant)
    return std::nullopt;
  if (c->dtype == ir::DType::Bool)
    fail("input '" + std::string(connector) + "' is not a numeric tensor");
  const auto count =
      std::int64_t(c->constant->size() / ir::dtypeSize(c->dtype));
  runtime::Tensor t = runtime::Tensor::fromBlob(c->dtype, {count}, c->constant);
  std::vector<double> out;
  for (std::int64_t i = 0; i < count; ++i)
    out.push_back(t.getAsDouble(i));
  return out;
}

ir::MappedTaskletIds ExpansionContext::addMap(
    const std::string &label, const std::vector<std::string> &params,
    const std::vector<ir::Range> &ranges,
    const std::vector<ir::MappedInput> &inputs, std::string_view code,
    const std::vector<ir::MappedOutput> &outputs) {
  return ir::addMappedTasklet(program_, state_, node_.label + "." + label,
                              params, ranges, inputs, code, outputs, access_,
                              ir::Schedule::CpuParallel);
}

ir::MappedTaskletIds ExpansionContext::addPrimitive(
    const std::string &label, const std::vector<std::string> &params,
    const std::vector<ir::Range> &ranges, const std::string &primitive,
    ir::Attributes attributes, const std::vector<ir::MappedRegion> &inputs,
    const std::vector<ir::MappedRegion> &outputs) {
  return ir::addMappedPrimitive(
      program_, state_, node_.label + "." + label, params, ranges, primitive,
      std::move(attributes), inputs, outputs, access_);
}

std::string ExpansionContext::addTransient(const std::string &suffix,
                                           ir::DType dtype,
                                           std::vector<ir::Expr> shape) {
  return ir::addTransient(program_, node_.label + "_" + suffix, dtype,
                          std::move(shape));
}

std::string ExpansionContext::addConstant(const std::string &suffix,
                                          const ir::TensorValue &value) {
  std::vector<ir::Expr> shape;
  for (std::int64_t d : value.shape)
    shape.push_back(ir::Expr(d));
  std::string name = addTransient(suffix, value.dtype, std::move(shape));
  program_.containers.find(name)->second.constant =
      value.data ? value.data
                 : std::make_shared<const std::vector<std::byte>>();
  return name;
}

std::string ExpansionContext::sumIdentity(ir::DType dtype) {
  return std::string(ir::dtypeName(dtype)) +
         (ir::isFloat(dtype) ? "(-0.0)" : "(0)");
}

ir::TensorValue ExpansionContext::tensorOf(ir::DType dtype,
                                           std::vector<std::int64_t> shape,
                                           const std::vector<double> &values) const {
  runtime::Tensor t(dtype, {std::int64_t(values.size())});
  for (std::size_t i = 0; i < values.size(); ++i)
    t.setFromDouble(std::int64_t(i), values[i]);
  ir::TensorValue v = t.value();
  v.shape = std::move(shape);
  return v;
}

void ExpansionContext::copyConstant(const std::string &name,
                                    const ir::Container &y) {
  auto p = params(y.shape.size());
  auto idx = indices(p);
  addMap("copy", p, fullRanges(y.shape), {{"x", name, idx}}, "y = x",
         {{"y", y.name, idx}});
}

std::string ExpansionContext::addIota(const std::string &suffix,
                                      ir::DType dtype, std::int64_t n) {
  if (dtype != ir::DType::I32 && dtype != ir::DType::I64)
    fail("positions of dtype " + std::string(ir::dtypeName(dtype)) +
         " are not supported");
  std::vector<double> positions(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k)
    positions[std::size_t(k)] = double(k);
  return addConstant(suffix, tensorOf(dtype, {n}, positions));
}

std::int64_t ExpansionContext::constantDim(const ir::Expr &dim) const {
  auto v = dim.asConstant();
  if (!v)
    fail("needs a static dimension, got '" + dim.str() + "'");
  return *v;
}

std::int64_t
ExpansionContext::spannedCount(const ir::Container &x,
                               const std::vector<bool> &axes) const {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < x.shape.size(); ++d)
    if (axes[d]) {
      auto c = x.shape[d].asConstant();
      if (!c)
        fail("the reduced dimension " + x.shape[d].str() +
             " is symbolic; the element count must be constant");
      n *= *c;
    }
  return n;
}

std::int64_t ExpansionContext::normalizeAxis(std::int64_t axis,
                                             std::size_t rank) const {
  auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r)
    fail("axis " + std::to_string(axis) + " is out of range for rank " +
         std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

std::string ExpansionContext::floatLiteral(double v) {
  if (std::isnan(v))
    return "(0.0 / 0.0)";
  if (std::isinf(v))
    return v < 0 ? "(-1.0 / 0.0)" : "(1.0 / 0.0)";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  // Without a point or exponent the literal would read back as an integer.
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

std::vector<std::string> ExpansionContext::params(std::size_t rank,
                                                  const std::string &prefix) {
  std::vector<std::string> p;
  for (std::size_t i = 0; i < rank; ++i)
    p.push_back(prefix + std::to_string(i));
  return p;
}

std::vector<ir::Range>
ExpansionContext::fullRanges(const std::vector<ir::Expr> &shape) {
  std::vector<ir::Range> r;
  for (const ir::Expr &d : shape)
    r.emplace_back(ir::Expr(0), d);
  return r;
}

std::vector<ir::Expr>
ExpansionContext::indices(const std::vector<std::string> &params) {
  std::vector<ir::Expr> e;
  for (const std::string &p : params)
    e.push_back(ir::Expr::symbol(p));
  return e;
}

// ---------------------------------------------------------------------------
// Registry

void registerExpansion(Implementation impl, bool isDefault) {
  auto &list = registry().byOp[impl.op];
  if (isDefault)
    list.insert(list.begin(), std::move(impl));
  else
    list.push_back(std::move(impl));
}

std::vector<const Implementation *> implementationsOf(std::string_view op) {
  std::vector<const Implementation *> out;
  auto it = registry().byOp.find(op);
  if (it != registry().byOp.end())
    for (const Implementation &i : it->second)
      out.push_back(&i);
  return out;
}

std::vector<std::string> expandableOps() {
  std::vector<std::string> ops;
  for (const auto &[op, impls] : registry().byOp)
    if (!impls.empty())
      ops.push_back(op);
  return ops;
}

// ---------------------------------------------------------------------------
// Expanding one node
//
// The expander builds into a scratch state holding copies of the node's
// input access nodes, so a failure leaves the program untouched; on success
// the scratch nodes and edges are spliced in, and the node's original output
// access nodes hand their readers to the access nodes the expansion wrote
// last.

void expandNode(ir::Program &program, ir::NodeId id, std::string_view impl) {
  ir::State *state = nullptr;
  for (ir::State &s : program.states)
    if (s.findNode(id))
      state = &s;
  if (!state)
    throw Error("no node with id " + std::to_string(id));
  const ir::Node &node = *state->findNode(id);
  if (node.kind != ir::NodeKind::Library)
    throw Error("node '" + node.label + "' (id " + std::to_string(id) +
                ") is a " + std::string(ir::nodeKindName(node.kind)) +
                " node, not a library node");
  const Implementation *implementation = findImpl(node.library().op, impl);
  if (!implementation) {
    if (impl.empty())
      throw Error(describeNode(node) + ": no implementation of " +
                  node.library().op + " exists yet");
    throw Error(describeNode(node) + ": " + node.library().op +
                " has no implementation '" + std::string(impl) + "'");
  }

  ir::State scratch;
  scratch.name = state->name;
  std::map<std::string, std::string> inputs, outputs;
  ir::AccessNodes access;
  std::map<std::string, ir::NodeId> originalOutputs;
  std::set<ir::NodeId> copied;
  for (const ir::Edge &e : state->edges) {
    if (e.dst == id) {
      const ir::Node *src = state->findNode(e.src);
      if (!src || src->kind != ir::NodeKind::Access || e.memlet.empty())
        throw Error(describeNode(node) + ": input '" + e.dstConn +
                    "' does not come from an access node");
      inputs[e.dstConn] = e.memlet.container;
      if (!access.count(src->access().container)) {
        access[src->access().container] = src->id;
        scratch.nodes.push_back(*src);
        copied.insert(src->id);
      }
    } else if (e.src == id) {
      const ir::Node *dst = state->findNode(e.dst);
      if (!dst || dst->kind != ir::NodeKind::Access || e.memlet.empty())
        throw Error(describeNode(node) + ": output '" + e.srcConn +
                    "' does not go to an access node");
      outputs[e.srcConn] = e.memlet.container;
      originalOutputs[e.memlet.container] = dst->id;
    }
  }

  // The containers there before, by the address of their entry (a map's
  // entries stay put): a set of every name, copied for each node expand-all
  // expands, made expanding a 2,000-node chain quadratic.
  std::vector<const std::string *> containersBefore;
  containersBefore.reserve(program.containers.size());
  for (const auto &entry : program.containers)
    containersBefore.push_back(&entry.first);
  std::sort(containersBefore.begin(), containersBefore.end(),
            std::less<const std::string *>());
  ExpansionContext ctx(program, scratch, node, inputs, outputs, access);
  try {
    implementation->expand(ctx);
    for (const auto &[container, original] : originalOutputs) {
      bool written = false;
      for (const ir::Node &n : scratch.nodes)
        if (n.kind == ir::NodeKind::Access &&
            n.access().container == container && !copied.count(n.id) &&
            !scratch.inEdges(n.id).empty())
          written = true;
      if (!written)
        ctx.fail("the expansion does not write output '" + container + "'");
    }
  } catch (...) {
    for (auto it = program.containers.begin(); it != program.containers.end();)
      it = std::binary_search(containersBefore.begin(), containersBefore.end(),
                              &it->first, std::less<const std::string *>())
               ? std::next(it)
               : program.containers.erase(it);
    throw;
  }

  // The last access node the expansion wrote for each output container.
  std::map<std::string, ir::NodeId> lastWrite;
  for (const ir::Node &n : scratch.nodes)
    if (n.kind == ir::NodeKind::Access && !scratch.inEdges(n.id).empty())
      lastWrite[n.access().container] = n.id;

  // Splice: drop the library node and its edges, add the scratch nodes
  // (except the copied input access nodes, which are already there) and
  // edges, then move readers of the old output access nodes over.
  state->edges.eraseIf(
      [&](const ir::Edge &e) { return e.src == id || e.dst == id; });
  state->nodes.eraseIf([&](const ir::Node &n) { return n.id == id; });
  scratch.nodes.eraseIf(
      [&](const ir::Node &n) { return copied.count(n.id) != 0; });
  state->nodes.insert(state->nodes.end(), scratch.nodes.begin(),
                      scratch.nodes.end());
  state->edges.insert(state->edges.end(), scratch.edges.begin(),
                      scratch.edges.end());
  for (const auto &[container, original] : originalOutputs) {
    ir::NodeId fresh = lastWrite.at(container);
    state->edges.editWhere([&](const ir::Edge &e) { return e.src == original; },
                           [&](ir::Edge &e) { e.src = fresh; });
    state->nodes.eraseIf([&](const ir::Node &n) { return n.id == original; });
  }
}

ExpandAllReport expandAll(ir::Program &program,
                          const std::map<std::string, std::string> &choice) {
  ExpandAllReport report;
  std::vector<ir::NodeId> library;
  for (const ir::State &s : program.states)
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Library)
        library.push_back(n.id);
  for (ir::NodeId id : library) {
    const ir::Node *n = nullptr;
    for (const ir::State &s : program.states)
      if (const ir::Node *found = s.findNode(id))
        n = found;
    // A chosen implementation is the only one tried; otherwise the default
    // first, then the others, so that a default that does not apply to
    // this node (BLAS on an integer MatMul) falls back to one that does.
    std::vector<std::string> tries;
    if (auto it = choice.find(n->library().op); it != choice.end())
      tries.push_back(it->second);
    else
      for (const Implementation *impl : implementationsOf(n->library().op))
        tries.push_back(impl->name);
    if (tries.empty())
      tries.push_back("");
    std::string reasons;
    bool done = false;
    for (const std::string &impl : tries) {
      try {
        expandNode(program, id, impl);
        done = true;
        break;
      } catch (const Error &e) {
        reasons += (reasons.empty() ? "" : "; then ") +
                   (impl.empty() ? "" : impl + ": ") + e.what();
      }
    }
    if (done)
      ++report.expanded;
    else
      report.skipped.push_back(reasons);
  }
  return report;
}

} // namespace weir::operators
