/// \file
/// `layout-transform`: a 2-D convolution (group 1, explicit pads, f32,
/// constant weights) moves to the blocked channel layout NCHWc
/// (transforms/operators/blocked_layout.h): its input is reordered to
/// [N, C/b, H, W, b], its weights to [K/b, C/b, KH, KW, b, b] (once, at
/// apply time), it becomes a `BlockedConv`, and a reorder back gives the
/// NCHW output. The conversions sit at the boundaries and cancel: when the
/// input is already the reorder of a blocked tensor — directly, or through
/// elementwise operators on same-shape operands (Relu, Add of a residual,
/// ...), which then run on the blocked tensors — the convolution reads the
/// blocked tensor, and a reorder whose result nothing reads any more goes.
/// So a chain conv → relu → conv → add → relu → conv, transformed
/// convolution by convolution, ends with one reorder at each end.
///
/// Ids: the Conv's id passes to its BlockedConv; elementwise operators
/// keep theirs; removed reorders disappear.

#include "ir/error.h"
#include "transforms/operators/blocked_layout.h"
#include "transforms/planned.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <cstring>
#include <set>

namespace weir::transforms {

namespace {

using ir::Expr;
using ir::NodeId;

const std::set<std::string, std::less<>> kElementwise = {
    "Relu",        "Sigmoid",    "Tanh", "LeakyRelu", "Elu", "Selu",
    "HardSigmoid", "Softplus",   "Neg",  "Abs",       "Exp", "Log",
    "Sqrt",        "Reciprocal", "Erf",  "Identity",  "Add", "Sub",
    "Mul",         "Div",        "Max",  "Min"};

struct ConvPlan {
  std::string x, w, b, y;
  std::int64_t block = 16, inChannels = 0, outChannels = 0;
  std::vector<std::int64_t> kernel, strides, dilations, pads;
};

std::vector<std::int64_t> intsAttr(const ir::LibraryData &d,
                                   std::string_view name,
                                   std::vector<std::int64_t> fallback) {
  auto it = d.attributes.find(name);
  if (it == d.attributes.end())
    return fallback;
  if (auto *v = std::get_if<std::vector<std::int64_t>>(&it->second))
    return *v;
  return {};
}

CheckResult planConv(const ir::Program &p, const Match &match,
                     const Params &params, ConvPlan &out) {
  const ir::State &s = stateNamed(p, match.state);
  NodeId conv = match.node("conv");
  const ir::Node &n = *s.findNode(conv);
  auto fail = [&](std::string why) {
    return CheckResult::failure("Conv '" + n.label + "': " + std::move(why),
                                {conv});
  };
  const ir::LibraryData &d = n.library();
  out.block = intParam(params, "block");
  out.x = inputContainer(s, conv, "X");
  out.w = inputContainer(s, conv, "W");
  out.b = inputContainer(s, conv, "B");
  out.y = outputContainer(s, conv, "Y");
  if (out.x.empty() || out.w.empty() || out.y.empty())
    return fail("X, W or Y is not connected");
  const ir::Container &x = p.container(out.x), &w = p.container(out.w),
                      &y = p.container(out.y);
  if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4)
    return fail("only 2-D convolutions (rank-4 X, W and Y) are blocked");
  for (const ir::Container *c : {&x, &w, &y})
    if (c->dtype != ir::DType::F32)
      return fail("'" + c->name + "' is not f32");
  if (!w.isConstant())
    return fail("the weights '" + out.w + "' are not a constant");
  if (!out.b.empty() && p.container(out.b).shape.size() != 1)
    return fail("the bias is not one value per output channel");
  auto group = d.attributes.find("group");
  if (group != d.attributes.end() &&
      std::get_if<std::int64_t>(&group->second) &&
      std::get<std::int64_t>(group->second) != 1)
    return fail("grouped convolutions are not blocked");
  auto autoPad = d.attributes.find("auto_pad");
  if (autoPad != d.attributes.end()) {
    auto *v = std::get_if<std::string>(&autoPad->second);
    if (!v || (*v != "NOTSET" && !v->empty()))
      return fail("auto_pad '" + (v ? *v : std::string("?")) +
                  "' is not handled; explicit pads are");
  }
  auto known = [](const Expr &e) { return e.asConstant().value_or(-1); };
  out.outChannels = known(w.shape[0]);
  out.inChannels = known(w.shape[1]);
  if (out.inChannels != known(x.shape[1]) ||
      out.outChannels != known(y.shape[1]))
    return fail("channel counts are not constant or disagree with W");
  std::string bs = std::to_string(out.block);
  if (out.inChannels % out.block != 0 || out.outChannels % out.block != 0)
    return fail("block " + bs + " does not divide the " +
                std::to_string(out.inChannels) + " input and " +
                std::to_string(out.outChannels) + " output channels");
  out.kernel =
      intsAttr(d, "kernel_shape", {known(w.shape[2]), known(w.shape[3])});
  out.strides = intsAttr(d, "strides", {1, 1});
  out.dilations = intsAttr(d, "dilations", {1, 1});
  out.pads = intsAttr(d, "pads", {0, 0, 0, 0});
  if (out.kernel !=
          std::vector<std::int64_t>{known(w.shape[2]), known(w.shape[3])} ||
      out.strides.size() != 2 || out.dilations.size() != 2 ||
      out.pads.size() != 4)
    return fail("kernel_shape, strides, dilations or pads do not describe a "
                "2-D convolution with W's kernel");
  return CheckResult::success();
}

/// The edit: a program being rewritten in one state, the block, and the
/// id map to keep up to date.
class Blocker {
public:
  Blocker(ir::Program &p, ir::State &s, std::int64_t block, IdMap &idMap)
      : p_(p), s_(s), b_(block), idMap_(idMap) {}

