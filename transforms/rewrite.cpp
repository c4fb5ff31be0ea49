#include "transforms/rewrite.h"

#include "ir/error.h"

#include <algorithm>
#include <set>

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
  for (ir::State &s : program.states) {
    std::set<ir::NodeId> touched;
    for (const ir::Edge &e : s.edges) {
      touched.insert(e.src);
      touched.insert(e.dst);
    }
    std::vector<ir::NodeId> lonely;
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Access && !touched.count(n.id))
        lonely.push_back(n.id);
    for (ir::NodeId id : lonely)
      removeNode(s, id, idMap);
  }
  std::set<std::string, std::less<>> used;
  for (const ir::State &s : program.states) {
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Access)
        used.insert(n.access().container);
    for (const ir::Edge &e : s.edges)
      if (!e.memlet.empty())
        used.insert(e.memlet.container);
  }
  std::vector<std::string> removed;
  for (auto it = program.containers.begin(); it != program.containers.end();) {
    if (it->second.transient && !used.count(it->first) &&
        !isArgument(program, it->first)) {
      removed.push_back(it->first);
      it = program.containers.erase(it);
    } else {
      ++it;
    }
  }
  return removed;
}

ContainerUses containerUses(const ir::Program &program,
                            std::string_view container) {
  ContainerUses u;
  for (const ir::State &s : program.states) {
    std::set<ir::NodeId> nodes;
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Access && n.access().container == container)
        nodes.insert(n.id);
    u.accessNodes += int(nodes.size());
    for (const ir::Edge &e : s.edges) {
      u.writes += nodes.count(e.dst) ? 1 : 0;
      u.reads += nodes.count(e.src) ? 1 : 0;
    }
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
