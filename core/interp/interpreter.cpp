/// \file
/// The reference interpreter: setup (validation, symbols, inputs,
/// allocation) and execution (states, map scopes, tasklets, copies).

#include "core/interp/interpreter.h"

#include "core/interp/bind_inputs.h"
#include "core/interp/tasklet_eval.h"
#include "ir/error.h"
#include "ir/primitives.h"
#include "ir/print.h"
#include "ir/state_view.h"
#include "ir/validate.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <span>
#include <utility>

namespace weir::interp {
namespace {

using ir::NodeId;
using ir::NodeKind;

/// Evaluates `e`, prefixing a failure with `what()`, which is only built
/// then: this runs for every memlet in every map iteration.
template <typename What>
std::int64_t evaluate(const ir::Expr &e, const ir::Bindings &b, What what) {
  try {
    return e.evaluate(b);
  } catch (const Error &err) {
    throw Error(what() + ": " + err.what());
  }
}

/// A memlet subset evaluated to integers and checked against the extents.
struct Box {
  std::vector<std::int64_t> begin, step, size;
  std::int64_t volume = 1;
};

/// Calls `f(flatIndex)` for every element of `box`, in row-major order.
template <typename F>
void forEachElement(const Box &box, const std::vector<std::int64_t> &strides,
                    F f) {
  if (box.volume == 0)
    return;
  std::size_t rank = box.size.size();
  std::vector<std::int64_t> k(rank, 0);
  for (;;) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < rank; ++d)
      flat += (box.begin[d] + k[d] * box.step[d]) * strides[d];
    f(flat);
    std::size_t d = rank;
    while (d > 0 && ++k[d - 1] == box.size[d - 1])
      k[--d] = 0;
    if (d == 0)
      return;
  }
}

} // namespace

struct Interpreter::Impl {
  Impl(const ir::Program &p, TensorMap inputs, InterpretOptions options);

  // Setup.
  void checkRunnable() const;
  void bindSymbols(const TensorMap &inputs, ir::Bindings given);
  std::vector<std::int64_t> shapeOf(const ir::Container &c) const;
  void allocate(TensorMap inputs);
  void skipFinished();

  // Execution.
  void runNode(const ir::StateView &plan, NodeId id, const ir::Bindings &b);
  void runMap(const ir::StateView &plan, const ir::Node &entry,
              const ir::Bindings &outer);
  void iterate(const ir::StateView &plan, const ir::Node &entry,
               ir::Bindings &b, std::size_t dim);
  void runTasklet(const ir::StateView &plan, const ir::Node &n,
                  const ir::Bindings &b);
  void runCopies(const ir::StateView &plan, const ir::Node &n,
                 const ir::Bindings &b);
  void runGemm(const ir::StateView &plan, const ir::Node &n,
               const ir::Bindings &b);
  /// A gemm's epilogue (ir/primitives.h) as a tasklet keyed by the gemm.
  void compileEpilogue(const ir::Node &n);

  // Data access.
  runtime::Tensor &tensor(const std::string &name);
  runtime::Tensor &writable(const std::string &name,
                            const std::function<std::string()> &who);
  /// `who` names the node reading or writing, for messages.
  Box evalSubset(const ir::Edge &e, const runtime::Tensor &t,
                 const ir::Bindings &b,
                 const std::function<std::string()> &who) const;
  std::string where(const ir::Bindings &b) const;
  std::string edgeText(const ir::Edge &e) const {
    return "edge " + std::to_string(e.id) + " (" + e.memlet.str() + ")";
  }

  ir::Program program;
  ir::Bindings symbols;
  TensorMap values;
  std::vector<ir::StateView> plans;
  std::map<NodeId, CompiledTasklet> tasklets;
  /// Values handed from one tasklet to another over an empty memlet, by
  /// producing (node, connector).
  std::map<std::pair<NodeId, std::string>, Value> handed;
  /// Parameters of the maps being run, innermost last, for messages.
  std::vector<std::string> activeParams;
  std::size_t state = 0, position = 0;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// Map bodies run since the deadline was last looked at.
  std::uint32_t sinceDeadlineCheck = 0;
};

Interpreter::Impl::Impl(const ir::Program &p, TensorMap inputs,
                        InterpretOptions options)
    : program(p), deadline(options.deadline) {
  ir::requireRunnable(program);
  checkRunnable();
  bindSymbols(inputs, std::move(options.symbols));
  ir::checkRunLimits(program, symbols, options.limits);
  allocate(std::move(inputs));
  for (const ir::State &s : program.states)
    plans.push_back(ir::viewState(s));
  skipFinished();
}

