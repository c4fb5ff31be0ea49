/// \file
/// Lowering's translation step (lowerer.h): scopes, maps, tasklets and
/// copies become loop IR.

#include "codegen/lower/lowerer.h"

#include "codegen/lower/loop_policy.h"
#include "ir/error.h"
#include "ir/print.h"
#include "ir/tasklet_value.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace weir::codegen::lowering {

using ir::NodeKind;
using ir::tasklet::ExprKind;

std::optional<std::string> unlowerable(const ir::Node &n) {
  if (n.kind == NodeKind::Library)
    return "library node '" + n.label + "' (" + n.library().op +
           ") must be expanded before it can be lowered";
  if (n.kind == NodeKind::Primitive && n.primitive().primitive != "gemm")
    return "primitive node '" + n.label + "' (" + n.primitive().primitive +
           ") cannot be lowered yet";
  return std::nullopt;
}

/// A constant f32 or f64 container of one finite element as a literal, so that
/// the backends see its value (pow(x, 2) then becomes x · x); null for any
/// other container.
static ValuePtr scalarConstant(const ir::Container &c) {
  if (!c.isConstant() ||
      (c.dtype != ir::DType::F32 && c.dtype != ir::DType::F64))
    return nullptr;
  if (c.constant->size() != ir::dtypeSize(c.dtype))
    return nullptr;
  double v;
  if (c.dtype == ir::DType::F32) {
    float f;
    std::memcpy(&f, c.constant->data(), sizeof f);
    v = f;
  } else {
    std::memcpy(&v, c.constant->data(), sizeof v);
  }
  return std::isfinite(v) ? floatLiteral(c.dtype, v) : nullptr;
}

std::string Lowerer::freshLoopVar(const std::string &want) {
  auto taken = [&](const std::string &n) {
    return enclosing_.count(n) || program_.findContainer(n) ||
           std::find(program_.symbols.begin(), program_.symbols.end(), n) !=
               program_.symbols.end();
  };
  std::string name = want;
  for (int k = 1; taken(name); ++k)
    name = want + "_" + std::to_string(k);
  return name;
}

const std::string &Lowerer::buffer(const std::string &container) const {
  const ir::Container &c = program_.container(container);
  return c.isView() ? c.viewOf : container;
}

void Lowerer::noteAccess(const std::string &container,
                         const std::vector<ir::Expr> &index, bool write) {
  if (const ir::Container &c = program_.container(container); c.isView()) {
    // A view's element is its target's element at the same row-major
    // position: the proof sees the target, indexed by that position (a
    // rank-1 index, so it never equates it with a full-rank access).
    noteAccess(c.viewOf, {flatten(container, index)}, write);
    return;
  }
  if (write)
    written_.insert(container);
  std::size_t from = 0;
  if (auto it = registerLogFloor_.find(container);
      it != registerLogFloor_.end())
    from = it->second;
  for (std::size_t i = from; i < logs_.size(); ++i)
    logs_[i]->accesses.push_back({container, index, write});
}

ir::Expr Lowerer::flatten(const std::string &container,
                          const std::vector<ir::Expr> &index) const {
  const ir::Container &c = program_.container(container);
  std::vector<ir::Expr> strides = c.strides.size() == c.shape.size()
                                      ? c.strides
                                      : ir::rowMajorStrides(c.shape);
  ir::Expr flat(0);
  for (std::size_t d = 0; d < index.size(); ++d)
    flat = flat + index[d] * strides[d];
  return flat;
}

GuardPtr Lowerer::guard(const std::string &container,
                        const std::vector<ir::Expr> &index,
                        const std::string &what) {
  const ir::Container &c = program_.container(container);
  if (index.size() != c.shape.size())
    throw Error(what + " indexes container '" + container + "' with " +
                std::to_string(index.size()) + " indices, but it has rank " +
                std::to_string(c.shape.size()));
  std::vector<ir::Expr> extent;
  bool proven = !opt_.checkAllAccesses;
  for (std::size_t d = 0; d < c.shape.size(); ++d) {
    extent.push_back(subst(c.shape[d]));
    proven = proven && bounds_.inBounds(index[d], extent.back());
  }
  if (proven)
    return nullptr;
  auto g = std::make_shared<BoundsGuard>();
  g->index = index;
  g->extent = std::move(extent);
  g->what = what + " of container '" + container + "' " +
            std::string(ir::dtypeName(c.dtype)) + "[";
  for (std::size_t d = 0; d < c.shape.size(); ++d)
    g->what += (d ? ", " : "") + c.shape[d].str();
  g->what += "]";
  return g;
}

