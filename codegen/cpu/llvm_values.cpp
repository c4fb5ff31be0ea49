/// \file
/// Typed scalar values and index arithmetic in LLVM IR, with exactly the
/// semantics of the reference interpreter (core/interp/tasklet_eval.h):
/// wrapping integers, C division with a reported error on zero, saturating
/// float-to-integer casts, NaN-propagating min/max, no fast-math.

#include "codegen/cpu/emitter.h"
#include "codegen/cpu/runtime_support.h"
#include "ir/error.h"

namespace weir::codegen::cpu::detail {

// ----------------------------------------------------------------- index --

llvm::Value *Emitter::index(const ir::Expr &e) {
  const std::vector<ir::Expr> &ops = e.operands();
  switch (e.kind()) {
  case ir::ExprKind::Const:
    return b_.getInt64(static_cast<std::uint64_t>(*e.asConstant()));
  case ir::ExprKind::Sym: {
    auto it = scope_.ints.find(e.symbolName());
    if (it == scope_.ints.end())
      throw Error("loop IR uses '" + e.symbolName() +
                  "', which is neither a symbol nor a loop variable in scope");
    return it->second;
  }
  case ir::ExprKind::Add: {
    llvm::Value *sum = index(ops[0]);
    for (std::size_t i = 1; i < ops.size(); ++i)
      sum = b_.CreateAdd(sum, index(ops[i]));
    return sum;
  }
  case ir::ExprKind::Mul: {
    llvm::Value *product = index(ops[0]);
    for (std::size_t i = 1; i < ops.size(); ++i)
      product = b_.CreateMul(product, index(ops[i]));
    return product;
  }
  case ir::ExprKind::FloorDiv: {
    // Round toward negative infinity: C's quotient minus one when the
    // remainder is nonzero and the signs differ.
    llvm::Value *a = index(ops[0]), *d = index(ops[1]);
    if (auto c = ops[1].asConstant(); c && *c > 0) {
      llvm::Value *q = b_.CreateSDiv(a, d);
      llvm::Value *r = b_.CreateSRem(a, d);
      return b_.CreateSub(
          q, b_.CreateZExt(b_.CreateICmpSLT(r, b_.getInt64(0)), i64()));
    }
    llvm::Value *q = b_.CreateSDiv(a, d);
    llvm::Value *r = b_.CreateSRem(a, d);
    llvm::Value *adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, b_.getInt64(0)),
                     b_.CreateICmpNE(b_.CreateICmpSLT(r, b_.getInt64(0)),
                                     b_.CreateICmpSLT(d, b_.getInt64(0))));
    return b_.CreateSub(q, b_.CreateZExt(adjust, i64()));
  }
  case ir::ExprKind::Mod: {
    // The sign follows the divisor (Python).
    llvm::Value *a = index(ops[0]), *d = index(ops[1]);
    llvm::Value *r = b_.CreateSRem(a, d);
    llvm::Value *adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, b_.getInt64(0)),
                     b_.CreateICmpNE(b_.CreateICmpSLT(r, b_.getInt64(0)),
                                     b_.CreateICmpSLT(d, b_.getInt64(0))));
    return b_.CreateSelect(adjust, b_.CreateAdd(r, d), r);
  }
  case ir::ExprKind::Min:
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, index(ops[0]),
                                    index(ops[1]));
  case ir::ExprKind::Max:
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, index(ops[0]),
                                    index(ops[1]));
  }
  throw Error("unknown index expression kind");
}

// ---------------------------------------------------------------- values --

llvm::Value *Emitter::value(const Value &v) {
  switch (v.kind) {
  case ValueKind::Literal:
    if (ir::isFloat(v.type))
      return llvm::ConstantFP::get(regType(v.type), v.f);
    return llvm::ConstantInt::get(regType(v.type), v.bits);
  case ValueKind::Load:
    return loadValue(v);
  case ValueKind::Local: {
    auto it = scope_.locals.find(v.name);
    if (it == scope_.locals.end())
      throw Error("loop IR reads local '" + v.name + "' before assigning it");
    return b_.CreateLoad(regType(v.type), it->second, v.name);
  }
  case ValueKind::Unary: {
    llvm::Value *a = value(*v.operands[0]);
    if (v.unaryOp == UnaryOp::Not)
      return b_.CreateNot(a);
    return ir::isFloat(v.type) ? b_.CreateFNeg(a) : b_.CreateNeg(a);
  }
  case ValueKind::Binary:
    return binaryValue(v);
  case ValueKind::Call:
    return callValue(v);
  case ValueKind::Select:
    return lazySelect(value(*v.operands[0]), *v.operands[1], *v.operands[2]);
  case ValueKind::Cast:
    return castValue(v.operands[0]->type, v.type, value(*v.operands[0]));
  }
  throw Error("unknown loop IR value kind");
}

