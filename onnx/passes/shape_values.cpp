#include "onnx/passes/shape_values.h"

#include "ir/error.h"
#include "onnx/tensor_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

namespace weir::onnx_import {
namespace {

using Dims = std::vector<std::int64_t>;
using onnx::TensorProto;
using Result = std::optional<std::vector<ShapeValue>>;

constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

bool realType(int type) {
  return type == TensorProto::FLOAT || type == TensorProto::DOUBLE;
}

std::optional<std::int64_t> elementCount(const Dims &dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) {
    if (d < 0 || (d > 0 && n > kMaxFoldedElements / d))
      return std::nullopt;
    n *= d;
  }
  return n;
}

/// A value of `type` and `dims` with room for its elements, or nullopt when
/// it would be too large to fold.
std::optional<ShapeValue> blank(int type, Dims dims) {
  std::optional<std::int64_t> n = elementCount(dims);
  if (!n)
    return std::nullopt;
  ShapeValue v;
  v.type = type;
  v.dims = std::move(dims);
  if (realType(type))
    v.reals.resize(static_cast<std::size_t>(*n));
  else
    v.ints.resize(static_cast<std::size_t>(*n));
  return v;
}

/// `x` as the element type stores it: f32 rounds, i32 wraps, bool is 0/1.
double storedReal(int type, double x) {
  return type == TensorProto::FLOAT ? double(float(x)) : x;
}
std::int64_t storedInt(int type, std::int64_t x) {
  if (type == TensorProto::INT32)
    return std::int64_t(std::int32_t(std::uint32_t(std::uint64_t(x))));
  if (type == TensorProto::BOOL)
    return x != 0;
  return x;
}

const onnx::AttributeProto *attribute(const onnx::NodeProto &n,
                                      const char *name) {
  for (const onnx::AttributeProto &a : n.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}
std::int64_t intAttribute(const onnx::NodeProto &n, const char *name,
                          std::int64_t otherwise) {
  const onnx::AttributeProto *a = attribute(n, name);
  return a && a->has_i() ? a->i() : otherwise;
}

/// The integers of an integer input (axes, starts, a shape).
std::optional<Dims> intsOf(const ShapeValue *v) {
  if (!v || v->isReal())
    return std::nullopt;
  return v->ints;
}
/// An input's integers, or else the attribute's (opsets before 13 give
/// axes and slice bounds as attributes).
std::optional<Dims> intsOf(const onnx::NodeProto &n, const NodeInputs &in,
                           std::size_t input, const char *name) {
  if (input < in.values.size() && in.values[input])
    return intsOf(in.values[input]);
  if (const onnx::AttributeProto *a = attribute(n, name))
    return Dims(a->ints().begin(), a->ints().end());
  return std::nullopt;
}

/// `axis` in [-rank, rank) as an index, or nullopt.
std::optional<std::size_t> axisIndex(std::int64_t axis, std::size_t rank) {
  auto r = std::int64_t(rank);
  if (axis < -r || axis >= r)
    return std::nullopt;
  return std::size_t(axis < 0 ? axis + r : axis);
}

Dims stridesOf(const Dims &dims) {
  Dims s(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;)
    s[i - 1] = s[i] * dims[i];
  return s;
}

/// numpy's broadcast of two shapes, or nullopt when they do not broadcast.
std::optional<Dims> broadcast(const Dims &a, const Dims &b) {
  Dims out(std::max(a.size(), b.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    std::int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

/// For each element of `out` (row-major), the element of a tensor of shape
/// `in` that broadcasts onto it.
std::vector<std::size_t> broadcastIndex(const Dims &in, const Dims &out) {
  Dims inStrides = stridesOf(in), outStrides = stridesOf(out);
  std::size_t lead = out.size() - in.size();
  std::int64_t n = 1;
  for (std::int64_t d : out)
    n *= d;
  std::vector<std::size_t> index(static_cast<std::size_t>(n));
  for (std::int64_t flat = 0; flat < n; ++flat) {
    std::int64_t at = 0;
    for (std::size_t i = lead; i < out.size(); ++i) {
      std::int64_t coord = flat / outStrides[i] % out[i];
      if (in[i - lead] != 1)
        at += coord * inStrides[i - lead];
    }
    index[std::size_t(flat)] = std::size_t(at);
  }
  return index;
}

/// Copies element `from` of `src` into element `to` of `dst` (same type).
void copyElement(const ShapeValue &src, std::size_t from, ShapeValue &dst,
                 std::size_t to) {
  if (src.isReal())
    dst.reals[to] = src.reals[from];
  else
    dst.ints[to] = src.ints[from];
}

/// A value with `src`'s elements gathered through `index`, under `dims`.
std::optional<ShapeValue> gathered(const ShapeValue &src, Dims dims,
                                   const std::vector<std::size_t> &index) {
  std::optional<ShapeValue> out = blank(src.type, std::move(dims));
  if (!out)
    return std::nullopt;
  for (std::size_t i = 0; i < index.size(); ++i)
    copyElement(src, index[i], *out, i);
  return out;
}

Result one(std::optional<ShapeValue> v) {
  if (!v)
    return std::nullopt;
  return std::vector<ShapeValue>{std::move(*v)};
}

// -- elementwise -----------------------------------------------------------

enum class Op {
  Add, Sub, Mul, Div, Mod, FMod, Min, Max,
  Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor
};

std::optional<Op> binaryOp(const std::string &op, std::int64_t fmod) {
  static const std::pair<const char *, Op> table[] = {
      {"Add", Op::Add},       {"Sub", Op::Sub},
      {"Mul", Op::Mul},       {"Div", Op::Div},
      {"Min", Op::Min},       {"Max", Op::Max},
      {"Equal", Op::Equal},   {"Less", Op::Less},
      {"Greater", Op::Greater}, {"LessOrEqual", Op::LessOrEqual},
      {"GreaterOrEqual", Op::GreaterOrEqual},
      {"And", Op::And},       {"Or", Op::Or},
      {"Xor", Op::Xor}};
  if (op == "Mod")
    return fmod ? Op::FMod : Op::Mod;
  for (const auto &[name, o] : table)
    if (op == name)
      return o;
  return std::nullopt;
}

bool comparison(Op op) { return op >= Op::Equal; }

std::optional<double> realOp(Op op, double a, double b) {
  switch (op) {
  case Op::Add: return a + b;
  case Op::Sub: return a - b;
  case Op::Mul: return a * b;
  case Op::Div: return a / b;
  case Op::FMod: return std::fmod(a, b);
  case Op::Min: return std::min(a, b);
  case Op::Max: return std::max(a, b);
  case Op::Equal: return double(a == b);
  case Op::Less: return double(a < b);
  case Op::Greater: return double(a > b);
  case Op::LessOrEqual: return double(a <= b);
  case Op::GreaterOrEqual: return double(a >= b);
  default: return std::nullopt;
  }
}

std::optional<std::int64_t> intOp(Op op, std::int64_t a, std::int64_t b) {
  auto wrap = [](std::uint64_t x) { return std::int64_t(x); };
  switch (op) {
  case Op::Add: return wrap(std::uint64_t(a) + std::uint64_t(b));
  case Op::Sub: return wrap(std::uint64_t(a) - std::uint64_t(b));
  case Op::Mul: return wrap(std::uint64_t(a) * std::uint64_t(b));
  case Op::Div:
    // Truncating and flooring division differ when the signs do; shape
    // arithmetic never needs that case, so it is left to run.
    if (b == 0 || (a == kInt64Min && b == -1) ||
        (a % b != 0 && (a < 0) != (b < 0)))
      return std::nullopt;
    return a / b;
  case Op::Mod:
  case Op::FMod: {
    if (b == 0 || (a == kInt64Min && b == -1))
      return std::nullopt;
    std::int64_t r = a % b;
    if (op == Op::Mod && r != 0 && (r < 0) != (b < 0))
      r += b; // the divisor's sign, as Python's %
    return r;
  }
  case Op::Min: return std::min(a, b);
  case Op::Max: return std::max(a, b);
  case Op::Equal: return a == b;
  case Op::Less: return a < b;
  case Op::Greater: return a > b;
  case Op::LessOrEqual: return a <= b;
  case Op::GreaterOrEqual: return a >= b;
  case Op::And: return (a != 0) && (b != 0);
  case Op::Or: return (a != 0) || (b != 0);
  case Op::Xor: return (a != 0) != (b != 0);
  }
  return std::nullopt;
}

std::optional<ShapeValue> binary(Op op, const ShapeValue &a,
                                 const ShapeValue &b) {
  if (a.type != b.type)
    return std::nullopt;
  std::optional<Dims> dims = broadcast(a.dims, b.dims);
  if (!dims)
    return std::nullopt;
  int type = comparison(op) ? int(TensorProto::BOOL) : a.type;
  std::optional<ShapeValue> out = blank(type, *dims);
  if (!out)
    return std::nullopt;
  std::vector<std::size_t> ia = broadcastIndex(a.dims, *dims),
                           ib = broadcastIndex(b.dims, *dims);
  for (std::size_t i = 0; i < ia.size(); ++i) {
    if (a.isReal()) {
      std::optional<double> r = realOp(op, a.reals[ia[i]], b.reals[ib[i]]);
      if (!r)
        return std::nullopt;
      if (out->isReal())
        out->reals[i] = storedReal(type, *r);
      else
        out->ints[i] = std::int64_t(*r);
    } else {
      std::optional<std::int64_t> r = intOp(op, a.ints[ia[i]], b.ints[ib[i]]);
      if (!r)
        return std::nullopt;
      out->ints[i] = storedInt(type, *r);
    }
  }
  return out;
}

std::optional<ShapeValue> unary(const std::string &op, const ShapeValue &x) {
  ShapeValue out = x;
  if (x.isReal()) {
    std::function<double(double)> f;
    if (op == "Neg") f = [](double v) { return -v; };
    else if (op == "Abs") f = [](double v) { return std::fabs(v); };
    else if (op == "Floor") f = [](double v) { return std::floor(v); };
    else if (op == "Ceil") f = [](double v) { return std::ceil(v); };
    else if (op == "Sqrt") f = [](double v) { return std::sqrt(v); };
    else return std::nullopt;
    for (double &v : out.reals)
      v = storedReal(x.type, f(v));
    return out;
  }
  for (std::int64_t &v : out.ints) {
    if (op == "Not" && x.type == TensorProto::BOOL)
      v = !v;
    else if ((op == "Neg" || op == "Abs") && x.type != TensorProto::BOOL &&
             v != kInt64Min)
      v = storedInt(x.type, op == "Abs" ? std::abs(v) : -v);
    else
      return std::nullopt;
  }
  return out;
}

std::optional<ShapeValue> cast(const ShapeValue &x, int to) {
  if (!foldableType(to))
    return std::nullopt;
  std::optional<ShapeValue> out = blank(to, x.dims);
  if (!out)
    return std::nullopt;
  for (std::size_t i = 0; i < std::size_t(x.size()); ++i) {
    if (x.isReal() && out->isReal()) {
      out->reals[i] = storedReal(to, x.reals[i]);
    } else if (x.isReal()) {
      double v = x.reals[i];
      if (to == TensorProto::BOOL) {
        out->ints[i] = v != 0;
        continue;
      }
      // Out of range (NaN included) is undefined: not folded.
      if (!(v > -9.2e18 && v < 9.2e18))
        return std::nullopt;
      out->ints[i] = storedInt(to, std::int64_t(v));
    } else if (out->isReal()) {
      out->reals[i] = storedReal(to, double(x.ints[i]));
    } else {
      out->ints[i] = storedInt(to, x.ints[i]);
    }
  }
  return out;
}

// -- reorganizing -----------------------------------------------------------

std::optional<ShapeValue> gather(const ShapeValue &data,
                                 const ShapeValue &indices, std::int64_t axis) {
  std::optional<std::size_t> ax = axisIndex(axis, data.dims.size());
  if (!ax || indices.isReal() || indices.type == TensorProto::BOOL)
    return std::nullopt;
  Dims dims(data.dims.begin(), data.dims.begin() + std::ptrdiff_t(*ax));
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + std::ptrdiff_t(*ax) + 1,
              data.dims.end());
  if (!elementCount(dims))
    return std::nullopt;
  std::int64_t outer = 1, inner = 1, extent = data.dims[*ax];
  for (std::size_t i = 0; i < *ax; ++i)
    outer *= data.dims[i];
  for (std::size_t i = *ax + 1; i < data.dims.size(); ++i)
    inner *= data.dims[i];
  std::vector<std::size_t> index;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t k : indices.ints) {
      if (k < -extent || k >= extent)
        return std::nullopt;
      std::int64_t row = k < 0 ? k + extent : k;
      for (std::int64_t i = 0; i < inner; ++i)
        index.push_back(std::size_t((o * extent + row) * inner + i));
    }
  return gathered(data, dims, index);
}

std::optional<ShapeValue> concat(const std::vector<const ShapeValue *> &parts,
                                 std::int64_t axis) {
  if (parts.empty() || !parts[0])
    return std::nullopt;
  std::optional<std::size_t> ax = axisIndex(axis, parts[0]->dims.size());
  if (!ax)
    return std::nullopt;
  Dims dims = parts[0]->dims;
  dims[*ax] = 0;
  for (const ShapeValue *p : parts) {
    if (!p || p->type != parts[0]->type || p->dims.size() != dims.size())
      return std::nullopt;
    for (std::size_t i = 0; i < dims.size(); ++i)
      if (i != *ax && p->dims[i] != dims[i])
        return std::nullopt;
    dims[*ax] += p->dims[*ax];
  }
  std::optional<ShapeValue> out = blank(parts[0]->type, dims);
  if (!out)
    return std::nullopt;
  std::int64_t outer = 1;
  for (std::size_t i = 0; i < *ax; ++i)
    outer *= dims[i];
  std::size_t at = 0;
  for (std::int64_t o = 0; o < outer; ++o)
    for (const ShapeValue *p : parts) {
      std::int64_t block = outer ? p->size() / outer : 0;
      for (std::int64_t i = 0; i < block; ++i)
        copyElement(*p, std::size_t(o * block + i), *out, at++);
    }
  return out;
}

std::optional<ShapeValue> slice(const ShapeValue &data, const Dims &starts,
                                const Dims &ends, std::optional<Dims> axes,
                                std::optional<Dims> steps) {
  std::size_t rank = data.dims.size();
  if (!axes) {
    axes.emplace();
    for (std::size_t i = 0; i < starts.size(); ++i)
      axes->push_back(std::int64_t(i));
  }
  if (!steps)
    steps = Dims(starts.size(), 1);
  if (ends.size() != starts.size() || axes->size() != starts.size() ||
      steps->size() != starts.size())
    return std::nullopt;
  Dims first(rank, 0), step(rank, 1), dims = data.dims;
  std::vector<bool> seen(rank, false);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    std::optional<std::size_t> ax = axisIndex((*axes)[k], rank);
    if (!ax || seen[*ax] || (*steps)[k] == 0)
      return std::nullopt;
    seen[*ax] = true;
    std::int64_t d = data.dims[*ax], s = starts[k], e = ends[k],
                 st = (*steps)[k];
    step[*ax] = st;
    if (d == 0) { // nothing to take, whatever the bounds say
      dims[*ax] = 0;
      continue;
    }
    s = s < 0 ? s + d : s;
    e = e < 0 ? e + d : e;
    // In 128 bits: a step may be anything up to INT64_MIN or INT64_MAX.
    if (st > 0) {
      s = std::clamp<std::int64_t>(s, 0, d);
      e = std::clamp<std::int64_t>(e, 0, d);
      dims[*ax] = e > s ? std::int64_t((__int128(e) - s - 1) / st + 1) : 0;
    } else {
      s = std::clamp<std::int64_t>(s, 0, d - 1);
      e = std::clamp<std::int64_t>(e, -1, d - 1);
      dims[*ax] =
          s > e ? std::int64_t((__int128(s) - e - 1) / -__int128(st) + 1) : 0;
    }
    first[*ax] = s;
  }
  std::optional<std::int64_t> n = elementCount(dims);
  if (!n)
    return std::nullopt;
  Dims inStrides = stridesOf(data.dims), outStrides = stridesOf(dims);
  std::vector<std::size_t> index(static_cast<std::size_t>(*n));
  for (std::int64_t flat = 0; flat < *n; ++flat) {
    std::int64_t at = 0;
    for (std::size_t i = 0; i < rank; ++i)
      at += (first[i] + flat / outStrides[i] % dims[i] * step[i]) *
            inStrides[i];
    index[std::size_t(flat)] = std::size_t(at);
  }
  return gathered(data, dims, index);
}

std::optional<Dims> reshaped(const Dims &in, const Dims &shape,
                             bool allowZero) {
  Dims out = shape;
  std::optional<std::size_t> inferred;
  std::int64_t known = 1, total = 1;
  for (std::int64_t d : in)
    total *= d;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowZero) {
      if (i >= in.size())
        return std::nullopt;
      out[i] = in[i];
    }
    if (out[i] == -1) {
      if (inferred)
        return std::nullopt;
      inferred = i;
      continue;
    }
    if (out[i] < 0 || (out[i] > 0 && known > kMaxFoldedElements / out[i]))
      return std::nullopt;
    known *= out[i];
  }
  if (inferred) {
    if (known == 0 || total % known != 0)
      return std::nullopt;
    out[*inferred] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return out;
}

std::optional<ShapeValue> range(const ShapeValue &start,
                                const ShapeValue &limit,
                                const ShapeValue &delta) {
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1 ||
      start.type != limit.type || start.type != delta.type ||
      start.type == TensorProto::BOOL)
    return std::nullopt;
  double s = start.isReal() ? start.reals[0] : double(start.ints[0]);
  double l = limit.isReal() ? limit.reals[0] : double(limit.ints[0]);
  double d = delta.isReal() ? delta.reals[0] : double(delta.ints[0]);
  if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
    return std::nullopt;
  double count = std::max(std::ceil((l - s) / d), 0.0);
  if (!start.isReal()) { // exactly, in 128 bits
    __int128 span = __int128(limit.ints[0]) - start.ints[0],
             step = delta.ints[0];
    __int128 whole = step > 0 ? (span > 0 ? (span + step - 1) / step : 0)
                              : (span < 0 ? (span + step + 1) / step : 0);
    count = whole > kMaxFoldedElements ? double(kMaxFoldedElements + 1)
                                       : double(std::int64_t(whole));
  }
  if (count > double(kMaxFoldedElements))
    return std::nullopt;
  std::optional<ShapeValue> out = blank(start.type, {std::int64_t(count)});
  if (!out)
    return std::nullopt;
  for (std::size_t i = 0; i < std::size_t(count); ++i) {
    if (out->isReal())
      out->reals[i] = storedReal(start.type, s + double(i) * d);
    else
      out->ints[i] = start.ints[0] + std::int64_t(i) * delta.ints[0];
  }
  return out;
}

} // namespace

