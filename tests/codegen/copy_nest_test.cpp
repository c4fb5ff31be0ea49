/// \file
/// Copy nests (codegen/cpu/copy_nest.h) and the runtime's strided copy they
/// compile to (codegen/cpu/strided_copy.h): which loop nests are copies,
/// that the copy moves exactly the elements the loops would, and that the
/// CPU backend calls it only where nothing else could see the difference.
/// Also: pieces that differ only in names compile once (piece_compiler.h).

#include "codegen/cpu/copy_nest.h"
#include "codegen/cpu/piece_compiler.h"
#include "codegen/cpu/pieces.h"
#include "codegen/cpu/strided_copy.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace weir {
namespace {

using codegen::ForKind;
using codegen::StmtPtr;
using codegen::cpu::copyNest;
using ir::DType;
using ir::Expr;

Expr sym(const char *name) { return Expr::symbol(name); }

/// for i in 0:rows { for j in 0:cols { t = src[i*srcRow + j];
/// dst[i*dstRow + j + offset] = t } }
StmtPtr copy2d(const std::string &src, const std::string &dst,
               std::int64_t rows, std::int64_t cols, Expr srcRow, Expr dstRow,
               Expr offset, const std::string &local = "t") {
  Expr i = sym("i"), j = sym("j");
  DType t = DType::F32;
  return codegen::forLoop(
      "i", 0, rows, 1, ForKind::Serial,
      {codegen::forLoop(
          "j", 0, cols, 1, ForKind::Vectorized,
          {codegen::assign(local, codegen::load(t, src, i * srcRow + j)),
           codegen::store(dst, i * dstRow + j + offset,
                          codegen::local(t, local))},
          "/c/Concat.copy")},
      "/c/Concat.copy");
}

TEST(CopyNest, RecognizesAConcatCopy) {
  std::optional<codegen::cpu::CopyNest> c =
      copyNest(*copy2d("x", "y", 4, 6, 6, 10, 3));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->src, "x");
  EXPECT_EQ(c->dst, "y");
  EXPECT_EQ(c->dtype, DType::F32);
  EXPECT_EQ(c->srcOffset, Expr(0));
  EXPECT_EQ(c->dstOffset, Expr(3));
  ASSERT_EQ(c->dims.size(), 2u);
  EXPECT_EQ(c->dims[0].extent, Expr(4));
  EXPECT_EQ(c->dims[0].srcStride, Expr(6));
  EXPECT_EQ(c->dims[0].dstStride, Expr(10));
  EXPECT_EQ(c->dims[1].extent, Expr(6));
  EXPECT_EQ(c->dims[1].srcStride, Expr(1));
  EXPECT_EQ(c->dims[1].dstStride, Expr(1));
  ASSERT_EQ(c->localReads.size(), 1u);
  EXPECT_EQ(c->localReads[0], (std::pair<std::string, int>{"t", 1}));
}

TEST(CopyNest, KeepsSymbolsAndOuterVariablesInStridesAndOffsets) {
  // Inside a parallel loop over n, with a symbolic row length: the nest's
  // offsets hold n, its strides W.
  Expr n = sym("n"), w = sym("W");
  std::optional<codegen::cpu::CopyNest> c =
      copyNest(*copy2d("x", "y", 3, 5, w, w * 2, n * 7 + 1));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->dstOffset, n * 7 + 1);
  EXPECT_EQ(c->dims[0].srcStride, w);
  EXPECT_EQ(c->dims[0].dstStride, w * 2);
}

