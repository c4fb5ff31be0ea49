#include "ir/validate.h"

#include "ir/container_index.h"
#include "ir/error.h"
#include "ir/interval.h"
#include "ir/limits.h"
#include "ir/node_index.h"
#include "ir/primitives.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "ir/state_memo.h"
#include "ir/validation_baseline.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace weir::ir {
namespace {

/// Whether two names are equal, rejecting most unequal ones by their
/// length and last character: an exporter's names share long prefixes
/// (`/features/denseblock3/denselayer12/...`), and the validator compares
/// names per edge of every version a recipe makes.
bool sameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || a.back() == b.back()) && a == b;
}

/// A node's connectors by name, for nodes with many.
class ConnectorNames {
public:
  /// Up to this many connectors, a scan is quicker than the sorted copy.
  static constexpr std::size_t kScanned = 8;

  explicit ConnectorNames(const std::vector<Connector> &cs) {
    byName_.reserve(cs.size());
    for (std::size_t k = 0; k < cs.size(); ++k)
      byName_.emplace_back(cs[k].name, k);
    std::sort(byName_.begin(), byName_.end()); // by name, then position
  }
  /// The position of the first connector named `name`, or past the end.
  std::size_t find(std::string_view name) const {
    auto it = std::lower_bound(byName_.begin(), byName_.end(),
                               std::make_pair(name, std::size_t(0)));
    return it != byName_.end() && it->first == name ? it->second
                                                    : byName_.size();
  }

private:
  std::vector<std::pair<std::string_view, std::size_t>> byName_;
};

class Validator {
public:
  /// `base`: a program `p` was made from that validated without errors
  /// (see validation_baseline.h), or null.
  Validator(const Program &p, const Program *base)
      : p_(p), base_(base), containers_(p), used_(containers_.size(), 0),
        read_(containers_.size(), 0), written_(containers_.size(), 0) {
    if (base_)
      sameContainers_ = sameContainers(containers_, *base_);
  }

  std::vector<Diagnostic> run() {
    checkProgramLevel();
    for (std::size_t i = 0; i < p_.states.size(); ++i)
      checkState(p_.states[i], baseState(p_.states[i], i));
    checkUnusedContainers();
    checkReadBeforeWritten();
    return std::move(out_);
  }

private:
  void report(Severity sev, std::string state, std::string message,
              std::vector<NodeId> nodes = {}, std::vector<EdgeId> edges = {}) {
    out_.push_back(Diagnostic{sev, std::move(message), std::move(state),
                              std::move(nodes), std::move(edges)});
  }
  void error(const State &s, std::string msg, std::vector<NodeId> nodes = {},
             std::vector<EdgeId> edges = {}) {
    report(Severity::Error, s.name, std::move(msg), std::move(nodes),
           std::move(edges));
  }

  void checkSymbols(const std::string &what, const Expr &e) {
    for (const std::string &sym : e.freeSymbols())
      if (std::find(p_.symbols.begin(), p_.symbols.end(), sym) ==
          p_.symbols.end())
        report(Severity::Error, "",
               what + " uses undeclared symbol '" + sym + "'");
  }

