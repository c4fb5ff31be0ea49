/// \file
/// Loop IR -> LLVM IR: functions, loops, outlined parallel bodies and the
/// typed scalar arithmetic (see llvm_emit.h and, for the semantics,
/// core/interp/tasklet_eval.h).

#include "codegen/cpu/llvm_emit.h"

#include "codegen/cpu/emitter.h"
#include "codegen/cpu/runtime_support.h"
#include "ir/error.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace weir::codegen::cpu::detail {

llvm::Type *Emitter::memType(DType t) {
  switch (t) {
  case DType::F32:
    return b_.getFloatTy();
  case DType::F64:
    return b_.getDoubleTy();
  case DType::F16:
  case DType::BF16:
  case DType::I16:
  case DType::U16:
    return b_.getInt16Ty();
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return b_.getInt8Ty();
  case DType::I32:
  case DType::U32:
    return b_.getInt32Ty();
  case DType::I64:
  case DType::U64:
    return b_.getInt64Ty();
  }
  return b_.getInt8Ty();
}

llvm::Type *Emitter::regType(DType t) {
  switch (t) {
  case DType::F16:
  case DType::BF16:
    return b_.getFloatTy();
  case DType::Bool:
    return b_.getInt1Ty();
  default:
    return memType(t);
  }
}

void Emitter::setFunctionAttributes(llvm::Function *fn) {
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr(llvm::Attribute::MustProgress);
}

llvm::FunctionCallee Emitter::runtime(const char *name, llvm::Type *ret,
                                      std::vector<llvm::Type *> params) {
  return m_.getOrInsertFunction(name,
                                llvm::FunctionType::get(ret, params, false));
}

llvm::Value *Emitter::buffer(const std::string &name) {
  auto it = scope_.buffers.find(name);
  if (it == scope_.buffers.end())
    throw Error("loop IR uses buffer '" + name + "', which is not defined");
  return it->second;
}

llvm::AllocaInst *Emitter::localSlot(const std::string &name,
                                     llvm::Type *type) {
  auto it = scope_.locals.find(name);
  if (it != scope_.locals.end())
    return it->second;
  llvm::IRBuilder<> entry(&scope_.fn->getEntryBlock(),
                          scope_.fn->getEntryBlock().begin());
  llvm::AllocaInst *slot = entry.CreateAlloca(type, nullptr, name);
  scope_.locals[name] = slot;
  return slot;
}

// ------------------------------------------------------------ statements --

void Emitter::emit(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Block:
    for (const StmtPtr &c : s.body)
      emit(*c);
    return;
  case StmtKind::For:
    return emitFor(s);
  case StmtKind::Allocate:
    return emitAllocate(s);
  case StmtKind::Store:
    return emitStore(s);
  case StmtKind::Assign: {
    llvm::Value *v = value(*s.value);
    b_.CreateStore(v, localSlot(s.var, v->getType()));
    return;
  }
  case StmtKind::Call:
    // Outside all loops, the call's block (a loop's exit, say) is named
    // after it; the entry block keeps its name (the first statement's).
    if (label_.empty() && !s.label.empty() &&
        b_.GetInsertBlock() != &scope_.fn->getEntryBlock()) {
      label_ = s.label;
      b_.GetInsertBlock()->setName(blockName("call"));
      label_.clear();
    }
    return profiled(s.label, [&] { emitCall(s); });
  case StmtKind::If: {
    llvm::Value *cond = value(*s.value);
    auto *then = llvm::BasicBlock::Create(ctx_, blockName("then"), scope_.fn);
    auto *cont = llvm::BasicBlock::Create(ctx_, blockName("endif"), scope_.fn);
    b_.CreateCondBr(cond, then, cont);
    b_.SetInsertPoint(then);
    for (const StmtPtr &c : s.body)
      emit(*c);
    b_.CreateBr(cont);
    b_.SetInsertPoint(cont);
    return;
  }
  }
}

template <typename F>
void Emitter::profiled(const std::string &label, F emitBody) {
  if (!profileLabels_ || loopDepth_ > 0) {
    ++loopDepth_;
    emitBody();
    --loopDepth_;
    return;
  }
  auto id = static_cast<std::int64_t>(profileLabels_->size());
  profileLabels_->push_back(label.empty() ? "(unnamed loop)" : label);
  llvm::Value *start =
      b_.CreateCall(runtime("weir_profile_enter", i64(), {ptr()}), {scope_.rt});
  ++loopDepth_;
  emitBody();
  --loopDepth_;
  b_.CreateCall(
      runtime("weir_profile_exit", b_.getVoidTy(), {ptr(), i64(), i64()}),
      {scope_.rt, b_.getInt64(static_cast<std::uint64_t>(id)), start});
}

