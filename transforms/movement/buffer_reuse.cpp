/// \file
/// `buffer-reuse` (DaCe's TransientReuse): transients of the same dtype,
/// shape, strides and storage whose lifetimes are ordered by the dataflow
/// share one container, so the backend allocates fewer buffers.
///
/// Container B is merged into A (B's uses renamed to A) only when every
/// access of A happens before every access of B in every order the backend
/// may run the program: A's states come before B's, or, in the one state
/// they share, there is a path in the state's top-level dataflow graph (a
/// map with its body counting as one node) from each top-level node
/// touching A to each touching B. The lowering order is only one
/// topological order; a path is what every order keeps, so the rename
/// creates no write-after-read or write-after-write hazard. B must also
/// never read the zeros its own buffer starts with: one write with no
/// write-conflict resolution covers all of B before anything else touches
/// it. Arguments, constants, views and the targets of views are never
/// merged. With parameter `order`, lifetimes the dataflow leaves unordered
/// (in one state, no use of B reaching a use of A) are ordered first by empty
/// edges from the earlier one's last uses to the later one's first uses,
/// so that every order the backend may choose keeps them apart. Whole
/// program; exact.

#include "transforms/movement/buffer_reuse.h"

#include "ir/error.h"
#include "ir/memory.h"
#include "ir/primitives.h"
#include "ir/scope.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace weir::transforms {

namespace {

using ir::NodeId;
using ir::NodeKind;

/// One state's top level with, per member, the set of members that reach
/// it (a bitset row per member, in run order).
struct StateOrder {
  ir::TopLevel top;
  /// Per member, the node an ordering edge leaves it from (a map's exit).
  std::vector<NodeId> exits;
  std::size_t words = 0;
  std::vector<std::uint64_t> ancestors;

  const std::uint64_t *row(std::size_t i) const {
    return ancestors.data() + i * words;
  }
  std::uint64_t *row(std::size_t i) { return ancestors.data() + i * words; }
  /// Whether member `a` reaches member `b`.
  bool reaches(std::size_t a, std::size_t b) const {
    return row(b)[a / 64] >> (a % 64) & 1;
  }
  /// Records an edge from member `from` to member `to` (no cycle).
  void addEdge(std::size_t from, std::size_t to) {
    std::vector<std::uint64_t> gain(row(from), row(from) + words);
    gain[from / 64] |= std::uint64_t(1) << (from % 64);
    for (std::size_t z = 0; z < top.order.size(); ++z)
      if (z == to || reaches(to, z))
        for (std::size_t w = 0; w < words; ++w)
          row(z)[w] |= gain[w];
  }
};

StateOrder orderOf(const ir::State &state) {
  StateOrder o;
  o.top = ir::topLevel(state);
  std::size_t n = o.top.order.size();
  for (NodeId id : o.top.order) {
    const ir::Node *node = state.findNode(id);
    o.exits.push_back(node->kind == NodeKind::MapEntry ? node->map().partner
                                                       : id);
  }
  o.words = (n + 63) / 64;
  o.ancestors.assign(n * o.words, 0);
  std::vector<std::set<std::size_t>> preds(n);
  for (const ir::Edge &e : state.edges) {
    auto s = o.top.member.find(e.src), d = o.top.member.find(e.dst);
    if (s == o.top.member.end() || d == o.top.member.end() ||
        s->second == d->second)
      continue;
    preds[o.top.index.at(d->second)].insert(o.top.index.at(s->second));
  }
  // Run order is topological: every predecessor's row is complete.
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t p : preds[i]) {
      std::uint64_t *dst = o.ancestors.data() + i * o.words;
      const std::uint64_t *src = o.row(p);
      for (std::size_t w = 0; w < o.words; ++w)
        dst[w] |= src[w];
      dst[p / 64] |= std::uint64_t(1) << (p % 64);
    }
  return o;
}

/// The top-level members of each state that touch a container.
using Touches = std::map<std::size_t, std::set<std::size_t>>;

bool fullRange(const ir::Range &r, const ir::Expr &extent) {
  return r.begin == ir::Expr(0) && r.end == extent && r.step == ir::Expr(1);
}

bool rowMajor(const ir::Container &c) {
  return c.strides == ir::rowMajorStrides(c.shape);
}