void Interpreter::Impl::checkRunnable() const {
  for (const ir::State &s : program.states)
    for (const ir::Node &n : s.nodes) {
      if (n.kind == NodeKind::Library)
        throw Error("library node '" + n.label + "' (" + n.library().op +
                    ") must be expanded before it can be interpreted");
      if (n.kind == NodeKind::Primitive && n.primitive().primitive != "gemm")
        throw Error("primitive node '" + n.label + "' (" +
                    n.primitive().primitive +
                    ") cannot be interpreted; the reference interpreter runs "
                    "maps and tasklets only");
    }
}

void Interpreter::Impl::bindSymbols(const TensorMap &inputs,
                                    ir::Bindings given) {
  symbols = bindInputs(program, inputs, std::move(given));
}

std::vector<std::int64_t>
Interpreter::Impl::shapeOf(const ir::Container &c) const {
  return containerShape(c, symbols);
}

void Interpreter::Impl::allocate(TensorMap inputs) {
  for (const auto &[name, c] : program.containers) {
    if (c.isView())
      continue; // below, once its target exists
    bool isInput = std::find(program.inputs.begin(), program.inputs.end(),
                             name) != program.inputs.end();
    // Inputs are copied: the program may write them, the caller's must not
    // change.
    if (isInput)
      values.emplace(name, inputs.find(name)->second.clone());
    else if (c.isConstant())
      try {
        values.emplace(
            name, runtime::Tensor::fromBlob(c.dtype, shapeOf(c), c.constant));
      } catch (const Error &err) {
        throw Error("constant container '" + name + "': " + err.what());
      }
    else
      values.emplace(name, runtime::Tensor(c.dtype, shapeOf(c)));
  }
  // A view shares its target's storage under its own shape.
  for (const auto &[name, c] : program.containers)
    if (c.isView())
      values.emplace(name, values.at(c.viewOf).reshaped(shapeOf(c)));
  for (const ir::State &s : program.states)
    for (const ir::Node &n : s.nodes)
      try {
        if (n.kind == NodeKind::Tasklet)
          tasklets.emplace(
              n.id, CompiledTasklet(*n.tasklet().code, n.inputs, n.outputs));
        else if (n.kind == NodeKind::Primitive &&
                 n.primitive().primitive == "gemm")
          compileEpilogue(n);
      } catch (const Error &err) {
        throw Error(ir::describe(n) + ": " + err.what());
      }
}

void Interpreter::Impl::compileEpilogue(const ir::Node &n) {
  ir::GemmCall call = ir::readGemm(n.primitive());
  auto code = ir::gemmEpilogue(call, n.inputs);
  if (!code)
    return;
  // Inputs: acc, then the operands in the call's order (runGemm's order).
  std::vector<ir::Connector> inputs{{"acc", ir::DType::F32}};
  for (const ir::GemmOperand &o : call.operands)
    inputs.push_back(*n.findInput(o.connector));
  tasklets.emplace(n.id,
                   CompiledTasklet(*code, inputs, {{"C", ir::DType::F32}}));
}

void Interpreter::Impl::skipFinished() {
  while (state < plans.size() && position >= plans[state].order.at(0).size()) {
    ++state;
    position = 0;
  }
}

runtime::Tensor &Interpreter::Impl::tensor(const std::string &name) {
  auto it = values.find(name);
  if (it == values.end())
    throw Error("program '" + program.name + "' has no container '" + name +
                "'");
  return it->second;
}

runtime::Tensor &
Interpreter::Impl::writable(const std::string &name,
                            const std::function<std::string()> &who) {
  runtime::Tensor &t = tensor(name);
  if (t.readOnly())
    throw Error(who() + " writes constant container '" + name +
                "', which is read-only");
  return t;
}

std::string Interpreter::Impl::where(const ir::Bindings &b) const {
  std::string s;
  for (const std::string &p : activeParams) {
    auto it = b.find(p);
    if (it != b.end())
      s += (s.empty() ? " at " : ", ") + p + " = " + std::to_string(it->second);
  }
  return s;
}

