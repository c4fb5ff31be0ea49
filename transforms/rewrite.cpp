#include "transforms/rewrite.h"

#include "ir/error.h"
#include "ir/node_index.h"
#include "ir/state_memo.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace weir::transforms {

const ir::State &stateNamed(const ir::Program &program, std::string_view name) {
  for (const ir::State &s : program.states)
    if (s.name == name)
      return s;
  throw Error("there is no state '" + std::string(name) + "'");
}

ir::State &stateNamed(ir::Program &program, std::string_view name) {
  return const_cast<ir::State &>(
      stateNamed(static_cast<const ir::Program &>(program), name));
}

std::optional<std::string> notPlainTransient(const ir::Program &program,
                                             const std::string &container) {
  const ir::Container &c = program.container(container);
  if (!c.transient || isArgument(program, container) || c.isConstant() ||
      c.isView())
    return "'" + container +
           "' is not a plain transient (an argument, constant or view stays "
           "in memory)";
  for (const auto &[other, oc] : program.containers)
    if (oc.viewOf == container)
      return "'" + container + "' is viewed by '" + other + "'";
  return std::nullopt;
}

ir::Edge &edgeWithId(ir::State &state, ir::EdgeId id) {
  for (std::size_t i = 0; i < state.edges.size(); ++i)
    if (state.edges[i].id == id)
      return state.edges.edit(i);
  throw Error("edge " + std::to_string(id) + " is not in state '" + state.name +
              "'");
}

void removeNode(ir::State &state, ir::NodeId id, IdMap *idMap) {
  state.edges.eraseIf(
      [&](const ir::Edge &e) { return e.src == id || e.dst == id; });
  state.nodes.eraseIf([&](const ir::Node &n) { return n.id == id; });
  if (idMap)
    idMap->erase(id);
}

void renameContainerUses(ir::Program &program, const std::string &from,
                         const std::string &to) {
  for (ir::State &s : program.states) {
    s.nodes.editWhere(
        [&](const ir::Node &n) {
          return n.kind == ir::NodeKind::Access && n.access().container == from;
        },
        [&](ir::Node &n) {
          std::get<ir::AccessData>(n.payload).container = to;
          if (n.label == from)
            n.label = to;
        });
    s.edges.editWhere(
        [&](const ir::Edge &e) { return e.memlet.container == from; },
        [&](ir::Edge &e) { e.memlet.container = to; });
  }
}

bool containerUsed(const ir::Program &program, std::string_view container) {
  for (const ir::State &s : program.states) {
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Access && n.access().container == container)
        return true;
    for (const ir::Edge &e : s.edges)
      if (e.memlet.container == container)
        return true;
  }
  return false;
}

bool isArgument(const ir::Program &program, std::string_view container) {
  return std::find(program.inputs.begin(), program.inputs.end(), container) !=
             program.inputs.end() ||
         std::find(program.outputs.begin(), program.outputs.end(), container) !=
             program.outputs.end();
}

std::vector<std::string> removeUnused(ir::Program &program, IdMap *idMap) {
  // Flat arrays and hash sets: a recipe calls this after most steps, on
  // programs of thousands of nodes (ordered sets of every id and name were
  // a tenth of DenseNet-121's fusion steps).
  for (ir::State &s : program.states) {
    const ir::NodeIndex nodes(s);
    std::vector<char> touched(s.nodes.size(), 0);
    for (const ir::Edge &e : s.edges)
      for (ir::NodeId end : {e.src, e.dst})
        if (std::size_t at = nodes.position(end); at != ir::NodeIndex::kAbsent)
          touched[at] = 1;
    std::vector<ir::NodeId> lonely;
    for (std::size_t i = 0; i < s.nodes.size(); ++i)
      if (s.nodes[i].kind == ir::NodeKind::Access && !touched[i])
        lonely.push_back(s.nodes[i].id);
    for (ir::NodeId id : lonely)
      removeNode(s, id, idMap);
  }
  std::unordered_set<std::string_view> used;
  for (const ir::State &s : program.states) {
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Access)
        used.insert(n.access().container);
    for (const ir::Edge &e : s.edges)
      if (!e.memlet.empty())
        used.insert(e.memlet.container);
  }
  std::vector<std::string> removed;
  for (const auto &[name, c] : program.containers)
    if (c.transient && !used.count(name) && !isArgument(program, name))
      removed.push_back(name);
  for (const std::string &name : removed)
    program.containers.erase(name);
  return removed;
}