/// Whether the write on `edge` (into an access node of `c`, no
/// write-conflict resolution) sets every element of `c`.
class Coverage {
public:
  Coverage(const ir::Program &p, const ir::State &s) : program_(p) {
    for (const ir::Node &n : s.nodes)
      nodes_[n.id] = &n;
    for (const ir::Edge &e : s.edges)
      in_[e.dst].push_back(&e);
  }

  bool covers(const ir::Edge &edge, const ir::Container &c) const {
    const ir::Node &src = *nodes_.at(edge.src);
    if (src.kind == NodeKind::Access)
      return copyCovers(edge, c);
    // Walk out of the maps to the node that writes, collecting the ranges
    // of the parameters its index may use.
    ParamRanges params;
    const ir::Edge *inner = &edge;
    while (nodes_.at(inner->src)->kind == NodeKind::MapExit) {
      const ir::Node &exit = *nodes_.at(inner->src);
      if (inner->memlet.wcr || !ir::scopeOutSuffix(inner->srcConn))
        return false;
      const ir::MapData &m = exit.map();
      for (std::size_t i = 0; i < m.params.size(); ++i)
        if (!params.emplace(m.params[i], m.ranges[i]).second)
          return false; // a shadowed parameter: not worth reasoning about
      std::string conn = ir::scopePartner(inner->srcConn);
      const ir::Edge *next = nullptr;
      if (auto it = in_.find(exit.id); it != in_.end())
        for (const ir::Edge *e : it->second)
          if (e->dstConn == conn)
            next = e;
      if (!next)
        return false;
      inner = next;
    }
    const ir::Node &writer = *nodes_.at(inner->src);
    const ir::Memlet &m = inner->memlet;
    if (m.wcr || m.container != c.name ||
        m.subset.dims.size() != c.shape.size())
      return false;
    if (writer.kind == NodeKind::Tasklet)
      return assigns(writer, inner->srcConn) && indexCovers(m, c, params);
    if (writer.kind == NodeKind::Primitive &&
        writer.primitive().primitive == "gemm")
      return gemmCovers(writer, m, c, params);
    return false;
  }

private:
  static bool assigns(const ir::Node &tasklet, const std::string &conn) {
    const auto &code = tasklet.tasklet().code;
    if (!code)
      return false;
    for (const auto &s : code->statements)
      if (s.target == conn)
        return true;
    return false;
  }

  using ParamRanges = std::map<std::string, ir::Range, std::less<>>;

  /// Whether `index`, as the parameters run over their ranges, takes every
  /// value in [0, extent): a mixed radix `p0 + r0·(p1 + r1·(p2 + ...))` of
  /// distinct parameters not yet `used`, each running over 0:r with step 1
  /// (im2col's `c·9 + k0·3 + k1`, or a plain `i`).
  static bool radixCovers(const ir::Expr &index, const ir::Expr &extent,
                          const ParamRanges &params,
                          std::set<std::string> &used) {
    std::vector<std::pair<std::string, ir::Expr>> terms; // param, coefficient
    auto term = [&](const ir::Expr &t) {
      if (t.kind() == ir::ExprKind::Sym) {
        terms.push_back({t.symbolName(), ir::Expr(1)});
        return true;
      }
      if (t.kind() != ir::ExprKind::Mul)
        return false;
      std::string param;
      ir::Expr coefficient(1);
      for (const ir::Expr &f : t.operands()) {
        if (f.kind() == ir::ExprKind::Sym && params.count(f.symbolName())) {
          if (!param.empty())
            return false;
          param = f.symbolName();
        } else {
          coefficient = coefficient * f;
        }
      }
      if (param.empty())
        return false;
      terms.push_back({param, coefficient});
      return true;
    };
    if (index.kind() == ir::ExprKind::Add) {
      for (const ir::Expr &t : index.operands())
        if (!term(t))
          return false;
    } else if (!term(index)) {
      return false;
    }
    ir::Expr next(1);
    while (!terms.empty()) {
      auto t = std::find_if(terms.begin(), terms.end(),
                            [&](const auto &x) { return x.second == next; });
      if (t == terms.end())
        return false;
      auto p = params.find(t->first);
      if (p == params.end() || !used.insert(p->first).second ||
          p->second.begin != ir::Expr(0) || p->second.step != ir::Expr(1))
        return false;
      next = next * p->second.end;
      terms.erase(t);
    }
    return next == extent;
  }