Box Interpreter::Impl::evalSubset(
    const ir::Edge &e, const runtime::Tensor &t, const ir::Bindings &b,
    const std::function<std::string()> &who) const {
  const ir::Subset &subset = e.memlet.subset;
  if (subset.dims.size() != t.rank())
    throw Error(edgeText(e) + " has rank " +
                std::to_string(subset.dims.size()) + " but container '" +
                e.memlet.container + "' is " + t.describe());
  Box box;
  for (std::size_t d = 0; d < subset.dims.size(); ++d) {
    const ir::Range &r = subset.dims[d];
    auto what = [&] { return who() + " " + edgeText(e) + where(b); };
    std::int64_t begin = evaluate(r.begin, b, what);
    std::int64_t end = evaluate(r.end, b, what);
    std::int64_t step = evaluate(r.step, b, what);
    if (step <= 0)
      throw Error(what() + ": step " + std::to_string(step) + " in dimension " +
                  std::to_string(d) + " is not positive");
    std::int64_t extent = t.shape()[d];
    std::int64_t size = 0;
    if (end > begin) {
      if (begin < 0 || begin >= extent || end > extent)
        throw Error(what() + " is out of bounds in dimension " +
                    std::to_string(d) + ": [" + std::to_string(begin) + ", " +
                    std::to_string(end) + ") outside container '" +
                    e.memlet.container + "' " + t.describe());
      size = (end - begin - 1) / step + 1;
    }
    box.begin.push_back(begin);
    box.step.push_back(step);
    box.size.push_back(size);
    box.volume *= size;
  }
  return box;
}

void Interpreter::Impl::runNode(const ir::StateView &plan, NodeId id,
                                const ir::Bindings &b) {
  const ir::Node &n = *plan.nodes.at(id);
  switch (n.kind) {
  case NodeKind::Access:
    return runCopies(plan, n, b);
  case NodeKind::Tasklet:
    return runTasklet(plan, n, b);
  case NodeKind::MapEntry:
    return runMap(plan, n, b);
  case NodeKind::MapExit:
    return;
  case NodeKind::Primitive:
    if (n.primitive().primitive == "gemm")
      return runGemm(plan, n, b);
    break;
  case NodeKind::Library:
    break;
  }
  checkRunnable(); // throws the message for the node's kind
}

void Interpreter::Impl::runMap(const ir::StateView &plan, const ir::Node &entry,
                               const ir::Bindings &outer) {
  ir::Bindings b = outer;
  std::size_t depth = activeParams.size();
  for (const std::string &p : entry.map().params)
    activeParams.push_back(p);
  iterate(plan, entry, b, 0);
  activeParams.resize(depth);
}

void Interpreter::Impl::iterate(const ir::StateView &plan,
                                const ir::Node &entry, ir::Bindings &b,
                                std::size_t dim) {
  const ir::MapData &m = entry.map();
  if (dim == m.params.size()) {
    if (deadline && ++sinceDeadlineCheck == 4096) {
      sinceDeadlineCheck = 0;
      if (std::chrono::steady_clock::now() > *deadline)
        throw DeadlinePassed("the interpreter stopped at its time limit, in " +
                             ir::describe(entry) + where(b));
    }
    for (NodeId id : plan.order.at(entry.id))
      runNode(plan, id, b);
    return;
  }
  const ir::Range &r = m.ranges[dim];
  auto what = [&] {
    return ir::describe(entry) + " range " + r.str() + " of '" + m.params[dim] +
           "'" + where(b);
  };
  std::int64_t begin = evaluate(r.begin, b, what);
  std::int64_t end = evaluate(r.end, b, what);
  std::int64_t step = evaluate(r.step, b, what);
  if (step <= 0)
    throw Error(what() + ": step " + std::to_string(step) + " is not positive");
  if (end <= begin)
    return;
  // Counted in unsigned arithmetic so that ranges near the int64 limits
  // cannot overflow.
  auto span =
      static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin);
  auto ustep = static_cast<std::uint64_t>(step);
  std::uint64_t count = span / ustep + (span % ustep != 0);
  for (std::uint64_t k = 0; k < count; ++k) {
    b[m.params[dim]] = static_cast<std::int64_t>(
        static_cast<std::uint64_t>(begin) + k * ustep);
    iterate(plan, entry, b, dim + 1);
  }
}