GuardPtr Lowerer::flatGuard(const std::string &container,
                            const ir::Expr &index, const std::string &what) {
  const ir::Container &c = program_.container(container);
  ir::Expr count = subst(c.elementCount());
  if (!opt_.checkAllAccesses && bounds_.inBounds(index, count))
    return nullptr;
  auto g = std::make_shared<BoundsGuard>();
  g->index = {index};
  g->extent = {count};
  g->what = what + " of container '" + container + "' " +
            std::string(ir::dtypeName(c.dtype)) + "[" + count.str() +
            " elements]";
  return g;
}

std::vector<ir::Expr> Lowerer::pointIndex(const ir::Node &n, const ir::Edge &e,
                                          const std::string &conn) {
  const ir::Container &c = program_.container(e.memlet.container);
  if (e.memlet.subset.dims.size() != c.shape.size())
    throw Error(ir::describe(n) + ": edge " + std::to_string(e.id) + " (" +
                e.memlet.str() + ") has rank " +
                std::to_string(e.memlet.subset.dims.size()) +
                " but container '" + c.name + "' has rank " +
                std::to_string(c.shape.size()));
  std::vector<ir::Expr> index;
  for (const ir::Range &r : e.memlet.subset.dims) {
    if (subst(r.size()) != ir::Expr(1))
      throw Error(ir::describe(n) + ": connector '" + conn + "' moves " +
                  e.memlet.subset.volume().str() + " elements through edge " +
                  std::to_string(e.id) + " (" + e.memlet.str() +
                  "); a tasklet connector moves a single element");
    index.push_back(subst(r.begin));
  }
  return index;
}

ValuePtr Lowerer::lowerExpr(const ir::tasklet::Expr &e,
                            const ir::tasklet::SettledTypes &types,
                            NodeId tasklet) {
  ir::DType type = types.type.at(&e);
  auto operand = [&](std::size_t i) {
    return lowerExpr(*e.operands[i], types, tasklet);
  };
  switch (e.kind) {
  case ExprKind::FloatLit:
  case ExprKind::IntLit:
  case ExprKind::BoolLit: {
    ir::tasklet::Value v = ir::tasklet::literalValue(e, type);
    return ir::isFloat(type) ? floatLiteral(type, v.f)
                             : intLiteral(type, v.bits);
  }
  case ExprKind::Var:
    return local(type, localName(tasklet, e.name));
  case ExprKind::Unary:
    return unary(e.unaryOp, operand(0));
  case ExprKind::Binary:
    return binary(e.binaryOp, operand(0), operand(1));
  case ExprKind::Call: {
    std::vector<ValuePtr> args;
    for (std::size_t i = 0; i < e.operands.size(); ++i)
      args.push_back(operand(i));
    return call(e.func, type, std::move(args));
  }
  case ExprKind::Select:
    return select(operand(0), operand(1), operand(2));
  case ExprKind::Cast:
    return cast(type, operand(0));
  }
  throw Error("unknown tasklet expression");
}

/// `existing` combined with `incoming` under `wcr`, in `existing`'s type
/// (interp::combine).
static ValuePtr combine(ir::Wcr wcr, ValuePtr existing, ValuePtr incoming) {
  using ir::tasklet::BinaryOp;
  using ir::tasklet::Func;
  ir::DType t = existing->type;
  incoming = cast(t, std::move(incoming));
  if (t == ir::DType::Bool) {
    bool orLike = wcr == ir::Wcr::Sum || wcr == ir::Wcr::Max;
    return binary(orLike ? BinaryOp::Or : BinaryOp::And, existing, incoming);
  }
  switch (wcr) {
  case ir::Wcr::Sum:
    return binary(BinaryOp::Add, existing, incoming);
  case ir::Wcr::Prod:
    return binary(BinaryOp::Mul, existing, incoming);
  case ir::Wcr::Max:
    return call(Func::Max, t, {existing, incoming});
  case ir::Wcr::Min:
    return call(Func::Min, t, {existing, incoming});
  }
  return incoming;
}