namespace {

/// Every container's uses in one state, by name: built once per state of a
/// memoized version (ir/state_memo.h), where the checks of a recipe's
/// matches ask about one container after another.
class ContainerUseIndex {
public:
  explicit ContainerUseIndex(const ir::State &s) {
    // The version's node index, which validating it built already.
    const std::shared_ptr<const ir::NodeIndex> index =
        ir::memoized<ir::NodeIndex>(s, [&] { return ir::NodeIndex(s); });
    const ir::NodeIndex &nodes = *index;
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Access)
        ++uses_[n.access().container].accessNodes;
    for (const ir::Edge &e : s.edges) {
      if (const ir::Node *d = nodes.find(e.dst);
          d && d->kind == ir::NodeKind::Access)
        ++uses_[d->access().container].writes;
      if (const ir::Node *r = nodes.find(e.src);
          r && r->kind == ir::NodeKind::Access)
        ++uses_[r->access().container].reads;
    }
  }
  ContainerUses of(std::string_view container) const {
    auto it = uses_.find(container);
    return it == uses_.end() ? ContainerUses{} : it->second;
  }

private:
  /// The names are the state's own (it outlives the memo's index).
  std::unordered_map<std::string_view, ContainerUses> uses_;
};

ContainerUses scanUses(const ir::State &s, std::string_view container);

/// A memoized version's state answers its first question by a scan (most
/// versions of a recipe are asked once, by the one step made from them)
/// and builds the index for the second.
class ContainerUseAnswers {
public:
  ContainerUseAnswers() = default;
  /// memoized() moves a fresh one into place.
  ContainerUseAnswers(ContainerUseAnswers &&) noexcept {}
  ContainerUses of(const ir::State &s, std::string_view container) const {
    std::lock_guard lock(mutex_);
    if (!index_ && asked_++ == 0)
      return scanUses(s, container);
    if (!index_)
      index_ = std::make_unique<ContainerUseIndex>(s);
    return index_->of(container);
  }

private:
  mutable std::mutex mutex_;
  mutable int asked_ = 0;
  mutable std::unique_ptr<ContainerUseIndex> index_;
};

/// `container`'s uses in `s`, counted directly.
ContainerUses scanUses(const ir::State &s, std::string_view container) {
  ContainerUses u;
  std::vector<ir::NodeId> nodes; // a container has a few access nodes
  for (const ir::Node &n : s.nodes)
    if (n.kind == ir::NodeKind::Access && n.access().container == container)
      nodes.push_back(n.id);
  u.accessNodes = int(nodes.size());
  if (nodes.empty())
    return u;
  auto among = [&](ir::NodeId id) {
    return std::find(nodes.begin(), nodes.end(), id) != nodes.end();
  };
  for (const ir::Edge &e : s.edges) {
    u.writes += among(e.dst) ? 1 : 0;
    u.reads += among(e.src) ? 1 : 0;
  }
  return u;
}

} // namespace

ContainerUses containerUses(const ir::Program &program,
                            std::string_view container) {
  ContainerUses u;
  for (const ir::State &s : program.states) {
    ContainerUses here =
        ir::memoHolding(s)
            ? ir::memoized<ContainerUseAnswers>(
                  s, [] { return ContainerUseAnswers(); })
                  ->of(s, container)
            : scanUses(s, container);
    u.accessNodes += here.accessNodes;
    u.writes += here.writes;
    u.reads += here.reads;
  }
  return u;
}

std::string inputContainer(const ir::State &state, ir::NodeId id,
                           std::string_view conn) {
  for (const ir::Edge &e : state.edges)
    if (e.dst == id && e.dstConn == conn)
      return e.memlet.container;
  return "";
}

std::string outputContainer(const ir::State &state, ir::NodeId id,
                            std::string_view conn) {
  for (const ir::Edge &e : state.edges)
    if (e.src == id && e.srcConn == conn)
      return e.memlet.container;
  return "";
}

std::string freshContainerName(const ir::Program &program,
                               const std::string &base) {
  if (!program.findContainer(base))
    return base;
  for (int i = 1;; ++i) {
    std::string name = base + "_" + std::to_string(i);
    if (!program.findContainer(name))
      return name;
  }
}

} // namespace weir::transforms