  /// The node writing `x` through its one access node, when `x` has one
  /// access node, one write, no views, and that writer is a library node
  /// in this state. (An output qualifies: moving its writer onto blocked
  /// tensors leaves a reorder back that still writes it.)
  const ir::Node *writerOf(const std::string &x, NodeId *access) const {
    const ir::Container *c = p_.findContainer(x);
    if (!c || c->isView() || c->isConstant())
      return nullptr;
    for (const auto &[name, other] : p_.containers)
      if (other.viewOf == x)
        return nullptr;
    ContainerUses uses = containerUses(p_, x);
    if (uses.accessNodes != 1 || uses.writes != 1)
      return nullptr;
    for (const ir::Edge &e : s_.edges)
      if (e.memlet.container == x && !e.srcConn.empty()) {
        const ir::Node *n = s_.findNode(e.src);
        if (n && n->kind == ir::NodeKind::Library) {
          *access = e.dst;
          return n;
        }
      }
    return nullptr;
  }

  bool isReorderBack(const ir::Node &n) const {
    const ir::LibraryData &d = n.library();
    auto it = d.attributes.find("block");
    return d.op == operators::kFromBlocked && it != d.attributes.end() &&
           std::get_if<std::int64_t>(&it->second) &&
           std::get<std::int64_t>(it->second) == b_;
  }

  /// Whether `x` is the reorder of a blocked tensor, directly or through
  /// elementwise operators whose operands all have x's shape.
  bool blockedSourceExists(const std::string &x, int depth = 0) const {
    NodeId access = 0;
    const ir::Node *e = writerOf(x, &access);
    if (!e || depth > 64)
      return false;
    if (isReorderBack(*e))
      return true;
    if (!kElementwise.count(e->library().op) || e->library().domain != "")
      return false;
    const ir::Container &xc = p_.container(x);
    int outputs = 0;
    for (const ir::Edge *o : s_.outEdges(e->id))
      outputs += !o->memlet.empty();
    if (outputs != 1)
      return false;
    bool any = false;
    for (const ir::Edge *in : s_.inEdges(e->id)) {
      if (in->memlet.empty())
        continue;
      const ir::Container &u = p_.container(in->memlet.container);
      if (u.shape != xc.shape || u.dtype != xc.dtype ||
          !blockedSourceExists(u.name, depth + 1))
        return false;
      any = true;
    }
    return any;
  }