llvm::BasicBlock *Emitter::checkBounds(const BoundsGuard &g,
                                       llvm::BasicBlock *skip) {
  // One unsigned comparison per dimension covers both ends: a negative
  // index is a huge unsigned one.
  std::vector<llvm::Value *> idx, ext, ok;
  llvm::Value *all = b_.getTrue();
  for (std::size_t d = 0; d < g.index.size(); ++d) {
    idx.push_back(index(g.index[d]));
    ext.push_back(index(g.extent[d]));
    ok.push_back(b_.CreateICmpULT(idx.back(), ext.back()));
    all = b_.CreateAnd(all, ok.back());
  }
  auto *fail = llvm::BasicBlock::Create(ctx_, "outofbounds", scope_.fn);
  auto *pass = llvm::BasicBlock::Create(ctx_, "inbounds", scope_.fn);
  b_.CreateCondBr(all, pass, fail);
  b_.SetInsertPoint(fail);
  // The first dimension that fails, its index and its extent.
  llvm::Value *dim = b_.getInt64(0), *at = b_.getInt64(0),
              *size = b_.getInt64(0);
  for (std::size_t d = g.index.size(); d-- > 0;) {
    llvm::Value *bad = b_.CreateNot(ok[d]);
    dim = b_.CreateSelect(bad, b_.getInt64(d), dim);
    at = b_.CreateSelect(bad, idx[d], at);
    size = b_.CreateSelect(bad, ext[d], size);
  }
  llvm::Value *what = b_.CreateGlobalStringPtr(g.what, "guard");
  b_.CreateCall(runtime("weir_out_of_bounds", b_.getVoidTy(),
                        {ptr(), ptr(), i64(), i64(), i64()}),
                {scope_.rt, what, dim, at, size});
  b_.CreateBr(skip);
  b_.SetInsertPoint(pass);
  return fail;
}

llvm::Value *Emitter::loadValue(const Value &v) {
  if (!v.guard)
    return rawLoad(v);
  // A load that fails its check gives 0 (the run then reports the error).
  auto *skip = llvm::BasicBlock::Create(ctx_, "guarded", scope_.fn);
  llvm::BasicBlock *fail = checkBounds(*v.guard, skip);
  llvm::Value *loaded = rawLoad(v);
  llvm::BasicBlock *loadedIn = b_.GetInsertBlock();
  b_.CreateBr(skip);
  b_.SetInsertPoint(skip);
  llvm::PHINode *phi = b_.CreatePHI(loaded->getType(), 2);
  phi->addIncoming(loaded, loadedIn);
  phi->addIncoming(llvm::Constant::getNullValue(loaded->getType()), fail);
  return phi;
}

llvm::Value *Emitter::rawLoad(const Value &v) {
  llvm::Value *addr =
      b_.CreateGEP(memType(v.type), buffer(v.name), index(v.index));
  llvm::Value *raw = b_.CreateLoad(memType(v.type), addr);
  switch (v.type) {
  case DType::F16:
    return b_.CreateCall(
        runtime("weir_f16_value", b_.getFloatTy(), {b_.getInt16Ty()}), {raw});
  case DType::BF16:
    return b_.CreateCall(
        runtime("weir_bf16_value", b_.getFloatTy(), {b_.getInt16Ty()}), {raw});
  case DType::Bool:
    return b_.CreateICmpNE(raw, b_.getInt8(0));
  default:
    return raw;
  }
}

llvm::Value *Emitter::storeBits(DType t, llvm::Value *v) {
  switch (t) {
  case DType::F16:
    return b_.CreateCall(
        runtime("weir_f16_bits", b_.getInt16Ty(), {b_.getDoubleTy()}),
        {b_.CreateFPExt(v, b_.getDoubleTy())});
  case DType::BF16:
    return b_.CreateCall(
        runtime("weir_bf16_bits", b_.getInt16Ty(), {b_.getDoubleTy()}),
        {b_.CreateFPExt(v, b_.getDoubleTy())});
  case DType::Bool:
    return b_.CreateZExt(v, b_.getInt8Ty());
  default:
    return v;
  }
}