  void checkProgramLevel() {
    for (const auto &[name, c] : p_.containers) {
      if (c.name != name)
        report(Severity::Error, "",
               "container key '" + name + "' differs from its name '" + c.name +
                   "'");
      if (!c.strides.empty() && c.strides.size() != c.shape.size())
        report(Severity::Error, "",
               "container '" + name + "' has " +
                   std::to_string(c.strides.size()) + " strides for rank " +
                   std::to_string(c.shape.size()));
      for (const Expr &d : c.shape) {
        checkSymbols("shape of container '" + name + "'", d);
        if (auto v = d.asConstant(); v && *v < 0)
          report(Severity::Error, "",
                 "container '" + name + "' has negative dimension " +
                     std::to_string(*v));
      }
      if (c.constant) {
        auto count = c.elementCount().asConstant();
        if (!count)
          report(Severity::Error, "",
                 "constant container '" + name + "' has a symbolic shape");
        else if (static_cast<std::uint64_t>(*count) * dtypeSize(c.dtype) !=
                 c.constant->size())
          report(Severity::Error, "",
                 "constant container '" + name + "' holds " +
                     std::to_string(c.constant->size()) + " bytes, its shape " +
                     "needs " +
                     std::to_string(*count * std::int64_t(dtypeSize(c.dtype))));
      }
    }
    // A name may be both an input and an output (ONNX passes inputs
    // through), but not twice in one list.
    std::set<std::string> seenInputs, seenOutputs;
    auto checkArg = [&](const std::string &a, const char *role) {
      auto &seen = role[0] == 'i' ? seenInputs : seenOutputs;
      if (!seen.insert(a).second)
        report(Severity::Error, "",
               std::string(role) + " '" + a +
                   "' is listed twice among arguments");
      const Container *c = containers_.find(a);
      if (!c)
        report(Severity::Error, "",
               std::string(role) + " '" + a + "' names no container");
      else if (c->transient)
        report(Severity::Error, "",
               std::string(role) + " '" + a + "' is a transient container");
    };
    for (const std::string &a : p_.inputs)
      checkArg(a, "input");
    for (const std::string &a : p_.outputs)
      checkArg(a, "output");
    checkViews();
  }

  /// Views alias their target's elements: same dtype and count, both
  /// row-major, one level deep, transient, never constant, never written.
  void checkViews() {
    for (const auto &[name, c] : p_.containers) {
      if (!c.isView())
        continue;
      auto fail = [&](const std::string &why) {
        report(Severity::Error, "", "view '" + name + "' " + why);
      };
      const Container *t = containers_.find(c.viewOf);
      if (!t) {
        fail("is a view of '" + c.viewOf + "', which does not exist");
        continue;
      }
      if (t->isView())
        fail("is a view of '" + t->name + "', which is itself a view");
      if (t->dtype != c.dtype)
        fail("has dtype " + std::string(dtypeName(c.dtype)) + ", its target '" +
             t->name + "' " + std::string(dtypeName(t->dtype)));
      auto a = c.elementCount().asConstant(),
           b = t->elementCount().asConstant();
      if (a && b ? *a != *b : !(c.elementCount() == t->elementCount()))
        fail("does not have as many elements as its target '" + t->name + "'");
      if (c.strides != rowMajorStrides(c.shape) ||
          t->strides != rowMajorStrides(t->shape))
        fail("or its target '" + t->name + "' is not row-major");
      if (!c.transient || c.isConstant())
        fail("must be a transient without constant data");
    }
    bool views = false;
    for (const auto &[name, c] : p_.containers)
      views = views || c.isView();
    if (!views)
      return;
    for (const State &s : p_.states) {
      NodeIndex byId(s);
      for (const Edge &e : s.edges) {
        const Node *dst = byId.find(e.dst);
        if (e.memlet.empty() || !dst || dst->kind != NodeKind::Access ||
            !std::holds_alternative<AccessData>(dst->payload))
          continue;
        const Container *c = containers_.find(dst->access().container);
        if (c && c->isView())
          report(Severity::Error, s.name,
                 "edge " + std::to_string(e.id) + " writes view '" + c->name +
                     "'; views are read-only",
                 {e.dst}, {e.id});
      }
    }
  }