bool ShapeValue::isReal() const { return realType(type); }

std::int64_t ShapeValue::size() const {
  return std::int64_t(isReal() ? reals.size() : ints.size());
}

bool foldableType(int type) {
  return type == TensorProto::FLOAT || type == TensorProto::DOUBLE ||
         type == TensorProto::INT64 || type == TensorProto::INT32 ||
         type == TensorProto::BOOL;
}

std::optional<ShapeValue> shapeValueOf(const TensorProto &t) {
  if (!foldableType(t.data_type()) ||
      t.data_location() == TensorProto::EXTERNAL)
    return std::nullopt;
  // Sized before anything is decoded: a large tensor is not read at all.
  std::optional<ShapeValue> v =
      blank(t.data_type(), Dims(t.dims().begin(), t.dims().end()));
  if (!v)
    return std::nullopt;
  ir::TensorValue data;
  try {
    data = tensorValue(t, "tensor '" + t.name() + "'");
  } catch (const Error &) {
    return std::nullopt; // malformed: left to the importer to report
  }
  // Densely packed little-endian in Weir's dtype of the same width.
  const std::byte *bytes = data.data->data();
  auto load = [&](auto zero, std::size_t i) {
    std::memcpy(&zero, bytes + sizeof zero * i, sizeof zero);
    return zero;
  };
  for (std::size_t i = 0; i < std::size_t(v->size()); ++i) {
    switch (t.data_type()) {
    case TensorProto::FLOAT:
      v->reals[i] = load(0.0f, i);
      break;
    case TensorProto::DOUBLE:
      v->reals[i] = load(0.0, i);
      break;
    case TensorProto::INT32:
      v->ints[i] = load(std::int32_t(0), i);
      break;
    case TensorProto::INT64:
      v->ints[i] = load(std::int64_t(0), i);
      break;
    default: // BOOL, one byte each
      v->ints[i] = bytes[i] != std::byte{0};
    }
  }
  return v;
}

