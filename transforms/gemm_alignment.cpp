#include "transforms/gemm_alignment.h"

#include "ir/affine.h"
#include "ir/error.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/map_scope.h"
#include "transforms/rewrite.h"

#include <algorithm>

namespace weir::transforms::gemm_alignment {
namespace {

using ir::NodeId;
using ir::NodeKind;

bool isGemm(const ir::Node *n) {
  return n && n->kind == NodeKind::Primitive &&
         n->primitive().primitive == "gemm";
}

using ir::affineIn;
using ir::flatOffset;

std::vector<ir::Expr> substituted(const std::vector<ir::Expr> &index,
                                  const Rename &m) {
  std::vector<ir::Expr> out;
  for (const ir::Expr &e : index)
    out.push_back(e.substitute(m));
  return out;
}

/// The parameters of a map that may take more than one value (each must
/// start at 0 with step 1; the count may be a symbol) and the fixed value
/// of the others.
std::optional<std::string> splitParams(const ir::Node &entry,
                                       std::vector<std::string> &params,
                                       std::vector<ir::Expr> &counts,
                                       Rename &fixed) {
  const ir::MapData &m = entry.map();
  for (std::size_t k = 0; k < m.params.size(); ++k) {
    const ir::Range &r = m.ranges[k];
    ir::Expr count = r.size();
    if (count == ir::Expr(1)) {
      fixed[m.params[k]] = r.begin;
      continue;
    }
    if (r.begin != ir::Expr(0) || r.step != ir::Expr(1))
      return ir::describe(entry) + " iterates '" + m.params[k] + "' over " +
             r.str() + "; only ranges from 0 with step 1 are aligned";
    params.push_back(m.params[k]);
    counts.push_back(count);
  }
  return std::nullopt;
}

/// The site of gemm `gemm`, which runs at the top of the state or directly
/// inside the map `entry` (0 for none).
std::variant<GemmSite, CheckResult> site(const ir::Program &program,
                                         const StateGraph &g, NodeId gemm,
                                         NodeId entry) {
  const ir::Node &n = *g.node(gemm);
  auto fail = [&](std::string why) {
    return CheckResult::failure(std::move(why), {gemm});
  };
  std::shared_ptr<const ir::ScopeParents> shared =
      ir::sharedScopeParents(g.state());
  const ir::ScopeParents &parents = *shared;
  if (ir::parentOf(parents, gemm) != entry)
    return fail(ir::describe(n) + " is not directly inside the map around it");
  if (entry != 0 && ir::parentOf(parents, entry) != 0)
    return fail(ir::describe(n) +
                " runs in nested maps; only a gemm at the top "
                "or in one map is fused");
  GemmSite s;
  s.gemm = gemm;
  try {
    s.call = ir::readGemm(n.primitive());
  } catch (const Error &e) {
    return fail(ir::describe(n) + ": " + e.what());
  }
  auto nn = s.call.n.asConstant(), ldc = s.call.ldc.asConstant();
  if (!nn || !ldc)
    return fail(ir::describe(n) + " has symbolic row sizes (N = " +
                s.call.n.str() + ", ldc = " + s.call.ldc.str() +
                "); only a constant number of columns is aligned");
  s.m = s.call.m;
  s.n = *nn;
  s.ldc = *ldc;
  if (entry != 0) {
    const ir::Node &e = *g.node(entry);
    s.entry = entry;
    s.exit = e.map().partner;
    if (auto why = splitParams(e, s.batchParams, s.batchCounts, s.fixed))
      return fail(*why);
  }
  return s;
}

const ir::Edge *onlyEdge(StateGraph::Edges edges,
                         const std::string &conn, bool bySource) {
  const ir::Edge *found = nullptr;
  for (const ir::Edge *e : edges)
    if ((bySource ? e->srcConn : e->dstConn) == conn) {
      if (found)
        return nullptr;
      found = e;
    }
  return found;
}

/// The gemm behind (or ahead of) an access node: the edge touching the
/// access node, the edge touching the gemm, and the map between them.
struct Link {
  NodeId gemm = 0, entry = 0;
  const ir::Edge *inner = nullptr, *outer = nullptr;
};

std::optional<Link> behind(const StateGraph &g, NodeId access) {
  const auto &ins = g.in(access);
  if (ins.size() != 1)
    return std::nullopt;
  const ir::Edge *outer = ins[0];
  const ir::Node *src = g.node(outer->src);
  if (isGemm(src) && outer->srcConn == "C")
    return Link{src->id, 0, outer, outer};
  if (!src || src->kind != NodeKind::MapExit ||
      !ir::scopeOutSuffix(outer->srcConn).has_value())
    return std::nullopt;
  const ir::Edge *inner =
      onlyEdge(g.in(src->id), ir::scopePartner(outer->srcConn), false);
  if (!inner || !isGemm(g.node(inner->src)) || inner->srcConn != "C")
    return std::nullopt;
  return Link{inner->src, src->map().partner, inner, outer};
}

std::optional<Link> ahead(const StateGraph &g, NodeId access) {
  std::optional<Link> found;
  for (const ir::Edge *outer : g.out(access)) {
    const ir::Node *dst = g.node(outer->dst);
    std::optional<Link> l;
    if (isGemm(dst) && outer->dstConn == "Cin")
      l = Link{dst->id, 0, outer, outer};
    else if (dst && dst->kind == NodeKind::MapEntry &&
             ir::scopeInSuffix(outer->dstConn).has_value())
      for (const ir::Edge *inner : g.out(dst->id))
        if (inner->srcConn == ir::scopePartner(outer->dstConn) &&
            isGemm(g.node(inner->dst)) && inner->dstConn == "Cin")
          l = Link{inner->dst, dst->id, inner, outer};
    if (l) {
      if (found)
        return std::nullopt;
      found = l;
    }
  }
  return found;
}

} // namespace

NodeId gemmBehind(const StateGraph &g, NodeId access) {
  auto l = behind(g, access);
  return l ? l->gemm : 0;
}

NodeId gemmAhead(const StateGraph &g, NodeId access) {
  auto l = ahead(g, access);
  return l ? l->gemm : 0;
}

std::variant<GemmSite, CheckResult>
gemmWriting(const ir::Program &program, const StateGraph &g, NodeId access) {
  auto l = behind(g, access);
  if (!l)
    return CheckResult::failure(
        "access node %" + std::to_string(access) +
            " is not written by a gemm's output C alone (directly or "
            "through the map the gemm runs in)",
        {access});
  auto s = site(program, g, l->gemm, l->entry);
  if (auto *ok = std::get_if<GemmSite>(&s)) {
    ok->inner = l->inner->id;
    ok->outer = l->outer->id;
    ok->container = l->inner->memlet.container;
    for (const ir::Range &r : l->inner->memlet.subset.dims)
      ok->corner.push_back(r.begin);
  }
  return s;
}

std::variant<GemmSite, CheckResult> gemmAccumulating(const ir::Program &program,
                                                     const StateGraph &g,
                                                     NodeId access) {
  auto l = ahead(g, access);
  if (!l)
    return CheckResult::failure(
        "access node %" + std::to_string(access) +
            " is not read by exactly one gemm as its accumulator Cin",
        {access});
  auto s = site(program, g, l->gemm, l->entry);
  if (auto *ok = std::get_if<GemmSite>(&s)) {
    ok->inner = l->inner->id;
    ok->outer = l->outer->id;
    ok->container = l->inner->memlet.container;
    for (const ir::Range &r : l->inner->memlet.subset.dims)
      ok->corner.push_back(r.begin);
  }
  return s;
}

std::variant<ElementwiseMap, CheckResult>
elementwiseMap(const ir::Program &, const StateGraph &g, NodeId entryId) {
  const ir::Node &entry = *g.node(entryId);
  auto fail = [&](std::string why) {
    return CheckResult::failure(std::move(why), {entryId});
  };
  ElementwiseMap m;
  m.entry = entryId;
  m.exit = entry.map().partner;
  std::shared_ptr<const ir::ScopeParents> shared =
      ir::sharedScopeParents(g.state());
  const ir::ScopeParents &parents = *shared;
  if (ir::parentOf(parents, entryId) != 0)
    return fail(ir::describe(entry) + " is nested in another map");
  std::vector<NodeId> body;
  for (NodeId id : parents.childrenOf(entryId))
    if (id != m.exit)
      body.push_back(id);
  if (body.size() != 1 || g.node(body[0])->kind != NodeKind::Tasklet)
    return fail(ir::describe(entry) + " holds " + std::to_string(body.size()) +
                " nodes; only a map around a single tasklet qualifies "
                "(tasklet-fusion joins tasklets)");
  m.tasklet = body[0];
  const ir::Node &t = *g.node(m.tasklet);
  for (const ir::Edge *e : g.in(m.tasklet))
    if (e->src != entryId || e->memlet.empty() || e->memlet.wcr ||
        !pointIndex(e->memlet))
      return fail(ir::describe(t) +
                  " has an input that is not one element "
                  "read through " +
                  ir::describe(entry));
  for (const ir::Edge *e : g.out(m.tasklet))
    if (e->dst != m.exit || e->memlet.empty() || e->memlet.wcr ||
        !pointIndex(e->memlet))
      return fail(ir::describe(t) + " has an output that is not one element "
                                    "written through the map's exit (or it "
                                    "resolves write conflicts)");
  for (const ir::Edge *e : g.out(entryId))
    if (e->dst != m.tasklet)
      return fail(ir::describe(entry) + " feeds a node other than its tasklet");
  for (const ir::Edge *e : g.in(entryId))
    if (e->memlet.empty() || !ir::scopeInSuffix(e->dstConn).has_value() ||
        g.node(e->src)->kind != NodeKind::Access)
      return fail(ir::describe(entry) +
                  " has an input that is not an array read from an access "
                  "node");
  for (const ir::Edge *e : g.out(m.exit))
    if (e->memlet.empty() || !ir::scopeOutSuffix(e->srcConn).has_value() ||
        g.node(e->dst)->kind != NodeKind::Access)
      return fail(ir::describe(*g.node(m.exit)) +
                  " has an output that is not an array written to an "
                  "access node");
  if (auto why = splitParams(entry, m.params, m.counts, m.fixed))
    return fail(*why);
  return m;
}

std::variant<Alignment, std::string> align(const ir::Program &program,
                                           const GemmSite &gemm,
                                           const ElementwiseMap &map,
                                           const std::string &container,
                                           const std::vector<ir::Expr> &index) {
  const ir::Container &c = program.container(container);
  auto a = affineIn(flatOffset(c, substituted(index, map.fixed)), map.params);
  if (!a)
    return "the map reaches '" + container +
           "' through an index that is not affine in its parameters";
  auto b = affineIn(flatOffset(c, substituted(gemm.corner, gemm.fixed)),
                    gemm.batchParams);
  if (!b)
    return "the gemm's C starts in '" + container +
           "' at an offset that is not affine in its map's parameters";
  if (a->constant != b->constant)
    return "the map starts at element " + a->constant.str() + " of '" +
           container + "' and the gemm's C at element " + b->constant.str();

  Alignment out;
  std::set<std::string> placed;
  for (std::size_t k = 0; k < gemm.batchParams.size(); ++k) {
    const std::string &q = gemm.batchParams[k];
    std::int64_t step = b->coef.at(q);
    std::size_t p = 0;
    while (p < map.params.size() &&
           (placed.count(map.params[p]) || a->coef.at(map.params[p]) != step ||
            map.counts[p] != gemm.batchCounts[k]))
      ++p;
    if (p == map.params.size())
      return "no parameter of the map walks the gemm's batch parameter '" + q +
             "' (" + gemm.batchCounts[k].str() + " steps of " +
             std::to_string(step) + " elements)";
    placed.insert(map.params[p]);
    out.toBatch[map.params[p]] = ir::Expr::symbol(q);
  }
  // The rest walk rows (steps of whole rows) or columns (within a row).
  std::vector<std::pair<std::int64_t, ir::Expr>> rows, cols; // unit, count
  for (std::size_t p = 0; p < map.params.size(); ++p) {
    const std::string &v = map.params[p];
    if (placed.count(v))
      continue;
    std::int64_t step = a->coef.at(v);
    if (step > 0 && step < gemm.n) {
      out.colUnit[v] = step;
      cols.emplace_back(step, map.counts[p]);
    } else if (step >= gemm.ldc && step % gemm.ldc == 0) {
      out.rowUnit[v] = step / gemm.ldc;
      rows.emplace_back(step / gemm.ldc, map.counts[p]);
    } else {
      return "parameter '" + v + "' steps " + std::to_string(step) +
             " elements of '" + container + "', neither within a row of C (" +
             std::to_string(gemm.n) + " columns) nor by whole rows (" +
             std::to_string(gemm.ldc) + " apart)";
    }
  }
  // Each must enumerate its extent exactly once: units 1, c1, c1·c2, ...
  auto radix = [](std::vector<std::pair<std::int64_t, ir::Expr>> units,
                  const ir::Expr &extent) {
    std::sort(units.begin(), units.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    ir::Expr expected(1);
    for (const auto &[unit, count] : units) {
      if (ir::Expr(unit) != expected)
        return false;
      expected = expected * count;
    }
    return expected == extent;
  };
  if (!radix(rows, gemm.m) || !radix(cols, ir::Expr(gemm.n)))
    return "the map's iterations do not cover the gemm's " + gemm.m.str() +
           " x " + std::to_string(gemm.n) + " output exactly once";
  return out;
}

std::variant<OperandView, std::string>
operandView(const ir::Program &program, const ElementwiseMap &map,
            const Alignment &alignment, const std::string &container,
            const std::vector<ir::Expr> &index) {
  const ir::Container &c = program.container(container);
  std::vector<ir::Expr> idx = substituted(index, map.fixed);
  std::vector<std::string> walking;
  for (const std::string &p : map.params)
    if (!alignment.toBatch.count(p))
      walking.push_back(p);
  auto a = affineIn(flatOffset(c, idx), walking);
  if (!a)
    return "the map reads '" + container +
           "' through an index that is not affine in its parameters";
  // The stride per row (column) of C is the step of the parameter that
  // walks single rows (columns); the others must agree with it.
  auto stride = [&](const std::map<std::string, std::int64_t> &units)
      -> std::optional<std::int64_t> {
    std::int64_t s = 0;
    for (const auto &[p, unit] : units)
      if (unit == 1)
        s = a->coef.at(p);
    for (const auto &[p, unit] : units)
      if (a->coef.at(p) != s * unit)
        return std::nullopt;
    if (s < 0)
      return std::nullopt;
    return s;
  };
  auto row = stride(alignment.rowUnit), col = stride(alignment.colUnit);
  if (!row || !col)
    return "'" + container +
           "' is not read at a fixed non-negative stride per row and per "
           "column of C";
  std::map<std::string, ir::Expr> counts;
  for (std::size_t p = 0; p < map.params.size(); ++p)
    counts[map.params[p]] = map.counts[p];
  OperandView v{ir::Expr(*row), ir::Expr(*col), {}};
  for (const ir::Expr &e : idx) {
    auto d = affineIn(e, walking);
    if (!d)
      return "the map reads '" + container +
             "' through an index that is not affine in its parameters";
    ir::Expr begin = d->constant.substitute(alignment.toBatch), last = begin;
    for (const auto &[p, k] : d->coef) {
      if (k < 0)
        return "the map reads '" + container + "' backwards along parameter '" +
               p + "'";
      last = last + ir::Expr(k) * (counts.at(p) - ir::Expr(1));
    }
    v.subset.dims.emplace_back(begin, last + ir::Expr(1));
  }
  return v;
}

std::variant<std::vector<Operand>, std::string>
operands(const ir::Program &p, const StateGraph &g, const ElementwiseMap &map,
         const Alignment &alignment, const std::string &skip) {
  const ir::Node &t = *g.node(map.tasklet);
  std::map<std::string, const ir::Edge *> outerOf;
  for (const ir::Edge *e : g.in(map.entry))
    outerOf[ir::scopeSuffix(e->dstConn)] = e;
  std::vector<Operand> out;
  for (const ir::Edge *e : g.in(map.tasklet)) {
    if (e->memlet.container == skip)
      continue;
    Operand o;
    o.conn = e->dstConn;
    o.dtype = t.findInput(e->dstConn)->dtype;
    o.container = e->memlet.container;
    auto outer = outerOf.find(ir::scopeSuffix(e->srcConn));
    if (outer == outerOf.end())
      return "the map's tasklet reads '" + o.container +
             "' through a connector the map's entry does not feed";
    o.access = outer->second->src;
    o.outer = outer->second->id;
    const ir::Container &c = p.container(o.container);
    if (c.dtype != ir::DType::F32)
      return "the map reads '" + o.container + "', which is " +
             std::string(ir::dtypeName(c.dtype)) +
             "; epilogue operands are f32";
    const ir::Container *root = &c;
    if (c.isView())
      root = &p.container(c.viewOf);
    if (containerUses(p, root->name).writes > 1)
      return "'" + o.container +
             "' is written more than once; reading it at another time, in "
             "the gemm, could see another version";
    auto v =
        operandView(p, map, alignment, o.container, *pointIndex(e->memlet));
    if (auto *why = std::get_if<std::string>(&v))
      return *why;
    o.view = std::get<OperandView>(v);
    out.push_back(std::move(o));
  }
  return out;
}

bool injective(const ir::Program &program, const ElementwiseMap &map,
               const std::string &container,
               const std::vector<ir::Expr> &index) {
  const ir::Container &c = program.container(container);
  auto a = affineIn(flatOffset(c, substituted(index, map.fixed)), map.params);
  if (!a)
    return false;
  std::vector<std::pair<std::int64_t, ir::Expr>> steps; // step, count
  for (std::size_t p = 0; p < map.params.size(); ++p)
    steps.emplace_back(a->coef.at(map.params[p]), map.counts[p]);
  std::sort(steps.begin(), steps.end(),
            [](const auto &x, const auto &y) { return x.first < y.first; });
  // Each step must clear the whole span of the smaller ones (provably: a
  // symbolic count is only allowed on the largest step).
  std::int64_t reach = 1;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    if (steps[k].first < reach)
      return false;
    if (k + 1 == steps.size())
      break;
    auto count = steps[k].second.asConstant();
    if (!count)
      return false;
    reach = steps[k].first * *count;
  }
  return true;
}

std::optional<std::vector<ir::Expr>> pointIndex(const ir::Memlet &memlet) {
  std::vector<ir::Expr> index;
  for (const ir::Range &r : memlet.subset.dims) {
    if (r.size() != ir::Expr(1))
      return std::nullopt;
    index.push_back(r.begin);
  }
  return index;
}

namespace {

ir::tasklet::ExprPtr
renamedExpr(const ir::tasklet::Expr &e,
            const std::map<std::string, std::string> &names) {
  auto copy = std::make_shared<ir::tasklet::Expr>(e);
  if (e.kind == ir::tasklet::ExprKind::Var)
    if (auto it = names.find(e.name); it != names.end())
      copy->name = it->second;
  for (ir::tasklet::ExprPtr &op : copy->operands)
    op = renamedExpr(*op, names);
  return copy;
}

void collectNames(const ir::tasklet::Expr &e, std::set<std::string> &out) {
  if (e.kind == ir::tasklet::ExprKind::Var)
    out.insert(e.name);
  for (const ir::tasklet::ExprPtr &op : e.operands)
    collectNames(*op, out);
}

} // namespace

ir::tasklet::Code renamedCode(const ir::tasklet::Code &code,
                              const std::map<std::string, std::string> &names) {
  ir::tasklet::Code out;
  for (const ir::tasklet::Assignment &a : code.statements) {
    auto it = names.find(a.target);
    out.statements.push_back({it == names.end() ? a.target : it->second,
                              renamedExpr(*a.value, names)});
  }
  return out;
}

std::vector<std::string> codeNames(const ir::tasklet::Code &code) {
  std::set<std::string> names;
  for (const ir::tasklet::Assignment &a : code.statements) {
    names.insert(a.target);
    collectNames(*a.value, names);
  }
  return {names.begin(), names.end()};
}

std::string freshName(std::set<std::string> &taken, const std::string &base) {
  for (int k = 0;; ++k) {
    std::string name = base + std::to_string(k);
    if (taken.insert(name).second)
      return name;
  }
}

void connectOperand(ir::Program &program, ir::State &state,
                    const GemmSite &gemm, const std::string &name,
                    ir::DType dtype, NodeId access, const ir::Memlet &outer,
                    const ir::Memlet &inner) {
  state.findNode(gemm.gemm)->inputs.push_back({name, dtype});
  if (gemm.entry == 0) {
    state.edges.push_back(
        {program.newEdgeId(), access, "", gemm.gemm, name, inner});
    return;
  }
  ir::Node &entry = *state.findNode(gemm.entry);
  std::string via = map_scope::freshPair(entry, name);
  entry.inputs.push_back({ir::scopeIn(via), dtype});
  entry.outputs.push_back({ir::scopeOut(via), dtype});
  state.edges.push_back(
      {program.newEdgeId(), access, "", gemm.entry, ir::scopeIn(via), outer});
  state.edges.push_back({program.newEdgeId(), gemm.entry, ir::scopeOut(via),
                         gemm.gemm, name, inner});
}

ir::Attributes withCall(const ir::PrimitiveData &gemm,
                        const ir::GemmCall &call) {
  ir::Attributes out;
  for (const auto &[key, value] : gemm.attributes)
    if (key != "epilogue" && !key.ends_with(".row") && !key.ends_with(".col"))
      out[key] = value;
  for (auto &[key, value] : ir::gemmAttributes(call))
    out[key] = value;
  return out;
}

} // namespace weir::transforms::gemm_alignment