  void checkState(const State &s, const State *base) {
    // The indexes go into the memo that holds `s` when there is one (a
    // step's result's, transforms/accepted_step.h): the checks on the new
    // version, and the next step's validation against it, reuse them.
    const std::shared_ptr<const NodeIndex> nodeIndex =
        memoized<NodeIndex>(s, [&] { return NodeIndex(s); });
    const NodeIndex &nodes = *nodeIndex;
    for (NodeId id : nodes.duplicateIds())
      error(s, "node id " + std::to_string(id) + " is used twice", {id});
    const bool oneState = p_.states.size() == 1;
    for (const Node &n : s.nodes) {
      if (!oneState && !allIds_.insert(n.id).second &&
          nodes.find(n.id) == &n)
        error(s, "node id " + std::to_string(n.id) + " appears in two states",
              {n.id});
      if (n.id >= p_.nextNodeId())
        error(s,
              "node id " + std::to_string(n.id) +
                  " is not below the program's next id",
              {n.id});
    }
    std::vector<EdgeId> edgeIds;
    edgeIds.reserve(s.edges.size());
    for (const Edge &e : s.edges) {
      edgeIds.push_back(e.id);
      if (e.id >= p_.nextEdgeId())
        error(s,
              "edge id " + std::to_string(e.id) +
                  " is not below the program's next id",
              {}, {e.id});
    }
    std::sort(edgeIds.begin(), edgeIds.end());
    for (std::size_t i = 1; i < edgeIds.size(); ++i)
      if (edgeIds[i] == edgeIds[i - 1] &&
          (i == 1 || edgeIds[i - 2] != edgeIds[i]))
        error(s,
              "edge id " + std::to_string(edgeIds[i]) + " is used twice", {},
              {edgeIds[i]});

    const std::shared_ptr<const IntervalEnv> bounds =
        memoized<IntervalEnv>(s, [&] { return mapParamBounds(s); });
    const IntervalEnv &env = *bounds;
    StateBaseline same(s, nodes, base, env);
    accessContainers_.assign(s.nodes.size(), ContainerIndex::kAbsent);
    for (std::size_t i = 0; i < s.nodes.size(); ++i)
      checkNode(s, s.nodes[i], i, nodes, same);

    // Edges per connector: node i's inputs count at inFirst[i] onwards, in
    // the order of its connectors (outputs likewise).
    std::vector<std::size_t> inFirst(s.nodes.size() + 1, 0),
        outFirst(s.nodes.size() + 1, 0);
    for (std::size_t i = 0; i < s.nodes.size(); ++i) {
      inFirst[i + 1] = inFirst[i] + s.nodes[i].inputs.size();
      outFirst[i + 1] = outFirst[i] + s.nodes[i].outputs.size();
    }
    std::vector<int> inCount(inFirst.back(), 0), outCount(outFirst.back(), 0);
    // The first connector of each name counts the edge. Nodes with many
    // connectors (a Concat's, a fused map's) are searched in a sorted copy,
    // made once: a scan per edge was quadratic in their connectors.
    std::unordered_map<const std::vector<Connector> *, ConnectorNames> sorted;
    auto countOn = [&](const std::vector<Connector> &cs, std::string_view name,
                       std::size_t first, std::vector<int> &counts) {
      if (cs.size() > ConnectorNames::kScanned) {
        auto it = sorted.try_emplace(&cs, cs).first;
        if (std::size_t k = it->second.find(name); k < cs.size())
          ++counts[first + k];
        return;
      }
      for (std::size_t k = 0; k < cs.size(); ++k)
        if (sameName(cs[k].name, name)) {
          ++counts[first + k];
          return;
        }
    };
    for (const Edge &e : s.edges) {
      std::size_t src = nodes.position(e.src), dst = nodes.position(e.dst);
      if (!e.memlet.empty()) {
        if (src != NodeIndex::kAbsent &&
            accessContainers_[src] != ContainerIndex::kAbsent)
          read_[accessContainers_[src]] = 1;
        if (dst != NodeIndex::kAbsent &&
            accessContainers_[dst] != ContainerIndex::kAbsent)
          written_[accessContainers_[dst]] = 1;
      }
      if (src == NodeIndex::kAbsent || dst == NodeIndex::kAbsent) {
        error(s,
              "edge " + std::to_string(e.id) + " connects a node (" +
                  std::to_string(src == NodeIndex::kAbsent ? e.src : e.dst) +
                  ") that is not in the state",
              {}, {e.id});
        continue;
      }
      const Node &from = s.nodes[src], &to = s.nodes[dst];
      std::size_t ordinal = e.memlet.empty() ? ContainerIndex::kAbsent
                                             : memletContainer(s, e, src, dst);
      const Container *c =
          ordinal == ContainerIndex::kAbsent ? nullptr : &containers_.at(ordinal);
      bool containerSame =
          base && (!c ? e.memlet.empty() : sameContainers_[ordinal] != 0);
      if (!base || !same.sameEndpoints(e, containerSame)) {
        checkEndpoint(s, e, from, e.srcConn, c, /*isSource=*/true);
        checkEndpoint(s, e, to, e.dstConn, c, /*isSource=*/false);
      }
      // A node with the base's record and edges has the base's counts.
      if (!e.dstConn.empty() && !same.sameConnections(dst))
        countOn(to.inputs, e.dstConn, inFirst[dst], inCount);
      if (!e.srcConn.empty() && !same.sameConnections(src))
        countOn(from.outputs, e.srcConn, outFirst[src], outCount);
      if (c)
        used_[ordinal] = 1;
      checkMemlet(s, e, from, to, c, env,
                  c && base && same.sameBounds(e, *c, containerSame));
    }

    for (std::size_t i = 0; i < s.nodes.size(); ++i) {
      const Node &n = s.nodes[i];
      if (n.kind == NodeKind::Access || same.sameConnections(i))
        continue;
      for (std::size_t k = 0; k < n.inputs.size(); ++k) {
        const Connector &c = n.inputs[k];
        int edges = inCount[inFirst[i] + k];
        if (edges == 0)
          error(s,
                "input connector '" + c.name + "' of " + describe(n) +
                    " has no incoming edge",
                {n.id});
        else if (edges > 1)
          error(s,
                "input connector '" + c.name + "' of " + describe(n) +
                    " has " + std::to_string(edges) + " incoming edges",
                {n.id});
      }
      for (std::size_t k = 0; k < n.outputs.size(); ++k)
        if (outCount[outFirst[i] + k] == 0)
          error(s,
                "output connector '" + n.outputs[k].name + "' of " +
                    describe(n) + " has no outgoing edge",
                {n.id});
    }
    Successors graph = successors(s, nodes);
    if (checkAcyclic(s, nodes, graph))
      checkScopeDepth(s, nodes, graph);
  }

