/// \file
/// Cutting a LoopFunction into pieces and a driver program (see pieces.h).

#include "codegen/cpu/pieces.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

namespace weir::codegen::cpu {
namespace {

std::int64_t valueSize(const Value &v) {
  std::int64_t n = 1;
  for (const ValuePtr &o : v.operands)
    n += valueSize(*o);
  return n;
}

/// Buffers `s` names that it does not allocate itself, into `used`.
void freeBuffers(const Stmt &s, std::set<std::string> &inner,
                 std::set<std::string> &used);

void freeBuffers(const Value &v, const std::set<std::string> &inner,
                 std::set<std::string> &used) {
  if (v.kind == ValueKind::Load && !inner.count(v.name))
    used.insert(v.name);
  for (const ValuePtr &o : v.operands)
    freeBuffers(*o, inner, used);
}

void freeBuffers(const Stmt &s, std::set<std::string> &inner,
                 std::set<std::string> &used) {
  auto name = [&](const std::string &b) {
    if (!inner.count(b))
      used.insert(b);
  };
  if (s.value)
    freeBuffers(*s.value, inner, used);
  if (s.kind == StmtKind::Store)
    name(s.buffer);
  for (const CallArg &a : s.args)
    if (a.kind == CallArg::Kind::Pointer)
      name(a.buffer);
  if (s.kind == StmtKind::Allocate) {
    bool added = inner.insert(s.buffer).second;
    for (const StmtPtr &c : s.body)
      freeBuffers(*c, inner, used);
    if (added)
      inner.erase(s.buffer);
    return;
  }
  for (const StmtPtr &c : s.body)
    freeBuffers(*c, inner, used);
}

/// The statements of a level, its blocks flattened.
void flatten(const std::vector<StmtPtr> &stmts, std::vector<StmtPtr> &out) {
  for (const StmtPtr &s : stmts)
    if (s->kind == StmtKind::Block)
      flatten(s->body, out);
    else
      out.push_back(s);
}

/// Where a level may be cut: no local assigned at or before a cut is read
/// after it (a local lives in one function). Scalar tasklets outside all
/// maps hand values over that way.
///
/// Computed once for the whole function, so that it stays linear however
/// deep the allocations nest (lowering wraps the body in one allocation per
/// transient, so each level's last statement holds all that follows). The
/// statements are numbered in pre-order; a local lives from its first
/// assignment to its last read. A cut before the statement at position b
/// is allowed unless some local assigned before b is read at or after b.
class LocalLifetimes {
public:
  explicit LocalLifetimes(const StmtPtr &body) {
    if (body)
      number(*body);
    std::vector<std::int64_t> lastReadOfAssignedAt(next_, -1);
    for (const auto &[name, life] : lives_)
      if (life.assigned != kNone && life.lastRead != kNone)
        lastReadOfAssignedAt[life.assigned] = std::max(
            lastReadOfAssignedAt[life.assigned], std::int64_t(life.lastRead));
    reach_.assign(next_ + 1, -1);
    for (std::size_t p = 0; p < next_; ++p)
      reach_[p + 1] = std::max(reach_[p], lastReadOfAssignedAt[p]);
  }

  /// Whether a level may be cut just before statement `s`.
  bool mayCutBefore(const Stmt &s) const {
    auto it = position_.find(&s);
    if (it == position_.end() || it->second == kNone)
      return false;
    return reach_[it->second] < std::int64_t(it->second);
  }

private:
  static constexpr std::size_t kNone = ~std::size_t(0);
  struct Life {
    std::size_t assigned = kNone, lastRead = kNone;
  };

  void number(const Stmt &s) {
    std::size_t at = next_++;
    // A statement held in two places has no one position: never cut
    // before it.
    if (auto [it, fresh] = position_.emplace(&s, at); !fresh)
      it->second = kNone;
    if (s.kind == StmtKind::Assign) {
      Life &l = lives_[s.var];
      l.assigned = std::min(l.assigned, at);
    }
    if (s.value)
      reads(*s.value, at);
    for (const StmtPtr &c : s.body)
      number(*c);
  }

  void reads(const Value &v, std::size_t at) {
    if (v.kind == ValueKind::Local) {
      Life &l = lives_[v.name];
      l.lastRead = l.lastRead == kNone ? at : std::max(l.lastRead, at);
    }
    for (const ValuePtr &o : v.operands)
      reads(*o, at);
  }

  std::size_t next_ = 0;
  std::unordered_map<const Stmt *, std::size_t> position_;
  std::unordered_map<std::string, Life> lives_;
  /// reach_[p]: the last read of any local assigned before position p.
  std::vector<std::int64_t> reach_;
};

/// The node a statement's label names: `/conv1/Conv` for the loop nests
/// `/conv1/Conv.pad_fill` and `/conv1/Conv.gemm`.
std::string labelStem(const std::string &label) {
  std::size_t dot = label.rfind('.');
  std::size_t slash = label.rfind('/');
  if (dot == std::string::npos ||
      (slash != std::string::npos && dot < slash))
    return label;
  return label.substr(0, dot);
}

class Cutter {
public:
  Cutter(const LoopFunction &f, std::int64_t budget)
      : f_(f), budget_(budget), lifetimes_(f.body),
        reads_(f.body ? localReads(*f.body) : LocalReads{}) {
    for (const BufferParam &b : f.buffers) {
      slots_[b.name].push_back(plan_.slotCount++);
      dtypes_[b.name].push_back(b.dtype);
    }
  }