void Lowerer::lowerCode(const ir::Node &n, const ir::tasklet::Code &code,
                        const ir::tasklet::ConnectorTypes &inTypes,
                        const ir::tasklet::ConnectorTypes &outTypes,
                        std::vector<StmtPtr> &out) {
  std::vector<ir::tasklet::TypeIssue> issues =
      ir::tasklet::typeCheck(code, inTypes, outTypes);
  if (!issues.empty())
    throw Error(ir::describe(n) +
                ": the code does not type check: " + issues[0].message);
  ir::tasklet::SettledTypes types =
      ir::tasklet::settleTypes(code, inTypes, outTypes);
  for (const ir::tasklet::Assignment &a : code.statements)
    out.push_back(
        assign(localName(n.id, a.target), lowerExpr(*a.value, types, n.id)));
}

void Lowerer::lowerTasklet(const ir::StateView &plan, const ir::Node &n,
                           std::vector<StmtPtr> &out) {
  taskletScope_[n.id] = currentScope_;
  static const std::vector<const ir::Edge *> kNone;
  auto inIt = plan.in.find(n.id);
  auto outIt = plan.out.find(n.id);
  const auto &ins = inIt == plan.in.end() ? kNone : inIt->second;
  const auto &outs = outIt == plan.out.end() ? kNone : outIt->second;

  ir::tasklet::ConnectorTypes inTypes, outTypes;
  for (const ir::Connector &c : n.inputs) {
    inTypes[c.name] = c.dtype;
    auto e = std::find_if(ins.begin(), ins.end(), [&](const ir::Edge *e) {
      return e->dstConn == c.name;
    });
    if (e == ins.end())
      throw Error(ir::describe(n) + ": input connector '" + c.name +
                  "' has no incoming edge");
    const ir::Edge &edge = **e;
    ValuePtr value;
    if (edge.memlet.empty()) {
      const ir::Node *src = plan.nodes.at(edge.src);
      if (src->kind != NodeKind::Tasklet)
        throw Error(ir::describe(n) + ": input connector '" + c.name +
                    "' is fed by an empty memlet that carries no value (only "
                    "a tasklet's output can be handed over directly)");
      auto scope = taskletScope_.find(src->id);
      if (scope == taskletScope_.end() || scope->second != currentScope_)
        throw Error(ir::describe(n) + ": input connector '" + c.name +
                    "' receives a value handed over from " +
                    ir::describe(*src) +
                    " in another map scope; lowering hands values over only "
                    "within one scope");
      const ir::Connector *from = src->findOutput(edge.srcConn);
      if (!from || from->dtype != c.dtype)
        throw Error(ir::describe(n) + ": input connector '" + c.name + "' is " +
                    std::string(ir::dtypeName(c.dtype)) +
                    " but the value handed over is not");
      value = local(c.dtype, localName(src->id, edge.srcConn));
    } else {
      const std::string &name = edge.memlet.container;
      std::vector<ir::Expr> index = pointIndex(n, edge, c.name);
      noteAccess(name, index, false);
      if (ValuePtr literal = scalarConstant(program_.container(name)))
        value = cast(c.dtype, literal);
      else
        value = cast(
            c.dtype,
            load(program_.container(name).dtype, buffer(name),
                 flatten(name, index),
                 guard(name, index,
                       ir::describe(n) + " input '" + c.name +
                           "' through edge " + std::to_string(edge.id) +
                           " (" + edge.memlet.str() + ")")));
    }
    out.push_back(assign(localName(n.id, c.name), value));
  }
  for (const ir::Connector &c : n.outputs)
    outTypes[c.name] = c.dtype;

  lowerCode(n, *n.tasklet().code, inTypes, outTypes, out);

  for (const ir::Connector &c : n.outputs)
    for (const ir::Edge *e : outs) {
      if (e->srcConn != c.name || e->memlet.empty())
        continue;
      const std::string &name = e->memlet.container;
      const ir::Container &target = program_.container(name);
      if (target.isConstant())
        throw Error(ir::describe(n) + " writes constant container '" + name +
                    "', which is read-only");
      std::vector<ir::Expr> index = pointIndex(n, *e, c.name);
      noteAccess(name, index, true);
      ir::Expr flat = flatten(name, index);
      GuardPtr checked =
          guard(name, index,
                ir::describe(n) + " output '" + c.name + "' through edge " +
                    std::to_string(e->id) + " (" + e->memlet.str() + ")");
      ValuePtr value =
          cast(target.dtype, local(c.dtype, localName(n.id, c.name)));
      if (e->memlet.wcr)
        value = combine(*e->memlet.wcr,
                        load(target.dtype, buffer(name), flat, checked), value);
      out.push_back(store(buffer(name), flat, value, checked));
    }
}