llvm::Value *Emitter::castValue(DType from, DType to, llvm::Value *v) {
  if (from == to)
    return v;
  auto roundHalf = [&](llvm::Value *asDouble) -> llvm::Value * {
    const char *fn = to == DType::F16 ? "weir_round_f16" : "weir_round_bf16";
    return b_.CreateCall(runtime(fn, b_.getFloatTy(), {b_.getDoubleTy()}),
                         {asDouble});
  };
  if (ir::isFloat(from)) {
    if (to == DType::F64)
      return b_.CreateFPExt(v, b_.getDoubleTy());
    if (to == DType::F32)
      return from == DType::F64 ? b_.CreateFPTrunc(v, b_.getFloatTy()) : v;
    if (to == DType::F16 || to == DType::BF16)
      return roundHalf(
          from == DType::F64 ? v : b_.CreateFPExt(v, b_.getDoubleTy()));
    if (to == DType::Bool)
      return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    auto id = ir::isSignedInt(to) ? llvm::Intrinsic::fptosi_sat
                                  : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {regType(to), v->getType()}, {v});
  }
  // From an integer or bool.
  bool sgn = ir::isSignedInt(from);
  if (ir::isFloat(to)) {
    llvm::Type *target = to == DType::F32 ? b_.getFloatTy() : b_.getDoubleTy();
    llvm::Value *f =
        sgn ? b_.CreateSIToFP(v, target) : b_.CreateUIToFP(v, target);
    return to == DType::F16 || to == DType::BF16 ? roundHalf(f) : f;
  }
  if (to == DType::Bool)
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  return sgn ? b_.CreateSExtOrTrunc(v, regType(to))
             : b_.CreateZExtOrTrunc(v, regType(to));
}

llvm::Value *Emitter::binaryValue(const Value &v) {
  const Value &lhs = *v.operands[0], &rhs = *v.operands[1];
  if (v.binaryOp == BinaryOp::And || v.binaryOp == BinaryOp::Or) {
    llvm::Value *a = value(lhs);
    bool isAnd = v.binaryOp == BinaryOp::And;
    if (!hasIntegerDivision(rhs))
      return isAnd ? b_.CreateAnd(a, value(rhs)) : b_.CreateOr(a, value(rhs));
    // a && b == a ? b : false; a || b == a ? true : b.
    Value constant;
    constant.kind = ValueKind::Literal;
    constant.type = DType::Bool;
    constant.bits = isAnd ? 0 : 1;
    return isAnd ? lazySelect(a, rhs, constant) : lazySelect(a, constant, rhs);
  }
  llvm::Value *a = value(lhs), *b = value(rhs);
  if (ir::tasklet::isComparison(v.binaryOp))
    return compareValues(v.binaryOp, v.operandType, a, b);
  if (ir::isFloat(v.type)) {
    switch (v.binaryOp) {
    case BinaryOp::Add:
      return b_.CreateFAdd(a, b);
    case BinaryOp::Sub:
      return b_.CreateFSub(a, b);
    case BinaryOp::Mul:
      return b_.CreateFMul(a, b);
    case BinaryOp::Div:
      return b_.CreateFDiv(a, b);
    case BinaryOp::Mod:
      return b_.CreateFRem(a, b);
    default:
      break;
    }
  } else {
    switch (v.binaryOp) {
    case BinaryOp::Add:
      return b_.CreateAdd(a, b);
    case BinaryOp::Sub:
      return b_.CreateSub(a, b);
    case BinaryOp::Mul:
      return b_.CreateMul(a, b);
    case BinaryOp::Div:
    case BinaryOp::Mod:
      return intDivide(v, a, b);
    default:
      break;
    }
  }
  throw Error("loop IR: operator '" +
              std::string(ir::tasklet::binaryOpText(v.binaryOp)) +
              "' is not defined on " + std::string(ir::dtypeName(v.type)));
}

