/// \file
/// Lowering's gemm calls (lowerer.h): the sgemm call with its matrices'
/// offsets and leading dimensions, and the loop nest of its epilogue.

#include "codegen/lower/lowerer.h"

#include "ir/error.h"
#include "ir/primitives.h"
#include "ir/print.h"

namespace weir::codegen::lowering {

using ir::NodeKind;

void Lowerer::lowerGemm(const ir::StateView &plan, const ir::Node &n,
                        std::vector<StmtPtr> &out) {
  ir::GemmCall call;
  try {
    call = ir::readGemm(n.primitive());
  } catch (const Error &err) {
    throw Error(ir::describe(n) + ": " + err.what());
  }
  static const std::vector<const ir::Edge *> kNone;
  auto find = [&](bool output, const std::string &conn) -> const ir::Edge & {
    auto it = (output ? plan.out : plan.in).find(n.id);
    const auto &list =
        it == (output ? plan.out : plan.in).end() ? kNone : it->second;
    for (const ir::Edge *e : list)
      if ((output ? e->srcConn : e->dstConn) == conn && !e->memlet.empty())
        return *e;
    throw Error(ir::describe(n) + ": connector '" + conn + "' has no edge");
  };
  std::string cName;
  ir::Expr cOffset;
  std::vector<CallArg> room; // per matrix, in argument order
  auto matrix = [&](bool output, const std::string &conn) {
    const ir::Edge &e = find(output, conn);
    const std::string &name = e.memlet.container;
    const ir::Container &c = program_.container(name);
    if (c.dtype != ir::DType::F32)
      throw Error(ir::describe(n) + ": gemm operand '" + name + "' is " +
                  std::string(ir::dtypeName(c.dtype)) + "; gemm takes f32");
    std::vector<ir::Expr> origin;
    for (const ir::Range &r : e.memlet.subset.dims)
      origin.push_back(subst(r.begin));
    noteAccess(name, origin, output);
    ir::Expr first = flatten(name, origin);
    if (output) {
      cName = name;
      cOffset = first;
    }
    // The elements from the first to the buffer's end: the call checks
    // its matrix fits there (weir_sgemm, codegen/cpu/runtime_support.cpp).
    room.push_back(CallArg::integer(subst(c.elementCount()) - first));
    return CallArg::pointer(buffer(name), c.dtype, first);
  };
  // A library call parallelizes itself: the maps around it stay serial.
  for (AccessLog *log : logs_)
    log->callsLibrary = true;
  using A = CallArg;
  std::vector<CallArg> args = {A::integer(call.transA),
                               A::integer(call.transB),
                               A::integer(subst(call.m)),
                               A::integer(subst(call.n)),
                               A::integer(subst(call.k)),
                               A::real(call.alpha)};
  args.push_back(matrix(false, "A"));
  args.push_back(A::integer(subst(call.lda)));
  args.push_back(matrix(false, "B"));
  args.push_back(A::integer(subst(call.ldb)));
  args.push_back(A::real(call.beta));
  args.push_back(matrix(true, "C"));
  args.push_back(A::integer(subst(call.ldc)));
  args.insert(args.end(), room.begin(), room.end());
  out.push_back(callStmt(kCallSgemm, std::move(args), n.label));
  if (!call.epilogue.empty())
    lowerEpilogue(plan, n, call, cName, cOffset, out);
}

void Lowerer::lowerEpilogue(const ir::StateView &plan, const ir::Node &n,
                            const ir::GemmCall &call, const std::string &cName,
                            const ir::Expr &cOffset,
                            std::vector<StmtPtr> &out) {
  std::shared_ptr<const ir::tasklet::Code> code;
  try {
    code = ir::gemmEpilogue(call, n.inputs);
  } catch (const Error &err) {
    throw Error(ir::describe(n) + ": " + err.what());
  }
  std::string i = freshLoopVar("ei");
  enclosing_.insert(i);
  std::string j = freshLoopVar("ej");
  enclosing_.insert(j);
  ir::Expr row = ir::Expr::symbol(i), col = ir::Expr::symbol(j);

  ir::Expr m = subst(call.m), nCols = subst(call.n);
  bounds_.enter(i, {ir::Expr(0), m, ir::Expr(1)});
  bounds_.enter(j, {ir::Expr(0), nCols, ir::Expr(1)});
  const std::string what = ir::describe(n) + ": gemm epilogue";
  std::vector<StmtPtr> body;
  ir::tasklet::ConnectorTypes inTypes{{"acc", ir::DType::F32}};
  ir::Expr cAt = cOffset + row * subst(call.ldc) + col;
  GuardPtr cGuard = flatGuard(cName, cAt, what + ", C");
  body.push_back(assign(localName(n.id, "acc"),
                        load(ir::DType::F32, buffer(cName), cAt, cGuard)));
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
      throw Error(ir::describe(n) + ": epilogue operand '" + o.connector +
                  "' has no edge");
    const std::string &name = e->memlet.container;
    std::vector<ir::Expr> origin;
    for (const ir::Range &r : e->memlet.subset.dims)
      origin.push_back(subst(r.begin));
    noteAccess(name, origin, false);
    ir::Expr at =
        flatten(name, origin) + row * subst(o.row) + col * subst(o.col);
    body.push_back(assign(
        localName(n.id, conn.name),
        cast(conn.dtype,
             load(program_.container(name).dtype, buffer(name), at,
                  flatGuard(name, at, what + ", operand '" + conn.name +
                                          "'")))));
  }
  lowerCode(n, *code, inTypes, {{"C", ir::DType::F32}}, body);
  body.push_back(store(buffer(cName), cAt,
                       local(ir::DType::F32, localName(n.id, "C")), cGuard));
  bounds_.leave(j);
  bounds_.leave(i);

  // Rows are disjoint (ldc >= N) and operands are read-only, so both loops
  // are free of dependences; the rows run in parallel unless an enclosing
  // map may itself become a parallel loop.
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

} // namespace weir::codegen::lowering
