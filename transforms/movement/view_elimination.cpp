/// \file
/// `view-elimination`: a map that only copies an array with its dimensions
/// permuted (a Transpose, after expansion) is folded into what reads the
/// copy: maps read the original element directly, and a gemm reads the
/// original as a strided matrix (its leading dimension and, when rows and
/// columns swap, its transpose flag change). The copy is never made.
/// Reshapes and the like become views at tier 1 (`reshape-to-view`); this
/// is their counterpart for data that really moves.
///
/// Ids: readers keep theirs; the copy map and the copy's access node go.

#include "ir/affine.h"
#include "ir/error.h"
#include "ir/primitives.h"
#include "ir/print.h"
#include "ir/scope.h"
#include "transforms/gemm_alignment.h"
#include "transforms/map_scope.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <algorithm>
#include <set>

namespace weir::transforms {

namespace {

using gemm_alignment::ElementwiseMap;
using ir::EdgeId;
using ir::NodeId;
using Rename = std::map<std::string, ir::Expr, std::less<>>;

const char *const kRow = "__row", *const kCol = "__col";

using map_scope::rootOf;

/// One edge out of the copy's access node and how it changes.
struct Reader {
  EdgeId outer = 0; ///< copy's access node -> reader
  NodeId dst = 0;
  /// A map: the edges inside it and the original's element each reads.
  std::vector<std::pair<EdgeId, ir::Subset>> inner;
  /// A gemm (dst itself, or inside the map dst): the edge into its A or B.
  NodeId gemm = 0;
  EdgeId operandEdge = 0;
  std::string operand;
  ir::Subset subset;
  std::int64_t ld = 0;
  bool flip = false;
};

struct Plan {
  ElementwiseMap copy;
  NodeId array = 0, xAccess = 0;
  std::string t, x;
  std::vector<ir::Expr> xIndex; ///< what the copy reads, in its params
  Rename fromT;                 ///< copy params -> the copy's index symbols
  std::vector<Reader> readers;
};

/// The original's index holding element `tIndex` of the copy.
std::vector<ir::Expr> original(const Plan &plan,
                               const std::vector<ir::Expr> &tIndex) {
  Rename m = plan.copy.fixed;
  for (const auto &[param, dim] : plan.fromT)
    m[param] = tIndex[dim.asConstant().value()];
  std::vector<ir::Expr> out;
  for (const ir::Expr &e : plan.xIndex)
    out.push_back(e.substitute(m));
  return out;
}

class Planner {
public:
  Planner(const ir::Program &p, const Match &match, Plan &plan)
      : p_(p), s_(stateNamed(p, match.state)), graph_(sharedStateGraph(s_)),
        g_(*graph_), plan_(plan) {
    plan.array = match.node("array");
    exit_ = match.node("copy_exit");
  }

  CheckResult run() {
    for (auto step : {&Planner::copy, &Planner::containers, &Planner::readers})
      if (CheckResult r = (this->*step)(); !r)
        return r;
    return CheckResult::success();
  }

private:
  CheckResult fail(std::string why) const {
    return CheckResult::failure(std::move(why), {exit_, plan_.array});
  }