llvm::Value *Emitter::intDivide(const Value &v, llvm::Value *a,
                                llvm::Value *b) {
  bool div = v.binaryOp == BinaryOp::Div;
  llvm::Type *t = a->getType();
  llvm::Value *zero = llvm::ConstantInt::get(t, 0);
  llvm::Value *one = llvm::ConstantInt::get(t, 1);
  llvm::Value *isZero = b_.CreateICmpEQ(b, zero);

  // Division by zero reports the error (the run then throws) and goes on
  // with a divisor of one.
  auto *report = llvm::BasicBlock::Create(ctx_, "divzero", scope_.fn);
  auto *cont = llvm::BasicBlock::Create(ctx_, "divok", scope_.fn);
  b_.CreateCondBr(isZero, report, cont);
  b_.SetInsertPoint(report);
  b_.CreateCall(runtime("weir_error", b_.getVoidTy(), {ptr(), b_.getInt32Ty()}),
                {scope_.rt, b_.getInt32(kErrorIntegerDivisionByZero)});
  b_.CreateBr(cont);
  b_.SetInsertPoint(cont);

  if (!ir::isSignedInt(v.type)) {
    llvm::Value *safe = b_.CreateSelect(isZero, one, b);
    return div ? b_.CreateUDiv(a, safe) : b_.CreateURem(a, safe);
  }
  // MIN / -1 overflows in hardware; the interpreter wraps it to MIN (and the
  // remainder to 0), which is what negation gives.
  llvm::Value *isMinusOne =
      b_.CreateICmpEQ(b, llvm::ConstantInt::getSigned(t, -1));
  llvm::Value *safe = b_.CreateSelect(b_.CreateOr(isZero, isMinusOne), one, b);
  llvm::Value *r = div ? b_.CreateSDiv(a, safe) : b_.CreateSRem(a, safe);
  return b_.CreateSelect(isMinusOne, div ? b_.CreateNeg(a) : zero, r);
}

llvm::Value *Emitter::compareValues(BinaryOp op, DType t, llvm::Value *a,
                                    llvm::Value *b) {
  using P = llvm::CmpInst::Predicate;
  if (ir::isFloat(t)) {
    // Ordered comparisons are false with a NaN; != is true.
    P p = op == BinaryOp::Eq   ? P::FCMP_OEQ
          : op == BinaryOp::Ne ? P::FCMP_UNE
          : op == BinaryOp::Lt ? P::FCMP_OLT
          : op == BinaryOp::Le ? P::FCMP_OLE
          : op == BinaryOp::Gt ? P::FCMP_OGT
                               : P::FCMP_OGE;
    return b_.CreateFCmp(p, a, b);
  }
  bool sgn = ir::isSignedInt(t);
  P p = op == BinaryOp::Eq   ? P::ICMP_EQ
        : op == BinaryOp::Ne ? P::ICMP_NE
        : op == BinaryOp::Lt ? (sgn ? P::ICMP_SLT : P::ICMP_ULT)
        : op == BinaryOp::Le ? (sgn ? P::ICMP_SLE : P::ICMP_ULE)
        : op == BinaryOp::Gt ? (sgn ? P::ICMP_SGT : P::ICMP_UGT)
                             : (sgn ? P::ICMP_SGE : P::ICMP_UGE);
  return b_.CreateICmp(p, a, b);
}

llvm::Value *Emitter::intrinsic(llvm::Intrinsic::ID id, llvm::Value *a,
                                llvm::Value *b) {
  if (b)
    return b_.CreateBinaryIntrinsic(id, a, b);
  return b_.CreateUnaryIntrinsic(id, a);
}

llvm::Value *Emitter::libm(const char *name, DType t, llvm::Value *a,
                           llvm::Value *b) {
  // libm's float variant ends in f (tanhf); the double one has no suffix.
  std::string fn = std::string(name) + (t == DType::F64 ? "" : "f");
  std::vector<llvm::Value *> args{a};
  if (b)
    args.push_back(b);
  std::vector<llvm::Type *> types(args.size(), a->getType());
  llvm::FunctionCallee callee = runtime(fn.c_str(), a->getType(), types);
  if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // errno is never read by us: to LLVM the call touches no memory, so an
    // unused one (see powValue) is deleted and a loop-invariant one hoisted.
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();
    f->setWillReturn();
  }
  // Not a builtin: LLVM would otherwise fold calls on constants with the
  // host's correctly rounded double math, and libm (which the interpreter
  // and the run call) is not always correctly rounded.
  llvm::CallInst *call = b_.CreateCall(callee, args);
  call->addFnAttr(llvm::Attribute::NoBuiltin);
  return call;
}

llvm::Value *Emitter::floatMinMax(bool isMax, llvm::Value *a, llvm::Value *b) {
  // NaN wins; otherwise std::min/std::max: min(a, b) = b < a ? b : a and
  // max(a, b) = a < b ? b : a (which keeps a on ties, signed zeros too).
  llvm::Value *nan = b_.CreateFCmpUNO(a, b);
  llvm::Value *pick = isMax ? b_.CreateFCmpOLT(a, b) : b_.CreateFCmpOLT(b, a);
  llvm::Value *r = b_.CreateSelect(pick, b, a);
  return b_.CreateSelect(nan, llvm::ConstantFP::getNaN(a->getType()), r);
}