void Interpreter::Impl::runTasklet(const ir::StateView &plan, const ir::Node &n,
                                   const ir::Bindings &b) {
  static const std::vector<const ir::Edge *> kNone;
  auto inIt = plan.in.find(n.id);
  auto outIt = plan.out.find(n.id);
  const auto &ins = inIt == plan.in.end() ? kNone : inIt->second;
  const auto &outs = outIt == plan.out.end() ? kNone : outIt->second;

  std::vector<Value> args(n.inputs.size());
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const ir::Connector &c = n.inputs[i];
    auto e = std::find_if(ins.begin(), ins.end(), [&](const ir::Edge *e) {
      return e->dstConn == c.name;
    });
    if (e == ins.end())
      throw Error(ir::describe(n) + ": input connector '" + c.name +
                  "' has no incoming edge");
    const ir::Edge &edge = **e;
    if (edge.memlet.empty()) {
      auto h = handed.find({edge.src, edge.srcConn});
      if (h == handed.end())
        throw Error(ir::describe(n) + ": input connector '" + c.name +
                    "' is fed by an empty memlet that carries no value (only "
                    "a tasklet's output can be handed over directly)");
      if (h->second.dtype != c.dtype)
        throw Error(ir::describe(n) + ": input connector '" + c.name + "' is " +
                    std::string(ir::dtypeName(c.dtype)) + " but receives a " +
                    std::string(ir::dtypeName(h->second.dtype)) + " value");
      args[i] = h->second;
      continue;
    }
    const runtime::Tensor &t = tensor(edge.memlet.container);
    Box box = evalSubset(edge, t, b, [&] {
      return ir::describe(n) + " input '" + c.name + "' through";
    });
    if (box.volume != 1)
      throw Error(ir::describe(n) + ": input connector '" + c.name +
                  "' reads " + std::to_string(box.volume) +
                  " elements through " + edgeText(edge) + where(b) +
                  "; only single elements can feed a tasklet connector "
                  "(wider memlets into tasklets are not supported)");
    std::int64_t flat = 0;
    std::vector<std::int64_t> strides = t.strides();
    for (std::size_t d = 0; d < box.begin.size(); ++d)
      flat += box.begin[d] * strides[d];
    args[i] = loadElement(t, flat);
  }

  std::vector<Value> results(n.outputs.size());
  try {
    tasklets.at(n.id).run(args, results);
  } catch (const Error &err) {
    throw Error(ir::describe(n) + where(b) + ": " + err.what());
  }

  for (std::size_t j = 0; j < n.outputs.size(); ++j) {
    const ir::Connector &c = n.outputs[j];
    for (const ir::Edge *e : outs) {
      if (e->srcConn != c.name)
        continue;
      if (e->memlet.empty()) {
        if (plan.nodes.at(e->dst)->kind == NodeKind::Tasklet)
          handed[{n.id, c.name}] = results[j];
        continue;
      }
      runtime::Tensor &t = writable(e->memlet.container, [&] {
        return ir::describe(n) + " through " + edgeText(*e);
      });
      Box box = evalSubset(*e, t, b, [&] {
        return ir::describe(n) + " output '" + c.name + "' through";
      });
      if (box.volume != 1)
        throw Error(ir::describe(n) + ": output connector '" + c.name +
                    "' writes " + std::to_string(box.volume) +
                    " elements through " + edgeText(*e) + where(b) +
                    "; a tasklet connector produces a single element "
                    "(wider memlets out of tasklets are not supported)");
      std::int64_t flat = 0;
      std::vector<std::int64_t> strides = t.strides();
      for (std::size_t d = 0; d < box.begin.size(); ++d)
        flat += box.begin[d] * strides[d];
      Value v = results[j];
      if (e->memlet.wcr)
        v = combine(*e->memlet.wcr, loadElement(t, flat), v);
      storeElement(t, flat, v);
    }
  }
}

