/// \file
/// The first-touch proof that lets an allocation skip its zero-fill (see
/// the header).

#include "codegen/lower/first_touch.h"

#include "ir/affine.h"

#include <algorithm>
#include <functional>
#include <optional>

namespace weir::codegen {
namespace {

using Subst = std::map<std::string, ir::Expr, std::less<>>;

/// A top-level statement in execution order, with the values of the loop
/// variables of the one-iteration loops around it.
struct Step {
  const Stmt *stmt;
  Subst fixed;
};

void flatten(const StmtPtr &s, const Subst &fixed, std::vector<Step> &out) {
  if (s->kind == StmtKind::Block) {
    for (const StmtPtr &c : s->body)
      flatten(c, fixed, out);
    return;
  }
  if (s->kind == StmtKind::For && s->step == ir::Expr(1)) {
    ir::Expr begin = s->begin.substitute(fixed), end = s->end.substitute(fixed);
    if ((end - begin).asConstant() == std::int64_t(1)) {
      Subst inner = fixed;
      inner[s->var] = begin;
      for (const StmtPtr &c : s->body)
        flatten(c, inner, out);
      return;
    }
  }
  out.push_back({s.get(), fixed});
}

bool valueReads(const Value &v, const std::string &buffer) {
  if (v.kind == ValueKind::Load && v.name == buffer)
    return true;
  return std::any_of(v.operands.begin(), v.operands.end(),
                     [&](const ValuePtr &o) { return valueReads(*o, buffer); });
}

/// Every buffer `s` names (loads, stores, call pointers, allocations).
void names(const Stmt &s, std::set<std::string, std::less<>> &out) {
  std::function<void(const Value &)> value = [&](const Value &v) {
    if (v.kind == ValueKind::Load)
      out.insert(v.name);
    for (const ValuePtr &o : v.operands)
      value(*o);
  };
  if (s.value)
    value(*s.value);
  if (s.kind == StmtKind::Store || s.kind == StmtKind::Allocate)
    out.insert(s.buffer);
  for (const CallArg &a : s.args)
    if (a.kind == CallArg::Kind::Pointer)
      out.insert(a.buffer);
  for (const StmtPtr &c : s.body)
    names(*c, out);
}

/// What an sgemm call does to `buffer`: nothing, reads it (as A or B), or
/// writes it as C, with beta 0 and ldc = N, a contiguous block of M·N
/// elements at `offset` (`length` 0 when the block is not that, e.g. beta
/// is not 0 or the sizes are not constant).
struct GemmUse {
  bool reads = false, writes = false;
  ir::Expr offset;
  std::int64_t length = 0;
};

GemmUse gemmUse(const Stmt &s, const std::string &buffer, const Subst &fixed) {
  GemmUse use;
  const CallArg &a = s.args[6], &b = s.args[8], &beta = s.args[10],
                &c = s.args[11];
  use.reads = a.buffer == buffer || b.buffer == buffer;
  use.writes = c.kind == CallArg::Kind::Pointer && c.buffer == buffer;
  if (!use.writes)
    return use;
  use.offset = c.expr.substitute(fixed);
  auto m = s.args[2].expr.substitute(fixed).asConstant();
  auto n = s.args[3].expr.substitute(fixed).asConstant();
  auto ldc = s.args[12].expr.substitute(fixed).asConstant();
  if (beta.kind == CallArg::Kind::Float && beta.f == 0 && m && n && ldc &&
      *ldc == *n)
    use.length = *m * *n;
  return use;
}

bool isSgemm(const Stmt &s) {
  return s.kind == StmtKind::Call && s.callee == kCallSgemm &&
         s.args.size() == kSgemmArgs;
}

/// An sgemm call with beta 0 writing all of `buffer` (see the header).
bool gemmWritesWhole(const Step &step, const std::string &buffer,
                     const ir::Expr &size) {
  if (!isSgemm(*step.stmt))
    return false;
  GemmUse use = gemmUse(*step.stmt, buffer, step.fixed);
  return !use.reads && use.writes && use.length > 0 &&
         use.offset.asConstant() == std::int64_t(0) &&
         size.asConstant() == use.length;
}

/// The elements a loop nest writes, as the offsets of equal runs: every
/// write of the innermost body (a store, one element; an sgemm call with
/// beta 0 and ldc = N, M·N contiguous elements) at its offset, then each
/// loop (constant bounds, unit step) as a digit t·c, t < extent, taken in
/// order of its coefficient c: it lengthens the runs when c is their length
/// and multiplies the offsets otherwise. Whole when, at the end, the runs
/// start at 0, L, 2L, ... once each and cover `size` (see the header).
class Coverage {
public:
  /// Adds the digit (coefficient, extent); false when the offsets grow
  /// past kMaxOffsets.
  bool digit(std::int64_t c, std::int64_t extent) {
    if (c == run_) {
      run_ *= extent;
      compact();
      return true;
    }
    if (starts_.size() * static_cast<std::size_t>(extent) > kMaxOffsets)
      return false;
    std::vector<std::int64_t> next;
    for (std::int64_t t = 0; t < extent; ++t)
      for (std::int64_t s : starts_)
        next.push_back(s + t * c);
    starts_ = std::move(next);
    compact();
    return true;
  }
  void setWrites(std::vector<std::int64_t> starts, std::int64_t run) {
    starts_ = std::move(starts);
    run_ = run;
    compact();
  }
  bool whole(std::int64_t size) const {
    return starts_.size() == 1 && starts_[0] == 0 && run_ == size;
  }

private:
  static constexpr std::size_t kMaxOffsets = std::size_t(1) << 16;
  /// Offsets 0, L, 2L, ... (each once) are one run of their total length.
  void compact() {
    std::sort(starts_.begin(), starts_.end());
    for (std::size_t i = 0; i < starts_.size(); ++i)
      if (starts_[i] != static_cast<std::int64_t>(i) * run_)
        return;
    run_ *= static_cast<std::int64_t>(starts_.size());
    starts_ = {0};
  }
  std::vector<std::int64_t> starts_;
  std::int64_t run_ = 1;
};

/// A perfect loop nest that writes every element of `buffer` once before
/// any read (see the header and Coverage).
bool nestWritesWhole(const Step &step, const std::string &buffer,
                     const ir::Expr &size) {
  struct Loop {
    std::string var;
    std::int64_t begin, extent;
  };
  std::vector<Loop> loops;
  const Stmt *s = step.stmt;
  while (s->kind == StmtKind::For) {
    auto begin = s->begin.substitute(step.fixed).asConstant();
    auto end = s->end.substitute(step.fixed).asConstant();
    if (!begin || !end || *end <= *begin || s->step != ir::Expr(1))
      return false;
    loops.push_back({s->var, *begin, *end - *begin});
    if (s->body.size() == 1 && s->body[0]->kind == StmtKind::For) {
      s = s->body[0].get();
      continue;
    }
    break;
  }
  auto count = size.asConstant();
  if (loops.empty() || !count)
    return false;
  std::vector<std::string> vars;
  for (const Loop &l : loops)
    vars.push_back(l.var);
  // Each write's offset as an affine function of the loop variables; all
  // must share one set of coefficients.
  std::vector<std::int64_t> starts;
  std::optional<ir::Affine> shape;
  std::int64_t run = 0;
  auto addWrite = [&](const ir::Expr &offset, std::int64_t length) {
    std::optional<ir::Affine> a =
        ir::affineIn(offset.substitute(step.fixed), vars);
    if (!a || (run && run != length) || (shape && a->coef != shape->coef))
      return false;
    auto base = a->constant.asConstant();
    if (!base)
      return false;
    std::int64_t origin = *base;
    for (const Loop &l : loops)
      origin += a->coef.at(l.var) * l.begin;
    starts.push_back(origin);
    shape = a;
    run = length;
    return true;
  };
  for (const StmtPtr &c : s->body) {
    if (c->kind == StmtKind::Assign || c->kind == StmtKind::Store) {
      if (valueReads(*c->value, buffer))
        return false;
      if (c->kind == StmtKind::Store && c->buffer == buffer &&
          !addWrite(c->index, 1))
        return false;
      continue;
    }
    // An sgemm whose C is a contiguous M·N block of the buffer.
    if (!isSgemm(*c))
      return false;
    GemmUse use = gemmUse(*c, buffer, step.fixed);
    if (use.reads ||
        (use.writes && (use.length == 0 || !addWrite(use.offset, use.length))))
      return false;
  }
  if (starts.empty())
    return false;
  Coverage cover;
  cover.setWrites(std::move(starts), run);
  std::vector<std::pair<std::int64_t, std::int64_t>> digits; // coef, extent
  for (const Loop &l : loops) {
    std::int64_t c = shape->coef.at(l.var);
    if (l.extent == 1)
      continue;
    if (c <= 0)
      return false;
    digits.push_back({c, l.extent});
  }
  std::sort(digits.begin(), digits.end());
  for (const auto &[c, extent] : digits)
    if (!cover.digit(c, extent))
      return false;
  return cover.whole(*count);
}

} // namespace

std::set<std::string, std::less<>>
writtenWholeFirst(const StmtPtr &body,
                  const std::map<std::string, ir::Expr, std::less<>> &sizes) {
  std::vector<Step> steps;
  flatten(body, {}, steps);
  std::set<std::string, std::less<>> whole, decided;
  for (const Step &step : steps) {
    std::set<std::string, std::less<>> named;
    names(*step.stmt, named);
    for (const std::string &b : named) {
      auto size = sizes.find(b);
      if (size == sizes.end() || !decided.insert(b).second)
        continue;
      if (gemmWritesWhole(step, b, size->second) ||
          nestWritesWhole(step, b, size->second))
        whole.insert(b);
    }
  }
  return whole;
}

} // namespace weir::codegen