void Lowerer::lowerCopies(const ir::StateView &plan, const ir::Node &n,
                          std::vector<StmtPtr> &out) {
  for (const ir::AccessCopy &copy : ir::copiesInto(plan, n)) {
    const ir::Edge *e = copy.edge;
    const std::string &from = copy.from, &to = copy.to;
    const std::string &named = copy.named, &other = copy.other;
    if (from == to)
      throw Error("edge " + std::to_string(e->id) + " (" + e->memlet.str() +
                  ") copies container '" + from +
                  "' into itself; lowering does not support that");
    const ir::Container &namedC = program_.container(named);
    const ir::Container &otherC = program_.container(other);
    const ir::Container &dstC = program_.container(to);
    if (dstC.isConstant())
      throw Error("edge " + std::to_string(e->id) +
                  " writes constant container '" + to +
                  "', which is read-only");
    bool sameShape = namedC.shape == otherC.shape;
    const ir::Subset &subset = e->memlet.subset;
    if (subset.dims.size() != namedC.shape.size())
      throw Error("edge " + std::to_string(e->id) + " (" + e->memlet.str() +
                  ") has the wrong rank for container '" + named + "'");
    if (!sameShape && subst(subset.volume()) != subst(otherC.elementCount()))
      throw Error("edge " + std::to_string(e->id) + " (" + e->memlet.str() +
                  ") copies " + subset.volume().str() + " elements of '" +
                  named + "' but container '" + other +
                  "' has neither the same shape nor provably that many "
                  "elements");
    // One loop per dimension of the subset; the position inside the other
    // container is the same index (same shape) or the row-major count.
    std::vector<std::string> vars;
    std::vector<ir::Expr> namedIndex, otherIndex;
    ir::Expr count(0);
    int copyId = copyCounter_++;
    for (std::size_t d = 0; d < subset.dims.size(); ++d) {
      std::string v =
          freshLoopVar("c" + std::to_string(copyId) + "_" + std::to_string(d));
      enclosing_.insert(v);
      vars.push_back(v);
      ir::Expr x = ir::Expr::symbol(v);
      namedIndex.push_back(x);
      const ir::Range &r = subset.dims[d];
      bounds_.enter(v, {subst(r.begin), subst(r.end), subst(r.step)});
      count = count * subst(r.size()) +
              ir::floorDiv(x - subst(r.begin), subst(r.step));
    }
    if (sameShape) {
      otherIndex = namedIndex;
    } else {
      ir::Expr rest = count;
      std::vector<ir::Expr> strides = ir::rowMajorStrides(otherC.shape);
      for (std::size_t d = 0; d < otherC.shape.size(); ++d) {
        ir::Expr s = subst(strides[d]);
        otherIndex.push_back(ir::floorDiv(rest, s));
        rest = ir::mod(rest, s);
      }
    }
    bool namedIsSource = named == from;
    const std::vector<ir::Expr> &srcIndex =
        namedIsSource ? namedIndex : otherIndex;
    const std::vector<ir::Expr> &dstIndex =
        namedIsSource ? otherIndex : namedIndex;
    noteAccess(from, srcIndex, false);
    noteAccess(to, dstIndex, true);
    ir::Expr dstFlat = flatten(to, dstIndex);
    std::string copying = "edge " + std::to_string(e->id) + " (" +
                          e->memlet.str() + ") copying '" + from + "' to '" +
                          to + "'";
    GuardPtr dstGuard = guard(to, dstIndex, copying + ", writing");
    ValuePtr value = cast(
        dstC.dtype, load(program_.container(from).dtype, buffer(from),
                         flatten(from, srcIndex),
                         guard(from, srcIndex, copying + ", reading")));
    if (e->memlet.wcr)
      value = combine(*e->memlet.wcr,
                      load(dstC.dtype, buffer(to), dstFlat, dstGuard), value);
    StmtPtr body = store(buffer(to), dstFlat, value, dstGuard);
    for (std::size_t d = subset.dims.size(); d-- > 0;) {
      const ir::Range &r = subset.dims[d];
      body = forLoop(vars[d], subst(r.begin), subst(r.end), subst(r.step),
                     ForKind::Serial, {body}, "copy " + from + " -> " + to);
      enclosing_.erase(vars[d]);
      bounds_.leave(vars[d]);
    }
    out.push_back(body);
  }
}