void Interpreter::Impl::runCopies(const ir::StateView &plan, const ir::Node &n,
                                  const ir::Bindings &b) {
  for (const ir::AccessCopy &copy : ir::copiesInto(plan, n)) {
    const ir::Edge *e = copy.edge;
    const std::string &from = copy.from, &to = copy.to;
    const std::string &named = copy.named, &other = copy.other;
    runtime::Tensor &dst = writable(to, [&] { return edgeText(*e); });
    const runtime::Tensor &namedT = tensor(named);
    const runtime::Tensor &otherT = tensor(other);
    Box box = evalSubset(*e, namedT, b, [&] {
      return "the copy from '" + from + "' to '" + to + "' through";
    });
    bool sameShape = namedT.shape() == otherT.shape();
    if (!sameShape && otherT.elementCount() != box.volume)
      throw Error(edgeText(*e) + where(b) + " copies " +
                  std::to_string(box.volume) + " elements of '" + named +
                  "' but container '" + other + "' " + otherT.describe() +
                  " has neither the same shape nor that many elements");
    // Index pairs in the named container and in the other one; the values
    // are all read before any is written, in case the two overlap.
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    std::int64_t k = 0;
    forEachElement(box, namedT.strides(), [&](std::int64_t flat) {
      pairs.push_back({flat, sameShape ? flat : k});
      ++k;
    });
    bool namedIsSource = named == from;
    const runtime::Tensor &srcT = tensor(from);
    std::vector<Value> moved;
    moved.reserve(pairs.size());
    for (const auto &[inNamed, inOther] : pairs)
      moved.push_back(loadElement(srcT, namedIsSource ? inNamed : inOther));
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      std::int64_t at = namedIsSource ? pairs[i].second : pairs[i].first;
      Value v = moved[i];
      if (e->memlet.wcr)
        v = combine(*e->memlet.wcr, loadElement(dst, at), v);
      storeElement(dst, at, v);
    }
  }
}

void Interpreter::Impl::runGemm(const ir::StateView &plan, const ir::Node &n,
                                const ir::Bindings &b) {
  ir::GemmCall call;
  try {
    call = ir::readGemm(n.primitive());
  } catch (const Error &err) {
    throw Error(ir::describe(n) + ": " + err.what());
  }
  auto value = [&](const ir::Expr &e, const char *what) {
    return evaluate(e, b, [&] { return ir::describe(n) + " " + what; });
  };
  std::int64_t m = value(call.m, "M"), nn = value(call.n, "N"),
               k = value(call.k, "K");
  static const std::vector<const ir::Edge *> kNone;
  auto edges =
      [&](const auto &byNode) -> const std::vector<const ir::Edge *> & {
    auto it = byNode.find(n.id);
    return it == byNode.end() ? kNone : it->second;
  };
  // A matrix operand: its tensor and first element, checked to hold
  // `rows` rows of `cols` elements `ld` apart.
  struct Operand {
    runtime::Tensor *t = nullptr;
    std::int64_t base = 0, ld = 0;
  };
  auto operand = [&](const std::vector<const ir::Edge *> &list, bool output,
                     const std::string &conn, std::int64_t rows,
                     std::int64_t cols, const ir::Expr &ldExpr) {
    auto e = std::find_if(list.begin(), list.end(), [&](const ir::Edge *e) {
      return (output ? e->srcConn : e->dstConn) == conn && !e->memlet.empty();
    });
    if (e == list.end())
      throw Error(ir::describe(n) + ": connector '" + conn + "' has no edge");
    const std::string &name = (*e)->memlet.container;
    runtime::Tensor &t =
        output ? writable(name, [&] { return ir::describe(n); }) : tensor(name);
    if (t.dtype() != ir::DType::F32)
      throw Error(ir::describe(n) + ": gemm operand '" + name + "' is " +
                  t.describe() + "; gemm takes f32");
    Box box = evalSubset(
        **e, t, b, [&] { return ir::describe(n) + " '" + conn + "' through"; });
    std::vector<std::int64_t> strides = t.strides();
    Operand o{&t, 0, value(ldExpr, "leading dimension")};
    for (std::size_t d = 0; d < box.begin.size(); ++d)
      o.base += box.begin[d] * strides[d];
    std::int64_t last = o.base + (rows - 1) * o.ld + cols - 1;
    if (rows > 0 && cols > 0 && (o.ld < cols || last >= t.elementCount()))
      throw Error(ir::describe(n) + ": the " + std::to_string(rows) + "x" +
                  std::to_string(cols) + " matrix '" + conn +
                  "' (leading "
                  "dimension " +
                  std::to_string(o.ld) + ") does not fit in '" + name + "' " +
                  t.describe());
    return o;
  };
  Operand a = call.transA ? operand(edges(plan.in), false, "A", k, m, call.lda)
                          : operand(edges(plan.in), false, "A", m, k, call.lda);
  Operand bb = call.transB
                   ? operand(edges(plan.in), false, "B", nn, k, call.ldb)
                   : operand(edges(plan.in), false, "B", k, nn, call.ldb);
  Operand c = operand(edges(plan.out), true, "C", m, nn, call.ldc);
  const float *pa = a.t->as<float>(), *pb = bb.t->as<float>();
  float *pc = c.t->mutableAs<float>();
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < nn; ++j) {
      double acc = 0;
      for (std::int64_t q = 0; q < k; ++q) {
        float x =
            call.transA ? pa[a.base + q * a.ld + i] : pa[a.base + i * a.ld + q];
        float y = call.transB ? pb[bb.base + j * bb.ld + q]
                              : pb[bb.base + q * bb.ld + j];
        acc += double(x) * double(y);
      }
      float &out = pc[c.base + i * c.ld + j];
      double prior = call.beta != 0 ? call.beta * double(out) : 0.0;
      out = static_cast<float>(call.alpha * acc + prior);
    }
  if (call.epilogue.empty())
    return;

  // The epilogue, element by element, over the finished product.
  struct Input {
    const runtime::Tensor *t;
    std::int64_t base, row, col;
    ir::DType dtype;
  };
  std::vector<Input> inputs;
  for (const ir::GemmOperand &o : call.operands) {
    std::int64_t row = value(o.row, "operand row stride");
    std::int64_t col = value(o.col, "operand column stride");
    Operand x = operand(edges(plan.in), false, o.connector, 1, 1, ir::Expr(1));
    std::int64_t last = x.base + (m - 1) * row + (nn - 1) * col;
    if (row < 0 || col < 0 || (m > 0 && nn > 0 && last >= x.t->elementCount()))
      throw Error(ir::describe(n) + ": epilogue operand '" + o.connector +
                  "' (strides " + std::to_string(row) + ", " +
                  std::to_string(col) + ") reaches past " + x.t->describe());
    inputs.push_back({x.t, x.base, row, col, n.findInput(o.connector)->dtype});
  }
  const CompiledTasklet &epilogue = tasklets.at(n.id);
  std::vector<Value> args(inputs.size() + 1), result(1);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < nn; ++j) {
      float &out = pc[c.base + i * c.ld + j];
      args[0] = Value::ofFloat(ir::DType::F32, out);
      for (std::size_t q = 0; q < inputs.size(); ++q) {
        const Input &x = inputs[q];
        args[q + 1] =
            convert(loadElement(*x.t, x.base + i * x.row + j * x.col), x.dtype);
      }
      try {
        epilogue.run(args, result);
      } catch (const Error &err) {
        throw Error(ir::describe(n) + " epilogue at (" + std::to_string(i) +
                    ", " + std::to_string(j) + ")" + where(b) + ": " +
                    err.what());
      }
      out = static_cast<float>(result[0].f);
    }
}