  /// The blocked tensor whose reorder is `x` and its access node (see
  /// blockedSourceExists, which must hold). Elementwise operators on the
  /// way move onto blocked tensors; `x` stays, as a reorder back of the
  /// last one, until `retire` finds nothing reads it.
  std::pair<std::string, NodeId> blockedSource(const std::string &x) {
    NodeId xAccess = 0;
    const ir::Node *writer = writerOf(x, &xAccess);
    if (!writer)
      throw Error("layout-transform: '" + x + "' lost its writer");
    NodeId e = writer->id;
    if (isReorderBack(*writer)) {
      const ir::Edge *in = s_.inEdges(e).at(0);
      return {in->memlet.container, in->src};
    }
    // Edge ids, not pointers: the recursion adds edges.
    std::vector<std::pair<ir::EdgeId, std::string>> inputs;
    for (const ir::Edge *in : s_.inEdges(e))
      if (!in->memlet.empty())
        inputs.emplace_back(in->id, in->memlet.container);
    for (const auto &[edgeId, u] : inputs) {
      auto [ub, ubAccess] = blockedSource(u);
      ir::Edge &edge = edgeWithId(s_, edgeId);
      edge.src = ubAccess;
      edge.memlet = {ub, ir::Subset::full(p_.container(ub).shape), {}};
      retire(u);
    }
    std::string xb = addBlocked(x + "_blocked", p_.container(x));
    NodeId xbAccess = ir::addAccess(p_, s_, xb);
    s_.edges.editWhere(
        [&](const ir::Edge &out) { return out.src == e && out.dst == xAccess; },
        [&](ir::Edge &out) {
          out.dst = xbAccess;
          out.memlet = {xb, ir::Subset::full(p_.container(xb).shape), {}};
        });
    addReorder(false, xb, xbAccess, x, xAccess, s_.findNode(e)->label);
    return {xb, xbAccess};
  }

  /// Removes `x`, its access node and the reorder writing it when nothing
  /// reads it any more.
  void retire(const std::string &x) {
    if (isArgument(p_, x) || containerUses(p_, x).reads > 0)
      return;
    NodeId access = 0;
    const ir::Node *writer = writerOf(x, &access);
    if (!writer || !isReorderBack(*writer))
      return;
    NodeId w = writer->id;
    removeNode(s_, w, &idMap_);
    removeNode(s_, access, &idMap_);
  }

  /// A transient holding `plain` [N, C, H, W] blocked: [N, C/b, H, W, b].
  std::string addBlocked(const std::string &base, const ir::Container &plain) {
    ir::Container c;
    c.name = freshContainerName(p_, base);
    c.dtype = plain.dtype;
    auto channels = plain.shape[1].asConstant();
    if (!channels || *channels % b_ != 0)
      throw Error("layout-transform: '" + plain.name +
                  "' has no constant channel count the block divides");
    c.shape = {plain.shape[0], Expr(*channels / b_), plain.shape[2],
               plain.shape[3], Expr(b_)};
    c.strides = ir::rowMajorStrides(c.shape);
    std::string name = c.name;
    p_.addContainer(std::move(c));
    return name;
  }