std::string Emitter::blockName(const std::string &suffix) const {
  // Percent-encoded so that the first separator ends the label.
  std::string name;
  for (char c : label_)
    if (c == '%' || c == kBlockLabelSeparator)
      name += c == '%' ? "%25" : "%24";
    else
      name += c;
  return name + kBlockLabelSeparator + suffix;
}

void Emitter::emitFor(const Stmt &s) {
  std::string outer = label_;
  if (!s.label.empty())
    label_ = s.label;
  profiled(s.label, [&] {
    if (s.forKind == ForKind::Parallel)
      return emitParallelFor(s);
    if (std::optional<CopyNest> copy = copyNestOnly(s, localReads_))
      return emitCopy(s, *copy);
    emitSerialLoop(s.var, index(s.begin), index(s.end), index(s.step),
                   s.forKind == ForKind::Vectorized, s.body);
  });
  label_ = std::move(outer);
  // What follows the loop goes into its exit block, which so is named
  // after the enclosing loop's label (none outside all loops).
  if (s.forKind != ForKind::Parallel)
    b_.GetInsertBlock()->setName(blockName(s.var + ".exit"));
}

void Emitter::emitCopy(const Stmt &s, const CopyNest &c) {
  auto *block =
      llvm::BasicBlock::Create(ctx_, blockName(s.var + ".copy"), scope_.fn);
  b_.CreateBr(block);
  b_.SetInsertPoint(block);
  // weir_copy(dst, src, element bytes, rank, dims): dims holds, per loop,
  // its trip count and both strides, in a slot of the entry block.
  auto rank = static_cast<std::uint64_t>(c.dims.size());
  llvm::IRBuilder<> entry(&scope_.fn->getEntryBlock(),
                          scope_.fn->getEntryBlock().begin());
  llvm::AllocaInst *dims =
      entry.CreateAlloca(llvm::ArrayType::get(i64(), 3 * rank), nullptr,
                         "copy.dims");
  for (std::uint64_t k = 0; k < rank; ++k) {
    const CopyNest::Dim &d = c.dims[k];
    const ir::Expr *fields[] = {&d.extent, &d.dstStride, &d.srcStride};
    for (std::uint64_t j = 0; j < 3; ++j)
      b_.CreateStore(index(*fields[j]),
                     b_.CreateConstGEP1_64(i64(), dims, 3 * k + j));
  }
  llvm::Value *dst =
      b_.CreateGEP(memType(c.dtype), buffer(c.dst), index(c.dstOffset));
  llvm::Value *src =
      b_.CreateGEP(memType(c.dtype), buffer(c.src), index(c.srcOffset));
  b_.CreateCall(
      runtime("weir_copy", b_.getVoidTy(), {ptr(), ptr(), i64(), i64(), ptr()}),
      {dst, src, b_.getInt64(ir::dtypeSize(c.dtype)), b_.getInt64(rank), dims});
  auto *after =
      llvm::BasicBlock::Create(ctx_, blockName(s.var + ".exit"), scope_.fn);
  b_.CreateBr(after);
  b_.SetInsertPoint(after);
}

void Emitter::emitSerialLoop(const std::string &var, llvm::Value *begin,
                             llvm::Value *end, llvm::Value *step,
                             bool vectorize, const std::vector<StmtPtr> &body) {
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *head =
      llvm::BasicBlock::Create(ctx_, blockName(var + ".head"), scope_.fn);
  auto *loop =
      llvm::BasicBlock::Create(ctx_, blockName(var + ".body"), scope_.fn);
  auto *exit =
      llvm::BasicBlock::Create(ctx_, blockName(var + ".exit"), scope_.fn);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode *iv = b_.CreatePHI(i64(), 2, var);
  iv->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(iv, end), loop, exit);

  b_.SetInsertPoint(loop);
  llvm::Value *shadowed = nullptr;
  if (auto it = scope_.ints.find(var); it != scope_.ints.end())
    shadowed = it->second;
  scope_.ints[var] = iv;
  for (const StmtPtr &c : body)
    emit(*c);
  if (shadowed)
    scope_.ints[var] = shadowed;
  else
    scope_.ints.erase(var);
  llvm::Value *next = b_.CreateAdd(iv, step, var + ".next");
  llvm::BranchInst *back = b_.CreateBr(head);
  iv->addIncoming(next, b_.GetInsertBlock());
  if (vectorize) {
    llvm::MDNode *enable = llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
               llvm::ConstantAsMetadata::get(b_.getTrue())});
    llvm::MDNode *self = llvm::MDNode::getDistinct(ctx_, {nullptr, enable});
    self->replaceOperandWith(0, self);
    back->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
  b_.SetInsertPoint(exit);
}

