/// \file
/// Dataflow program -> loop IR (see lower.h for the semantics).

#include "codegen/lower/lower.h"

#include "codegen/lower/first_touch.h"
#include "codegen/lower/parallel_proof.h"
#include "core/interp/state_plan.h"
#include "core/interp/tasklet_eval.h"
#include "ir/error.h"
#include "ir/primitives.h"
#include "ir/scope.h"
#include "ir/tasklet_types.h"
#include "ir/validate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace weir::codegen {
namespace {

using ir::NodeId;
using ir::NodeKind;
using ir::tasklet::ExprKind;
using Subst = std::map<std::string, ir::Expr, std::less<>>;

/// The fewest library calls a cpu-parallel map must make to run them side
/// by side rather than one after another (each then parallel itself).
constexpr std::int64_t kMinLibraryBatch = 8;

/// A constant f32 or f64 container of one finite element as a literal, so that
/// the backends see its value (pow(x, 2) then becomes x · x); null for any
/// other container.
ValuePtr scalarConstant(const ir::Container &c) {
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

std::string describe(const ir::Node &n) {
  return std::string(ir::nodeKindName(n.kind)) + " '" + n.label + "' (id " +
         std::to_string(n.id) + ")";
}

class Lowerer {
public:
  Lowerer(const ir::Program &p, const LowerOptions &o) : program_(p), opt_(o) {}

  LoopFunction run();

private:
  std::vector<StmtPtr> lowerScope(const interp::StatePlan &plan, NodeId scope);
  void lowerNode(const interp::StatePlan &plan, NodeId id,
                 std::vector<StmtPtr> &out);
  void lowerMap(const interp::StatePlan &plan, const ir::Node &entry,
                std::vector<StmtPtr> &out);
  void lowerTasklet(const interp::StatePlan &plan, const ir::Node &n,
                    std::vector<StmtPtr> &out);
  /// Assignments computing `code` in locals named after node `n`
  /// (localName); its inputs must already be assigned there.
  void lowerCode(const ir::Node &n, const ir::tasklet::Code &code,
                 const ir::tasklet::ConnectorTypes &inTypes,
                 const ir::tasklet::ConnectorTypes &outTypes,
                 std::vector<StmtPtr> &out);
  void lowerCopies(const interp::StatePlan &plan, const ir::Node &n,
                   std::vector<StmtPtr> &out);
  void lowerGemm(const interp::StatePlan &plan, const ir::Node &n,
                 std::vector<StmtPtr> &out);
  /// The loop nest that applies a gemm's epilogue to C (`c`: C's buffer
  /// offset) once the product is complete.
  void lowerEpilogue(const interp::StatePlan &plan, const ir::Node &n,
                     const ir::GemmCall &call, const std::string &cName,
                     const ir::Expr &cOffset, std::vector<StmtPtr> &out);

  ValuePtr lowerExpr(const ir::tasklet::Expr &e,
                     const ir::tasklet::SettledTypes &types, NodeId tasklet);

  /// Point indices of a tasklet memlet, substituted; throws when the memlet
  /// moves more than one element.
  std::vector<ir::Expr> pointIndex(const ir::Node &n, const ir::Edge &e,
                                   const std::string &conn);
  ir::Expr flatten(const std::string &container,
                   const std::vector<ir::Expr> &index) const;
  ir::Expr subst(const ir::Expr &e) const { return e.substitute(subst_); }
  /// A loop variable name unused by enclosing loops, symbols and containers.
  std::string freshLoopVar(const std::string &want);
  /// The buffer holding a container's elements: its own, or a view's
  /// target's.
  const std::string &buffer(const std::string &container) const;
  void noteAccess(const std::string &container,
                  const std::vector<ir::Expr> &index, bool write);
  static std::string localName(NodeId tasklet, const std::string &name) {
    return "t" + std::to_string(tasklet) + "_" + name;
  }

  const ir::Program &program_;
  const LowerOptions &opt_;
  Subst subst_;
  std::set<std::string, std::less<>> enclosing_; ///< loop vars in scope
  std::set<std::string, std::less<>> written_;
  /// Accesses of the map scopes being lowered, innermost last.
  std::vector<AccessLog *> logs_;
  /// How many enclosing maps may become parallel loops.
  int parallelDepth_ = 0;
  /// The map scope each tasklet was lowered in (0 = top level).
  std::map<NodeId, NodeId> taskletScope_;
  NodeId currentScope_ = 0;
  int copyCounter_ = 0;
  /// Register-storage containers whose access nodes all sit directly in
  /// one map scope -> that scope's entry: allocated per iteration there.
  std::map<std::string, NodeId, std::less<>> registerScope_;
  /// While such a scope is lowered: the first access log that may see the
  /// container (logs of maps inside the scope; the scope's own iterations
  /// each have their own copy, so its proof and outer ones never see it).
  std::map<std::string, std::size_t, std::less<>> registerLogFloor_;
};

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

std::vector<ir::Expr> Lowerer::pointIndex(const ir::Node &n, const ir::Edge &e,
                                          const std::string &conn) {
  const ir::Container &c = program_.container(e.memlet.container);
  if (e.memlet.subset.dims.size() != c.shape.size())
    throw Error(describe(n) + ": edge " + std::to_string(e.id) + " (" +
                e.memlet.str() + ") has rank " +
                std::to_string(e.memlet.subset.dims.size()) +
                " but container '" + c.name + "' has rank " +
                std::to_string(c.shape.size()));
  std::vector<ir::Expr> index;
  for (const ir::Range &r : e.memlet.subset.dims) {
    if (subst(r.size()) != ir::Expr(1))
      throw Error(describe(n) + ": connector '" + conn + "' moves " +
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
    interp::Value v = interp::literalValue(e, type);
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
ValuePtr combine(ir::Wcr wcr, ValuePtr existing, ValuePtr incoming) {
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
    throw Error(describe(n) +
                ": the code does not type check: " + issues[0].message);
  ir::tasklet::SettledTypes types =
      ir::tasklet::settleTypes(code, inTypes, outTypes);
  for (const ir::tasklet::Assignment &a : code.statements)
    out.push_back(
        assign(localName(n.id, a.target), lowerExpr(*a.value, types, n.id)));
}

void Lowerer::lowerTasklet(const interp::StatePlan &plan, const ir::Node &n,
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
      throw Error(describe(n) + ": input connector '" + c.name +
                  "' has no incoming edge");
    const ir::Edge &edge = **e;
    ValuePtr value;
    if (edge.memlet.empty()) {
      const ir::Node *src = plan.nodes.at(edge.src);
      if (src->kind != NodeKind::Tasklet)
        throw Error(describe(n) + ": input connector '" + c.name +
                    "' is fed by an empty memlet that carries no value (only "
                    "a tasklet's output can be handed over directly)");
      auto scope = taskletScope_.find(src->id);
      if (scope == taskletScope_.end() || scope->second != currentScope_)
        throw Error(describe(n) + ": input connector '" + c.name +
                    "' receives a value handed over from " + describe(*src) +
                    " in another map scope; lowering hands values over only "
                    "within one scope");
      const ir::Connector *from = src->findOutput(edge.srcConn);
      if (!from || from->dtype != c.dtype)
        throw Error(describe(n) + ": input connector '" + c.name + "' is " +
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
        value = cast(c.dtype, load(program_.container(name).dtype, buffer(name),
                                   flatten(name, index)));
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
        throw Error(describe(n) + " writes constant container '" + name +
                    "', which is read-only");
      std::vector<ir::Expr> index = pointIndex(n, *e, c.name);
      noteAccess(name, index, true);
      ir::Expr flat = flatten(name, index);
      ValuePtr value =
          cast(target.dtype, local(c.dtype, localName(n.id, c.name)));
      if (e->memlet.wcr)
        value = combine(*e->memlet.wcr, load(target.dtype, buffer(name), flat),
                        value);
      out.push_back(store(buffer(name), flat, value));
    }
}

void Lowerer::lowerCopies(const interp::StatePlan &plan, const ir::Node &n,
                          std::vector<StmtPtr> &out) {
  auto inIt = plan.in.find(n.id);
  if (inIt == plan.in.end())
    return;
  for (const ir::Edge *e : inIt->second) {
    const ir::Node &src = *plan.nodes.at(e->src);
    if (src.kind != NodeKind::Access || e->memlet.empty())
      continue;
    const std::string &from = src.access().container;
    const std::string &to = n.access().container;
    const std::string &named = e->memlet.container;
    const std::string &other = named == from ? to : from;
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
    ValuePtr value =
        cast(dstC.dtype, load(program_.container(from).dtype, buffer(from),
                              flatten(from, srcIndex)));
    if (e->memlet.wcr)
      value =
          combine(*e->memlet.wcr, load(dstC.dtype, buffer(to), dstFlat), value);
    StmtPtr body = store(buffer(to), dstFlat, value);
    for (std::size_t d = subset.dims.size(); d-- > 0;) {
      const ir::Range &r = subset.dims[d];
      body = forLoop(vars[d], subst(r.begin), subst(r.end), subst(r.step),
                     ForKind::Serial, {body}, "copy " + from + " -> " + to);
      enclosing_.erase(vars[d]);
    }
    out.push_back(body);
  }
}

void Lowerer::lowerGemm(const interp::StatePlan &plan, const ir::Node &n,
                        std::vector<StmtPtr> &out) {
  ir::GemmCall call;
  try {
    call = ir::readGemm(n.primitive());
  } catch (const Error &err) {
    throw Error(describe(n) + ": " + err.what());
  }
  static const std::vector<const ir::Edge *> kNone;
  auto find = [&](bool output, const std::string &conn) -> const ir::Edge & {
    auto it = (output ? plan.out : plan.in).find(n.id);
    const auto &list =
        it == (output ? plan.out : plan.in).end() ? kNone : it->second;
    for (const ir::Edge *e : list)
      if ((output ? e->srcConn : e->dstConn) == conn && !e->memlet.empty())
        return *e;
    throw Error(describe(n) + ": connector '" + conn + "' has no edge");
  };
  std::string cName;
  ir::Expr cOffset;
  auto matrix = [&](bool output, const std::string &conn) {
    const ir::Edge &e = find(output, conn);
    const std::string &name = e.memlet.container;
    const ir::Container &c = program_.container(name);
    if (c.dtype != ir::DType::F32)
      throw Error(describe(n) + ": gemm operand '" + name + "' is " +
                  std::string(ir::dtypeName(c.dtype)) + "; gemm takes f32");
    std::vector<ir::Expr> origin;
    for (const ir::Range &r : e.memlet.subset.dims)
      origin.push_back(subst(r.begin));
    noteAccess(name, origin, output);
    if (output) {
      cName = name;
      cOffset = flatten(name, origin);
    }
    return CallArg::pointer(buffer(name), c.dtype, flatten(name, origin));
  };
  // A library call parallelizes itself: the maps around it stay serial.
  for (AccessLog *log : logs_)
    log->callsLibrary = true;
  using A = CallArg;
  out.push_back(callStmt(kCallSgemm,
                         {A::integer(call.transA), A::integer(call.transB),
                          A::integer(subst(call.m)), A::integer(subst(call.n)),
                          A::integer(subst(call.k)), A::real(call.alpha),
                          matrix(false, "A"), A::integer(subst(call.lda)),
                          matrix(false, "B"), A::integer(subst(call.ldb)),
                          A::real(call.beta), matrix(true, "C"),
                          A::integer(subst(call.ldc))},
                         n.label));
  if (!call.epilogue.empty())
    lowerEpilogue(plan, n, call, cName, cOffset, out);
}

void Lowerer::lowerEpilogue(const interp::StatePlan &plan, const ir::Node &n,
                            const ir::GemmCall &call, const std::string &cName,
                            const ir::Expr &cOffset,
                            std::vector<StmtPtr> &out) {
  std::shared_ptr<const ir::tasklet::Code> code;
  try {
    code = ir::gemmEpilogue(call, n.inputs);
  } catch (const Error &err) {
    throw Error(describe(n) + ": " + err.what());
  }
  std::string i = freshLoopVar("ei");
  enclosing_.insert(i);
  std::string j = freshLoopVar("ej");
  enclosing_.insert(j);
  ir::Expr row = ir::Expr::symbol(i), col = ir::Expr::symbol(j);

  std::vector<StmtPtr> body;
  ir::tasklet::ConnectorTypes inTypes{{"acc", ir::DType::F32}};
  ir::Expr cAt = cOffset + row * subst(call.ldc) + col;
  body.push_back(
      assign(localName(n.id, "acc"), load(ir::DType::F32, buffer(cName), cAt)));
  auto inIt = plan.in.find(n.id);
  for (const ir::GemmOperand &o : call.operands) {
    const ir::Connector &conn = *n.findInput(o.connector);
    inTypes[conn.name] = conn.dtype;
    const ir::Edge *e = nullptr;
    if (inIt != plan.in.end())
      for (const ir::Edge *x : inIt->second)
        if (x->dstConn == o.connector && !x->memlet.empty())
          e = x;
    if (!e)
      throw Error(describe(n) + ": epilogue operand '" + o.connector +
                  "' has no edge");
    const std::string &name = e->memlet.container;
    std::vector<ir::Expr> origin;
    for (const ir::Range &r : e->memlet.subset.dims)
      origin.push_back(subst(r.begin));
    noteAccess(name, origin, false);
    ir::Expr at =
        flatten(name, origin) + row * subst(o.row) + col * subst(o.col);
    body.push_back(assign(localName(n.id, conn.name),
                          cast(conn.dtype, load(program_.container(name).dtype,
                                                buffer(name), at))));
  }
  lowerCode(n, *code, inTypes, {{"C", ir::DType::F32}}, body);
  body.push_back(
      store(buffer(cName), cAt, local(ir::DType::F32, localName(n.id, "C"))));

  // Rows are disjoint (ldc >= N) and operands are read-only, so both loops
  // are free of dependences; the rows run in parallel unless an enclosing
  // map may itself become a parallel loop.
  ir::Expr m = subst(call.m), nCols = subst(call.n);
  auto known = (m * nCols).asConstant();
  bool parallel =
      parallelDepth_ == 0 && (!known || *known >= opt_.minParallelIterations);
  StmtPtr inner =
      forLoop(j, ir::Expr(0), nCols, ir::Expr(1), ForKind::Vectorized,
              std::move(body), n.label + " epilogue");
  out.push_back(forLoop(i, ir::Expr(0), m, ir::Expr(1),
                        parallel ? ForKind::Parallel : ForKind::Serial, {inner},
                        n.label + " epilogue"));
  enclosing_.erase(i);
  enclosing_.erase(j);
}

void Lowerer::lowerMap(const interp::StatePlan &plan, const ir::Node &entry,
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
    subst_[m.params[d]] = ir::Expr::symbol(v);
  }
  bool parallelCandidate =
      parallelDepth_ == 0 && (m.schedule == ir::Schedule::CpuParallel ||
                              (m.schedule == ir::Schedule::Sequential &&
                               opt_.parallelizeSequentialMaps));
  // A vectorized map's innermost loop, and a cpu-parallel map's when it is
  // not the loop that runs in parallel: SIMD lanes inside each thread.
  bool vectorCandidate = m.schedule == ir::Schedule::Vectorized ||
                         m.schedule == ir::Schedule::CpuParallel;

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

  // The outermost loop with more than one iteration, when its iterations
  // are provably private (the single-iteration loops outside it are fixed
  // while it runs). A loop further in is not tried: a parallel region per
  // iteration of an outer loop costs more in wake-ups than it gains.
  // Too little work pays less than waking the pool costs.
  ir::Expr iterations(1);
  for (const ir::Range &r : ranges)
    iterations = iterations * r.size();
  // A library call parallelizes itself, so a map around calls stays serial
  // unless it is cpu-parallel with a batch of at least kMinLibraryBatch
  // calls: then whole calls run side by side, each on one thread (many
  // small GEMMs, as Winograd's sixteen, scale better so than split).
  // A body of many accesses (a Winograd tile's 36 loads and 36 stores)
  // counts as that many iterations of a copy's one load and one store.
  auto known = iterations.asConstant();
  std::int64_t weight =
      std::max<std::int64_t>(1, std::int64_t(log.accesses.size()) / 2);
  bool worthIt = log.callsLibrary
                     ? m.schedule == ir::Schedule::CpuParallel && known &&
                           *known >= kMinLibraryBatch
                     : !known || *known * weight >= opt_.minParallelIterations;
  // The values each of this map's loop variables takes, where constant.
  std::map<std::string, VarBounds> bounds;
  for (std::size_t d = 0; d < vars.size(); ++d) {
    auto b = ranges[d].begin.asConstant(), e = ranges[d].end.asConstant(),
         st = ranges[d].step.asConstant();
    if (b && e && st && *st > 0 && *e > *b)
      bounds[vars[d]] = {*b, *b + (*e - *b - 1) / *st * *st};
  }
  std::size_t parallelDim = vars.size();
  std::set<std::string, std::less<>> fixed = outer;
  for (std::size_t d = 0; parallelCandidate && worthIt && d < vars.size();
       ++d) {
    if (ranges[d].size() == ir::Expr(1)) {
      fixed.insert(vars[d]);
      continue;
    }
    if (iterationsArePrivate(log, vars[d], fixed, bounds))
      parallelDim = d;
    break;
  }
  std::set<std::string, std::less<>> inner = outer;
  inner.insert(vars.begin(), vars.end());
  if (!vars.empty())
    inner.erase(vars.back());
  for (std::size_t d = vars.size(); d-- > 0;) {
    ForKind kind = ForKind::Serial;
    if (d == parallelDim)
      kind = ForKind::Parallel;
    else if (vectorCandidate && d + 1 == vars.size() &&
             iterationsArePrivate(log, vars[d], inner))
      kind = ForKind::Vectorized;
    StmtPtr loop = forLoop(vars[d], ranges[d].begin, ranges[d].end,
                           ranges[d].step, kind, std::move(body), entry.label);
    body = {loop};
    enclosing_.erase(vars[d]);
  }
  subst_ = saved;
  out.insert(out.end(), body.begin(), body.end());
}

void Lowerer::lowerNode(const interp::StatePlan &plan, NodeId id,
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
    throw Error("library node '" + n.label + "' (" + n.library().op +
                ") must be expanded before it can be lowered");
  case NodeKind::Primitive:
    if (n.primitive().primitive == "gemm")
      return lowerGemm(plan, n, out);
    throw Error("primitive node '" + n.label + "' (" + n.primitive().primitive +
                ") cannot be lowered yet");
  }
}

std::vector<StmtPtr> Lowerer::lowerScope(const interp::StatePlan &plan,
                                         NodeId scope) {
  std::vector<StmtPtr> out;
  for (NodeId id : plan.order.at(scope))
    lowerNode(plan, id, out);
  return out;
}

LoopFunction Lowerer::run() {
  std::vector<ir::Diagnostic> diagnostics = ir::validate(program_);
  if (ir::hasErrors(diagnostics)) {
    std::string message = "program '" + program_.name + "' is invalid:";
    int errors = 0;
    for (const ir::Diagnostic &d : diagnostics)
      if (d.severity == ir::Severity::Error && ++errors <= 3)
        message += (errors > 1 ? "; " : " ") + d.str();
    if (errors > 3)
      message += " (and " + std::to_string(errors - 3) + " more errors)";
    throw Error(message);
  }
  for (const ir::State &s : program_.states)
    for (const ir::Node &n : s.nodes)
      if (n.kind == NodeKind::Library || (n.kind == NodeKind::Primitive &&
                                          n.primitive().primitive != "gemm")) {
        std::vector<StmtPtr> ignored;
        interp::StatePlan plan;
        plan.nodes[n.id] = &n;
        lowerNode(plan, n.id, ignored); // throws the message for the kind
      }

  // Register containers are allocated inside their map scope when all
  // their access nodes sit directly in one scope of one state; otherwise
  // for the whole run, like any transient.
  std::map<std::string, std::set<std::pair<std::size_t, NodeId>>, std::less<>>
      scopes;
  for (std::size_t k = 0; k < program_.states.size(); ++k) {
    const ir::State &s = program_.states[k];
    std::map<NodeId, NodeId> parents = ir::scopeParents(s);
    for (const ir::Node &n : s.nodes)
      if (n.kind == NodeKind::Access &&
          program_.container(n.access().container).storage ==
              ir::Storage::Register)
        scopes[n.access().container].insert({k, parents[n.id]});
  }
  for (const auto &[name, where] : scopes)
    if (where.size() == 1 && where.begin()->second != 0)
      registerScope_[name] = where.begin()->second;

  LoopFunction f;
  f.name = program_.name;
  f.symbols = program_.symbols;
  std::vector<StmtPtr> states;
  for (const ir::State &s : program_.states) {
    interp::StatePlan plan = interp::planState(s);
    states.push_back(block(lowerScope(plan, 0)));
  }
  StmtPtr body = block(std::move(states));

  using Role = BufferParam::Role;
  auto param = [&](const std::string &name, Role role) {
    const ir::Container &c = program_.container(name);
    f.buffers.push_back(
        {name, c.dtype, c.shape, role, written_.count(name) > 0});
  };
  std::set<std::string, std::less<>> args;
  for (const std::string &name : program_.inputs) {
    param(name, Role::Input);
    args.insert(name);
  }
  for (const std::string &name : program_.outputs)
    if (args.insert(name).second)
      param(name, Role::Output);
  for (const auto &[name, c] : program_.containers)
    if (c.isConstant() && args.insert(name).second)
      param(name, Role::Constant);
  auto allocated = [&](const std::string &name, const ir::Container &c) {
    return !args.count(name) && !c.isView() && !registerScope_.count(name);
  };
  std::map<std::string, ir::Expr, std::less<>> sizes;
  for (const auto &[name, c] : program_.containers)
    if (allocated(name, c))
      sizes[name] = c.elementCount();
  std::set<std::string, std::less<>> whole = writtenWholeFirst(body, sizes);
  for (auto it = program_.containers.rbegin(); it != program_.containers.rend();
       ++it)
    if (allocated(it->first, it->second))
      body = allocate(it->first, it->second.dtype, it->second.elementCount(),
                      {body}, !whole.count(it->first));
  f.body = body;
  return f;
}

} // namespace

LoopFunction lower(const ir::Program &program, const LowerOptions &options) {
  Lowerer l(program, options);
  return l.run();
}

} // namespace weir::codegen