  /// A reorder (to or from blocked) between two existing access nodes.
  NodeId addReorder(bool toBlocked, const std::string &from, NodeId fromAccess,
                    const std::string &to, NodeId toAccess,
                    const std::string &label) {
    ir::LibraryData d;
    d.op = std::string(toBlocked ? operators::kToBlocked
                                 : operators::kFromBlocked);
    d.domain = std::string(operators::kBlockedDomain);
    d.opsetVersion = 1;
    d.attributes["block"] = b_;
    ir::Node n;
    n.id = p_.newNodeId();
    n.kind = ir::NodeKind::Library;
    n.label = label + (toBlocked ? ".to_blocked" : ".from_blocked");
    n.inputs = {{"X", p_.container(from).dtype}};
    n.outputs = {{"Y", p_.container(to).dtype}};
    n.payload = std::move(d);
    NodeId id = n.id;
    s_.nodes.push_back(std::move(n));
    ir::addEdge(p_, s_, fromAccess, "", id, "X",
                {from, ir::Subset::full(p_.container(from).shape), {}});
    ir::addEdge(p_, s_, id, "Y", toAccess, "",
                {to, ir::Subset::full(p_.container(to).shape), {}});
    return id;
  }

private:
  ir::Program &p_;
  ir::State &s_;
  std::int64_t b_;
  IdMap &idMap_;
};

/// W [K, C, KH, KW] as [K/b, C/b, KH, KW, b (in), b (out)].
ir::Blob blockedWeights(const ir::Container &w, const ConvPlan &plan) {
  std::int64_t b = plan.block, k = plan.outChannels, c = plan.inChannels;
  std::int64_t area = plan.kernel[0] * plan.kernel[1];
  auto out = std::make_shared<std::vector<std::byte>>(w.constant->size());
  const std::byte *src = w.constant->data();
  for (std::int64_t m = 0; m < k; ++m)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t t = 0; t < area; ++t) {
        std::int64_t from = (m * c + ch) * area + t;
        std::int64_t to = (((m / b) * (c / b) + ch / b) * area + t) * b * b +
                          (ch % b) * b + m % b;
        std::memcpy(out->data() + to * 4, src + from * 4, 4);
      }
  return out;
}

} // namespace

namespace {

class LayoutTransform : public PlannedTransformation<ConvPlan> {
public:
  LayoutTransform();

protected:
  Planned<ConvPlan> plan(const ir::Program &program, const Match &match,
                         const Params &params) const override;
  ApplyResult rewrite(const ir::Program &program, const Match &match,
                      const Params &params,
                      const ConvPlan &plan) const override;
};

} // namespace

LayoutTransform::LayoutTransform()
    : PlannedTransformation({
          .id = "layout-transform",
          .tier = Tier::Movement,
          .summary = "Move a convolution to the blocked NCHWc layout, "
                     "cancelling adjacent reorders",
          .description =
              "A 2-D Conv (group 1, explicit pads, f32, constant weights, "
              "input and output channels multiples of `block`) becomes a "
              "BlockedConv on the NCHWc layout: the input is reordered to [N, "
              "C/b, H, W, b], the weights to [K/b, C/b, KH, KW, b, b] once, "
              "and the output reordered back to NCHW. Its expansion keeps the "
              "b output channels of a block innermost, at unit stride. "
              "Reorders cancel: an input that is already the reorder of a "
              "blocked tensor, directly or through elementwise operators whose "
              "operands all have its shape (Relu, Add of a residual, ...), is "
              "read blocked — those operators move onto the blocked tensors — "
              "and a reorder nothing reads any more goes. Refused for other "
              "ranks, groups, auto_pad, non-constant weights, other dtypes and "
              "channel counts the block does not divide. Sums the input "
              "channels in another order: within rtol 1e-4 / atol 1e-5.",
          .params = {{"block", ParamSpec::Kind::Int, std::int64_t(16),
                      "channels per block (16 = one AVX-512 vector of f32)", 2,
                      64}},
          // The blocked expansion sums the input channels in another order
          // (cb, kh, kw, ci instead of c, kh, kw).
          .exactness = {false, 1e-4, 1e-5},
          .pattern = Pattern().node("conv", ir::NodeKind::Library, {"Conv"}),
      }) {}

Planned<ConvPlan> LayoutTransform::plan(const ir::Program &program,
                                        const Match &match,
                                        const Params &params) const {
  Planned<ConvPlan> out;
  out.verdict = planConv(program, match, params, out.plan);
  return out;
}