void Emitter::emitParallelFor(const Stmt &s) {
  // Iteration count, computed here: the outlined body runs k in [lo, hi)
  // with var = begin + k * step.
  llvm::Value *begin = index(s.begin);
  llvm::Value *step = index(s.step);
  llvm::Value *span = b_.CreateSub(index(s.end), begin);
  llvm::Value *count = b_.CreateSDiv(
      b_.CreateSub(b_.CreateAdd(span, step), b_.getInt64(1)), step);
  count = b_.CreateSelect(b_.CreateICmpSGT(span, b_.getInt64(0)), count,
                          b_.getInt64(0));

  // The environment: every buffer and integer in scope, by position.
  std::vector<std::pair<std::string, llvm::Value *>> bufs(
      scope_.buffers.begin(), scope_.buffers.end());
  std::vector<std::pair<std::string, llvm::Value *>> ints(scope_.ints.begin(),
                                                          scope_.ints.end());
  std::vector<llvm::Type *> fields;
  for (std::size_t i = 0; i < bufs.size(); ++i)
    fields.push_back(ptr());
  for (std::size_t i = 0; i < ints.size(); ++i)
    fields.push_back(i64());
  fields.push_back(ptr()); // RunContext*
  llvm::StructType *envType = llvm::StructType::get(ctx_, fields);

  // inner(noalias buffers..., ints..., rt, lo, hi): the chunk's loop.
  std::vector<llvm::Type *> innerParams = fields;
  innerParams.push_back(i64());
  innerParams.push_back(i64());
  std::string name =
      scope_.fn->getName().str() + ".par" + std::to_string(outlined_++);
  auto *inner = llvm::Function::Create(
      llvm::FunctionType::get(b_.getVoidTy(), innerParams, false),
      llvm::Function::InternalLinkage, name + ".chunk", m_);
  setFunctionAttributes(inner);
  for (std::size_t i = 0; i < bufs.size(); ++i)
    inner->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);

  // trampoline(env, lo, hi): unpacks the environment and calls inner.
  auto *tramp = llvm::Function::Create(
      llvm::FunctionType::get(b_.getVoidTy(), {ptr(), i64(), i64()}, false),
      llvm::Function::InternalLinkage, name, m_);
  setFunctionAttributes(tramp);

  // Fill the environment in the current function.
  llvm::Value *env = nullptr;
  {
    llvm::IRBuilder<> entry(&scope_.fn->getEntryBlock(),
                            scope_.fn->getEntryBlock().begin());
    env = entry.CreateAlloca(envType, nullptr, name + ".env");
  }
  unsigned field = 0;
  for (const auto &[n, v] : bufs)
    b_.CreateStore(v, b_.CreateStructGEP(envType, env, field++));
  for (const auto &[n, v] : ints)
    b_.CreateStore(v, b_.CreateStructGEP(envType, env, field++));
  b_.CreateStore(scope_.rt, b_.CreateStructGEP(envType, env, field++));
  b_.CreateCall(runtime("weir_parallel_for", b_.getVoidTy(),
                        {ptr(), i64(), ptr(), ptr()}),
                {scope_.rt, count, tramp, env});

  llvm::IRBuilderBase::InsertPoint resume = b_.saveIP();
  Scope saved = std::move(scope_);

  // The trampoline.
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, blockName("entry"), tramp));
  std::vector<llvm::Value *> args;
  for (unsigned i = 0; i < fields.size(); ++i)
    args.push_back(b_.CreateLoad(
        fields[i], b_.CreateStructGEP(envType, tramp->getArg(0), i)));
  args.push_back(tramp->getArg(1));
  args.push_back(tramp->getArg(2));
  b_.CreateCall(inner, args);
  b_.CreateRetVoid();

  // The chunk.
  scope_ = Scope{};
  scope_.fn = inner;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, blockName("entry"), inner));
  unsigned arg = 0;
  for (const auto &[n, v] : bufs)
    scope_.buffers[n] = inner->getArg(arg++);
  for (const auto &[n, v] : ints)
    scope_.ints[n] = inner->getArg(arg++);
  scope_.rt = inner->getArg(arg++);
  llvm::Value *lo = inner->getArg(arg++);
  llvm::Value *hi = inner->getArg(arg++);
  // for k in [lo, hi): var = begin + k * step (begin and step recomputed
  // from the captured integers).
  llvm::Value *innerBegin = index(s.begin);
  llvm::Value *innerStep = index(s.step);
  std::string k = s.var + ".k";
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *head = llvm::BasicBlock::Create(ctx_, blockName(k + ".head"), inner);
  auto *loop = llvm::BasicBlock::Create(ctx_, blockName(k + ".body"), inner);
  auto *exit = llvm::BasicBlock::Create(ctx_, blockName(k + ".exit"), inner);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode *kv = b_.CreatePHI(i64(), 2, k);
  kv->addIncoming(lo, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(kv, hi), loop, exit);
  b_.SetInsertPoint(loop);
  scope_.ints[s.var] =
      b_.CreateAdd(innerBegin, b_.CreateMul(kv, innerStep), s.var);
  for (const StmtPtr &c : s.body)
    emit(*c);
  llvm::Value *next = b_.CreateAdd(kv, b_.getInt64(1));
  b_.CreateBr(head);
  kv->addIncoming(next, b_.GetInsertBlock());
  b_.SetInsertPoint(exit);
  b_.CreateRetVoid();

  scope_ = std::move(saved);
  b_.restoreIP(resume);
}