  /// Each dimension is the container's whole extent, or a point whose
  /// index covers the extent as the parameters run (radixCovers), no
  /// parameter serving twice. `contiguous` receives whether the
  /// whole-extent dimensions form one row-major block per parameter point
  /// (no parameter after a dimension longer than 1), `block` their element
  /// count.
  static bool dimsCover(const ir::Memlet &m, const ir::Container &c,
                        const ParamRanges &params, bool *contiguous = nullptr,
                        ir::Expr *block = nullptr) {
    std::set<std::string> used;
    bool wide = false, together = true;
    ir::Expr count(1);
    for (std::size_t d = 0; d < c.shape.size(); ++d) {
      const ir::Range &r = m.subset.dims[d];
      if (fullRange(r, c.shape[d])) {
        wide = wide || c.shape[d] != ir::Expr(1);
        count = count * c.shape[d];
        continue;
      }
      if (!r.isPoint() || !radixCovers(r.begin, c.shape[d], params, used))
        return false;
      together = together && !wide;
    }
    if (contiguous)
      *contiguous = together;
    if (block)
      *block = count;
    return true;
  }

  static bool indexCovers(const ir::Memlet &m, const ir::Container &c,
                          const ParamRanges &params) {
    return dimsCover(m, c, params);
  }

  /// A gemm with beta 0 writes m x n elements, rows ldc apart, from the
  /// memlet's begin corner: all of a contiguous row-major block when ldc is
  /// n and the block holds m·n elements.
  static bool gemmCovers(const ir::Node &gemm, const ir::Memlet &m,
                         const ir::Container &c, const ParamRanges &params) {
    ir::GemmCall call;
    try {
      call = ir::readGemm(gemm.primitive());
    } catch (const Error &) {
      return false;
    }
    bool contiguous = false;
    ir::Expr block;
    if (call.beta != 0 || !rowMajor(c) ||
        !dimsCover(m, c, params, &contiguous, &block))
      return false;
    return contiguous && call.ldc == call.n && block == call.m * call.n;
  }

  bool copyCovers(const ir::Edge &e, const ir::Container &c) const {
    const ir::Container *named = program_.findContainer(e.memlet.container);
    if (!named || e.memlet.subset.dims.size() != named->shape.size())
      return false;
    if (named->name == c.name || named->shape == c.shape)
      return e.memlet.subset == ir::Subset::full(named->shape);
    return e.memlet.subset.volume() == c.elementCount();
  }

  const ir::Program &program_;
  std::unordered_map<NodeId, const ir::Node *> nodes_;
  std::unordered_map<NodeId, std::vector<const ir::Edge *>> in_;
};

/// What writtenFirst asks of one state, built once per plan: asking it of
/// every transient over the whole state made the plan quadratic
/// (DenseNet-121's 178 transients: 0.8 s).
struct StateReach {
  StateReach(const ir::Program &p, const ir::State &s) : coverage(p, s) {
    for (const ir::Node &n : s.nodes) {
      if (n.kind == NodeKind::Access)
        accesses[n.access().container].push_back(n.id);
      if (n.kind == NodeKind::MapEntry)
        succ[n.id].push_back(n.map().partner); // the map's end follows it
    }
    for (const ir::Edge &e : s.edges) {
      succ[e.src].push_back(e.dst);
      if (e.memlet.empty())
        continue;
      dataIn[e.dst].push_back(&e);
      dataOut.insert(e.src);
    }
  }

  Coverage coverage;
  /// Access nodes by container name.
  std::unordered_map<std::string_view, std::vector<NodeId>> accesses;
  std::unordered_map<NodeId, std::vector<NodeId>> succ;
  /// Edges that move data, by destination.
  std::unordered_map<NodeId, std::vector<const ir::Edge *>> dataIn;
  /// Nodes that data edges leave.
  std::unordered_set<NodeId> dataOut;
};

