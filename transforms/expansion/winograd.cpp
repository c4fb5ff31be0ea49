/// \file
/// Conv as Winograd's minimal filtering F(2×2, 3×3) (Lavin and Gray, 2016):
/// a 3×3 convolution with unit strides computes each 2×2 output tile from a
/// 4×4 input tile with 16 multiplications per channel pair instead of 36.
///
///   U[a, b, m, c] = (G g[m, c] Gᵀ)[a, b]     the filters, once, at expansion
///   V[a, b, c, t] = (Bᵀ d[c, t] B)[a, b]     map "winograd_input"
///   P[a, b]       = U[a, b] · V[a, b]        16 gemm calls, [M×C]·[C×tiles]
///   Y[m, tile]    = Aᵀ P[·, ·, m, t] A + b   map "winograd_output"
///
/// Each transform map runs over whole tiles (n, channel, tile row, tile
/// column): one iteration reads a tile's 16 inputs and writes its 16
/// transformed values (or its 4 outputs) with 32 (24) additions written out
/// in the tasklet, and the innermost loop, over the tile column, vectorizes
/// with stride-2 reads (writes). One tasklet per tile rather than one per
/// transformed element: each input is loaded once, not four times, and the
/// analysis still counts one pass over each container.
///
/// The filters must be constant (an initializer): they are transformed in
/// C++ when the node expands, into a new constant. The input is read from a
/// zero-padded copy that also rounds the output up to whole tiles; an odd
/// output size is written to a tile-rounded transient and copied into Y.
/// The result differs from direct convolution by rounding (the transforms
/// add and subtract before multiplying), well inside the expansion's
/// tolerance; never a default, the auto recipe chooses it per node.

#include "ir/primitives.h"
#include "transforms/expansion/conv_common.h"
#include "transforms/expansion/expansion.h"

#include <array>
#include <cstring>

