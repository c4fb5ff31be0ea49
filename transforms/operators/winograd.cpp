/// \file
/// Conv as Winograd's minimal filtering F(m×m, 3×3) (Lavin and Gray, 2016):
/// a 3×3 convolution with unit strides computes each m×m output tile from
/// an α×α input tile (α = m + 2) with α² multiplications per channel pair
/// instead of 9·m². Two variants: `winograd`, F(2×2, 3×3) (16 products for
/// 36, exact small transforms), and `winograd4`, F(4×4, 3×3) (36 for 144,
/// larger transforms with coefficients up to 8, so more rounding).
///
///   U[a, b, m, c] = (G g[m, c] Gᵀ)[a, b]     the filters, once, at expansion
///   V[a, b, c, t] = (Bᵀ d[c, t] B)[a, b]     map "winograd_input"
///   P[a, b]       = U[a, b] · V[a, b]        α² gemm calls, [M×C]·[C×tiles]
///   Y[m, tile]    = Aᵀ P[·, ·, m, t] A + b   map "winograd_output"
///
/// Each transform map runs over whole tiles (n, channel, tile row, tile
/// column): one iteration reads a tile's α² inputs and writes its α²
/// transformed values (or its m² outputs), the sums written out in the
/// tasklet (rows first, then columns), and the innermost loop, over the
/// tile column, vectorizes with strided reads (writes). One tasklet per
/// tile rather than one per transformed element: each input is loaded once,
/// not α times, and the analysis still counts one pass over each container.
///
/// The filters must be constant (an initializer): they are transformed in
/// C++ when the node expands, into a new constant. The input is read from a
/// zero-padded copy that also rounds the output up to whole tiles; an
/// output size that is not a multiple of m is written to a tile-rounded
/// transient and copied into Y. The result differs from direct convolution
/// by rounding (the transforms add and subtract before multiplying), well
/// inside the expansion's tolerance; never a default, the auto recipe
/// chooses a variant per node.

#include "ir/primitives.h"
#include "transforms/operators/conv_common.h"
#include "transforms/operators/expansion.h"

#include <array>
#include <cstring>