Interpreter::Interpreter(const ir::Program &program, TensorMap inputs,
                         InterpretOptions options)
    : impl_(std::make_unique<Impl>(program, std::move(inputs),
                                   std::move(options))) {}
Interpreter::~Interpreter() = default;
Interpreter::Interpreter(Interpreter &&) noexcept = default;
Interpreter &Interpreter::operator=(Interpreter &&) noexcept = default;

bool Interpreter::done() const { return impl_->state >= impl_->plans.size(); }

NodeId Interpreter::nextNode() const {
  if (done())
    return 0;
  return impl_->plans[impl_->state].order.at(0)[impl_->position];
}

std::size_t Interpreter::currentState() const { return impl_->state; }

void Interpreter::step() {
  if (done())
    throw Error("program '" + impl_->program.name +
                "' has finished; there is no step left to run");
  const ir::StateView &plan = impl_->plans[impl_->state];
  impl_->activeParams.clear();
  impl_->runNode(plan, nextNode(), impl_->symbols);
  ++impl_->position;
  impl_->skipFinished();
}

void Interpreter::run() {
  while (!done())
    step();
}

const runtime::Tensor &Interpreter::value(std::string_view container) const {
  return impl_->tensor(std::string(container));
}

TensorMap Interpreter::outputs() const {
  TensorMap out;
  for (const std::string &name : impl_->program.outputs)
    out.emplace(name, impl_->tensor(name).clone());
  return out;
}

const ir::Bindings &Interpreter::symbols() const { return impl_->symbols; }

TensorMap interpret(const ir::Program &program, const TensorMap &inputs,
                    const InterpretOptions &options) {
  Interpreter interpreter(program, inputs, options);
  interpreter.run();
  return interpreter.outputs();
}

} // namespace weir::interp
