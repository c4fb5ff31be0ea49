#include "transforms/pattern.h"

#include "ir/state_memo.h"

#include "ir/error.h"

#include <algorithm>

namespace weir::transforms {

Pattern &Pattern::node(std::string role, ir::NodeKind kind,
                       std::vector<std::string> ops, NodePredicate predicate) {
  nodes.push_back({std::move(role), kind, std::move(ops), std::move(predicate)});
  return *this;
}

Pattern &Pattern::edge(std::string src, std::string dst,
                       std::optional<std::string> srcConn,
                       std::optional<std::string> dstConn) {
  edges.push_back(
      {std::move(src), std::move(dst), std::move(srcConn), std::move(dstConn)});
  return *this;
}

int Pattern::roleIndex(std::string_view role) const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].role == role)
      return int(i);
  return -1;
}

bool Pattern::admits(std::size_t index, const ir::Program &program,
                     const StateGraph &graph, const ir::Node &node) const {
  const PatternNode &p = nodes[index];
  if (node.kind != p.kind)
    return false;
  if (!p.ops.empty()) {
    const std::string *op = nullptr;
    if (node.kind == ir::NodeKind::Library)
      op = &node.library().op;
    else if (node.kind == ir::NodeKind::Primitive)
      op = &node.primitive().primitive;
    if (!op || std::find(p.ops.begin(), p.ops.end(), *op) == p.ops.end())
      return false;
  }
  return !p.predicate || p.predicate(program, graph, node);
}

StateGraph::StateGraph(const ir::State &state)
    : state_(state), index_(ir::memoized<ir::NodeIndex>(
                         state, [&] { return ir::NodeIndex(state); })) {
  // Counting sort of the edges by source and by destination, stable.
  std::size_t n = state.nodes.size();
  std::vector<std::size_t> src(state.edges.size()), dst(state.edges.size());
  in_.first.assign(n + 1, 0);
  out_.first.assign(n + 1, 0);
  for (std::size_t k = 0; k < state.edges.size(); ++k) {
    src[k] = indexOf(state.edges[k].src);
    dst[k] = indexOf(state.edges[k].dst);
    if (src[k] < n)
      ++out_.first[src[k] + 1];
    if (dst[k] < n)
      ++in_.first[dst[k] + 1];
  }
  for (std::size_t i = 0; i < n; ++i) {
    out_.first[i + 1] += out_.first[i];
    in_.first[i + 1] += in_.first[i];
  }
  out_.edges.resize(out_.first[n]);
  in_.edges.resize(in_.first[n]);
  std::vector<std::size_t> outAt(out_.first.begin(), out_.first.end() - 1),
      inAt(in_.first.begin(), in_.first.end() - 1);
  for (std::size_t k = 0; k < state.edges.size(); ++k) {
    if (src[k] < n)
      out_.edges[outAt[src[k]]++] = &state.edges[k];
    if (dst[k] < n)
      in_.edges[inAt[dst[k]]++] = &state.edges[k];
  }
}

std::shared_ptr<const StateGraph> sharedStateGraph(const ir::State &state) {
  return ir::memoized<StateGraph>(state, [&] { return StateGraph(state); });
}

std::size_t StateGraph::indexOf(ir::NodeId id) const {
  std::size_t at = index_->position(id);
  return at == ir::NodeIndex::kAbsent ? state_.nodes.size() : at;
}

StateGraph::Edges StateGraph::in(ir::NodeId id) const {
  std::size_t i = indexOf(id);
  return i < state_.nodes.size() ? in_.of(i) : Edges();
}

StateGraph::Edges StateGraph::out(ir::NodeId id) const {
  std::size_t i = indexOf(id);
  return i < state_.nodes.size() ? out_.of(i) : Edges();
}

const ir::Node *StateGraph::node(ir::NodeId id) const {
  std::size_t i = indexOf(id);
  return i < state_.nodes.size() ? &state_.nodes[i] : nullptr;
}

namespace {

bool edgeFits(const PatternEdge &pe, const ir::Edge &e) {
  return (!pe.srcConn || *pe.srcConn == e.srcConn) &&
         (!pe.dstConn || *pe.dstConn == e.dstConn);
}

bool hasEdge(const StateGraph &g, const PatternEdge &pe, ir::NodeId src,
             ir::NodeId dst) {
  for (const ir::Edge *e : g.out(src))
    if (e->dst == dst && edgeFits(pe, *e))
      return true;
  return false;
}

/// Depth-first binding of roles in declaration order.
class Matcher {
public:
  Matcher(const Pattern &p, const ir::Program &program, const StateGraph &g)
      : p_(p), program_(program), g_(g) {
    // Pattern edges by role index, resolved once.
    for (const PatternEdge &e : p.edges) {
      int s = p.roleIndex(e.src), d = p.roleIndex(e.dst);
      if (s < 0 || d < 0)
        throw Error("pattern edge " + e.src + " -> " + e.dst +
                    " names an unknown role");
      edges_.push_back({s, d, &e});
    }
  }