  /// A map copying one element per iteration to a permuted index.
  CheckResult copy() {
    auto m =
        gemm_alignment::elementwiseMap(p_, g_, g_.node(exit_)->map().partner);
    if (auto *r = std::get_if<CheckResult>(&m))
      return *r;
    plan_.copy = std::get<ElementwiseMap>(m);
    const ir::Node &t = *g_.node(plan_.copy.tasklet);
    const auto &code = t.tasklet().code->statements;
    if (t.inputs.size() != 1 || t.outputs.size() != 1 || code.size() != 1 ||
        code[0].target != t.outputs[0].name ||
        code[0].value->kind != ir::tasklet::ExprKind::Var ||
        code[0].value->name != t.inputs[0].name ||
        t.inputs[0].dtype != t.outputs[0].dtype)
      return fail(ir::describe(t, "tasklet") +
                  " does more than copy one element");
    const ir::Edge &read = *g_.in(plan_.copy.tasklet)[0];
    const ir::Edge &write = *g_.out(plan_.copy.tasklet)[0];
    plan_.x = read.memlet.container;
    plan_.t = write.memlet.container;
    plan_.xIndex = *gemm_alignment::pointIndex(read.memlet);
    if (g_.in(plan_.copy.entry).size() != 1)
      return fail("the copy map has more than one input");
    plan_.xAccess = g_.in(plan_.copy.entry)[0]->src;

    // The write index must be a permutation of the parameters.
    std::vector<ir::Expr> w = *gemm_alignment::pointIndex(write.memlet);
    const ir::Container &tc = p_.container(plan_.t);
    if (w.size() != tc.shape.size())
      return fail("the copy writes '" + plan_.t + "' at a partial index");
    std::set<std::string> used;
    for (std::size_t d = 0; d < w.size(); ++d) {
      ir::Expr e = w[d].substitute(plan_.copy.fixed);
      if (e == ir::Expr(0) && tc.shape[d] == ir::Expr(1))
        continue;
      auto k = std::find_if(
          plan_.copy.params.begin(), plan_.copy.params.end(),
          [&](const std::string &q) { return e == ir::Expr::symbol(q); });
      if (k == plan_.copy.params.end() || !used.insert(*k).second ||
          plan_.copy.counts[k - plan_.copy.params.begin()] != tc.shape[d])
        return fail("the copy does not write '" + plan_.t +
                    "' as a permutation of its parameters (dimension " +
                    std::to_string(d) + " is written at " + e.str() + ")");
      plan_.fromT[*k] = ir::Expr(static_cast<std::int64_t>(d));
    }
    if (used.size() != plan_.copy.params.size())
      return fail("the copy writes some elements of '" + plan_.t +
                  "' more than once");
    return CheckResult::success();
  }

  CheckResult containers() {
    const ir::Container &t = p_.container(plan_.t);
    if (auto why = notPlainTransient(p_, plan_.t))
      return fail(*why);
    ContainerUses uses = containerUses(p_, plan_.t);
    if (uses.accessNodes != 1 || uses.writes != 1)
      return fail("'" + plan_.t + "' is written elsewhere too");
    if (p_.container(plan_.x).dtype != t.dtype)
      return fail("the copy converts '" + plan_.x + "' to another type");
    if (containerUses(p_, rootOf(p_, plan_.x)).writes > 1)
      return fail("'" + plan_.x +
                  "' is written more than once; its readers could see "
                  "another version than the copy did");
    return CheckResult::success();
  }

  CheckResult readers() {
    for (const ir::Edge *e : g_.out(plan_.array)) {
      Reader r;
      r.outer = e->id;
      r.dst = e->dst;
      const ir::Node &n = *g_.node(e->dst);
      CheckResult ok = fail("'" + plan_.t + "' is read by " +
                            std::string(ir::nodeKindName(n.kind)) + " '" +
                            n.label + "', which cannot read the original");
      if (e->memlet.empty() || e->memlet.container != plan_.t)
        return ok;
      if (isGemm(n)) {
        ok = gemmReader(n, *e, r);
      } else if (n.kind == ir::NodeKind::MapEntry &&
                 ir::scopeInSuffix(e->dstConn).has_value()) {
        std::string via = ir::scopePartner(e->dstConn);
        for (const ir::Edge *inner : g_.out(n.id)) {
          if (inner->srcConn != via)
            continue;
          const ir::Node &d = *g_.node(inner->dst);
          if (isGemm(d) && r.gemm != 0)
            return fail("map '" + n.label + "' feeds '" + plan_.t +
                        "' to more than one gemm operand");
          if (isGemm(d)) {
            ok = gemmReader(d, *inner, r);
          } else if (d.kind == ir::NodeKind::Tasklet &&
                     gemm_alignment::pointIndex(inner->memlet)) {
            r.inner.emplace_back(
                inner->id, point(original(plan_, *gemm_alignment::pointIndex(
                                                     inner->memlet))));
            ok = CheckResult::success();
          } else {
            return fail("map '" + n.label + "' reads '" + plan_.t +
                        "' in a node other than a tasklet or gemm, or more "
                        "than one element at a time");
          }
          if (!ok)
            return ok;
        }
      }
      if (!ok)
        return ok;
      plan_.readers.push_back(std::move(r));
    }
    return CheckResult::success();
  }