TEST(CopyNest, RefusesWhatIsNotAPlainCopy) {
  Expr i = sym("i"), j = sym("j");
  auto nest = [&](std::vector<StmtPtr> body, ForKind kind = ForKind::Serial,
                  Expr step = 1, Expr innerEnd = 6) {
    return codegen::forLoop(
        "i", 0, 4, step, kind,
        {codegen::forLoop("j", 0, innerEnd, 1, ForKind::Serial,
                          std::move(body))});
  };
  auto copyBody = [&](Expr srcIndex, Expr dstIndex, DType t = DType::F32,
                      const std::string &dst = "y") {
    return std::vector<StmtPtr>{
        codegen::assign("t", codegen::load(t, "x", srcIndex)),
        codegen::store(dst, dstIndex, codegen::local(t, "t"))};
  };
  EXPECT_TRUE(copyNest(*nest(copyBody(i * 6 + j, i * 6 + j))));
  // In place: the loops' order would matter.
  EXPECT_FALSE(copyNest(*nest({codegen::store(
      "x", i * 6 + j + 1, codegen::load(DType::F32, "x", i * 6 + j))})));
  // A strided innermost loop (faster as vectorized loops).
  EXPECT_FALSE(copyNest(*nest(copyBody(i * 12 + j * 2, i * 6 + j))));
  EXPECT_FALSE(copyNest(*nest(copyBody(i * 6 + j, j * 4 + i))));
  EXPECT_TRUE(copyNest(*nest(copyBody(j + i * 8, i * 6 + j + 2))));
  // Not affine.
  EXPECT_FALSE(copyNest(*nest(copyBody(floorDiv(i * 6 + j, 2), i * 6 + j))));
  EXPECT_FALSE(copyNest(*nest(copyBody(i * j, i * 6 + j))));
  // Types whose load and store do not move bits unchanged.
  EXPECT_FALSE(copyNest(*nest(copyBody(i * 6 + j, i * 6 + j, DType::BF16))));
  EXPECT_FALSE(copyNest(*nest(copyBody(i * 6 + j, i * 6 + j, DType::Bool))));
  EXPECT_TRUE(copyNest(*nest(copyBody(i * 6 + j, i * 6 + j, DType::I64))));
  // A parallel loop, a step, a triangular bound.
  EXPECT_FALSE(
      copyNest(*nest(copyBody(i * 6 + j, i * 6 + j), ForKind::Parallel)));
  EXPECT_FALSE(
      copyNest(*nest(copyBody(i * 6 + j, i * 6 + j), ForKind::Serial, 2)));
  EXPECT_FALSE(copyNest(
      *nest(copyBody(i * 6 + j, i * 6 + j), ForKind::Serial, 1, i + 1)));
  // A value computed, converted, or guarded.
  EXPECT_FALSE(copyNest(*nest({codegen::store(
      "y", i * 6 + j,
      codegen::unary(ir::tasklet::UnaryOp::Neg,
                     codegen::load(DType::F32, "x", i * 6 + j)))})));
  EXPECT_FALSE(copyNest(*nest({codegen::store(
      "y", i * 6 + j,
      codegen::cast(DType::F64, codegen::load(DType::F32, "x", i * 6 + j)))})));
  auto guard = std::make_shared<codegen::BoundsGuard>();
  guard->what = "x";
  EXPECT_FALSE(copyNest(*nest({codegen::store(
      "y", i * 6 + j, codegen::load(DType::F32, "x", i * 6 + j, guard))})));
  // A local assigned that is not on the way to the store.
  std::vector<StmtPtr> extra = copyBody(i * 6 + j, i * 6 + j);
  extra.insert(extra.begin(),
               codegen::assign("u", codegen::load(DType::F32, "x", i)));
  EXPECT_FALSE(copyNest(*nest(extra)));
  // Two stores.
  std::vector<StmtPtr> two = copyBody(i * 6 + j, i * 6 + j);
  two.push_back(codegen::store("z", i, codegen::local(DType::F32, "t")));
  EXPECT_FALSE(copyNest(*nest(two)));
}

// ------------------------------------------------------ the strided copy --

/// What the loops do, element by element.
void naiveCopy(std::vector<std::int32_t> &dst,
               const std::vector<std::int32_t> &src,
               const std::vector<std::int64_t> &dims, std::int64_t dstOffset,
               std::int64_t srcOffset) {
  std::size_t rank = dims.size() / 3;
  std::vector<std::int64_t> i(rank, 0);
  for (std::size_t k = 0; k < rank; ++k)
    if (dims[3 * k] <= 0)
      return;
  for (;;) {
    std::int64_t d = dstOffset, s = srcOffset;
    for (std::size_t k = 0; k < rank; ++k) {
      d += i[k] * dims[3 * k + 1];
      s += i[k] * dims[3 * k + 2];
    }
    dst[static_cast<std::size_t>(d)] = src[static_cast<std::size_t>(s)];
    std::size_t k = rank;
    while (k > 0 && ++i[k - 1] == dims[3 * (k - 1)])
      i[--k] = 0;
    if (k == 0)
      return;
  }
}

