#include "ir/program.h"

#include "ir/error.h"

#include <array>

namespace weir::ir {
namespace {

template <typename Enum, std::size_t N>
std::optional<Enum> parseByName(const std::array<std::string_view, N> &names,
                                std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name)
      return static_cast<Enum>(i);
  return std::nullopt;
}

constexpr std::array<std::string_view, 5> kStorageNames{
    "host", "register", "gpu-global", "gpu-shared", "accel-scratchpad"};
constexpr std::array<std::string_view, 6> kNodeKindNames{
    "access", "tasklet", "map-entry", "map-exit", "library", "primitive"};
constexpr std::array<std::string_view, 6> kScheduleNames{
    "sequential", "cpu-parallel", "vectorized",
    "gpu-grid",   "gpu-block",    "accelerator"};
constexpr std::array<std::string_view, 4> kWcrNames{"sum", "max", "min",
                                                    "prod"};

} // namespace

std::string_view storageName(Storage s) {
  return kStorageNames[static_cast<std::size_t>(s)];
}
std::optional<Storage> parseStorage(std::string_view name) {
  return parseByName<Storage>(kStorageNames, name);
}
std::string_view nodeKindName(NodeKind k) {
  return kNodeKindNames[static_cast<std::size_t>(k)];
}
std::optional<NodeKind> parseNodeKind(std::string_view name) {
  return parseByName<NodeKind>(kNodeKindNames, name);
}
std::string_view scheduleName(Schedule s) {
  return kScheduleNames[static_cast<std::size_t>(s)];
}
std::optional<Schedule> parseSchedule(std::string_view name) {
  return parseByName<Schedule>(kScheduleNames, name);
}
std::string_view wcrName(Wcr w) {
  return kWcrNames[static_cast<std::size_t>(w)];
}
std::optional<Wcr> parseWcr(std::string_view name) {
  return parseByName<Wcr>(kWcrNames, name);
}

Expr Container::elementCount() const {
  Expr n(1);
  for (const Expr &d : shape)
    n = n * d;
  return n;
}

Expr Container::byteSize() const {
  return elementCount() * Expr(static_cast<std::int64_t>(dtypeSize(dtype)));
}

std::vector<Expr> rowMajorStrides(const std::vector<Expr> &shape) {
  std::vector<Expr> strides(shape.size(), Expr(1));
  for (std::size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

const Connector *Node::findInput(std::string_view name) const {
  for (const Connector &c : inputs)
    if (c.name == name)
      return &c;
  return nullptr;
}

const Connector *Node::findOutput(std::string_view name) const {
  for (const Connector &c : outputs)
    if (c.name == name)
      return &c;
  return nullptr;
}

Expr Memlet::volume() const { return empty() ? Expr(0) : subset.volume(); }

std::string Memlet::str() const {
  if (empty())
    return "∅";
  std::string s = container + "[" + subset.str() + "]";
  if (wcr)
    s += " (" + std::string(wcrName(*wcr)) + ")";
  return s;
}

namespace {

/// The position of the node with this id, or nodes.size(). Nodes are
/// usually in id order (fresh ids are increasing and new nodes are
/// appended), so a binary search finds most; a miss (the order was changed,
/// or the id is absent) falls back to a scan. Either way the answer is exact.
std::size_t positionOf(const CowList<Node> &nodes, NodeId id) {
  std::size_t lo = 0, hi = nodes.size();
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (nodes[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < nodes.size() && nodes[lo].id == id)
    return lo;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].id == id)
      return i;
  return nodes.size();
}

} // namespace

const Node *State::findNode(NodeId id) const {
  std::size_t at = positionOf(nodes, id);
  return at == nodes.size() ? nullptr : &nodes[at];
}

Node *State::findNode(NodeId id) {
  std::size_t at = positionOf(nodes, id);
  return at == nodes.size() ? nullptr : &nodes.edit(at);
}

const Edge *State::findEdge(EdgeId id) const {
  for (const Edge &e : edges)
    if (e.id == id)
      return &e;
  return nullptr;
}

std::vector<const Edge *> State::inEdges(NodeId id) const {
  std::vector<const Edge *> out;
  for (const Edge &e : edges)
    if (e.dst == id)
      out.push_back(&e);
  return out;
}

std::vector<const Edge *> State::outEdges(NodeId id) const {
  std::vector<const Edge *> out;
  for (const Edge &e : edges)
    if (e.src == id)
      out.push_back(&e);
  return out;
}

const Container *Program::findContainer(std::string_view name) const {
  auto it = containers.find(name);
  return it == containers.end() ? nullptr : &it->second;
}

const Container &Program::container(std::string_view name) const {
  if (const Container *c = findContainer(name))
    return *c;
  throw Error("program '" + this->name + "' has no container '" +
              std::string(name) + "'");
}

Container &Program::addContainer(Container c) {
  if (c.strides.empty() && !c.shape.empty())
    c.strides = rowMajorStrides(c.shape);
  std::string key = c.name;
  auto [it, inserted] = containers.emplace(key, std::move(c));
  if (!inserted)
    throw Error("container '" + key + "' already exists in program '" + name +
                "'");
  return it->second;
}

std::size_t Program::nodeCount() const {
  std::size_t n = 0;
  for (const State &s : states)
    n += s.nodes.size();
  return n;
}

NodeId addAccess(Program &p, State &s, std::string container) {
  Node n;
  n.id = p.newNodeId();
  n.kind = NodeKind::Access;
  n.label = container;
  n.payload = AccessData{std::move(container)};
  s.nodes.push_back(std::move(n));
  return s.nodes.back().id;
}

NodeId addTasklet(Program &p, State &s, std::string label,
                  std::vector<Connector> inputs, std::vector<Connector> outputs,
                  std::string_view body) {
  auto code = std::make_shared<const tasklet::Code>(tasklet::parse(body));
  Node n;
  n.id = p.newNodeId();
  n.kind = NodeKind::Tasklet;
  n.label = std::move(label);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.payload = TaskletData{tasklet::print(*code), std::move(code)};
  s.nodes.push_back(std::move(n));
  return s.nodes.back().id;
}

std::pair<NodeId, NodeId> addMap(Program &p, State &s, std::string label,
                                 std::vector<std::string> params,
                                 std::vector<Range> ranges, Schedule schedule) {
  NodeId entryId = p.newNodeId();
  NodeId exitId = p.newNodeId();
  MapData data{std::move(params), std::move(ranges), schedule, exitId};
  Node entry;
  entry.id = entryId;
  entry.kind = NodeKind::MapEntry;
  entry.label = label;
  entry.payload = data;
  Node exit;
  exit.id = exitId;
  exit.kind = NodeKind::MapExit;
  exit.label = std::move(label);
  data.partner = entryId;
  exit.payload = std::move(data);
  s.nodes.push_back(std::move(entry));
  s.nodes.push_back(std::move(exit));
  return {entryId, exitId};
}

EdgeId addEdge(Program &p, State &s, NodeId src, std::string srcConn,
               NodeId dst, std::string dstConn, Memlet memlet) {
  Edge e;
  e.id = p.newEdgeId();
  e.src = src;
  e.srcConn = std::move(srcConn);
  e.dst = dst;
  e.dstConn = std::move(dstConn);
  e.memlet = std::move(memlet);
  s.edges.push_back(std::move(e));
  return s.edges.back().id;
}

} // namespace weir::ir