  /// Map scopes nested deeper than kMaxScopeDepth (ir/limits.h): the
  /// lowering and the interpreter recurse once per level.
  void checkScopeDepth(const State &s, const NodeIndex &nodes,
                       const Successors &graph) {
    const std::shared_ptr<const ScopeParents> scopes = memoized<ScopeParents>(
        s, [&] { return ScopeParents(s, nodes, graph); });
    const ScopeParents &parents = *scopes;
    std::vector<int> depth(s.nodes.size(), 0); // of each map entry, from 1
    std::vector<std::size_t> chain;
    for (std::size_t i = 0; i < s.nodes.size(); ++i) {
      const Node &n = s.nodes[i];
      if (n.kind != NodeKind::MapEntry || depth[i] != 0)
        continue;
      // Climb to an entry whose depth is known (or the top level), then
      // fill in the depths on the way back down.
      chain.clear();
      std::size_t at = i;
      int base = 0;
      while (chain.size() <= std::size_t(kMaxScopeDepth)) {
        if (depth[at] != 0) {
          base = depth[at];
          break;
        }
        chain.push_back(at);
        NodeId up = parents[s.nodes[at].id];
        if (up == 0)
          break;
        at = nodes.position(up);
        if (at == NodeIndex::kAbsent)
          break;
      }
      if (chain.size() > std::size_t(kMaxScopeDepth) ||
          base + int(chain.size()) > kMaxScopeDepth) {
        error(s,
              describe(n) + " is nested more than " +
                  std::to_string(kMaxScopeDepth) +
                  " map scopes deep (the limit)",
              {n.id});
        return;
      }
      for (std::size_t k = chain.size(); k-- > 0;)
        depth[chain[k]] = base + int(chain.size() - k);
    }
  }