/// Whether container `c` is completely written, without a write-conflict
/// resolution, before anything else accesses it: in the first state that
/// accesses it, one access node has such a write as its only incoming data
/// and every other access node of `c` there is reachable from it.
/// `reach[i]` describes state i.
bool writtenFirst(const ir::Container &c,
                  const std::vector<StateReach> &reach) {
  for (const StateReach &r : reach) {
    auto mine = r.accesses.find(c.name);
    if (mine == r.accesses.end())
      continue;
    std::set<NodeId> touching;
    for (NodeId a : mine->second)
      if (r.dataIn.count(a) || r.dataOut.count(a))
        touching.insert(a);
    if (touching.empty())
      continue; // access nodes that only order others
    for (NodeId d : touching) {
      auto in = r.dataIn.find(d);
      if (in == r.dataIn.end() || in->second.size() != 1 ||
          in->second.front()->memlet.wcr ||
          !r.coverage.covers(*in->second.front(), c))
        continue;
      // Reach every other touching access node from d (stopping once all
      // are found).
      std::unordered_set<NodeId> seen{d};
      std::vector<NodeId> stack{d};
      std::size_t found = 1;
      while (!stack.empty() && found < touching.size()) {
        NodeId x = stack.back();
        stack.pop_back();
        if (auto it = r.succ.find(x); it != r.succ.end())
          for (NodeId y : it->second)
            if (seen.insert(y).second) {
              stack.push_back(y);
              found += touching.count(y);
            }
      }
      if (found == touching.size())
        return true;
    }
    return false; // the first state touching it reads or merges first
  }
  return false;
}

std::string shapeKey(const ir::Container &c) {
  std::string key = std::string(ir::dtypeName(c.dtype)) + "|" +
                    std::string(ir::storageName(c.storage)) + "|";
  for (const ir::Expr &e : c.shape)
    key += e.str() + ",";
  key += "|";
  for (const ir::Expr &e : c.strides)
    key += e.str() + ",";
  return key;
}

/// A container and every container merged into it so far.
struct Slot {
  std::string name;
  Touches touches;
};

/// Every access of `slot` happens before every access of `b`.
bool before(const Slot &slot, const Touches &b,
            const std::vector<StateOrder> &orders) {
  std::size_t lastA = slot.touches.rbegin()->first;
  std::size_t firstB = b.begin()->first;
  if (lastA != firstB)
    return lastA < firstB;
  const StateOrder &o = orders[firstB];
  for (std::size_t m : b.at(firstB))
    for (std::size_t a : slot.touches.at(firstB))
      if (!o.reaches(a, m))
        return false;
  return true;
}

/// Whether ordering edges from `slot`'s accesses to `b`'s could make the
/// first happen before the second: they share a state, and nothing of `b`
/// is, or reaches, anything of `slot` there (so no edge closes a cycle).
bool orderable(const Slot &slot, const Touches &b,
               const std::vector<StateOrder> &orders) {
  std::size_t lastA = slot.touches.rbegin()->first;
  std::size_t firstB = b.begin()->first;
  if (lastA != firstB)
    return false;
  const StateOrder &o = orders[firstB];
  const std::set<std::size_t> &bs = b.at(firstB);
  for (std::size_t a : slot.touches.at(firstB)) {
    if (bs.count(a))
      return false;
    for (std::size_t m : bs)
      if (o.reaches(m, a))
        return false;
  }
  return true;
}

/// Adds the fewest edges that put every member of `as` before every member
/// of `bs` in state `s`: from the last of `as` to the first of `bs`.
void addOrderingEdges(StateOrder &o, const std::string &state,
                      const std::set<std::size_t> &as,
                      const std::set<std::size_t> &bs,
                      std::vector<BufferReusePlan::OrderingEdge> &edges) {
  auto extreme = [&](const std::set<std::size_t> &xs, bool last) {
    std::vector<std::size_t> out;
    for (std::size_t x : xs)
      if (std::none_of(xs.begin(), xs.end(), [&](std::size_t y) {
            return y != x && (last ? o.reaches(x, y) : o.reaches(y, x));
          }))
        out.push_back(x);
    return out;
  };
  std::vector<std::size_t> sinks = extreme(as, true),
                           sources = extreme(bs, false);
  for (std::size_t a : sinks)
    for (std::size_t b : sources)
      if (!o.reaches(a, b)) {
        o.addEdge(a, b);
        edges.push_back({state, o.exits[a], o.top.order[b]});
      }
}

} // namespace

