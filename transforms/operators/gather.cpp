/// \file
/// Pure expansions of operators whose values depend on an element's position
/// or on data used as an index: Gather, GatherElements, GatherND, Slice,
/// Trilu, EyeLike, Range, and the shape operators whose results are known
/// at expansion time (Shape, Size, ConstantOfShape). A tasklet cannot see
/// map parameters, so positions reach tasklets through small constant
/// "iota" containers read at the parameter.

#include "transforms/operators/expansion.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace weir::operators {
namespace {

using ir::Expr;

std::string literal(ir::DType dtype, const std::string &value) {
  return std::string(ir::dtypeName(dtype)) + "(" + value + ")";
}

/// Slice with constant starts (and steps): a strided copy whose begin is
/// normalized and clamped at expansion time.
void expandConstantSlice(ExpansionContext &ctx,
                         const std::vector<std::int64_t> &starts,
                         const std::vector<std::int64_t> &axes,
                         const std::vector<std::int64_t> &steps) {
  const ir::Container &x = ctx.requireInput("data");
  const ir::Container &y = ctx.requireOutput("output");
  std::size_t rank = x.shape.size();
  std::vector<Expr> begin(rank, Expr(0));
  std::vector<std::int64_t> step(rank, 1);
  for (std::size_t k = 0; k < axes.size(); ++k) {
    std::int64_t a = axes[k];
    std::int64_t dim = ctx.constantDim(x.shape[a]);
    std::int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
    s = steps[k] > 0 ? std::clamp<std::int64_t>(s, 0, dim)
                     : std::clamp<std::int64_t>(s, 0, dim - 1);
    begin[a] = Expr(s);
    step[a] = steps[k];
  }
  auto params = ExpansionContext::params(rank);
  auto idx = ExpansionContext::indices(params);
  std::vector<Expr> in(rank);
  for (std::size_t k = 0; k < rank; ++k)
    in[k] = begin[k] + Expr(step[k]) * idx[k];
  ctx.addMap("copy", params, ExpansionContext::fullRanges(y.shape),
             {{"x", x.name, in}}, "y = x", {{"y", y.name, idx}});
}

/// Slice whose starts, steps or axes are data: like Gather, a one-hot
/// contraction over every sliced axis (over every axis when the axes are
/// data, unsliced ones getting start 0 and step 1). The tasklet normalizes
/// and clamps the start as ONNX does and keeps x where each axis' position
/// equals start + step * output position; the output's extent is static.
void expandDataSlice(ExpansionContext &ctx, std::int64_t count,
                     const std::optional<std::vector<std::int64_t>> &axes) {
  const ir::Container &x = ctx.requireInput("data");
  const ir::Container &starts = ctx.requireInput("starts");
  const ir::Container *steps = ctx.input("steps");
  const ir::Container *axesIn = ctx.input("axes");
  const ir::Container &y = ctx.requireOutput("output");
  if (x.dtype == ir::DType::Bool)
    ctx.fail("bool data cannot be summed");
  if (axesIn && axesIn->dtype != starts.dtype)
    ctx.fail("axes and starts differ in dtype");
  auto rank = static_cast<std::int64_t>(x.shape.size());
  auto params = ExpansionContext::params(rank);
  auto idx = ExpansionContext::indices(params);
  std::string zero = ExpansionContext::sumIdentity(x.dtype);
  ctx.addMap("fill", params, ExpansionContext::fullRanges(y.shape), {},
             "y = " + zero, {{"y", y.name, idx}});

  std::vector<ir::MappedInput> inputs;
  for (std::int64_t j = 0; j < count; ++j) {
    std::string n = std::to_string(j);
    inputs.push_back({"st" + n, starts.name, {Expr(j)}});
    if (steps)
      inputs.push_back({"sp" + n, steps->name, {Expr(j)}});
    if (!axes)
      inputs.push_back({"ax" + n, axesIn->name, {Expr(j)}});
  }
  // (axis, start expression, step expression) per contracted axis.
  struct Slot {
    std::int64_t axis;
    std::string start, step;
  };
  std::vector<Slot> slots;
  if (axes) {
    for (std::int64_t j = 0; j < count; ++j) {
      std::string n = std::to_string(j);
      slots.push_back({(*axes)[j], "st" + n, steps ? "sp" + n : "1"});
    }
  } else {
    for (std::int64_t a = 0; a < rank; ++a) {
      std::string start = "0", step = "1";
      for (std::int64_t j = count; j-- > 0;) {
        std::string n = std::to_string(j);
        std::string is = "(ax" + n + " == " + std::to_string(a) + " || ax" + n +
                         " == " + std::to_string(a - rank) + ")";
        start = "select(" + is + ", st" + n + ", " + start + ")";
        if (steps)
          step = "select(" + is + ", sp" + n + ", " + step + ")";
      }
      slots.push_back({a, start, step});
    }
  }

  // The contraction visits every output element once per position of the
  // contracted axes; past a few million visits the interpreter (and any
  // naive lowering) would crawl, so refuse rather than hang.
  double visits = 1;
  for (const Expr &e : y.shape)
    visits *= static_cast<double>(ctx.constantDim(e));
  for (const Slot &slot : slots)
    visits *= static_cast<double>(ctx.constantDim(x.shape[slot.axis]));
  if (visits > 4e6)
    ctx.fail("a data-dependent slice this large is too costly as a one-hot "
             "contraction");

  auto allParams = params;
  auto ranges = ExpansionContext::fullRanges(y.shape);
  std::vector<Expr> xIdx = idx;
  std::string code, match;
  for (std::size_t j = 0; j < slots.size(); ++j) {
    std::int64_t a = slots[j].axis;
    std::int64_t dim = ctx.constantDim(x.shape[a]);
    std::string n = std::to_string(j), d = std::to_string(dim);
    std::string kp = "k" + n;
    allParams.push_back(kp);
    ranges.emplace_back(Expr(0), Expr(dim));
    xIdx[a] = Expr::symbol(kp);
    inputs.push_back({"p" + n,
                      ctx.addIota("positions" + n, starts.dtype, dim),
                      {Expr::symbol(kp)}});
    inputs.push_back(
        {"q" + n,
         ctx.addIota("outputs" + n, starts.dtype, ctx.constantDim(y.shape[a])),
         {idx[a]}});
    std::string st = "t" + n, sp = "v" + n;
    code += st + " = " + slots[j].start + "\n";
    code += sp + " = " + slots[j].step + "\n";
    code += "s" + n + " = select(" + st + " < 0, " + st + " + " + d + ", " +
            st + ")\n";
    code += "c" + n + " = select(s" + n + " < 0, 0, s" + n + ")\n";
    code += "b" + n + " = select(" + sp + " > 0, select(c" + n + " > " + d +
            ", " + d + ", c" + n + "), select(c" + n + " > " + d + " - 1, " +
            d + " - 1, c" + n + "))\n";
    match += (match.empty() ? "" : " && ") + std::string("p") + n + " == b" +
             n + " + " + sp + " * q" + n;
  }
  inputs.push_back({"x", x.name, xIdx});
  code += "y = select(" + (match.empty() ? std::string("true") : match) +
          ", x, " + zero + ")";
  ctx.addMap("select", allParams, ranges, inputs, code,
             {{"y", y.name, idx, ir::Wcr::Sum}});
}

void expandSlice(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("data");
  const ir::Container &startsIn = ctx.requireInput("starts");
  std::size_t rank = x.shape.size();
  if (startsIn.shape.size() != 1)
    ctx.fail("starts is not 1-D");
  std::int64_t count = ctx.constantDim(startsIn.shape[0]);
  // Each entry slices a different axis.
  if (count < 0 || count > static_cast<std::int64_t>(rank))
    ctx.fail("starts has " + std::to_string(count) + " entries for rank " +
             std::to_string(rank));
  std::optional<std::vector<std::int64_t>> axes;
  if (ctx.input("axes")) {
    axes = ctx.constantInts("axes");
  } else {
    axes.emplace();
    for (std::int64_t k = 0; k < count; ++k)
      axes->push_back(k);
  }
  if (axes) {
    if (static_cast<std::int64_t>(axes->size()) != count)
      ctx.fail("starts and axes differ in length");
    for (std::int64_t &a : *axes)
      a = ctx.normalizeAxis(a, rank);
  }
  auto starts = ctx.constantInts("starts");
  std::optional<std::vector<std::int64_t>> steps =
      std::vector<std::int64_t>(count, 1);
  if (ctx.input("steps"))
    steps = ctx.constantInts("steps");
  if (steps)
    for (std::int64_t s : *steps)
      if (s == 0)
        ctx.fail("a step is 0");
  if (starts && steps && axes)
    expandConstantSlice(ctx, *starts, *axes, *steps);
  else
    expandDataSlice(ctx, count, axes);
}

/// Gather as a one-hot contraction: for every output element and every
/// position k along the gathered axis, add data[..., k, ...] when the index
/// equals k (or k - n for a negative index) and -0.0 otherwise, into an
/// output filled with -0.0. Adding -0.0 leaves every value, signed zeros
/// included, unchanged, so the result is exact. A constant scalar index
/// needs no contraction: the element is known at expansion time.
void expandGather(ExpansionContext &ctx) {
  const ir::Container &data = ctx.requireInput("data");
  const ir::Container &ind = ctx.requireInput("indices");
  const ir::Container &y = ctx.requireOutput("output");
  auto rank = static_cast<std::int64_t>(data.shape.size());
  std::int64_t axis = ctx.intAttr("axis", 0);
  if (axis < -rank || axis >= rank)
    ctx.fail("axis is out of range");
  if (axis < 0)
    axis += rank;
  std::size_t q = ind.shape.size();
  auto params = ExpansionContext::params(y.shape.size());
  auto idx = ExpansionContext::indices(params);
  auto dataIndex = [&](const Expr &at) {
    std::vector<Expr> d(idx.begin(), idx.begin() + axis);
    d.push_back(at);
    d.insert(d.end(), idx.begin() + axis + q, idx.end());
    return d;
  };
  std::int64_t n = ctx.constantDim(data.shape[axis]);

  if (auto c = ctx.constantInts("indices"); c && q == 0 && c->size() == 1) {
    std::int64_t i = (*c)[0] < 0 ? (*c)[0] + n : (*c)[0];
    if (i < 0 || i >= n)
      ctx.fail("index " + std::to_string((*c)[0]) + " is out of range");
    ctx.addMap("copy", params, ExpansionContext::fullRanges(y.shape),
               {{"x", data.name, dataIndex(Expr(i))}}, "y = x",
               {{"y", y.name, idx}});
    return;
  }
  if (data.dtype == ir::DType::Bool)
    ctx.fail("bool data cannot be summed");
  std::string zero = ExpansionContext::sumIdentity(data.dtype);
  ctx.addMap("fill", params, ExpansionContext::fullRanges(y.shape), {},
             "y = " + zero, {{"y", y.name, idx}});
  std::string positions = ctx.addIota("positions", ind.dtype, n);
  auto allParams = params;
  allParams.push_back("k");
  auto ranges = ExpansionContext::fullRanges(y.shape);
  ranges.emplace_back(Expr(0), Expr(n));
  Expr k = Expr::symbol("k");
  std::vector<Expr> indIndex(idx.begin() + axis, idx.begin() + axis + q);
  ctx.addMap("select", allParams, ranges,
             {{"i", ind.name, indIndex},
              {"p", positions, {k}},
              {"d", data.name, dataIndex(k)}},
             "y = select(i == p || i == p - " + std::to_string(n) + ", d, " +
                 zero + ")",
             {{"y", y.name, idx, ir::Wcr::Sum}});
}

/// GatherElements: out[idx] = data[idx with the axis replaced by
/// indices[idx]], as the same one-hot contraction as Gather.
void expandGatherElements(ExpansionContext &ctx) {
  const ir::Container &data = ctx.requireInput("data");
  const ir::Container &ind = ctx.requireInput("indices");
  const ir::Container &y = ctx.requireOutput("output");
  std::size_t rank = data.shape.size();
  if (ind.shape.size() != rank || y.shape.size() != rank)
    ctx.fail("data, indices and output ranks differ");
  if (data.dtype == ir::DType::Bool)
    ctx.fail("bool data cannot be summed");
  std::int64_t axis = ctx.normalizeAxis(ctx.intAttr("axis", 0), rank);
  std::int64_t n = ctx.constantDim(data.shape[axis]);
  auto params = ExpansionContext::params(rank);
  auto idx = ExpansionContext::indices(params);
  std::string zero = ExpansionContext::sumIdentity(data.dtype);
  ctx.addMap("fill", params, ExpansionContext::fullRanges(y.shape), {},
             "y = " + zero, {{"y", y.name, idx}});
  auto allParams = params;
  allParams.push_back("k");
  auto ranges = ExpansionContext::fullRanges(y.shape);
  ranges.emplace_back(Expr(0), Expr(n));
  Expr k = Expr::symbol("k");
  auto dataIdx = idx;
  dataIdx[axis] = k;
  ctx.addMap("select", allParams, ranges,
             {{"i", ind.name, idx},
              {"p", ctx.addIota("positions", ind.dtype, n), {k}},
              {"d", data.name, dataIdx}},
             "y = select(i == p || i == p - " + std::to_string(n) + ", d, " +
                 zero + ")",
             {{"y", y.name, idx, ir::Wcr::Sum}});
}

/// GatherND: out[u, rest] = data[b, indices[u], rest], where u runs over
/// indices' leading dimensions, b is u's first batch_dims positions, and
/// indices[u] (its last dimension, `depth` values) names a position of the
/// next `depth` data axes. The same one-hot contraction as Gather, over
/// every indexed axis at once.
void expandGatherND(ExpansionContext &ctx) {
  const ir::Container &data = ctx.requireInput("data");
  const ir::Container &ind = ctx.requireInput("indices");
  const ir::Container &y = ctx.requireOutput("output");
  if (data.dtype == ir::DType::Bool)
    ctx.fail("bool data cannot be summed");
  std::size_t rank = data.shape.size();
  if (ind.shape.empty())
    ctx.fail("indices must have rank 1 or more");
  std::size_t lead = ind.shape.size() - 1;
  auto batch = static_cast<std::size_t>(ctx.intAttr("batch_dims", 0));
  auto depth = static_cast<std::size_t>(ctx.constantDim(ind.shape[lead]));
  if (batch > lead || batch + depth > rank || depth == 0)
    ctx.fail("batch_dims " + std::to_string(batch) + " and index depth " +
             std::to_string(depth) + " do not fit data of rank " +
             std::to_string(rank) + " and indices of rank " +
             std::to_string(lead + 1));
  if (y.shape.size() != lead + rank - batch - depth)
    ctx.fail("the output's rank does not match data and indices");
  for (std::size_t d = 0; d < y.shape.size(); ++d) {
    const Expr &want =
        d < lead ? ind.shape[d] : data.shape[batch + depth + d - lead];
    if (ctx.constantDim(y.shape[d]) != ctx.constantDim(want) ||
        (d < batch &&
         ctx.constantDim(ind.shape[d]) != ctx.constantDim(data.shape[d])))
      ctx.fail("the output's shape does not match data and indices");
  }
  auto params = ExpansionContext::params(y.shape.size());
  auto idx = ExpansionContext::indices(params);
  std::string zero = ExpansionContext::sumIdentity(data.dtype);
  ctx.addMap("fill", params, ExpansionContext::fullRanges(y.shape), {},
             "y = " + zero, {{"y", y.name, idx}});
  std::vector<Expr> u(idx.begin(), idx.begin() + lead);
  std::vector<Expr> dataIdx(u.begin(), u.begin() + batch);
  auto allParams = params;
  auto ranges = ExpansionContext::fullRanges(y.shape);
  std::vector<ir::MappedInput> inputs;
  std::string hit;
  for (std::size_t t = 0; t < depth; ++t) {
    std::string s = std::to_string(t);
    std::int64_t n = ctx.constantDim(data.shape[batch + t]);
    Expr k = Expr::symbol("k" + s);
    allParams.push_back("k" + s);
    ranges.emplace_back(Expr(0), Expr(n));
    dataIdx.push_back(k);
    std::vector<Expr> at = u;
    at.push_back(Expr(static_cast<std::int64_t>(t)));
    inputs.push_back({"i" + s, ind.name, at});
    inputs.push_back(
        {"p" + s, ctx.addIota("positions" + s, ind.dtype, n), {k}});
    hit += std::string(t ? " && " : "") + "(i" + s + " == p" + s + " || i" + s +
           " == p" + s + " - " + std::to_string(n) + ")";
  }
  dataIdx.insert(dataIdx.end(), idx.begin() + lead, idx.end());
  inputs.push_back({"d", data.name, dataIdx});
  ctx.addMap("select", allParams, ranges, inputs,
             "y = select(" + hit + ", d, " + zero + ")",
             {{"y", y.name, idx, ir::Wcr::Sum}});
}

/// Trilu: keep x where the column minus the row is >= k (upper) or <= k
/// (lower), else 0. `k` is data, read by the tasklet.
void expandTrilu(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &y = ctx.requireOutput("output");
  std::size_t rank = x.shape.size();
  if (rank < 2)
    ctx.fail("the input has rank below 2");
  std::string rows =
      ctx.addIota("rows", ir::DType::I64, ctx.constantDim(x.shape[rank - 2]));
  std::string cols =
      ctx.addIota("cols", ir::DType::I64, ctx.constantDim(x.shape[rank - 1]));
  auto params = ExpansionContext::params(rank);
  auto idx = ExpansionContext::indices(params);
  std::vector<ir::MappedInput> inputs{{"x", x.name, idx},
                                      {"r", rows, {idx[rank - 2]}},
                                      {"c", cols, {idx[rank - 1]}}};
  std::string kk = "0";
  if (const ir::Container *k = ctx.input("k")) {
    if (k->dtype != ir::DType::I64)
      ctx.fail("k is not int64");
    inputs.push_back({"k", k->name, std::vector<Expr>(k->shape.size(), 0)});
    kk = "k";
  }
  bool upper = ctx.intAttr("upper", 1) != 0;
  std::string cond = "c - r " + std::string(upper ? ">=" : "<=") + " " + kk;
  std::string zero = x.dtype == ir::DType::Bool ? "false" : "0";
  ctx.addMap("mask", params, ExpansionContext::fullRanges(y.shape), inputs,
             "y = select(" + cond + ", x, " + zero + ")", {{"y", y.name, idx}});
}

void expandEyeLike(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &y = ctx.requireOutput("output");
  if (x.shape.size() != 2)
    ctx.fail("the input is not 2-D");
  std::string rows =
      ctx.addIota("rows", ir::DType::I64, ctx.constantDim(y.shape[0]));
  std::string cols =
      ctx.addIota("cols", ir::DType::I64, ctx.constantDim(y.shape[1]));
  auto params = ExpansionContext::params(2);
  auto idx = ExpansionContext::indices(params);
  std::string k = std::to_string(ctx.intAttr("k", 0));
  ctx.addMap("eye", params, ExpansionContext::fullRanges(y.shape),
             {{"r", rows, {idx[0]}}, {"c", cols, {idx[1]}}},
             "y = select(c - r == " + k + ", " + literal(y.dtype, "1") + ", " +
                 literal(y.dtype, "0") + ")",
             {{"y", y.name, idx}});
}

/// Range: y[i] = start + i * delta, start and delta read as data, the
/// length static from shape inference.
void expandRange(ExpansionContext &ctx) {
  const ir::Container &start = ctx.requireInput("start");
  const ir::Container &delta = ctx.requireInput("delta");
  const ir::Container &y = ctx.requireOutput("output");
  if (y.shape.size() != 1)
    ctx.fail("the output has rank " + std::to_string(y.shape.size()) +
             "; a range is one-dimensional");
  // Positions 0, 1, ... in the output's dtype (a float range's too).
  std::int64_t n = ctx.constantDim(y.shape[0]);
  std::vector<double> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    values[static_cast<std::size_t>(i)] = static_cast<double>(i);
  std::string positions =
      ctx.addConstant("positions", ctx.tensorOf(y.dtype, {n}, values));
  ctx.addMap("range", {"i"}, ExpansionContext::fullRanges(y.shape),
             {{"s", start.name, {}},
              {"p", positions, {Expr::symbol("i")}},
              {"d", delta.name, {}}},
             "y = s + p * d", {{"y", y.name, {Expr::symbol("i")}}});
}

void expandShape(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("data");
  const ir::Container &y = ctx.requireOutput("shape");
  auto rank = static_cast<std::int64_t>(x.shape.size());
  auto clampAxis = [&](std::int64_t a) {
    a = a < 0 ? a + rank : a;
    return std::clamp<std::int64_t>(a, 0, rank);
  };
  std::int64_t b = clampAxis(ctx.intAttr("start", 0));
  std::int64_t e = clampAxis(ctx.intAttr("end", rank));
  std::vector<double> dims;
  for (std::int64_t k = b; k < e; ++k)
    dims.push_back(static_cast<double>(ctx.constantDim(x.shape[k])));
  auto n = static_cast<std::int64_t>(dims.size());
  ctx.copyConstant(ctx.addConstant("value", ctx.tensorOf(y.dtype, {n}, dims)),
               y);
}

void expandSize(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("data");
  const ir::Container &y = ctx.requireOutput("size");
  std::int64_t count = 1;
  for (const Expr &d : x.shape)
    count *= ctx.constantDim(d);
  ctx.copyConstant(
      ctx.addConstant("value", ctx.tensorOf(y.dtype, {}, {double(count)})), y);
}

/// ConstantOfShape: every element reads the one-element `value` attribute.
void expandConstantOfShape(ExpansionContext &ctx) {
  const ir::Container &y = ctx.requireOutput("output");
  ir::TensorValue value = ctx.tensorOf(ir::DType::F32, {1}, {0.0});
  auto it = ctx.library().attributes.find("value");
  if (it != ctx.library().attributes.end()) {
    const auto *t = std::get_if<ir::TensorValue>(&it->second);
    if (!t || !t->data || t->data->size() != ir::dtypeSize(t->dtype))
      ctx.fail("value is not a one-element tensor");
    value = *t;
    value.shape = {1};
  }
  if (value.dtype != y.dtype)
    ctx.fail("value's dtype differs from the output's");
  std::string name = ctx.addConstant("value", value);
  auto params = ExpansionContext::params(y.shape.size());
  auto idx = ExpansionContext::indices(params);
  ctx.addMap("fill", params, ExpansionContext::fullRanges(y.shape),
             {{"x", name, {Expr(0)}}}, "y = x", {{"y", y.name, idx}});
}

const ExpansionRegistrar kGather{
    {"Gather", "pure",
     "one-hot contraction over the gathered axis (a direct copy for a "
     "constant scalar index)",
     expandGather},
    true};
const ExpansionRegistrar kSlice{
    {"Slice", "pure",
     "strided copy for constant starts and steps, else a one-hot "
     "contraction over the sliced axes",
     expandSlice},
    true};
const ExpansionRegistrar kGatherND{
    {"GatherND", "pure", "one-hot contraction over every indexed axis",
     expandGatherND},
    true};
const ExpansionRegistrar kGatherElements{{"GatherElements", "pure",
                                          "one-hot contraction over the axis",
                                          expandGatherElements},
                                         true};
const ExpansionRegistrar kTrilu{
    {"Trilu", "pure", "select on row/column positions", expandTrilu}, true};
const ExpansionRegistrar kEyeLike{
    {"EyeLike", "pure", "select on row/column positions", expandEyeLike}, true};
const ExpansionRegistrar kRange{
    {"Range", "pure", "start + position * delta", expandRange}, true};
const ExpansionRegistrar kShape{
    {"Shape", "pure", "copy of the static shape", expandShape}, true};
const ExpansionRegistrar kSize{
    {"Size", "pure", "copy of the static element count", expandSize}, true};
const ExpansionRegistrar kConstantOfShape{{"ConstantOfShape", "pure",
                                           "fill with the value attribute",
                                           expandConstantOfShape},
                                          true};

} // namespace
} // namespace weir::operators
