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
/// Each map writes one element per iteration (the transform's row and
/// column are map parameters): an element of Bᵀ d B is two rows of d with
/// signs, each two columns with signs, the rows min(a, 1) and 2 + a / 3;
/// an element of Aᵀ P A is rows i..i+2 and columns j..j+2 of P, with the
/// signs 1 and 1 - 2i (1 - 2j) past the first. The signs come from small
/// constant tables, so the tasklets stay plain arithmetic.
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

/// Bᵀ's rows as two signed entries: row a is s1·d[min(a, 1)] +
/// s2·d[2 + a / 3], with (s1, s2) below.
constexpr float kInputSigns[4][2] = {{1, -1}, {1, 1}, {-1, 1}, {1, -1}};
/// Aᵀ's rows: row i is d[i] + s·d[i + 1] + s·d[i + 2], s below.
constexpr float kOutputSigns[2] = {1, -1};

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

  // Input tiles: [n, c, a, b, ty, tx] -> V[a, b, c, n·tiles + ty·tw + tx],
  // four input elements with signs (c outside a and b, so one channel's
  // plane is read sixteen times while it is in cache).
  {
    std::string signs = ctx.addConstant(
        "winograd_input_signs", f32Table({4, 2}, &kInputSigns[0][0], 8));
    Expr ch = Expr::symbol("c"), a = Expr::symbol("a"), b = Expr::symbol("b");
    Expr rows[2] = {ir::min(a, Expr(1)), Expr(2) + ir::floorDiv(a, Expr(3))};
    Expr cols[2] = {ir::min(b, Expr(1)), Expr(2) + ir::floorDiv(b, Expr(3))};
    std::vector<ir::MappedInput> in{{"sa1", signs, {a, Expr(0)}},
                                    {"sa2", signs, {a, Expr(1)}},
                                    {"sb1", signs, {b, Expr(0)}},
                                    {"sb2", signs, {b, Expr(1)}}};
    for (int r = 0; r < 2; ++r)
      for (int q = 0; q < 2; ++q)
        in.push_back({"d" + std::to_string(r + 1) + std::to_string(q + 1),
                      source,
                      {n, ch, ty * Expr(2) + rows[r], tx * Expr(2) + cols[q]}});
    ctx.addMap(
        "winograd_input", {"n", "c", "a", "b", "ty", "tx"},
        {{Expr(0), images},
         {Expr(0), Expr(c)},
         {Expr(0), Expr(4)},
         {Expr(0), Expr(4)},
         tileRanges[0],
         tileRanges[1]},
        in, "v = sa1 * (sb1 * d11 + sb2 * d12) + sa2 * (sb1 * d21 + sb2 * d22)",
        {{"v", v, {a, b, ch, column}}});
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
  // [n, m, i, j, ty, tx]: rows i..i+2 and columns j..j+2 of the products
  // with signs, plus the bias.
  {
    std::string signs = ctx.addConstant("winograd_output_signs",
                                        f32Table({2}, kOutputSigns, 2));
    Expr mo = Expr::symbol("m"), i = Expr::symbol("i"), j = Expr::symbol("j");
    std::vector<ir::MappedInput> in{{"si", signs, {i}}, {"sj", signs, {j}}};
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q)
        in.push_back({"p" + std::to_string(r) + std::to_string(q),
                      p,
                      {i + Expr(r), j + Expr(q), mo, column}});
    std::string code = "r0 = p00 + sj * p01 + sj * p02\n"
                       "r1 = p10 + sj * p11 + sj * p12\n"
                       "r2 = p20 + sj * p21 + sj * p22\n"
                       "y = r0 + si * r1 + si * r2";
    if (bias) {
      in.push_back({"bias", bias->name, {mo}});
      code += " + bias";
    }
    ctx.addMap("winograd_output", {"n", "m", "i", "j", "ty", "tx"},
               {{Expr(0), images},
                {Expr(0), Expr(m)},
                {Expr(0), Expr(2)},
                {Expr(0), Expr(2)},
                tileRanges[0],
                tileRanges[1]},
               in, code,
               {{"y", target, {n, mo, ty * Expr(2) + i, tx * Expr(2) + j}}});
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