  static bool isGemm(const ir::Node &n) {
    return n.kind == ir::NodeKind::Primitive &&
           n.primitive().primitive == "gemm";
  }

  static ir::Subset point(const std::vector<ir::Expr> &index) {
    ir::Subset s;
    for (const ir::Expr &e : index)
      s.dims.emplace_back(e, e + ir::Expr(1));
    return s;
  }

  /// A gemm reading a matrix of the copy: the same matrix of the original,
  /// at fixed strides.
  CheckResult gemmReader(const ir::Node &gemm, const ir::Edge &e, Reader &r) {
    ir::GemmCall call;
    try {
      call = ir::readGemm(gemm.primitive());
    } catch (const Error &err) {
      return fail(err.what());
    }
    r.gemm = gemm.id;
    r.operandEdge = e.id;
    r.operand = e.dstConn;
    bool trans;
    ir::Expr rowsE, colsE, ld;
    if (e.dstConn == "A") {
      trans = call.transA;
      rowsE = trans ? call.k : call.m;
      colsE = trans ? call.m : call.k;
      ld = call.lda;
    } else if (e.dstConn == "B") {
      trans = call.transB;
      rowsE = trans ? call.n : call.k;
      colsE = trans ? call.k : call.n;
      ld = call.ldb;
    } else {
      return fail("gemm '" + gemm.label + "' reads '" + plan_.t + "' as its " +
                  e.dstConn + ", not as A or B");
    }
    const ir::Container &t = p_.container(plan_.t);
    std::size_t rank = t.shape.size();
    auto rows = rowsE.asConstant(), cols = colsE.asConstant();
    const ir::Subset &sub = e.memlet.subset;
    if (!rows || !cols || rank < 2 || sub.dims.size() != rank ||
        colsE != t.shape[rank - 1] || ld != t.shape[rank - 1] ||
        sub.dims[rank - 1].begin != ir::Expr(0))
      return fail("gemm '" + gemm.label + "' reads " + e.memlet.str() +
                  " as a matrix that is not the last two dimensions of '" +
                  plan_.t + "'");
    std::vector<ir::Expr> tIndex;
    for (std::size_t d = 0; d + 2 < rank; ++d)
      tIndex.push_back(sub.dims[d].begin);
    tIndex.push_back(sub.dims[rank - 2].begin + ir::Expr::symbol(kRow));
    tIndex.push_back(ir::Expr::symbol(kCol));
    std::vector<ir::Expr> xIndex = original(plan_, tIndex);
    auto flat = ir::affineIn(ir::flatOffset(p_.container(plan_.x), xIndex),
                             {kRow, kCol});
    if (!flat)
      return fail("the original of '" + plan_.t +
                  "' is not a fixed-stride matrix for gemm '" + gemm.label +
                  "'");
    std::int64_t rs = flat->coef[kRow], cs = flat->coef[kCol];
    if (cs == 1 && (*rows == 1 || rs >= *cols)) {
      r.ld = *rows == 1 ? std::max(rs, *cols) : rs;
    } else if (rs == 1 && (*cols == 1 || cs >= *rows)) {
      r.flip = true;
      r.ld = *cols == 1 ? std::max(cs, *rows) : cs;
    } else {
      return fail("gemm '" + gemm.label + "' would read '" + plan_.x +
                  "' with rows " + std::to_string(rs) + " and columns " +
                  std::to_string(cs) +
                  " elements apart; a gemm needs one of them to be 1");
    }
    for (const ir::Expr &x : xIndex) {
      auto d = ir::affineIn(x, {kRow, kCol});
      if (!d || d->coef[kRow] < 0 || d->coef[kCol] < 0)
        return fail("the original of '" + plan_.t +
                    "' is read backwards by gemm '" + gemm.label + "'");
      ir::Expr last = d->constant + ir::Expr(d->coef[kRow] * (*rows - 1)) +
                      ir::Expr(d->coef[kCol] * (*cols - 1));
      r.subset.dims.emplace_back(d->constant, last + ir::Expr(1));
    }
    return CheckResult::success();
  }