std::string BufferReusePlan::str() const {
  std::set<std::string> targets;
  for (const auto &[from, to] : renames)
    targets.insert(to);
  std::string text = "merges " + std::to_string(renames.size()) + " transient" +
                     (renames.size() == 1 ? "" : "s") + " into " +
                     std::to_string(targets.size()) + " other" +
                     (targets.size() == 1 ? "" : "s");
  if (!edges.empty())
    text += " (" + std::to_string(edges.size()) + " ordering edge" +
            (edges.size() == 1 ? "" : "s") + " added)";
  return text + ": allocated " + ir::formatBytes(allocatedBefore) + " -> " +
         ir::formatBytes(allocatedAfter) + " (" +
         std::to_string(allocatedBefore) + " -> " +
         std::to_string(allocatedAfter) + " bytes)";
}

BufferReusePlan planBufferReuse(const ir::Program &program, bool addOrdering) {
  BufferReusePlan plan;
  ir::MemoryReport memory = ir::transientMemory(program);
  plan.allocatedBefore = plan.allocatedAfter = memory.allocated;

  std::vector<StateOrder> orders;
  for (const ir::State &s : program.states)
    orders.push_back(orderOf(s));

  // Which top-level members touch each container.
  std::map<std::string, Touches, std::less<>> touches;
  for (std::size_t si = 0; si < program.states.size(); ++si) {
    const ir::State &s = program.states[si];
    const StateOrder &o = orders[si];
    std::unordered_map<NodeId, const ir::Node *> nodes;
    for (const ir::Node &n : s.nodes)
      nodes[n.id] = &n;
    auto add = [&](const std::string &container, NodeId a, NodeId b) {
      std::set<std::size_t> &t = touches[container][si];
      t.insert(o.top.index.at(o.top.member.at(a)));
      t.insert(o.top.index.at(o.top.member.at(b)));
    };
    for (const ir::Edge &e : s.edges) {
      auto src = nodes.find(e.src), dst = nodes.find(e.dst);
      if (e.memlet.empty() || src == nodes.end() || dst == nodes.end())
        continue;
      add(e.memlet.container, e.src, e.dst);
      for (const ir::Node *end : {src->second, dst->second})
        if (end->kind == NodeKind::Access)
          add(end->access().container, e.src, e.dst);
    }
  }

  std::set<std::string, std::less<>> viewed;
  for (const auto &[name, c] : program.containers)
    if (c.isView())
      viewed.insert(c.viewOf);
  std::map<std::string, std::int64_t, std::less<>> bytes;
  for (const ir::TransientLifetime &l : memory.transients)
    bytes[l.container] = l.bytes;

  // Candidates in the order the backend first touches them.
  std::vector<std::pair<std::pair<std::size_t, std::size_t>, std::string>>
      order;
  for (const auto &[name, c] : program.containers) {
    auto t = touches.find(name);
    if (t == touches.end() || !c.transient ||
        !ir::allocatesBuffer(program, c) || viewed.count(name))
      continue;
    order.push_back(
        {{t->second.begin()->first, *t->second.begin()->second.begin()}, name});
  }
  std::sort(order.begin(), order.end());

  std::map<std::string, std::vector<Slot>> slots;
  std::vector<StateReach> reach; // built when first needed
  auto writtenFirstHere = [&](const ir::Container &c) {
    if (reach.empty()) {
      reach.reserve(program.states.size());
      for (const ir::State &s : program.states)
        reach.emplace_back(program, s);
    }
    return writtenFirst(c, reach);
  };
  for (const auto &[first, name] : order) {
    const ir::Container &c = program.container(name);
    const Touches &t = touches.at(name);
    std::vector<Slot> &same = slots[shapeKey(c)];
    Slot *into = nullptr;
    if (!same.empty() && writtenFirstHere(c)) {
      for (Slot &s : same)
        if (before(s, t, orders)) {
          into = &s;
          break;
        }
      for (Slot &s : same)
        if (!into && addOrdering && orderable(s, t, orders)) {
          std::size_t si = t.begin()->first;
          addOrderingEdges(orders[si], program.states[si].name,
                           s.touches.at(si), t.at(si), plan.edges);
          into = &s;
        }
    }
    if (!into) {
      same.push_back({name, t});
      continue;
    }
    plan.renames.push_back({name, into->name});
    plan.allocatedAfter -= bytes.at(name);
    for (const auto &[si, members] : t)
      into->touches[si].insert(members.begin(), members.end());
  }
  return plan;
}