TensorProto tensorOf(const ShapeValue &v, const std::string &name) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(v.type);
  for (std::int64_t d : v.dims)
    t.add_dims(d);
  for (double x : v.reals)
    v.type == TensorProto::FLOAT ? t.add_float_data(float(x))
                                 : t.add_double_data(x);
  for (std::int64_t x : v.ints)
    v.type == TensorProto::INT64 ? t.add_int64_data(x)
                                 : t.add_int32_data(std::int32_t(x));
  return t;
}

std::optional<std::vector<ShapeValue>> evaluateNode(const onnx::NodeProto &n,
                                                    const NodeInputs &in) {
  const std::string &op = n.op_type();
  auto input = [&](std::size_t i) -> const ShapeValue * {
    return i < in.values.size() ? in.values[i] : nullptr;
  };
  if (op == "Shape" || op == "Size") {
    if (!in.shape0)
      return std::nullopt;
    const Dims &shape = *in.shape0;
    if (op == "Size") {
      std::int64_t total = 1;
      for (std::int64_t d : shape)
        total *= d;
      return one(ShapeValue{TensorProto::INT64, {}, {total}, {}});
    }
    auto rank = std::int64_t(shape.size());
    std::int64_t s = intAttribute(n, "start", 0), e = intAttribute(n, "end", rank);
    s = std::clamp<std::int64_t>(s < 0 ? s + rank : s, 0, rank);
    e = std::clamp<std::int64_t>(e < 0 ? e + rank : e, 0, rank);
    Dims dims(shape.begin() + s, shape.begin() + std::max(s, e));
    return one(ShapeValue{TensorProto::INT64,
                          {std::int64_t(dims.size())}, dims, {}});
  }
  const ShapeValue *x = input(0);
  if (!x)
    return std::nullopt;
  if (op == "Identity")
    return one(*x);
  if (op == "Cast")
    return one(cast(*x, int(intAttribute(n, "to", 0))));
  if (op == "Neg" || op == "Abs" || op == "Floor" || op == "Ceil" ||
      op == "Sqrt" || op == "Not")
    return one(unary(op, *x));
  if (std::optional<Op> b = binaryOp(op, intAttribute(n, "fmod", 0))) {
    // Min and Max take any number of inputs; the rest exactly two.
    std::optional<ShapeValue> acc = *x;
    std::size_t last = (op == "Min" || op == "Max") ? in.values.size() : 2;
    if (in.values.size() != last)
      return std::nullopt;
    for (std::size_t i = 1; i < last && acc; ++i)
      acc = input(i) ? binary(*b, *acc, *input(i)) : std::nullopt;
    return one(std::move(acc));
  }
  if (op == "Where") {
    const ShapeValue *a = input(1), *b = input(2);
    if (!a || !b || x->type != TensorProto::BOOL || a->type != b->type)
      return std::nullopt;
    std::optional<Dims> dims = broadcast(x->dims, a->dims);
    dims = dims ? broadcast(*dims, b->dims) : std::nullopt;
    std::optional<ShapeValue> out =
        dims ? blank(a->type, *dims) : std::nullopt;
    if (!out)
      return std::nullopt;
    std::vector<std::size_t> ic = broadcastIndex(x->dims, *dims),
                             ia = broadcastIndex(a->dims, *dims),
                             ib = broadcastIndex(b->dims, *dims);
    for (std::size_t i = 0; i < ic.size(); ++i)
      copyElement(x->ints[ic[i]] ? *a : *b, x->ints[ic[i]] ? ia[i] : ib[i],
                  *out, i);
    return one(std::move(out));
  }
  if (op == "Gather")
    return input(1) ? one(gather(*x, *input(1), intAttribute(n, "axis", 0)))
                    : std::nullopt;
  if (op == "Concat")
    return one(concat(in.values, intAttribute(n, "axis", 0)));
  if (op == "Unsqueeze" || op == "Squeeze") {
    std::optional<Dims> axes = intsOf(n, in, 1, "axes");
    ShapeValue out = *x;
    if (op == "Squeeze") {
      Dims dims;
      std::vector<bool> drop(x->dims.size(), !axes);
      for (std::int64_t a : axes.value_or(Dims{})) {
        std::optional<std::size_t> ax = axisIndex(a, x->dims.size());
        if (!ax || x->dims[*ax] != 1)
          return std::nullopt;
        drop[*ax] = true;
      }
      for (std::size_t i = 0; i < x->dims.size(); ++i)
        if (!drop[i] || x->dims[i] != 1)
          dims.push_back(x->dims[i]);
      out.dims = dims;
      return one(out);
    }
    if (!axes)
      return std::nullopt;
    std::size_t rank = x->dims.size() + axes->size();
    std::vector<bool> inserted(rank, false);
    for (std::int64_t a : *axes) {
      std::optional<std::size_t> ax = axisIndex(a, rank);
      if (!ax || inserted[*ax])
        return std::nullopt;
      inserted[*ax] = true;
    }
    out.dims.clear();
    for (std::size_t i = 0, j = 0; i < rank; ++i)
      out.dims.push_back(inserted[i] ? 1 : x->dims[j++]);
    return one(out);
  }
  if (op == "Slice") {
    std::optional<Dims> starts = intsOf(n, in, 1, "starts"),
                        ends = intsOf(n, in, 2, "ends");
    std::optional<Dims> axes, steps;
    if (input(3) || attribute(n, "axes"))
      axes = intsOf(n, in, 3, "axes");
    if (input(4))
      steps = intsOf(input(4));
    if (!starts || !ends || ((input(3) || attribute(n, "axes")) && !axes) ||
        (input(4) && !steps))
      return std::nullopt;
    return one(slice(*x, *starts, *ends, axes, steps));
  }
  if (op == "Reshape" || op == "Expand") {
    std::optional<Dims> shape = intsOf(input(1));
    if (!shape)
      return std::nullopt;
    std::optional<Dims> dims =
        op == "Reshape"
            ? reshaped(x->dims, *shape, intAttribute(n, "allowzero", 0) != 0)
            : broadcast(x->dims, *shape);
    if (!dims || !elementCount(*dims))
      return std::nullopt;
    if (op == "Reshape") {
      ShapeValue out = *x;
      out.dims = *dims;
      return one(out);
    }
    return one(gathered(*x, *dims, broadcastIndex(x->dims, *dims)));
  }
  if (op == "Range")
    return input(1) && input(2) ? one(range(*x, *input(1), *input(2)))
                                : std::nullopt;
  if (op == "ConstantOfShape") {
    std::optional<Dims> shape = intsOf(x);
    ShapeValue fill{TensorProto::FLOAT, {}, {}, {0.0}};
    if (const onnx::AttributeProto *a = attribute(n, "value")) {
      std::optional<ShapeValue> v = shapeValueOf(a->t());
      if (!v || v->size() != 1)
        return std::nullopt;
      fill = *v;
    }
    std::optional<ShapeValue> out =
        shape ? blank(fill.type, *shape) : std::nullopt;
    if (!out)
      return std::nullopt;
    std::fill(out->reals.begin(), out->reals.end(),
              fill.isReal() ? fill.reals[0] : 0.0);
    std::fill(out->ints.begin(), out->ints.end(),
              fill.isReal() ? 0 : fill.ints[0]);
    return one(std::move(out));
  }
  return std::nullopt;
}

} // namespace weir::onnx_import