llvm::Value *Emitter::callValue(const Value &v) {
  std::vector<llvm::Value *> args;
  for (const ValuePtr &op : v.operands)
    args.push_back(value(*op));
  llvm::Value *x = args[0];
  llvm::Value *y = args.size() > 1 ? args[1] : nullptr;
  if (!ir::isFloat(v.type)) {
    bool sgn = ir::isSignedInt(v.type);
    switch (v.func) {
    case Func::Abs:
      if (!sgn)
        return x;
      return b_.CreateSelect(
          b_.CreateICmpSLT(x, llvm::ConstantInt::get(x->getType(), 0)),
          b_.CreateNeg(x), x);
    case Func::Min:
      return intrinsic(sgn ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, x,
                       y);
    case Func::Max:
      return intrinsic(sgn ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, x,
                       y);
    case Func::Hash:
      return splitMix(x, y);
    default:
      throw Error("'" + std::string(ir::tasklet::funcName(v.func)) +
                  "' needs a floating-point argument, got " +
                  std::string(ir::dtypeName(v.type)));
    }
  }
  llvm::Value *one = llvm::ConstantFP::get(x->getType(), 1.0);
  switch (v.func) {
  case Func::Exp:
    return x->getType()->isFloatTy() ? expF32(x) : libm("exp", v.type, x);
  case Func::Log:
    return libm("log", v.type, x);
  case Func::Sqrt:
    return intrinsic(llvm::Intrinsic::sqrt, x);
  case Func::Rsqrt:
    return b_.CreateFDiv(one, intrinsic(llvm::Intrinsic::sqrt, x));
  case Func::Tanh:
    return libm("tanh", v.type, x);
  case Func::Erf:
    return x->getType()->isFloatTy() ? erfF32(x) : libm("erf", v.type, x);
  case Func::Abs:
    return intrinsic(llvm::Intrinsic::fabs, x);
  case Func::Min:
    return floatMinMax(false, x, y);
  case Func::Max:
    return floatMinMax(true, x, y);
  case Func::Pow:
    return powValue(v.type, x, y);
  case Func::Floor:
    return intrinsic(llvm::Intrinsic::floor, x);
  case Func::Ceil:
    return intrinsic(llvm::Intrinsic::ceil, x);
  case Func::Sigmoid:
    return b_.CreateFDiv(
        one, b_.CreateFAdd(one, x->getType()->isFloatTy()
                                    ? expF32(b_.CreateFNeg(x))
                                    : libm("exp", v.type, b_.CreateFNeg(x))));
  case Func::Sin:
    return libm("sin", v.type, x);
  case Func::Cos:
    return libm("cos", v.type, x);
  case Func::Tan:
    return libm("tan", v.type, x);
  case Func::Asin:
    return libm("asin", v.type, x);
  case Func::Acos:
    return libm("acos", v.type, x);
  case Func::Atan:
    return libm("atan", v.type, x);
  case Func::Sinh:
    return libm("sinh", v.type, x);
  case Func::Cosh:
    return libm("cosh", v.type, x);
  case Func::Asinh:
    return libm("asinh", v.type, x);
  case Func::Acosh:
    return libm("acosh", v.type, x);
  case Func::Atanh:
    return libm("atanh", v.type, x);
  case Func::Round:
    return intrinsic(llvm::Intrinsic::roundeven, x);
  case Func::Hash: // integers only (the type checker)
    break;
  }
  throw Error("unknown function in loop IR");
}

llvm::Value *Emitter::lazySelect(llvm::Value *cond, const Value &then,
                                 const Value &otherwise) {
  if (!hasIntegerDivision(then) && !hasIntegerDivision(otherwise))
    return b_.CreateSelect(cond, value(then), value(otherwise));
  auto *thenBB = llvm::BasicBlock::Create(ctx_, "sel.then", scope_.fn);
  auto *elseBB = llvm::BasicBlock::Create(ctx_, "sel.else", scope_.fn);
  auto *join = llvm::BasicBlock::Create(ctx_, "sel.join", scope_.fn);
  b_.CreateCondBr(cond, thenBB, elseBB);
  b_.SetInsertPoint(thenBB);
  llvm::Value *a = value(then);
  llvm::BasicBlock *aEnd = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(elseBB);
  llvm::Value *c = value(otherwise);
  llvm::BasicBlock *cEnd = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode *phi = b_.CreatePHI(a->getType(), 2);
  phi->addIncoming(a, aEnd);
  phi->addIncoming(c, cEnd);
  return phi;
}

} // namespace weir::codegen::cpu::detail