namespace {

class BufferReuse : public PlannedTransformation<BufferReusePlan> {
public:
  BufferReuse();

protected:
  Planned<BufferReusePlan> plan(const ir::Program &program, const Match &match,
                                const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params,
                      const BufferReusePlan &plan) const override;
};

} // namespace

BufferReuse::BufferReuse()
    : PlannedTransformation({
          .id = "buffer-reuse",
          .tier = Tier::Movement,
          .summary =
              "Let transients whose lifetimes are ordered share one buffer",
          .description =
              "In the manner of DaCe's TransientReuse. The CPU backend "
              "allocates one buffer per transient for the whole run. "
              "Transients with the same dtype, shape, strides and storage "
              "whose lifetimes the dataflow orders share one container "
              "instead: the later one's uses are renamed to the earlier one's. "
              "Ordered means every access of the earlier one happens before "
              "every access of the later one in any order the backend may run "
              "the program (an earlier state, or a path in the state's "
              "top-level graph, a map with its body counting as one node), so "
              "no write-after-read or write-after-write hazard appears; and "
              "the later one is completely written, with no write-conflict "
              "resolution, before anything else touches it, so it never reads "
              "the zeros a fresh buffer would hold. Arguments, constants, "
              "views and the targets of views are left alone. With `order`, "
              "two lifetimes the dataflow leaves unordered in one state (no "
              "use of the later one reaching a use of the earlier one) are "
              "ordered first, by empty edges from the earlier one's last uses "
              "to the later one's first uses; the backend runs a state's top "
              "level in sequence anyway, so this costs no parallelism it uses. "
              "The saving (ir::transientMemory, symbols 1) is recorded in the "
              "program's metadata under `buffer-reuse`. Run it last: later "
              "transformations see the shared containers as one. Exact.",
          .params = {{"order", ParamSpec::Kind::Bool, false,
                      "also share buffers whose lifetimes the dataflow leaves "
                      "unordered, adding empty edges from the earlier one's "
                      "last uses to the later one's first"}},
      }) {}

Planned<BufferReusePlan> BufferReuse::plan(const ir::Program &program,
                                           const Match &,
                                           const Params &params) const {
  // A nested subgraph may name the enclosing program's containers.
  for (const ir::State &s : program.states)
    for (const ir::Node &n : s.nodes)
      if (n.kind == NodeKind::Library)
        for (const auto &[name, value] : n.library().attributes)
          if (std::holds_alternative<std::shared_ptr<const ir::Program>>(value))
            return Planned<BufferReusePlan>::refuse(CheckResult::failure(
                "library node '" + n.label + "' has a subgraph ('" + name +
                    "') that may name containers; expand it first",
                {n.id}));
  Planned<BufferReusePlan> out;
  try {
    out.plan = planBufferReuse(program, boolParam(params, "order"));
  } catch (const Error &e) {
    return Planned<BufferReusePlan>::refuse(CheckResult::failure(e.what()));
  }
  if (out.plan.renames.empty())
    return Planned<BufferReusePlan>::refuse(CheckResult::failure(
        "no two transients of the same dtype, shape and strides have "
        "lifetimes the dataflow orders"));
  return out;
}

ApplyResult BufferReuse::rewrite(const ir::Program &program, const Match &,
                                 const Params &,
                                 const BufferReusePlan &plan) const {
  ApplyResult r{program, {}};
  for (const auto &[from, to] : plan.renames) {
    renameContainerUses(r.program, from, to);
    r.program.containers.erase(from);
  }
  for (const BufferReusePlan::OrderingEdge &e : plan.edges)
    ir::addEdge(r.program, stateNamed(r.program, e.state), e.from, "", e.to, "",
                ir::Memlet{});
  r.program.metadata["buffer-reuse"] = plan.str();
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<BufferReuse>()};

} // namespace weir::transforms