void Emitter::emitAllocate(const Stmt &s) {
  llvm::Value *bytes = b_.CreateMul(
      index(s.size),
      b_.getInt64(static_cast<std::int64_t>(ir::dtypeSize(s.dtype))));
  llvm::FunctionCallee alloc =
      runtime("weir_alloc", ptr(), {ptr(), i64(), i64()});
  if (auto *fn = llvm::dyn_cast<llvm::Function>(alloc.getCallee()))
    fn->addRetAttr(llvm::Attribute::NoAlias);
  llvm::Value *p = b_.CreateCall(
      alloc, {scope_.rt, bytes, b_.getInt64(s.zeroFill ? 1 : 0)}, s.buffer);
  // Out of memory: the runtime has recorded the error; skip the body.
  auto *ok =
      llvm::BasicBlock::Create(ctx_, blockName(s.buffer + ".ok"), scope_.fn);
  auto *done =
      llvm::BasicBlock::Create(ctx_, blockName(s.buffer + ".done"), scope_.fn);
  b_.CreateCondBr(b_.CreateIsNull(p), done, ok);
  b_.SetInsertPoint(ok);
  llvm::Value *shadowed = nullptr;
  if (auto it = scope_.buffers.find(s.buffer); it != scope_.buffers.end())
    shadowed = it->second;
  scope_.buffers[s.buffer] = p;
  for (const StmtPtr &c : s.body)
    emit(*c);
  b_.CreateCall(runtime("weir_free", b_.getVoidTy(), {ptr(), ptr(), i64()}),
                {scope_.rt, p, bytes});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  if (shadowed)
    scope_.buffers[s.buffer] = shadowed;
  else
    scope_.buffers.erase(s.buffer);
}

void Emitter::emitStore(const Stmt &s) {
  llvm::Value *v = value(*s.value);
  llvm::Value *bits = storeBits(s.value->type, v);
  llvm::BasicBlock *skip = nullptr;
  if (s.guard) {
    skip = llvm::BasicBlock::Create(ctx_, "guarded", scope_.fn);
    checkBounds(*s.guard, skip);
  }
  llvm::Value *addr =
      b_.CreateGEP(memType(s.value->type), buffer(s.buffer), index(s.index));
  b_.CreateStore(bits, addr);
  if (skip) {
    b_.CreateBr(skip);
    b_.SetInsertPoint(skip);
  }
}