  const ir::Program &p_;
  const ir::State &s_;
  std::shared_ptr<const StateGraph> graph_;
  const StateGraph &g_;
  Plan &plan_;
  NodeId exit_ = 0;
};

} // namespace

namespace {

class ViewElimination : public PlannedTransformation<Plan> {
public:
  ViewElimination();

protected:
  Planned<Plan> plan(const ir::Program &program, const Match &match,
                     const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params, const Plan &plan) const override;
};

} // namespace

ViewElimination::ViewElimination()
    : PlannedTransformation({
          .id = "view-elimination",
          .tier = Tier::Movement,
          .summary =
              "Fold a transposing copy into the memlets of what reads it",
          .description =
              "A map whose only tasklet copies one element (y = x) and whose "
              "write index is a permutation of its parameters — a Transpose "
              "after expansion — writes a transient that exists only to be "
              "read in another order. Its readers read the original instead: "
              "each map reading one element per iteration gets the original "
              "element's index in its memlet, and a gemm reading a matrix of "
              "the copy reads the original as a strided matrix (a new leading "
              "dimension, and the transpose flag flipped when rows become "
              "columns). Refused when a reader is anything else, when the "
              "gemm's matrix is not a fixed-stride matrix of the original, or "
              "when the original may change between the copy and its readers "
              "(written more than once). Exact: the same values are read; the "
              "copy's writes and reads disappear.",
          .pattern = Pattern()
                         .node("copy_exit", ir::NodeKind::MapExit)
                         .node("array", ir::NodeKind::Access)
                         .edge("copy_exit", "array"),
      }) {}

Planned<Plan> ViewElimination::plan(const ir::Program &program,
                                    const Match &match,
                                    const Params &params) const {
  Planned<Plan> out;
  out.verdict = Planner(program, match, out.plan).run();
  return out;
}

ApplyResult ViewElimination::rewrite(const ir::Program &program,
                                     const Match &match, const Params &params,
                                     const Plan &plan) const {
  ApplyResult r{program, {}};
  ir::State &s = stateNamed(r.program, match.state);
  auto edge = [&](EdgeId id) -> ir::Edge & { return edgeWithId(s, id); };
  const ir::Container &x = r.program.container(plan.x);
  ir::Memlet whole{plan.x, ir::Subset::full(x.shape), std::nullopt};

  for (const Reader &reader : plan.readers) {
    ir::Edge &outer = edge(reader.outer);
    outer.src = plan.xAccess;
    outer.memlet = whole;
    ir::Node &dst = *s.findNode(reader.dst);
    if (dst.kind == ir::NodeKind::MapEntry) {
      // The scope connectors carry the original now.
      std::string from = ir::scopeSuffix(outer.dstConn);
      std::string to = map_scope::freshPair(dst, plan.x);
      for (ir::Connector &c : dst.inputs)
        if (c.name == ir::scopeIn(from))
          c.name = ir::scopeIn(to);
      for (ir::Connector &c : dst.outputs)
        if (c.name == ir::scopeOut(from))
          c.name = ir::scopeOut(to);
      outer.dstConn = ir::scopeIn(to);
      s.edges.editWhere(
          [&](const ir::Edge &e) {
            return e.src == reader.dst && e.srcConn == ir::scopeOut(from);
          },
          [&](ir::Edge &e) { e.srcConn = ir::scopeOut(to); });
    }
    for (const auto &[id, subset] : reader.inner)
      edge(id).memlet = {plan.x, subset, std::nullopt};
    if (reader.gemm != 0) {
      edge(reader.operandEdge).memlet = {plan.x, reader.subset, std::nullopt};
      ir::Node &gemm = *s.findNode(reader.gemm);
      ir::GemmCall call = ir::readGemm(gemm.primitive());
      bool a = reader.operand == "A";
      (a ? call.lda : call.ldb) = ir::Expr(reader.ld);
      if (reader.flip)
        (a ? call.transA : call.transB) ^= true;
      std::get<ir::PrimitiveData>(gemm.payload).attributes =
          gemm_alignment::withCall(gemm.primitive(), call);
    }
  }
  for (NodeId id :
       {plan.array, plan.copy.entry, plan.copy.tasklet, plan.copy.exit})
    removeNode(s, id, &r.idMap);
  removeUnused(r.program, &r.idMap);
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<ViewElimination>()};

} // namespace weir::transforms
