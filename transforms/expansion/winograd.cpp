/// \file
/// Conv as Winograd's minimal filtering F(2×2, 3×3) (Lavin and Gray, 2016):
/// a 3×3 convolution with unit strides computes each 2×2 output tile from a
/// 4×4 input tile with 16 multiplications per channel pair instead of 36.
///
///   U[ab, m, c] = (G g[m, c] Gᵀ)[a, b]        the filters, once, at expansion
///   V[ab, c, t] = (Bᵀ d[c, t] B)[a, b]        maps "winograd_input_ab"
///   P[ab]       = U[ab] · V[ab]               16 gemm calls, [M×C]·[C×tiles]
///   Y[m, tile]  = Aᵀ P[·, m, t] A + bias      maps "winograd_output_ij"
///
/// A map writes one element of an array per iteration, so each element of
/// a transformed tile is its own map: 16 input maps that each add four
/// input elements with signs, 4 output maps that each add nine products.
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

constexpr int kBt[4][4] = {
    {1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
constexpr int kAt[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

std::string at(const char *base, int a, int b) {
  return base + std::to_string(a) + std::to_string(b);
}

/// `target = ±x ± y ...` over the connectors base_rc whose coefficient
/// left[r]·right[c] is not zero (all are ±1), in row-major order.
template <int R, int C>
std::string signedSum(const std::string &target, const char *base,
                      const int (&left)[R], const int (&right)[C]) {
  std::string code = target + " =";
  bool first = true;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      int k = left[r] * right[c];
      if (k == 0)
        continue;
      code += first ? (k < 0 ? " -" : " ") : (k < 0 ? " - " : " + ");
      code += at(base, r, c);
      first = false;
    }
  return code;
}

/// U[ab, m, c] = (G g[m, c] Gᵀ)[a, b] from W's f32 data, in double and
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
  ir::TensorValue v;
  v.dtype = ir::DType::F32;
  v.shape = {16, m, c};
  auto bytes = std::make_shared<std::vector<std::byte>>(u.size() * 4);
  std::memcpy(bytes->data(), u.data(), bytes->size());
  v.data = std::move(bytes);
  return v;
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
  std::string v =
      ctx.addTransient("winograd_tiles", x.dtype, {Expr(16), Expr(c), columns});
  std::string p = ctx.addTransient("winograd_products", x.dtype,
                                   {Expr(16), Expr(m), columns});

  Expr n = Expr::symbol("n"), ty = Expr::symbol("ty"), tx = Expr::symbol("tx");
  Expr column = n * Expr(tiles) + ty * Expr(tw) + tx;
  std::vector<ir::Range> tileRanges{{Expr(0), Expr(th)}, {Expr(0), Expr(tw)}};

  // Input tiles, one map per element of Bᵀ d B (a map writes one element
  // of an array per iteration): [n, c, ty, tx] -> V[ab, c, n·tiles +
  // ty·tw + tx], the sum of four input elements with signs.
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      std::vector<ir::MappedInput> in;
      Expr ch = Expr::symbol("c");
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          if (kBt[a][i] * kBt[b][j] != 0)
            in.push_back(
                {at("d", i, j),
                 source,
                 {n, ch, ty * Expr(2) + Expr(i), tx * Expr(2) + Expr(j)}});
      ctx.addMap(
          at("winograd_input_", a, b), {"n", "c", "ty", "tx"},
          {{Expr(0), images}, {Expr(0), Expr(c)}, tileRanges[0], tileRanges[1]},
          in, signedSum("v", "d", kBt[a], kBt[b]),
          {{"v", v, {Expr(a * 4 + b), ch, column}}});
    }

  // Sixteen products P[ab] = U[ab] · V[ab].
  {
    ir::GemmCall call;
    call.m = Expr(m);
    call.k = Expr(c);
    call.n = columns;
    call.lda = Expr(c);
    call.ldb = columns;
    call.ldc = columns;
    call.beta = 0;
    Expr k = Expr::symbol("k");
    auto region = [&](const std::string &name, Expr rows, Expr cols) {
      ir::Subset s;
      s.dims.push_back(ir::Range::point(k));
      s.dims.emplace_back(Expr(0), rows);
      s.dims.emplace_back(Expr(0), cols);
      return ir::MappedRegion{"", name, s};
    };
    ir::MappedRegion a = region(u, Expr(m), Expr(c)),
                     b = region(v, Expr(c), columns),
                     out = region(p, Expr(m), columns);
    a.connector = "A";
    b.connector = "B";
    out.connector = "C";
    // Sixteen independent products, each small: the map runs them in
    // parallel, one whole product per thread at a time (codegen/lower).
    ir::MappedTaskletIds ids =
        ctx.addPrimitive("winograd_gemm", {"k"}, {{Expr(0), Expr(16)}}, "gemm",
                         ir::gemmAttributes(call), {a, b}, {out});
    ctx.state().findNode(ids.entry)->map().schedule = ir::Schedule::CpuParallel;
  }

  // Output tiles: Aᵀ P A (+ bias) into Y, or a tile-rounded copy of it.
  bool whole = 2 * th == oh && 2 * tw == ow;
  std::string target =
      whole ? y.name
            : ctx.addTransient("winograd_rounded", y.dtype,
                               {images, Expr(m), Expr(2 * th), Expr(2 * tw)});
  // One map per output position (i, j) of the 2×2 tile: nine products
  // with signs, plus the bias.
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      Expr mo = Expr::symbol("m");
      std::vector<ir::MappedInput> in;
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
          if (kAt[i][a] * kAt[j][b] != 0)
            in.push_back({at("p", a, b), p, {Expr(a * 4 + b), mo, column}});
      std::string code = signedSum("t", "p", kAt[i], kAt[j]);
      if (bias) {
        in.push_back({"b", bias->name, {mo}});
        code += "\ny = t + b";
      } else {
        code += "\ny = t";
      }
      ctx.addMap(
          at("winograd_output_", i, j), {"n", "m", "ty", "tx"},
          {{Expr(0), images}, {Expr(0), Expr(m)}, tileRanges[0], tileRanges[1]},
          in, code,
          {{"y",
            target,
            {n, mo, ty * Expr(2) + Expr(i), tx * Expr(2) + Expr(j)}}});
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