void Emitter::emitCall(const Stmt &s) {
  if (s.callee != kCallSgemm)
    throw Error("loop IR calls unknown routine '" + s.callee + "'");
  // weir_sgemm(rt, label, the arguments in order): pointers, i64 and
  // double; the label names the call in a failure.
  std::vector<llvm::Type *> params{ptr(), ptr()};
  std::vector<llvm::Value *> args{
      scope_.rt, b_.CreateGlobalStringPtr(s.label.empty() ? "?" : s.label)};
  for (const CallArg &a : s.args) {
    switch (a.kind) {
    case CallArg::Kind::Pointer:
      params.push_back(ptr());
      args.push_back(
          b_.CreateGEP(memType(a.dtype), buffer(a.buffer), index(a.expr)));
      break;
    case CallArg::Kind::Int:
      params.push_back(i64());
      args.push_back(index(a.expr));
      break;
    case CallArg::Kind::Float:
      params.push_back(b_.getDoubleTy());
      args.push_back(llvm::ConstantFP::get(b_.getDoubleTy(), a.f));
      break;
    }
  }
  b_.CreateCall(runtime("weir_sgemm", b_.getVoidTy(), params), args);
}

// ----------------------------------------------------------------- entry --

namespace {

/// The label of the first labelled loop or call `s` runs ("" when none).
std::string firstLabel(const Stmt *s) {
  if (!s)
    return "";
  if ((s->kind == StmtKind::For || s->kind == StmtKind::Call) &&
      !s->label.empty())
    return s->label;
  for (const StmtPtr &c : s->body)
    if (std::string l = firstLabel(c.get()); !l.empty())
      return l;
  return "";
}

} // namespace

void Emitter::emitEntry(const LoopFunction &f, const std::string &entryName) {
  // kernel(noalias buffers..., symbols..., rt)
  std::vector<llvm::Type *> params;
  for (std::size_t i = 0; i < f.buffers.size(); ++i)
    params.push_back(ptr());
  for (std::size_t i = 0; i < f.symbols.size(); ++i)
    params.push_back(i64());
  params.push_back(ptr());
  auto *kernel = llvm::Function::Create(
      llvm::FunctionType::get(b_.getVoidTy(), params, false),
      llvm::Function::InternalLinkage, "kernel", m_);
  setFunctionAttributes(kernel);
  scope_ = Scope{};
  scope_.fn = kernel;
  localReads_ = f.body ? localReads(*f.body) : LocalReads{};
  // The entry blocks are named after the first statement: inlined into one
  // another, they are where that statement's code before its first loop
  // (or all of it, once a copy loop becomes a memcpy) lands.
  label_ = firstLabel(f.body.get());
  std::string entryBlock = label_.empty() ? "entry" : blockName("entry");
  label_.clear();
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, entryBlock, kernel));
  unsigned arg = 0;
  for (const BufferParam &p : f.buffers) {
    kernel->addParamAttr(arg, llvm::Attribute::NoAlias);
    kernel->getArg(arg)->setName(p.name);
    scope_.buffers[p.name] = kernel->getArg(arg++);
  }
  for (const std::string &s : f.symbols) {
    kernel->getArg(arg)->setName(s);
    scope_.ints[s] = kernel->getArg(arg++);
  }
  scope_.rt = kernel->getArg(arg);
  if (f.body)
    emit(*f.body);
  b_.CreateRetVoid();

  // entry(ptr buffers, ptr symbols, ptr rt)
  auto *entry = llvm::Function::Create(
      llvm::FunctionType::get(b_.getVoidTy(), {ptr(), ptr(), ptr()}, false),
      llvm::Function::ExternalLinkage, entryName, m_);
  setFunctionAttributes(entry);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, entryBlock, entry));
  std::vector<llvm::Value *> args;
  for (std::size_t i = 0; i < f.buffers.size(); ++i)
    args.push_back(b_.CreateLoad(
        ptr(), b_.CreateConstGEP1_64(ptr(), entry->getArg(0), i)));
  for (std::size_t i = 0; i < f.symbols.size(); ++i)
    args.push_back(b_.CreateLoad(
        i64(), b_.CreateConstGEP1_64(i64(), entry->getArg(1), i)));
  args.push_back(entry->getArg(2));
  b_.CreateCall(kernel, args);
  b_.CreateRetVoid();
}

} // namespace weir::codegen::cpu::detail

namespace weir::codegen::cpu {

std::unique_ptr<llvm::Module>
emitModule(const LoopFunction &f, const std::string &entryName,
           llvm::LLVMContext &context,
           std::vector<std::string> *profileLabels) {
  auto module = std::make_unique<llvm::Module>("weir." + f.name, context);
  detail::Emitter(context, *module, profileLabels).emitEntry(f, entryName);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os))
    throw Error("internal error: the LLVM IR generated for '" + f.name +
                "' is invalid: " + os.str());
  return module;
}

} // namespace weir::codegen::cpu
