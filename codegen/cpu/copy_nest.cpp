/// \file
/// Recognizing copy nests (see copy_nest.h).

#include "codegen/cpu/copy_nest.h"

#include <map>

namespace weir::codegen::cpu {
namespace {

using SymbolMap = std::map<std::string, ir::Expr, std::less<>>;

bool movesBitsUnchanged(ir::DType t) {
  return t != ir::DType::F16 && t != ir::DType::BF16 && t != ir::DType::Bool;
}

/// The statements of `body`, blocks flattened.
void flatten(const std::vector<StmtPtr> &body, std::vector<const Stmt *> &out) {
  for (const StmtPtr &s : body)
    if (s->kind == StmtKind::Block)
      flatten(s->body, out);
    else
      out.push_back(s.get());
}

struct Loop {
  std::string var;
  ir::Expr begin, extent;
};

/// Whether `e` uses one of the nest's variables.
bool usesLoopVariables(const ir::Expr &e, const std::vector<Loop> &loops) {
  for (const std::string &name : e.freeSymbols())
    for (const Loop &l : loops)
      if (l.var == name)
        return true;
  return false;
}

/// `index` as offset + sum of stride_k * (var_k - begin_k), or false when
/// it is not affine in the nest's variables.
bool affine(const ir::Expr &index, const std::vector<Loop> &loops,
            ir::Expr &offset, std::vector<ir::Expr> &strides) {
  SymbolMap at;
  for (const Loop &l : loops)
    at[l.var] = l.begin;
  offset = index.substitute(at);
  std::vector<ir::Expr> terms{offset};
  strides.clear();
  for (const Loop &l : loops) {
    SymbolMap step = at;
    step[l.var] = l.begin + 1;
    ir::Expr stride = index.substitute(step) - offset;
    if (usesLoopVariables(stride, loops))
      return false;
    terms.push_back(stride * (ir::Expr::symbol(l.var) - l.begin));
    strides.push_back(stride);
  }
  // Affine exactly when it equals its own linear reconstruction (both are
  // canonical: a product of two variables, a floordiv or a mod differ).
  return !usesLoopVariables(offset, loops) && ir::sum(terms) == index;
}

} // namespace

std::optional<CopyNest> copyNest(const Stmt &s) {
  // The perfect nest of loops.
  std::vector<Loop> loops;
  const Stmt *at = &s;
  std::vector<const Stmt *> body;
  for (;;) {
    if (at->kind != StmtKind::For || at->forKind == ForKind::Parallel ||
        at->step != ir::Expr(1) || loops.size() == kMaxCopyRank)
      return std::nullopt;
    for (const Loop &l : loops)
      if (l.var == at->var) // shadowed: one name, two variables
        return std::nullopt;
    loops.push_back({at->var, at->begin, at->end - at->begin});
    body.clear();
    flatten(at->body, body);
    if (body.size() == 1 && body.front()->kind == StmtKind::For) {
      at = body.front();
      continue;
    }
    break;
  }
  for (const Loop &l : loops)
    if (usesLoopVariables(l.begin, loops) || usesLoopVariables(l.extent, loops))
      return std::nullopt;

  // The body: locals handing the element on, then its store.
  if (body.empty() || body.back()->kind != StmtKind::Store ||
      body.back()->guard)
    return std::nullopt;
  CopyNest copy;
  std::map<std::string, const Value *, std::less<>> assigned;
  for (std::size_t i = 0; i + 1 < body.size(); ++i) {
    const Stmt &a = *body[i];
    if (a.kind != StmtKind::Assign || !assigned.emplace(a.var, nullptr).second)
      return std::nullopt;
    assigned[a.var] = a.value.get();
    copy.localReads.emplace_back(a.var, 0);
  }
  const Stmt &store = *body.back();
  const Value *v = store.value.get();
  ir::DType dtype = v->type;
  while (v->kind == ValueKind::Local) {
    auto it = assigned.find(v->name);
    if (it == assigned.end() || !it->second || v->type != dtype)
      return std::nullopt;
    for (auto &[name, reads] : copy.localReads)
      reads += name == v->name ? 1 : 0;
    v = it->second;
  }
  if (v->kind != ValueKind::Load || v->guard || v->type != dtype ||
      !movesBitsUnchanged(dtype) || v->name == store.buffer)
    return std::nullopt;
  // Every local is one link of the chain: a local assigned but not on the
  // way to the store would be an effect this call drops.
  for (const auto &[name, reads] : copy.localReads)
    if (reads != 1)
      return std::nullopt;

  std::vector<ir::Expr> dstStrides, srcStrides;
  if (!affine(store.index, loops, copy.dstOffset, dstStrides) ||
      !affine(v->index, loops, copy.srcOffset, srcStrides))
    return std::nullopt;
  // Rows contiguous on both sides, which go by memcpy: a strided innermost
  // loop (im2col's stride-2 windows, a transpose) is faster as the loops
  // LLVM vectorizes than element by element (ResNet-18's first im2col:
  // 0.47 ms as loops, 2.9 ms as a strided copy).
  if (dstStrides.back() != ir::Expr(1) || srcStrides.back() != ir::Expr(1))
    return std::nullopt;
  copy.dst = store.buffer;
  copy.src = v->name;
  copy.dtype = dtype;
  for (std::size_t k = 0; k < loops.size(); ++k)
    copy.dims.push_back({loops[k].extent, dstStrides[k], srcStrides[k]});
  return copy;
}

namespace {

void countReads(const Value &v, LocalReads &reads) {
  if (v.kind == ValueKind::Local)
    ++reads[v.name];
  for (const ValuePtr &o : v.operands)
    countReads(*o, reads);
}

void countReads(const Stmt &s, LocalReads &reads) {
  if (s.value)
    countReads(*s.value, reads);
  for (const StmtPtr &c : s.body)
    countReads(*c, reads);
}

} // namespace

LocalReads localReads(const Stmt &s) {
  LocalReads reads;
  countReads(s, reads);
  return reads;
}

std::optional<CopyNest> copyNestOnly(const Stmt &s,
                                     const LocalReads &functionReads) {
  std::optional<CopyNest> copy = copyNest(s);
  if (!copy)
    return std::nullopt;
  for (const auto &[name, reads] : copy->localReads)
    if (auto it = functionReads.find(name);
        it == functionReads.end() || it->second != reads)
      return std::nullopt;
  return copy;
}

} // namespace weir::codegen::cpu