TEST(StridedCopy, MovesExactlyTheElementsTheLoopsWould) {
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 500; ++trial) {
    // A box of 1 to 5 dimensions inside larger arrays, each side with its
    // own layout: contiguous (the strides of its own box), padded, or
    // permuted, so that some dimensions merge and some do not.
    std::size_t rank = static_cast<std::size_t>(pick(1, 5));
    std::vector<std::int64_t> extent(rank);
    for (auto &e : extent)
      e = pick(0, 9) == 0 ? 1 : pick(1, 5);
    if (pick(0, 30) == 0)
      extent[static_cast<std::size_t>(pick(0, static_cast<int>(rank) - 1))] = 0;
    auto layout = [&](std::vector<std::int64_t> &stride) {
      std::vector<std::size_t> order(rank);
      std::iota(order.begin(), order.end(), 0);
      if (pick(0, 2) == 0)
        std::shuffle(order.begin(), order.end(), rng);
      std::int64_t s = 1;
      stride.assign(rank, 0);
      for (std::size_t k = rank; k-- > 0;) {
        std::size_t d = order[k];
        stride[d] = s;
        s *= std::max<std::int64_t>(extent[d], 1) + (pick(0, 3) == 0 ? 2 : 0);
      }
      return s;
    };
    std::vector<std::int64_t> dstStride, srcStride;
    std::int64_t dstSize = layout(dstStride) + 7,
                 srcSize = layout(srcStride) + 5;
    std::vector<std::int64_t> dims;
    for (std::size_t k = 0; k < rank; ++k)
      dims.insert(dims.end(), {extent[k], dstStride[k], srcStride[k]});
    std::vector<std::int32_t> src(static_cast<std::size_t>(srcSize));
    std::iota(src.begin(), src.end(), 1);
    std::vector<std::int32_t> want(static_cast<std::size_t>(dstSize), -1),
        got = want;
    naiveCopy(want, src, dims, 7, 5);
    codegen::cpu::stridedCopy(got.data() + 7, src.data() + 5, 4,
                              static_cast<std::int64_t>(rank), dims.data());
    ASSERT_EQ(got, want) << "trial " << trial;
  }
}

// --------------------------------------------- in the compiled pieces --

codegen::LoopFunction function(std::vector<StmtPtr> body,
                               std::vector<std::string> outputs = {"y"}) {
  codegen::LoopFunction f;
  f.name = "f";
  f.buffers.push_back(
      {"x", DType::F32, {24}, codegen::BufferParam::Role::Input, false});
  for (const std::string &o : outputs)
    f.buffers.push_back(
        {o, DType::F32, {40}, codegen::BufferParam::Role::Output, true});
  f.body = codegen::block(std::move(body));
  return f;
}

/// `s` inside a loop that runs once and also writes `out`[39]: no copy
/// nest itself, so it is a piece (a top-level copy nest is a driver step).
StmtPtr inPiece(StmtPtr s, const std::string &out = "y") {
  return codegen::forLoop(
      "once", 0, 1, 1, ForKind::Serial,
      {std::move(s),
       codegen::store(out, 39, codegen::floatLiteral(DType::F32, 1))});
}

std::vector<codegen::cpu::CompiledPiece>
compile(const codegen::LoopFunction &f, bool keepIR) {
  codegen::cpu::PieceCompileOptions o;
  o.keepIR = keepIR;
  return codegen::cpu::compilePieces(codegen::cpu::cutIntoPieces(f).pieces, o);
}

TEST(CopyNestCode, ACopyNestIsOneCallUnlessItsLocalIsReadElsewhere) {
  StmtPtr copy = copy2d("x", "y", 4, 6, 6, 10, 3);
  std::vector<codegen::cpu::CompiledPiece> pieces =
      compile(function({inPiece(copy)}), true);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_NE(pieces[0].llvmIR.find("@weir_copy"), std::string::npos);
  // The same nest, then its local read again after it (in the same
  // piece): the loops stay, so the read sees what they left.
  StmtPtr after = codegen::store("y", 39, codegen::local(DType::F32, "t"));
  pieces = compile(function({inPiece(codegen::block({copy, after}))}), true);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].llvmIR.find("@weir_copy"), std::string::npos);
}

TEST(PieceCompiler, PiecesThatDifferOnlyInNamesCompileOnce) {
  // Two nodes' nests over differently named buffers and locals, the same
  // code.
  codegen::LoopFunction f = function(
      {copy2d("x", "y", 4, 6, 6, 10, 3, "t1"),
       copy2d("x", "z", 4, 6, 6, 10, 3, "t2")},
      {"y", "z"});
  auto relabel = [](StmtPtr s, const char *label) {
    auto copy = std::make_shared<codegen::Stmt>(*s);
    copy->label = label;
    return StmtPtr(copy);
  };
  f.body = codegen::block({relabel(inPiece(f.body->body[0]), "/a/A.copy"),
                           relabel(inPiece(f.body->body[1], "z"), "/b/B.copy")});
  std::vector<codegen::cpu::CompiledPiece> pieces = compile(f, false);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].symbol, pieces[1].symbol);
  EXPECT_NE(pieces[0].shared, pieces[1].shared);
  EXPECT_EQ(pieces[0].object, pieces[1].object);
  EXPECT_FALSE(pieces[0].object.empty());
  // Keeping the IR keeps the names (the GUI maps blocks to nodes by them):
  // then each piece is its own.
  pieces = compile(f, true);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_NE(pieces[0].symbol, pieces[1].symbol);
  EXPECT_FALSE(pieces[0].shared || pieces[1].shared);
}

} // namespace
} // namespace weir