  /// The ordinal of the container edge `e` (between the nodes at positions
  /// `src` and `dst`) moves: an end's, when it is an access node of that
  /// name, else found by name (kAbsent when unknown). Most edges touch an
  /// access node, whose container checkNode found already.
  std::size_t memletContainer(const State &s, const Edge &e, std::size_t src,
                              std::size_t dst) const {
    for (std::size_t at : {src, dst})
      if (accessContainers_[at] != ContainerIndex::kAbsent &&
          sameName(s.nodes[at].access().container, e.memlet.container))
        return accessContainers_[at];
    return containers_.ordinal(e.memlet.container);
  }

  /// `position`: the node's in the state.
  void checkNode(const State &s, const Node &n, std::size_t position,
                 const NodeIndex &nodes, const StateBaseline &same) {
    auto payloadMatches = [&] {
      switch (n.kind) {
      case NodeKind::Access:
        return std::holds_alternative<AccessData>(n.payload);
      case NodeKind::Tasklet:
        return std::holds_alternative<TaskletData>(n.payload);
      case NodeKind::MapEntry:
      case NodeKind::MapExit:
        return std::holds_alternative<MapData>(n.payload);
      case NodeKind::Library:
        return std::holds_alternative<LibraryData>(n.payload);
      case NodeKind::Primitive:
        return std::holds_alternative<PrimitiveData>(n.payload);
      }
      return false;
    };
    // The base's own record: only what depends on other nodes and on the
    // containers is checked again.
    const bool unchanged = same.sameNode(n);
    if (!unchanged && !payloadMatches()) {
      error(s, describe(n) + " carries the data of another node kind", {n.id});
      return;
    }
    auto checkUnique = [&](const std::vector<Connector> &cs, const char *dir) {
      // Most nodes have a few connectors: pairs are cheaper than a set,
      // which only many (a hostile Concat's thousands) need.
      auto twice = [&](const Connector &c) {
        error(s,
              std::string(dir) + " connector '" + c.name + "' of " +
                  describe(n) + " is declared twice",
              {n.id});
      };
      if (cs.size() > 16) {
        std::unordered_set<std::string_view> names;
        for (const Connector &c : cs)
          if (!names.insert(c.name).second)
            twice(c);
        return;
      }
      for (std::size_t i = 0; i < cs.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (cs[i].name == cs[j].name) {
            twice(cs[i]);
            break;
          }
    };
    if (!unchanged) {
      checkUnique(n.inputs, "input");
      checkUnique(n.outputs, "output");
    }

    switch (n.kind) {
    case NodeKind::Access:
      if (std::size_t c = containers_.ordinal(n.access().container);
          c != ContainerIndex::kAbsent) {
        used_[c] = 1;
        accessContainers_[position] = c;
      } else
        error(s,
              describe(n) + " names unknown container '" +
                  n.access().container + "'",
              {n.id});
      break;
    case NodeKind::Tasklet: {
      const TaskletData &t = n.tasklet();
      if (!t.code) {
        error(s, describe(n) + " has no parsed code", {n.id});
        break;
      }
      if (same.sameTasklet(n))
        break; // type-checked in the base

      tasklet::ConnectorTypes in, out;
      for (const Connector &c : n.inputs)
        in[c.name] = c.dtype;
      for (const Connector &c : n.outputs)
        out[c.name] = c.dtype;
      for (const tasklet::TypeIssue &issue :
           tasklet::typeCheck(*t.code, in, out))
        error(s, describe(n) + ": " + issue.message, {n.id});
      break;
    }
    case NodeKind::MapEntry:
    case NodeKind::MapExit: {
      const MapData &m = n.map();
      if (!unchanged && m.params.size() != m.ranges.size())
        error(s,
              describe(n) + " has " + std::to_string(m.params.size()) +
                  " parameters but " + std::to_string(m.ranges.size()) +
                  " ranges",
              {n.id});
      for (std::size_t i = 0; !unchanged && i < m.ranges.size(); ++i) {
        auto step = m.ranges[i].step.asConstant();
        if (step && *step <= 0)
          error(s,
                describe(n) + " has a non-positive step in range " +
                    m.ranges[i].str(),
                {n.id});
      }
      const Node *partner = nodes.find(m.partner);
      NodeKind want =
          n.kind == NodeKind::MapEntry ? NodeKind::MapExit : NodeKind::MapEntry;
      if (!partner || partner->kind != want ||
          !std::holds_alternative<MapData>(partner->payload) ||
          partner->map().partner != n.id)
        error(s,
              describe(n) + " is not paired with a " +
                  std::string(nodeKindName(want)) + " that points back to it",
              {n.id});
      else if (partner->map().params != m.params ||
               partner->map().ranges.size() != m.ranges.size())
        error(s, describe(n) + " and its partner disagree on the map's ranges",
              {n.id, m.partner});
      break;
    }
    case NodeKind::Library: {
      const LibraryData &l = n.library();
      if (l.unknown)
        report(Severity::Warning, s.name,
               describe(n) + ": operator '" +
                   (l.domain.empty() ? "" : l.domain + ".") + l.op +
                   "' is not supported by Weir",
               {n.id});
      for (const auto &[name, value] : l.attributes)
        if (auto *g = std::get_if<std::shared_ptr<const Program>>(&value);
            g && *g && !unchanged)
          for (Diagnostic d : validate(**g)) {
            d.message = describe(n) + ", subgraph '" + name + "': " + d.message;
            d.state = s.name;
            d.nodes = {n.id};
            d.edges.clear();
            out_.push_back(std::move(d));
          }
      break;
    }
    case NodeKind::Primitive:
      // The gemm contract's attributes and epilogue (ir/primitives.h);
      // other primitives are checked by the code that runs them.
      if (!unchanged && n.primitive().primitive == "gemm") {
        try {
          gemmEpilogue(readGemm(n.primitive()), n.inputs);
        } catch (const Error &e) {
          error(s, describe(n) + ": " + e.what(), {n.id});
        }
      }
      break;
    }
  }

  /// `container`: the memlet's, found (null when unknown or empty).
  void checkEndpoint(const State &s, const Edge &e, const Node &n,
                     const std::string &conn, const Container *container,
                     bool isSource) {
    // An empty memlet without connectors only orders two nodes.
    if (conn.empty() && e.memlet.empty())
      return;
    if (n.kind == NodeKind::Access) {
      if (!conn.empty())
        error(s,
              "edge " + std::to_string(e.id) + " uses connector '" + conn +
                  "' on " + describe(n) + ", which has none",
              {n.id}, {e.id});
      return;
    }
    const Connector *c = isSource ? n.findOutput(conn) : n.findInput(conn);
    if (!c) {
      error(s,
            "edge " + std::to_string(e.id) + " uses undeclared " +
                (isSource ? "output" : "input") + " connector '" + conn +
                "' of " + describe(n),
            {n.id}, {e.id});
      return;
    }
    if (e.memlet.empty())
      return;
    if (container && container->dtype != c->dtype &&
        n.kind != NodeKind::MapEntry && n.kind != NodeKind::MapExit)
      error(s,
            "dtype mismatch on edge " + std::to_string(e.id) + ": container '" +
                container->name + "' is " +
                std::string(dtypeName(container->dtype)) + " but connector '" +
                conn + "' of " + describe(n) + " is " +
                std::string(dtypeName(c->dtype)),
            {n.id}, {e.id});
  }

  /// `c`: the memlet's container, found (null when unknown or empty).
  /// `provenInBase`: the subset's bounds were proven in the base
  /// (StateBaseline::sameBounds).
  void checkMemlet(const State &s, const Edge &e, const Node &src,
                   const Node &dst, const Container *c, const IntervalEnv &env,
                   bool provenInBase) {
    const Memlet &m = e.memlet;
    if (m.empty())
      return;
    if (!c) {
      error(s,
            "edge " + std::to_string(e.id) + " moves unknown container '" +
                m.container + "'",
            {src.id, dst.id}, {e.id});
      return;
    }
    auto namesAccess = [&](const Node &n) {
      return n.kind == NodeKind::Access &&
             std::holds_alternative<AccessData>(n.payload) &&
             sameName(n.access().container, m.container);
    };
    if ((src.kind == NodeKind::Access || dst.kind == NodeKind::Access) &&
        !namesAccess(src) && !namesAccess(dst))
      error(s,
            "edge " + std::to_string(e.id) + " names container '" +
                m.container + "' but neither end accesses it",
            {src.id, dst.id}, {e.id});
    if (m.subset.dims.size() != c->shape.size()) {
      error(s,
            "edge " + std::to_string(e.id) + " subset [" + m.subset.str() +
                "] has rank " + std::to_string(m.subset.dims.size()) +
                " but container '" + c->name + "' has rank " +
                std::to_string(c->shape.size()),
            {src.id, dst.id}, {e.id});
      return;
    }
    if (provenInBase)
      return;
    for (std::size_t d = 0; d < c->shape.size(); ++d) {
      const Range &r = m.subset.dims[d];
      auto lo = boundOf(r.begin, env);
      auto hi = boundOf(r.end, env);
      if (hi && r.step != Expr(1)) {
        // A stepped range's last index may lie well before its end (0:12:4
        // stops at 8).
        Expr stop = r.begin + (r.size() - Expr(1)) * r.step + Expr(1);
        if (auto tight = boundOf(stop, env); tight && tight->hi < hi->hi)
          hi = tight;
      }
      auto size = boundOf(c->shape[d], env);
      bool below = lo && lo->lo < 0;
      bool above = hi && size && size->lo == size->hi && hi->hi > size->hi;
      if (below || above)
        error(s,
              "edge " + std::to_string(e.id) + " subset " + m.str() +
                  " is out of bounds in dimension " + std::to_string(d) +
                  " (size " + c->shape[d].str() + ")",
              {src.id, dst.id}, {e.id});
    }
  }

  /// Reports a cycle; returns whether the state is acyclic.
  bool checkAcyclic(const State &s, const NodeIndex &nodes,
                    const Successors &graph) {
    const std::size_t n = s.nodes.size();
    std::vector<int> indeg = graph.indegree;
    // Nodes that share an id count as one, as the ids are what edges name.
    std::vector<std::size_t> ready;
    std::size_t nodesById = 0, visited = 0;
    for (std::size_t i = 0; i < n; ++i) {
      bool named = nodes.position(s.nodes[i].id) == i;
      nodesById += named;
      if (named && indeg[i] == 0)
        ready.push_back(i);
    }
    while (!ready.empty()) {
      std::size_t at = ready.back();
      ready.pop_back();
      ++visited;
      for (std::size_t k = graph.first[at]; k < graph.first[at + 1]; ++k)
        if (--indeg[graph.targets[k]] == 0)
          ready.push_back(graph.targets[k]);
    }
    if (visited != nodesById) {
      std::vector<NodeId> cyclic;
      for (std::size_t i = 0; i < n; ++i)
        if (indeg[i] > 0)
          cyclic.push_back(s.nodes[i].id);
      std::sort(cyclic.begin(), cyclic.end());
      error(s,
            "state '" + s.name + "' has a cycle through " +
                std::to_string(cyclic.size()) + " nodes",
            cyclic);
      return false;
    }
    return true;
  }

  void checkUnusedContainers() {
    for (std::size_t i = 0; i < containers_.size(); ++i)
      if (!used_[i])
        report(Severity::Warning, "",
               "container '" + std::string(containers_.key(i)) +
                   "' is named by no node or edge");
  }

  /// A transient that edges read but none writes holds garbage: a
  /// transformation (or plugin) removed its producer. Constants and views
  /// hold their data otherwise.
  void checkReadBeforeWritten() {
    // Ordinals follow the names' order, the order of the report.
    for (std::size_t i = 0; i < containers_.size(); ++i) {
      const Container &c = containers_.at(i);
      if (read_[i] && !written_[i] && c.transient && !c.isConstant() &&
          !c.isView())
        report(Severity::Error, "",
               "transient '" + std::string(containers_.key(i)) +
                   "' is read but never written");
    }
  }

  /// The base's state that `s` continues, when there is a base.
  const State *baseState(const State &s, std::size_t position) const {
    if (!base_)
      return nullptr;
    if (position < base_->states.size() &&
        base_->states[position].name == s.name)
      return &base_->states[position];
    for (const State &b : base_->states)
      if (b.name == s.name)
        return &b;
    return nullptr;
  }

  const Program &p_;
  const Program *base_;
  ContainerIndex containers_;
  /// By container ordinal: whether the base has it unchanged (with a base).
  std::vector<char> sameContainers_;
  std::vector<Diagnostic> out_;
  /// By container ordinal: named by a node or edge; read or written
  /// through an access node by an edge with a memlet (in any state).
  std::vector<char> used_, read_, written_;
  /// The ordinal of the container of the access node at each position of
  /// the state being checked (kAbsent for other nodes and unknown names).
  std::vector<std::size_t> accessContainers_;
  std::unordered_set<NodeId> allIds_; ///< across states, when there are several
};

} // namespace

