#pragma once
/// \file
/// The dataflow program (≈ DaCe's SDFG): symbols, data containers, ordered
/// arguments and a sequence of states. A state is an acyclic multigraph
/// whose nodes compute and whose edges (memlets) carry every byte that moves.
///
/// A Program is a value. Copying one shares its node and edge records until
/// a copy changes one (copy-on-write per record), and the heavy parts —
/// constant data, tasklet ASTs, symbolic expressions, nested subgraphs — are
/// immutable and shared by pointer.

#include "ir/attribute.h"
#include "ir/cow_list.h"
#include "ir/dtype.h"
#include "ir/expr.h"
#include "ir/subset.h"
#include "ir/tasklet.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace weir::ir {

/// Stable node identity: unique within a program (nested subgraphs have
/// their own numbering), preserved by copies and by transformations that keep
/// the node. ONNX names are labels, never keys.
using NodeId = std::uint64_t;
/// Edge identity, unique within a program.
using EdgeId = std::uint64_t;

enum class Storage : std::uint8_t {
  Host,
  Register,
  GpuGlobal,
  GpuShared,
  AccelScratchpad,
};
std::string_view storageName(Storage s);
std::optional<Storage> parseStorage(std::string_view name);

/// A named array (or scalar, with rank 0).
struct Container {
  std::string name;
  DType dtype = DType::F32;
  std::vector<Expr> shape;
  /// Element strides; row-major (C order) unless a transformation changes it.
  std::vector<Expr> strides;
  Storage storage = Storage::Host;
  /// Transient containers live inside the program; the others are arguments
  /// (or constants).
  bool transient = true;
  /// Constant contents (weights), densely packed row-major; null when the
  /// container is not constant.
  Blob constant;
  /// When not empty, this container is a view: it has no storage of its
  /// own and holds the elements of container `viewOf` (which is not a view
  /// itself) in row-major order under its own shape — a reshape that moves
  /// nothing. Same dtype and element count; both row-major; a view is
  /// transient, not constant, and only read (validate() checks all this).
  std::string viewOf;

  Expr elementCount() const; ///< product of shape (1 for a scalar)
  Expr byteSize() const;     ///< elementCount() * dtypeSize(dtype)
  bool isConstant() const { return constant != nullptr; }
  bool isView() const { return !viewOf.empty(); }
};

/// Row-major strides for a shape.
std::vector<Expr> rowMajorStrides(const std::vector<Expr> &shape);

enum class NodeKind : std::uint8_t {
  Access,
  Tasklet,
  MapEntry,
  MapExit,
  Library,
  Primitive,
};
std::string_view nodeKindName(NodeKind k);
std::optional<NodeKind> parseNodeKind(std::string_view name);

enum class Schedule : std::uint8_t {
  Sequential,
  CpuParallel,
  Vectorized,
  GpuGrid,
  GpuBlock,
  Accelerator,
};
std::string_view scheduleName(Schedule s);
std::optional<Schedule> parseSchedule(std::string_view name);

/// A named, typed data port of a node.
struct Connector {
  std::string name;
  DType dtype = DType::F32;
  friend bool operator==(const Connector &, const Connector &) = default;
};

struct AccessData {
  std::string container;
};

struct TaskletData {
  std::string source; ///< the body as written (canonical print of `code`)
  std::shared_ptr<const tasklet::Code> code;
};

/// Shared by a MapEntry and its MapExit (each holds a copy; the exit names
/// its entry through `partner`).
struct MapData {
  std::vector<std::string> params; ///< iteration variables
  std::vector<Range> ranges;       ///< one per param
  Schedule schedule = Schedule::Sequential;
  NodeId partner = 0; ///< the matching exit (on an entry) or entry (on exit)
};

struct LibraryData {
  std::string op;     ///< operator type, e.g. "Conv"
  std::string domain; ///< "" for the default ONNX domain
  int opsetVersion = 0;
  std::string implementation; ///< chosen expansion; "" = not yet chosen
  Attributes attributes;
  /// Floating-point operations one execution performs, when known.
  std::optional<Expr> flops;
  /// True when Weir does not know this operator (imported as a placeholder
  /// so the model still loads; listed in diagnostics).
  bool unknown = false;
};

struct PrimitiveData {
  std::string primitive; ///< e.g. "brgemm", "unary", "binary"
  Attributes attributes;
};

using NodePayload =
    std::variant<AccessData, TaskletData, MapData, LibraryData, PrimitiveData>;