void Lowerer::lowerMap(const ir::StateView &plan, const ir::Node &entry,
                       std::vector<StmtPtr> &out) {
  const ir::MapData &m = entry.map();
  Subst saved = subst_;
  std::vector<std::string> vars;
  std::vector<ir::Range> ranges;
  for (std::size_t d = 0; d < m.params.size(); ++d) {
    const ir::Range &r = m.ranges[d];
    ranges.push_back({subst(r.begin), subst(r.end), subst(r.step)});
    std::string v = freshLoopVar(m.params[d]);
    vars.push_back(v);
    enclosing_.insert(v);
    bounds_.enter(v, ranges.back());
    subst_[m.params[d]] = ir::Expr::symbol(v);
  }
  MapLoops loops;
  loops.schedule = m.schedule;
  loops.parallelCandidate =
      parallelDepth_ == 0 && (m.schedule == ir::Schedule::CpuParallel ||
                              (m.schedule == ir::Schedule::Sequential &&
                               opt_.parallelizeSequentialMaps));
  loops.minParallelIterations = opt_.minParallelIterations;
  bool parallelCandidate = loops.parallelCandidate;

  // Names that do not vary inside this map's first loop: the symbols and
  // the enclosing loops' variables.
  std::set<std::string, std::less<>> outer(program_.symbols.begin(),
                                           program_.symbols.end());
  for (const std::string &v : enclosing_)
    if (std::find(vars.begin(), vars.end(), v) == vars.end())
      outer.insert(v);

  // Inner maps of a candidate stay serial: parallel regions do not nest,
  // and the proof for this map can only run once its body is lowered (if it
  // fails, the whole nest stays serial).
  AccessLog log;
  logs_.push_back(&log);
  NodeId savedScope = currentScope_;
  currentScope_ = entry.id;
  parallelDepth_ += parallelCandidate;
  std::vector<std::string> registers;
  for (const auto &[name, scope] : registerScope_)
    if (scope == entry.id) {
      registers.push_back(name);
      registerLogFloor_[name] = logs_.size();
    }
  std::vector<StmtPtr> body = lowerScope(plan, entry.id);
  // Register storage: a fresh (zeroed) block per iteration, inside the
  // innermost loop, so each iteration's copy is private.
  for (const std::string &name : registers) {
    const ir::Container &c = program_.container(name);
    body = {allocate(name, c.dtype, subst(c.elementCount()), std::move(body))};
    registerLogFloor_.erase(name);
  }
  parallelDepth_ -= parallelCandidate;
  currentScope_ = savedScope;
  logs_.pop_back();

  loops.vars = vars;
  loops.ranges = ranges;
  loops.outer = std::move(outer);
  std::vector<ForKind> kinds = chooseLoopKinds(loops, log);
  for (std::size_t d = vars.size(); d-- > 0;) {
    StmtPtr loop =
        forLoop(vars[d], ranges[d].begin, ranges[d].end, ranges[d].step,
                kinds[d], std::move(body), entry.label);
    body = {loop};
    enclosing_.erase(vars[d]);
    bounds_.leave(vars[d]);
  }
  subst_ = saved;
  out.insert(out.end(), body.begin(), body.end());
}

void Lowerer::lowerNode(const ir::StateView &plan, NodeId id,
                        std::vector<StmtPtr> &out) {
  const ir::Node &n = *plan.nodes.at(id);
  switch (n.kind) {
  case NodeKind::Access:
    return lowerCopies(plan, n, out);
  case NodeKind::Tasklet:
    return lowerTasklet(plan, n, out);
  case NodeKind::MapEntry:
    return lowerMap(plan, n, out);
  case NodeKind::MapExit:
    return;
  case NodeKind::Library:
  case NodeKind::Primitive:
    if (auto why = unlowerable(n))
      throw Error(*why);
    return lowerGemm(plan, n, out);
  }
}

std::vector<StmtPtr> Lowerer::lowerScope(const ir::StateView &plan,
                                         NodeId scope) {
  std::vector<StmtPtr> out;
  for (NodeId id : plan.order.at(scope))
    lowerNode(plan, id, out);
  return out;
}

std::vector<StmtPtr> Lowerer::translateStates() {
  std::vector<StmtPtr> states;
  for (const ir::State &s : program_.states) {
    ir::StateView plan = ir::viewState(s);
    states.push_back(block(lowerScope(plan, 0)));
  }
  return states;
}

} // namespace weir::codegen::lowering