  PiecePlan run() {
    if (f_.body)
      level({f_.body});
    flush();
    return std::move(plan_);
  }

private:
  void level(const std::vector<StmtPtr> &stmts) {
    std::vector<StmtPtr> items;
    flatten(stmts, items);
    // cut[i]: whether the level may be cut after items[i].
    std::vector<bool> cut(items.size(), true);
    for (std::size_t i = 0; i + 1 < items.size(); ++i)
      cut[i] = lifetimes_.mayCutBefore(*items[i + 1]);
    for (std::size_t i = 0; i < items.size(); ++i)
      if (items[i]->kind == StmtKind::Allocate &&
          ((i > 0 && !cut[i - 1]) || !cut[i])) {
        // A local lives across an allocation: one piece for the whole
        // level, allocations included.
        flush();
        group_ = items;
        flush();
        return;
      }
    for (std::size_t i = 0; i < items.size(); ++i) {
      const StmtPtr &s = items[i];
      if (s->kind == StmtKind::Allocate) {
        allocate(*s);
        continue;
      }
      bool mayCut = i == 0 || cut[i - 1];
      if (mayCut && cut[i] && copy(*s))
        continue;
      std::int64_t size = loopIRSize(*s);
      std::string stem = labelStem(s->label);
      if (!group_.empty() && mayCut &&
          (stem != groupStem_ || groupSize_ + size > budget_))
        flush();
      group_.push_back(s);
      groupSize_ += size;
      if (!s->label.empty() || group_.size() == 1)
        groupStem_ = std::move(stem);
    }
  }

  /// `s` as a driver copy step, when it is a copy nest over buffers the
  /// driver holds; false otherwise.
  bool copy(const Stmt &s) {
    std::optional<CopyNest> nest = copyNestOnly(s, reads_);
    if (!nest)
      return false;
    auto dst = slots_.find(nest->dst), src = slots_.find(nest->src);
    if (dst == slots_.end() || dst->second.empty() || src == slots_.end() ||
        src->second.empty())
      return false;
    flush();
    DriverStep step;
    step.kind = DriverStep::Kind::Copy;
    step.copy = static_cast<int>(plan_.copies.size());
    plan_.copies.push_back(
        {std::move(*nest), dst->second.back(), src->second.back(), s.label});
    plan_.steps.push_back(step);
    return true;
  }

  void allocate(const Stmt &s) {
    flush();
    int slot = plan_.slotCount++;
    auto at = static_cast<int>(plan_.steps.size());
    DriverStep a;
    a.kind = DriverStep::Kind::Allocate;
    a.slot = slot;
    a.dtype = s.dtype;
    a.size = s.size;
    a.zeroFill = s.zeroFill;
    plan_.steps.push_back(a);
    slots_[s.buffer].push_back(slot);
    dtypes_[s.buffer].push_back(s.dtype);
    level(s.body);
    flush();
    slots_[s.buffer].pop_back();
    dtypes_[s.buffer].pop_back();
    DriverStep f;
    f.kind = DriverStep::Kind::Free;
    f.slot = slot;
    plan_.steps.push_back(f);
    plan_.steps[static_cast<std::size_t>(at)].skipTo =
        static_cast<int>(plan_.steps.size());
  }

  void flush() {
    if (group_.empty())
      return;
    std::set<std::string> inner, used;
    for (const StmtPtr &s : group_)
      freeBuffers(*s, inner, used);
    Piece p;
    // A fixed name: a piece's code depends on its statements alone.
    p.function.name = "piece";
    p.function.symbols = f_.symbols;
    for (const std::string &b : used) {
      auto it = slots_.find(b);
      // A name nothing defines stays unresolved: emitting the piece reports
      // it, as emitting the whole function did.
      if (it == slots_.end() || it->second.empty())
        continue;
      BufferParam param;
      param.name = b;
      param.dtype = dtypes_[b].back();
      p.function.buffers.push_back(std::move(param));
      p.slots.push_back(it->second.back());
    }
    p.function.body = group_.size() == 1 ? group_.front() : block(group_);
    DriverStep call;
    call.kind = DriverStep::Kind::Call;
    call.piece = static_cast<int>(plan_.pieces.size());
    plan_.pieces.push_back(std::move(p));
    plan_.steps.push_back(call);
    group_.clear();
    groupSize_ = 0;
  }

  const LoopFunction &f_;
  std::int64_t budget_;
  LocalLifetimes lifetimes_;
  LocalReads reads_; ///< of the whole function
  PiecePlan plan_;
  /// Buffer name -> slots (and dtypes), innermost allocation last.
  std::map<std::string, std::vector<int>> slots_;
  std::map<std::string, std::vector<ir::DType>> dtypes_;
  std::vector<StmtPtr> group_;
  std::int64_t groupSize_ = 0;
  std::string groupStem_;
};

} // namespace

std::int64_t loopIRSize(const Stmt &s) {
  std::int64_t n = 1;
  if (s.value)
    n += valueSize(*s.value);
  n += static_cast<std::int64_t>(s.args.size());
  for (const StmtPtr &c : s.body)
    n += loopIRSize(*c);
  return n;
}

PiecePlan cutIntoPieces(const LoopFunction &f, std::int64_t budget) {
  return Cutter(f, budget).run();
}

} // namespace weir::codegen::cpu