struct Node {
  NodeId id = 0;
  NodeKind kind = NodeKind::Access;
  std::string label; ///< a name for people (ONNX node name, container name)
  std::vector<Connector> inputs;
  std::vector<Connector> outputs;
  NodePayload payload;

  const AccessData &access() const { return std::get<AccessData>(payload); }
  const TaskletData &tasklet() const { return std::get<TaskletData>(payload); }
  const MapData &map() const { return std::get<MapData>(payload); }
  const LibraryData &library() const { return std::get<LibraryData>(payload); }
  const PrimitiveData &primitive() const {
    return std::get<PrimitiveData>(payload);
  }
  LibraryData &library() { return std::get<LibraryData>(payload); }
  MapData &map() { return std::get<MapData>(payload); }

  const Connector *findInput(std::string_view name) const;
  const Connector *findOutput(std::string_view name) const;
};

enum class Wcr : std::uint8_t { Sum, Max, Min, Prod };
std::string_view wcrName(Wcr w);
std::optional<Wcr> parseWcr(std::string_view name);

/// What moves along an edge: a subset of one container, optionally combined
/// into the destination with a write-conflict resolution. An empty container
/// name makes a pure ordering edge that moves nothing.
struct Memlet {
  std::string container;
  Subset subset;
  std::optional<Wcr> wcr;

  bool empty() const { return container.empty(); }
  /// Elements moved per execution of the edge (the subset's volume).
  Expr volume() const;
  /// Text form: `A[i, 0:64]`, `C[i, j] (sum)`, `∅` for an empty memlet.
  std::string str() const;
};

struct Edge {
  EdgeId id = 0;
  NodeId src = 0;
  std::string srcConn; ///< "" when the source is an Access node
  NodeId dst = 0;
  std::string dstConn; ///< "" when the destination is an Access node
  Memlet memlet;
};

/// Nodes and edges are shared with the copies of a state until changed
/// (CowList): reading them is plain, changing one goes through edit().
struct State {
  std::string name;
  CowList<Node> nodes; ///< in insertion order (deterministic)
  CowList<Edge> edges;

  const Node *findNode(NodeId id) const;
  Node *findNode(NodeId id);
  const Edge *findEdge(EdgeId id) const;
  std::vector<const Edge *> inEdges(NodeId id) const;
  std::vector<const Edge *> outEdges(NodeId id) const;
};

class Program {
public:
  std::string name;
  /// Free symbols (e.g. batch size N) the shapes may use.
  std::vector<std::string> symbols;
  /// Ordered by name.
  std::map<std::string, Container, std::less<>> containers;
  /// Argument containers in call order: inputs first, then outputs.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<State> states;
  /// Free-form metadata (producer, source file, opset imports).
  std::map<std::string, std::string, std::less<>> metadata;

  const Container *findContainer(std::string_view name) const;
  /// Throws weir::Error naming the container when it does not exist.
  const Container &container(std::string_view name) const;

  /// Add a container; throws weir::Error when the name is taken.
  Container &addContainer(Container c);
  /// Fresh ids. Ids are never reused within a program's lineage.
  NodeId newNodeId() { return nextNodeId_++; }
  EdgeId newEdgeId() { return nextEdgeId_++; }
  NodeId nextNodeId() const { return nextNodeId_; }
  EdgeId nextEdgeId() const { return nextEdgeId_; }
  /// Used by deserialization; must exceed every id in use.
  void setNextIds(NodeId node, EdgeId edge) {
    nextNodeId_ = node;
    nextEdgeId_ = edge;
  }

  /// Node count over all states.
  std::size_t nodeCount() const;

private:
  NodeId nextNodeId_ = 1;
  EdgeId nextEdgeId_ = 1;
};

/// Convenience builders used by the importer, transformations and tests.
/// Each returns the new node's id.
NodeId addAccess(Program &p, State &s, std::string container);
NodeId addTasklet(Program &p, State &s, std::string label,
                  std::vector<Connector> inputs, std::vector<Connector> outputs,
                  std::string_view body);
/// Adds a MapEntry/MapExit pair; returns {entry, exit}.
std::pair<NodeId, NodeId> addMap(Program &p, State &s, std::string label,
                                 std::vector<std::string> params,
                                 std::vector<Range> ranges,
                                 Schedule schedule = Schedule::Sequential);
EdgeId addEdge(Program &p, State &s, NodeId src, std::string srcConn,
               NodeId dst, std::string dstConn, Memlet memlet);

} // namespace weir::ir