ApplyResult LayoutTransform::rewrite(const ir::Program &program,
                                     const Match &match, const Params &params,
                                     const ConvPlan &plan) const {
  ApplyResult r{program, {}};
  ir::Program &p = r.program;
  ir::State &s = stateNamed(p, match.state);
  NodeId conv = match.node("conv");
  const ir::Node convNode = *s.findNode(conv);
  Blocker blocker(p, s, plan.block, r.idMap);

  NodeId xAccess = 0, bAccess = 0, yAccess = 0;
  for (const ir::Edge *e : s.inEdges(conv)) {
    if (e->dstConn == "X")
      xAccess = e->src;
    if (e->dstConn == "B")
      bAccess = e->src;
  }
  for (const ir::Edge *e : s.outEdges(conv))
    if (e->srcConn == "Y")
      yAccess = e->dst;

  // The blocked input: an existing one when the reorders cancel, else a
  // reorder of X.
  std::string xb;
  NodeId xbAccess = 0;
  if (blocker.blockedSourceExists(plan.x)) {
    std::tie(xb, xbAccess) = blocker.blockedSource(plan.x);
  } else {
    xb = blocker.addBlocked(plan.x + "_blocked", p.container(plan.x));
    xbAccess = ir::addAccess(p, s, xb);
    blocker.addReorder(true, plan.x, xAccess, xb, xbAccess, convNode.label);
  }

  ir::Container wb = p.container(plan.w);
  wb.name = freshContainerName(p, plan.w + "_blocked");
  std::int64_t b = plan.block;
  wb.shape = {Expr(plan.outChannels / b),
              Expr(plan.inChannels / b),
              Expr(plan.kernel[0]),
              Expr(plan.kernel[1]),
              Expr(b),
              Expr(b)};
  wb.strides = ir::rowMajorStrides(wb.shape);
  wb.constant = blockedWeights(p.container(plan.w), plan);
  wb.transient = true;
  std::string wbName = wb.name;
  p.addContainer(std::move(wb));
  std::string yb = blocker.addBlocked(plan.y + "_blocked", p.container(plan.y));

  // The BlockedConv takes the Conv's id and label.
  removeNode(s, conv);
  ir::LibraryData d;
  d.op = std::string(operators::kBlockedConv);
  d.domain = std::string(operators::kBlockedDomain);
  d.opsetVersion = 1;
  d.attributes = {{"block", b},
                  {"kernel_shape", plan.kernel},
                  {"strides", plan.strides},
                  {"dilations", plan.dilations},
                  {"pads", plan.pads}};
  if (auto f = convNode.library().flops)
    d.flops = *f;
  ir::Node n;
  n.id = conv;
  n.kind = ir::NodeKind::Library;
  n.label = convNode.label;
  n.inputs = {{"X", ir::DType::F32}, {"W", ir::DType::F32}};
  if (bAccess)
    n.inputs.push_back({"B", ir::DType::F32});
  n.outputs = {{"Y", ir::DType::F32}};
  n.payload = std::move(d);
  s.nodes.push_back(std::move(n));
  auto full = [&](const std::string &c) {
    return ir::Memlet{c, ir::Subset::full(p.container(c).shape), {}};
  };
  ir::addEdge(p, s, xbAccess, "", conv, "X", full(xb));
  ir::addEdge(p, s, ir::addAccess(p, s, wbName), "", conv, "W", full(wbName));
  if (bAccess)
    ir::addEdge(p, s, bAccess, "", conv, "B", full(plan.b));
  NodeId ybAccess = ir::addAccess(p, s, yb);
  ir::addEdge(p, s, conv, "Y", ybAccess, "", full(yb));
  blocker.addReorder(false, yb, ybAccess, plan.y, yAccess, convNode.label);
  blocker.retire(plan.x);
  removeUnused(p, &r.idMap);
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<LayoutTransform>()};

} // namespace weir::transforms