namespace weir::operators {
namespace {

using ir::Expr;

using Matrix = std::vector<std::vector<double>>;

/// One F(m×m, 3×3): the output tile side m, the input tile side α = m + 2
/// and the transforms Bᵀ (α×α), G (α×3) and Aᵀ (m×α).
struct Variant {
  const char *name; ///< "F(2x2, 3x3)"
  int m, alpha;
  Matrix bt, g, at;
};

const Variant kF2{"F(2x2, 3x3)",
                  2,
                  4,
                  {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
                  {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
                  {{1, 1, 1, 0}, {0, 1, -1, -1}}};

// The points 0, ±1, ±2 and infinity (Lavin and Gray's choice).
const Variant kF4{"F(4x4, 3x3)",
                  4,
                  6,
                  {{4, 0, -5, 0, 1, 0},
                   {0, -4, -4, 1, 1, 0},
                   {0, 4, -4, -1, 1, 0},
                   {0, -2, -1, 2, 1, 0},
                   {0, 2, -1, -2, 1, 0},
                   {0, 4, 0, -5, 0, 1}},
                  {{1.0 / 4, 0, 0},
                   {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                   {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                   {1.0 / 24, 1.0 / 12, 1.0 / 6},
                   {1.0 / 24, -1.0 / 12, 1.0 / 6},
                   {0, 0, 1}},
                  {{1, 1, 1, 1, 1, 0},
                   {0, 1, -1, 2, -2, 0},
                   {0, 1, 1, 4, 4, 0},
                   {0, 1, -1, 8, -8, 1}}};

/// A tile element's connector or temporary name: prefix, row, column ("d03").
std::string name(char prefix, int row, int col) {
  return {prefix, static_cast<char>('0' + row), static_cast<char>('0' + col)};
}

/// `out = Σ coef[k] · x(k)` over the non-zero coefficients, left to right,
/// as a tasklet line (a coefficient ±1 is a plain addition or subtraction).
template <typename X>
void appendSum(std::string &code, const std::string &out,
               const std::vector<double> &coef, X x, const char *tail = "") {
  code.append(out).append(" =");
  bool first = true;
  for (std::size_t k = 0; k < coef.size(); ++k) {
    double c = coef[k];
    if (c == 0)
      continue;
    double size = c < 0 ? -c : c;
    code.append(c < 0 ? (first ? " -" : " - ") : (first ? " " : " + "));
    if (size != 1)
      code.append(ExpansionContext::floatLiteral(size)).append(" * ");
    code.append(x(static_cast<int>(k)));
    first = false;
  }
  code.append(tail).append("\n");
}

/// One tile's input transform: d{r}{q} (α×α of the padded input) to
/// v{a}{b} = (Bᵀ d B)[a, b], rows first into temporaries t{a}{q}.
std::string inputTransformCode(const Variant &f) {
  std::string code;
  for (int a = 0; a < f.alpha; ++a)
    for (int q = 0; q < f.alpha; ++q)
      appendSum(code, name('t', a, q), f.bt[static_cast<std::size_t>(a)],
                [&](int r) { return name('d', r, q); });
  for (int a = 0; a < f.alpha; ++a)
    for (int b = 0; b < f.alpha; ++b)
      appendSum(code, name('v', a, b), f.bt[static_cast<std::size_t>(b)],
                [&](int k) { return name('t', a, k); });
  return code;
}

/// One tile's output transform: p{a}{b} (the α² products) to
/// y{i}{j} = (Aᵀ P A)[i, j] (+ bias), rows first into temporaries r{i}{b}.
std::string outputTransformCode(const Variant &f, bool bias) {
  std::string code;
  for (int i = 0; i < f.m; ++i)
    for (int b = 0; b < f.alpha; ++b)
      appendSum(code, name('r', i, b), f.at[static_cast<std::size_t>(i)],
                [&](int k) { return name('p', k, b); });
  for (int i = 0; i < f.m; ++i)
    for (int j = 0; j < f.m; ++j)
      appendSum(
          code, name('y', i, j), f.at[static_cast<std::size_t>(j)],
          [&](int k) { return name('r', i, k); }, bias ? " + bias" : "");
  return code;
}

ir::TensorValue f32Table(std::vector<std::int64_t> shape, const float *values,
                         std::size_t count) {
  ir::TensorValue v;
  v.dtype = ir::DType::F32;
  v.shape = std::move(shape);
  auto bytes = std::make_shared<std::vector<std::byte>>(count * 4);
  std::memcpy(bytes->data(), values, count * 4);
  v.data = std::move(bytes);
  return v;
}

/// U[a, b, m, c] = (G g[m, c] Gᵀ)[a, b] from W's f32 data, in double and
/// rounded once.
ir::TensorValue transformFilters(const Variant &f, const ir::Container &w,
                                 std::int64_t m, std::int64_t c) {
  const float *g = reinterpret_cast<const float *>(w.constant->data());
  const std::int64_t alpha = f.alpha;
  std::vector<float> u(static_cast<std::size_t>(alpha * alpha * m * c));
  std::vector<double> left(static_cast<std::size_t>(alpha * 3)); // G g
  for (std::int64_t o = 0; o < m; ++o)
    for (std::int64_t i = 0; i < c; ++i) {
      const float *k = g + (o * c + i) * 9;
      for (std::size_t a = 0; a < f.g.size(); ++a)
        for (int col = 0; col < 3; ++col) {
          double s = 0;
          for (int r = 0; r < 3; ++r)
            s += f.g[a][static_cast<std::size_t>(r)] * double(k[r * 3 + col]);
          left[a * 3 + static_cast<std::size_t>(col)] = s;
        }
      for (std::int64_t a = 0; a < alpha; ++a)
        for (std::int64_t b = 0; b < alpha; ++b) {
          double s = 0;
          for (int col = 0; col < 3; ++col)
            s +=
                left[static_cast<std::size_t>(a * 3 + col)] *
                f.g[static_cast<std::size_t>(b)][static_cast<std::size_t>(col)];
          u[static_cast<std::size_t>(((a * alpha + b) * m + o) * c + i)] =
              static_cast<float>(s);
        }
    }
  return f32Table({alpha, alpha, m, c}, u.data(), u.size());
}

void expandConvWinograd(ExpansionContext &ctx, const Variant &f) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &w = ctx.requireInput("W");
  const ir::Container *bias = ctx.input("B");
  const ir::Container &y = ctx.requireOutput("Y");
  for (const ir::Container *c : {&x, &w, bias, &y})
    if (c &&
        (c->dtype != ir::DType::F32 ||
         (!c->strides.empty() && c->strides != ir::rowMajorStrides(c->shape))))
      ctx.fail("'" + c->name + "' is not a row-major f32 array");
  ConvGeometry g = readConvGeometry(ctx);
  if (g.kernel != std::vector<std::int64_t>{3, 3})
    ctx.fail(std::string("Winograd ") + f.name + " needs a 2-D 3x3 kernel");
  if (g.group != 1 || g.strides != std::vector<std::int64_t>{1, 1} ||
      g.dilations != std::vector<std::int64_t>{1, 1})
    ctx.fail(std::string("Winograd ") + f.name +
             " needs group 1, unit strides and dilations");
  if (!w.isConstant() ||
      w.constant->size() !=
          static_cast<std::size_t>(ctx.constantDim(w.shape[0]) *
                                   ctx.constantDim(w.shape[1]) * 9 * 4))
    ctx.fail("Winograd transforms the filters once, so W must be a constant");
  std::int64_t m = ctx.constantDim(w.shape[0]), c = ctx.constantDim(w.shape[1]);
  std::int64_t oh = ctx.constantDim(y.shape[2]),
               ow = ctx.constantDim(y.shape[3]);
  const std::int64_t tile = f.m, alpha = f.alpha;
  std::int64_t th = (oh + tile - 1) / tile, tw = (ow + tile - 1) / tile,
               tiles = th * tw;
  Expr images = x.shape[0];

  // The padded input covers whole tiles: more zero rows (columns) at the
  // end when the output height (width) is not a multiple of the tile.
  ConvGeometry covering = g;
  covering.pads[2] += tile * th - oh;
  covering.pads[3] += tile * tw - ow;
  std::string source = paddedInput(ctx, covering);

  std::string u =
      ctx.addConstant("winograd_filters", transformFilters(f, w, m, c));
  Expr columns = images * Expr(tiles);
  std::string v = ctx.addTransient(
      "winograd_tiles", x.dtype, {Expr(alpha), Expr(alpha), Expr(c), columns});
  std::string p =
      ctx.addTransient("winograd_products", x.dtype,
                       {Expr(alpha), Expr(alpha), Expr(m), columns});

  Expr n = Expr::symbol("n"), ty = Expr::symbol("ty"), tx = Expr::symbol("tx");
  Expr column = n * Expr(tiles) + ty * Expr(tw) + tx;
  std::vector<ir::Range> tileRanges{{Expr(0), Expr(th)}, {Expr(0), Expr(tw)}};

  // Input tiles: [n, c, ty, tx] -> the α² V[a, b, c, column] of one tile:
  // Bᵀ d (rows) then (Bᵀ d) B (columns).
  {
    Expr ch = Expr::symbol("c");
    std::vector<ir::MappedInput> in;
    std::vector<ir::MappedOutput> out;
    for (int r = 0; r < f.alpha; ++r)
      for (int q = 0; q < f.alpha; ++q)
        in.push_back(
            {name('d', r, q),
             source,
             {n, ch, ty * Expr(tile) + Expr(r), tx * Expr(tile) + Expr(q)}});
    for (int a = 0; a < f.alpha; ++a)
      for (int b = 0; b < f.alpha; ++b)
        out.push_back({name('v', a, b), v, {Expr(a), Expr(b), ch, column}});
    ctx.addMap(
        "winograd_input", {"n", "c", "ty", "tx"},
        {{Expr(0), images}, {Expr(0), Expr(c)}, tileRanges[0], tileRanges[1]},
        in, inputTransformCode(f), out);
  }

  // α² products P[a, b] = U[a, b] · V[a, b].
  {
    ir::GemmCall call;
    call.m = Expr(m);
    call.k = Expr(c);
    call.n = columns;
    call.lda = Expr(c);
    call.ldb = columns;
    call.ldc = columns;
    call.beta = 0;
    Expr a = Expr::symbol("a"), b = Expr::symbol("b");
    auto region = [&](const char *connector, const std::string &name, Expr rows,
                      Expr cols) {
      ir::Subset s;
      s.dims.push_back(ir::Range::point(a));
      s.dims.push_back(ir::Range::point(b));
      s.dims.emplace_back(Expr(0), rows);
      s.dims.emplace_back(Expr(0), cols);
      return ir::MappedRegion{connector, name, s};
    };
    // α² independent products, each small: the map runs them in parallel,
    // one whole product per thread at a time (codegen/lower).
    ir::MappedTaskletIds ids = ctx.addPrimitive(
        "winograd_gemm", {"a", "b"},
        {{Expr(0), Expr(alpha)}, {Expr(0), Expr(alpha)}}, "gemm",
        ir::gemmAttributes(call),
        {region("A", u, Expr(m), Expr(c)), region("B", v, Expr(c), columns)},
        {region("C", p, Expr(m), columns)});
    ctx.state().findNode(ids.entry)->map().schedule = ir::Schedule::CpuParallel;
  }

  // Output tiles: Aᵀ P A (+ bias) into Y, or a tile-rounded copy of it.
  bool whole = tile * th == oh && tile * tw == ow;
  std::string target = whole
                           ? y.name
                           : ctx.addTransient("winograd_rounded", y.dtype,
                                              {images, Expr(m), Expr(tile * th),
                                               Expr(tile * tw)});
  // [n, m, ty, tx]: the m² outputs of one tile from its α² products, Aᵀ P
  // (rows) then (Aᵀ P) A (columns), plus the bias.
  {
    Expr mo = Expr::symbol("m");
    std::vector<ir::MappedInput> in;
    std::vector<ir::MappedOutput> out;
    for (int a = 0; a < f.alpha; ++a)
      for (int b = 0; b < f.alpha; ++b)
        in.push_back({name('p', a, b), p, {Expr(a), Expr(b), mo, column}});
    if (bias)
      in.push_back({"bias", bias->name, {mo}});
    for (int i = 0; i < f.m; ++i)
      for (int j = 0; j < f.m; ++j)
        out.push_back(
            {name('y', i, j),
             target,
             {n, mo, ty * Expr(tile) + Expr(i), tx * Expr(tile) + Expr(j)}});
    ctx.addMap(
        "winograd_output", {"n", "m", "ty", "tx"},
        {{Expr(0), images}, {Expr(0), Expr(m)}, tileRanges[0], tileRanges[1]},
        in, outputTransformCode(f, bias != nullptr), out);
  }
  if (!whole) {
    auto params = ExpansionContext::params(4, "o");
    auto idx = ExpansionContext::indices(params);
    ctx.addMap("winograd_crop", params, ExpansionContext::fullRanges(y.shape),
               {{"x", target, idx}}, "y = x", {{"y", y.name, idx}});
  }
}

const ExpansionRegistrar kConvWinograd{
    {"Conv", "winograd",
     "Winograd F(2x2, 3x3): transformed constant filters, input and output "
     "tile transforms as maps, 16 OpenBLAS sgemm calls (3x3, unit strides, "
     "f32)",
     [](ExpansionContext &ctx) { expandConvWinograd(ctx, kF2); }},
    false};
const ExpansionRegistrar kConvWinograd4{
    {"Conv", "winograd4",
     "Winograd F(4x4, 3x3): as winograd with 6x6 input tiles, 36 sgemm "
     "calls for 4x fewer multiplications than direct (2.25x for winograd), "
     "more rounding",
     [](ExpansionContext &ctx) { expandConvWinograd(ctx, kF4); }},
    false};

} // namespace
} // namespace weir::operators