std::string Diagnostic::str() const {
  std::string s = severity == Severity::Error ? "error: " : "warning: ";
  if (!state.empty())
    s += "state '" + state + "': ";
  s += message;
  auto list = [](const char *what, const auto &ids) {
    std::string r = std::string(" [") + what;
    for (std::size_t i = 0; i < ids.size(); ++i)
      r += (i ? ", " : " ") + std::to_string(ids[i]);
    return r + "]";
  };
  if (!nodes.empty())
    s += list("nodes", nodes);
  if (!edges.empty())
    s += list("edges", edges);
  return s;
}

std::vector<Diagnostic> validate(const Program &program) {
  return Validator(program, nullptr).run();
}

std::vector<Diagnostic> validate(const Program &program,
                                 const Program &validBase) {
  return Validator(program, &validBase).run();
}

void requireRunnable(const Program &program) {
  std::vector<Diagnostic> diagnostics = validate(program);
  if (hasErrors(diagnostics)) {
    std::string message = "program '" + program.name + "' is invalid:";
    int errors = 0;
    for (const Diagnostic &d : diagnostics)
      if (d.severity == Severity::Error && ++errors <= 3)
        message += (errors > 1 ? "; " : " ") + d.str();
    if (errors > 3)
      message += " (and " + std::to_string(errors - 3) + " more errors)";
    throw Error(message);
  }
  if (auto it = program.metadata.find(kShapesUnverified);
      it != program.metadata.end())
    throw Error("program '" + program.name +
                "' cannot run: the shapes its model declares were not "
                "verified (" + it->second +
                "); a buffer sized from an unverified shape could be "
                "indexed past its end");
}

bool hasErrors(const std::vector<Diagnostic> &diagnostics) {
  return std::any_of(
      diagnostics.begin(), diagnostics.end(),
      [](const Diagnostic &d) { return d.severity == Severity::Error; });
}

} // namespace weir::ir
