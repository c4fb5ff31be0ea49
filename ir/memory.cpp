/// \file
/// Transient allocation and liveness (see memory.h).

#include "ir/memory.h"

#include "ir/error.h"
#include "ir/scope.h"
#include "ir/state_view.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <utility>

namespace weir::ir {
namespace {

std::int64_t bytesOf(const Container &c, const Bindings &symbols) {
  Expr count = c.elementCount();
  Bindings b = symbols;
  for (const std::string &s : count.freeSymbols())
    b.emplace(s, 1);
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(count.evaluate(b),
                             static_cast<std::int64_t>(dtypeSize(c.dtype)),
                             &bytes))
    throw Error("container '" + c.name + "' has more bytes than int64 holds");
  return bytes;
}

} // namespace

namespace {

/// Whether lowering allocates register container `name` per iteration of
/// one map (every access node of it directly in one scope of one state)
/// rather than for the run.
bool perIteration(const Program &program, const std::string &name) {
  std::optional<std::pair<std::size_t, NodeId>> where;
  for (std::size_t k = 0; k < program.states.size(); ++k) {
    const State &s = program.states[k];
    std::optional<ScopeParents> parents;
    for (const Node &n : s.nodes) {
      if (n.kind != NodeKind::Access || n.access().container != name)
        continue;
      if (!parents)
        parents = scopeParents(s);
      std::pair<std::size_t, NodeId> here{k, (*parents)[n.id]};
      if (where && *where != here)
        return false;
      where = here;
    }
  }
  return where && where->second != 0;
}

} // namespace

bool allocatesBuffer(const Program &program, const Container &c) {
  auto named = [&](const std::vector<std::string> &v) {
    return std::find(v.begin(), v.end(), c.name) != v.end();
  };
  // Register storage in one map scope is allocated per iteration inside
  // it (lowering), not as a buffer for the run.
  return !named(program.inputs) && !named(program.outputs) && !c.isConstant() &&
         !c.isView() &&
         !(c.storage == Storage::Register && perIteration(program, c.name));
}

TopLevel topLevel(const State &state) {
  TopLevel t;
  ScopeParents parent = scopeParents(state);
  for (const Node &n : state.nodes) {
    NodeId x = n.kind == NodeKind::MapExit ? n.map().partner : n.id;
    // Bounded, in case the scopes of an odd graph loop.
    for (std::size_t guard = 0; guard <= state.nodes.size(); ++guard) {
      NodeId up = parent[x];
      if (up == 0)
        break;
      x = up;
    }
    t.member[n.id] = x;
  }

  t.order = viewState(state).order.at(0);
  for (std::size_t i = 0; i < t.order.size(); ++i)
    t.index[t.order[i]] = i;
  return t;
}

MemoryReport transientMemory(const Program &program, const Bindings &symbols) {
  MemoryReport r;
  std::map<std::string, std::size_t, std::less<>> slot;
  for (const auto &[name, c] : program.containers)
    if (allocatesBuffer(program, c)) {
      TransientLifetime l;
      l.container = name;
      l.bytes = bytesOf(c, symbols);
      slot[name] = r.transients.size();
      r.transients.push_back(std::move(l));
      r.allocated += r.transients.back().bytes;
      ++r.buffers;
    }

  // The buffer an access of `container` uses: its own, or its target's.
  auto touch = [&](const std::string &container, std::int64_t at) {
    const Container *c = program.findContainer(container);
    if (c && c->isView())
      c = program.findContainer(c->viewOf);
    if (!c)
      return;
    auto it = slot.find(c->name);
    if (it == slot.end())
      return;
    TransientLifetime &l = r.transients[it->second];
    l.first = l.first < 0 ? at : std::min(l.first, at);
    l.last = std::max(l.last, at);
  };

  std::int64_t base = 0;
  for (const State &s : program.states) {
    TopLevel t = topLevel(s);
    std::map<NodeId, const Node *> byId;
    for (const Node &n : s.nodes)
      byId[n.id] = &n;
    auto at = [&](NodeId id) {
      return base + static_cast<std::int64_t>(t.index.at(t.member.at(id)));
    };
    for (const Edge &e : s.edges) {
      auto src = byId.find(e.src), dst = byId.find(e.dst);
      if (src == byId.end() || dst == byId.end() || e.memlet.empty())
        continue;
      bool fromAccess = src->second->kind == NodeKind::Access;
      bool toAccess = dst->second->kind == NodeKind::Access;
      // A copy between access nodes runs with its destination; any other
      // edge moves data when its computing end runs.
      if (fromAccess)
        touch(src->second->access().container, at(e.dst));
      if (toAccess)
        touch(dst->second->access().container, at(fromAccess ? e.dst : e.src));
    }
    base += static_cast<std::int64_t>(t.order.size());
  }
  r.steps = base;

  std::vector<std::int64_t> delta(static_cast<std::size_t>(base) + 1, 0);
  for (const TransientLifetime &l : r.transients)
    if (l.first >= 0) {
      delta[static_cast<std::size_t>(l.first)] += l.bytes;
      delta[static_cast<std::size_t>(l.last) + 1] -= l.bytes;
    }
  std::int64_t live = 0;
  for (std::int64_t d : delta) {
    live += d;
    r.peak = std::max(r.peak, live);
  }
  return r;
}

std::string formatBytes(std::int64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  if (u == 0)
    return std::to_string(bytes) + " B";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", v, units[u]);
  return text;
}

std::string MemoryReport::str() const {
  return "allocated " + formatBytes(allocated) + " in " +
         std::to_string(buffers) + " buffer" + (buffers == 1 ? "" : "s") +
         ", peak " + formatBytes(peak);
}

} // namespace weir::ir