  std::vector<std::vector<ir::NodeId>> run() {
    binding_.assign(p_.nodes.size(), 0);
    bind(0);
    return std::move(found_);
  }

private:
  struct ResolvedEdge {
    int src, dst;
    const PatternEdge *edge;
  };

  /// Candidates for role k: through an edge from a bound role when there is
  /// one (in that node's edge order), otherwise every node in order.
  std::vector<ir::NodeId> candidates(std::size_t k) const {
    std::vector<ir::NodeId> out;
    for (const ResolvedEdge &e : edges_) {
      if (e.dst == int(k) && e.src < int(k)) {
        for (const ir::Edge *x : g_.out(binding_[e.src]))
          if (edgeFits(*e.edge, *x))
            out.push_back(x->dst);
        return dedupe(out);
      }
      if (e.src == int(k) && e.dst < int(k)) {
        for (const ir::Edge *x : g_.in(binding_[e.dst]))
          if (edgeFits(*e.edge, *x))
            out.push_back(x->src);
        return dedupe(out);
      }
    }
    for (const ir::Node &n : g_.state().nodes)
      out.push_back(n.id);
    return out;
  }

  static std::vector<ir::NodeId> dedupe(std::vector<ir::NodeId> v) {
    std::vector<ir::NodeId> out;
    for (ir::NodeId id : v)
      if (std::find(out.begin(), out.end(), id) == out.end())
        out.push_back(id);
    return out;
  }

  bool consistent(std::size_t k) const {
    for (std::size_t j = 0; j < k; ++j)
      if (binding_[j] == binding_[k])
        return false;
    for (const ResolvedEdge &e : edges_)
      if (std::max(e.src, e.dst) == int(k) &&
          !hasEdge(g_, *e.edge, binding_[e.src], binding_[e.dst]))
        return false;
    return true;
  }

  void bind(std::size_t k) {
    if (k == p_.nodes.size()) {
      found_.push_back(binding_);
      return;
    }
    for (ir::NodeId id : candidates(k)) {
      const ir::Node *n = g_.node(id);
      if (!n || !p_.admits(k, program_, g_, *n))
        continue;
      binding_[k] = id;
      if (consistent(k))
        bind(k + 1);
    }
    binding_[k] = 0;
  }

  const Pattern &p_;
  const ir::Program &program_;
  const StateGraph &g_;
  std::vector<ResolvedEdge> edges_;
  std::vector<ir::NodeId> binding_;
  std::vector<std::vector<ir::NodeId>> found_;
};

} // namespace

std::vector<std::vector<ir::NodeId>>
matchPattern(const Pattern &pattern, const ir::Program &program,
             const StateGraph &graph) {
  if (pattern.empty())
    return {};
  return Matcher(pattern, program, graph).run();
}

std::optional<std::string>
explainMismatch(const Pattern &pattern, const ir::Program &program,
                const StateGraph &graph,
                const std::vector<ir::NodeId> &binding) {
  if (binding.size() != pattern.nodes.size())
    return "the match binds " + std::to_string(binding.size()) +
           " roles, the pattern has " + std::to_string(pattern.nodes.size());
  for (std::size_t k = 0; k < binding.size(); ++k) {
    const PatternNode &role = pattern.nodes[k];
    const ir::Node *n = graph.node(binding[k]);
    if (!n)
      return "role '" + role.role + "': there is no node %" +
             std::to_string(binding[k]) + " in state '" + graph.state().name +
             "'";
    PatternNode bare = role;
    bare.predicate = nullptr;
    Pattern shape;
    shape.nodes.push_back(bare);
    if (!shape.admits(0, program, graph, *n)) {
      std::string what = std::string(ir::nodeKindName(role.kind));
      if (!role.ops.empty())
        what += " " + role.ops.front() + (role.ops.size() > 1 ? " (or ...)" : "");
      return "role '" + role.role + "': node %" + std::to_string(n->id) +
             " ('" + n->label + "') is not a " + what;
    }
    if (!pattern.admits(k, program, graph, *n))
      return "role '" + role.role + "': node %" + std::to_string(n->id) +
             " ('" + n->label + "') " + std::string(kPredicateRefused);
    for (std::size_t j = 0; j < k; ++j)
      if (binding[j] == binding[k])
        return "roles '" + pattern.nodes[j].role + "' and '" + role.role +
               "' are bound to the same node %" + std::to_string(binding[k]);
  }
  for (const PatternEdge &e : pattern.edges) {
    ir::NodeId s = binding[pattern.roleIndex(e.src)];
    ir::NodeId d = binding[pattern.roleIndex(e.dst)];
    if (!hasEdge(graph, e, s, d))
      return "no edge from %" + std::to_string(s) + " ('" + e.src + "') to %" +
             std::to_string(d) + " ('" + e.dst + "')";
  }
  return std::nullopt;
}

} // namespace weir::transforms