namespace weir::expansion {
namespace {

using ir::Expr;

constexpr std::array<std::array<double, 3>, 4> kG{
    {{1.0, 0.0, 0.0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0.0, 0.0, 1.0}}};

/// Bᵀ's rows: row a of Bᵀ x is x[kBt[a][0]] + kBt[a][1] · x[kBt[a][2]]
/// (the sign as ±1): x0 - x2, x1 + x2, x2 - x1, x1 - x3.
constexpr int kBt[4][3] = {{0, -1, 2}, {1, 1, 2}, {2, -1, 1}, {1, -1, 3}};

/// A tile element's connector or temporary name: prefix, row, column ("d03").
std::string name(char prefix, int row, int col) {
  return {prefix, static_cast<char>('0' + row), static_cast<char>('0' + col)};
}

/// `out = x (+|-) y` as a tasklet line.
void appendLine(std::string &code, const std::string &out, const std::string &x,
                int sign, const std::string &y) {
  code.append(out).append(" = ").append(x);
  code.append(sign > 0 ? " + " : " - ").append(y).append("\n");
}

/// One tile's input transform: d{r}{q} (4×4 of the padded input) to
/// v{a}{b} = (Bᵀ d B)[a, b], rows first into temporaries t{a}{q}.
std::string inputTransformCode() {
  std::string code;
  for (int a = 0; a < 4; ++a)
    for (int q = 0; q < 4; ++q)
      appendLine(code, name('t', a, q), name('d', kBt[a][0], q), kBt[a][1],
                 name('d', kBt[a][2], q));
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      appendLine(code, name('v', a, b), name('t', a, kBt[b][0]), kBt[b][1],
                 name('t', a, kBt[b][2]));
  return code;
}

/// One tile's output transform: p{a}{b} (the sixteen products) to
/// y{i}{j} = (Aᵀ P A)[i, j] (+ bias). Aᵀ's rows are x0 + x1 + x2 and
/// x1 - x2 - x3, rows first into temporaries r{i}{b}.
std::string outputTransformCode(bool bias) {
  std::string code;
  // out = Aᵀ row i of the four x(k): `x(0) + x(1) + x(2)` or
  // `x(1) - x(2) - x(3)`.
  auto row = [&](const std::string &out, int i, auto x, const char *tail) {
    code.append(out).append(" = ");
    if (i == 0)
      code.append(x(0)).append(" + ").append(x(1)).append(" + ").append(x(2));
    else
      code.append(x(1)).append(" - ").append(x(2)).append(" - ").append(x(3));
    code.append(tail).append("\n");
  };
  for (int i = 0; i < 2; ++i)
    for (int b = 0; b < 4; ++b)
      row(name('r', i, b), i, [&](int k) { return name('p', k, b); }, "");
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      row(name('y', i, j), j, [&](int k) { return name('r', i, k); },
          bias ? " + bias" : "");
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
ir::TensorValue transformFilters(const ir::Container &w, std::int64_t m,
                                 std::int64_t c) {
  const float *g = reinterpret_cast<const float *>(w.constant->data());
  std::vector<float> u(static_cast<std::size_t>(16 * m * c));
  for (std::int64_t o = 0; o < m; ++o)
    for (std::int64_t i = 0; i < c; ++i) {
      const float *k = g + (o * c + i) * 9;
      double left[4][3]; // G g
      for (int a = 0; a < 4; ++a)
        for (int col = 0; col < 3; ++col) {
          left[a][col] = 0;
          for (int r = 0; r < 3; ++r)
            left[a][col] += kG[a][r] * double(k[r * 3 + col]);
        }
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) {
          double s = 0;
          for (int col = 0; col < 3; ++col)
            s += left[a][col] * kG[b][col];
          u[static_cast<std::size_t>(((a * 4 + b) * m + o) * c + i)] =
              static_cast<float>(s);
        }
    }
  return f32Table({4, 4, m, c}, u.data(), u.size());
}

void expandConvWinograd(ExpansionContext &ctx) {
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
    ctx.fail("Winograd F(2x2, 3x3) needs a 2-D 3x3 kernel");
  if (g.group != 1 || g.strides != std::vector<std::int64_t>{1, 1} ||
      g.dilations != std::vector<std::int64_t>{1, 1})
    ctx.fail("Winograd F(2x2, 3x3) needs group 1, unit strides and dilations");
  if (!w.isConstant() ||
      w.constant->size() !=
          static_cast<std::size_t>(ctx.constantDim(w.shape[0]) *
                                   ctx.constantDim(w.shape[1]) * 9 * 4))
    ctx.fail("Winograd transforms the filters once, so W must be a constant");
  std::int64_t m = ctx.constantDim(w.shape[0]), c = ctx.constantDim(w.shape[1]);
  std::int64_t oh = ctx.constantDim(y.shape[2]),
               ow = ctx.constantDim(y.shape[3]);
  std::int64_t th = (oh + 1) / 2, tw = (ow + 1) / 2, tiles = th * tw;
  Expr images = x.shape[0];

  // The padded input covers whole tiles: one more zero row (column) at the
  // end when the output height (width) is odd.
  ConvGeometry covering = g;
  covering.pads[2] += 2 * th - oh;
  covering.pads[3] += 2 * tw - ow;
  std::string source = paddedInput(ctx, covering);

  std::string u =
      ctx.addConstant("winograd_filters", transformFilters(w, m, c));
  Expr columns = images * Expr(tiles);
  std::string v = ctx.addTransient("winograd_tiles", x.dtype,
                                   {Expr(4), Expr(4), Expr(c), columns});
  std::string p = ctx.addTransient("winograd_products", x.dtype,
                                   {Expr(4), Expr(4), Expr(m), columns});

  Expr n = Expr::symbol("n"), ty = Expr::symbol("ty"), tx = Expr::symbol("tx");
  Expr column = n * Expr(tiles) + ty * Expr(tw) + tx;
  std::vector<ir::Range> tileRanges{{Expr(0), Expr(th)}, {Expr(0), Expr(tw)}};

  // Input tiles: [n, c, ty, tx] -> the sixteen V[a, b, c, column] of one
  // tile: Bᵀ d (rows) then (Bᵀ d) B (columns), 32 additions.
  {
    Expr ch = Expr::symbol("c");
    std::vector<ir::MappedInput> in;
    std::vector<ir::MappedOutput> out;
    for (int r = 0; r < 4; ++r)
      for (int q = 0; q < 4; ++q)
        in.push_back({name('d', r, q), source,
                      {n, ch, ty * Expr(2) + Expr(r), tx * Expr(2) + Expr(q)}});
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        out.push_back({name('v', a, b), v,
                       {Expr(a), Expr(b), ch, column}});
    ctx.addMap("winograd_input", {"n", "c", "ty", "tx"},
               {{Expr(0), images}, {Expr(0), Expr(c)}, tileRanges[0],
                tileRanges[1]},
               in, inputTransformCode(), out);
  }

  // Sixteen products P[a, b] = U[a, b] · V[a, b].
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
    // Sixteen independent products, each small: the map runs them in
    // parallel, one whole product per thread at a time (codegen/lower).
    ir::MappedTaskletIds ids = ctx.addPrimitive(
        "winograd_gemm", {"a", "b"}, {{Expr(0), Expr(4)}, {Expr(0), Expr(4)}},
        "gemm", ir::gemmAttributes(call),
        {region("A", u, Expr(m), Expr(c)), region("B", v, Expr(c), columns)},
        {region("C", p, Expr(m), columns)});
    ctx.state().findNode(ids.entry)->map().schedule = ir::Schedule::CpuParallel;
  }

  // Output tiles: Aᵀ P A (+ bias) into Y, or a tile-rounded copy of it.
  bool whole = 2 * th == oh && 2 * tw == ow;
  std::string target =
      whole ? y.name
            : ctx.addTransient("winograd_rounded", y.dtype,
                               {images, Expr(m), Expr(2 * th), Expr(2 * tw)});
  // [n, m, ty, tx]: the four outputs of one tile from its sixteen
  // products, Aᵀ P (rows) then (Aᵀ P) A (columns), plus the bias.
  {
    Expr mo = Expr::symbol("m");
    std::vector<ir::MappedInput> in;
    std::vector<ir::MappedOutput> out;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        in.push_back({name('p', a, b), p,
                      {Expr(a), Expr(b), mo, column}});
    if (bias)
      in.push_back({"bias", bias->name, {mo}});
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        out.push_back({name('y', i, j), target,
                       {n, mo, ty * Expr(2) + Expr(i), tx * Expr(2) + Expr(j)}});
    ctx.addMap("winograd_output", {"n", "m", "ty", "tx"},
               {{Expr(0), images}, {Expr(0), Expr(m)}, tileRanges[0],
                tileRanges[1]},
               in, outputTransformCode(bias != nullptr), out);
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
     expandConvWinograd},
    false};

} // namespace
} // namespace weir::expansion
