/// \file
/// The tasklet language's f32 exp and erf, pow(x, 2) and hash as LLVM IR: the
/// operations of ir/tasklet_math.h in the same order (no fast-math flags,
/// so nothing is contracted or reassociated), giving the interpreter's
/// results bit for bit. Plain arithmetic, compares and selects: the loop
/// vectorizer widens it, where it could not widen a call to libm.

#include "codegen/cpu/emitter.h"
#include "ir/tasklet_math.h"

namespace weir::codegen::cpu::detail {

llvm::Value *Emitter::horner(const float *coefs, int count, llvm::Value *t) {
  llvm::Value *p = llvm::ConstantFP::get(t->getType(), coefs[0]);
  for (int i = 1; i < count; ++i)
    p = b_.CreateFAdd(b_.CreateFMul(p, t),
                      llvm::ConstantFP::get(t->getType(), coefs[i]));
  return p;
}

llvm::Value *Emitter::expF32(llvm::Value *x) {
  llvm::Type *f = x->getType();
  auto constant = [&](float v) { return llvm::ConstantFP::get(f, v); };
  llvm::Value *low = constant(weir_math::kExpLow);
  llvm::Value *c = b_.CreateSelect(
      b_.CreateFCmpOLT(x, low), low,
      b_.CreateSelect(b_.CreateFCmpOGT(x, constant(weir_math::kExpHigh)),
                      constant(weir_math::kExpHigh), x));
  llvm::Value *k = intrinsic(llvm::Intrinsic::roundeven,
                             b_.CreateFMul(c, constant(weir_math::kExpLog2e)));
  llvm::Value *r =
      b_.CreateFSub(c, b_.CreateFMul(k, constant(weir_math::kExpLn2Hi)));
  r = b_.CreateFSub(r, b_.CreateFMul(k, constant(weir_math::kExpLn2Lo)));
  llvm::Value *p = horner(weir_math::kExpTaylor,
                          int(std::size(weir_math::kExpTaylor)), r);
  llvm::Value *n = b_.CreateFPToSI(k, b_.getInt32Ty());
  llvm::Value *half = b_.CreateSDiv(n, b_.getInt32(2));
  auto exp2Int = [&](llvm::Value *e) {
    return b_.CreateBitCast(
        b_.CreateShl(b_.CreateAdd(e, b_.getInt32(127)), b_.getInt32(23)), f);
  };
  llvm::Value *y = b_.CreateFMul(b_.CreateFMul(p, exp2Int(half)),
                                 exp2Int(b_.CreateSub(n, half)));
  y = b_.CreateSelect(b_.CreateFCmpOLT(x, low), constant(0.0f), y);
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, y);
}

llvm::Value *Emitter::erfF32(llvm::Value *x) {
  llvm::Type *f = x->getType();
  auto constant = [&](float v) { return llvm::ConstantFP::get(f, v); };
  llvm::Value *a = intrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value *small =
      b_.CreateFMul(x, horner(weir_math::kErfSmall,
                              int(std::size(weir_math::kErfSmall)),
                              b_.CreateFMul(x, x)));
  llvm::Value *end = constant(weir_math::kErfLargeEnd);
  llvm::Value *inside = b_.CreateFCmpOLT(a, end);
  llvm::Value *q = horner(
      weir_math::kErfLarge, int(std::size(weir_math::kErfLarge)),
      b_.CreateFSub(b_.CreateSelect(inside, a, end),
                    constant(weir_math::kErfLargeCentre)));
  llvm::Value *one = constant(1.0f);
  q = b_.CreateSelect(
      inside, b_.CreateSelect(b_.CreateFCmpOLT(q, one), q, one), one);
  llvm::Value *large = intrinsic(llvm::Intrinsic::copysign, q, x);
  llvm::Value *y = b_.CreateSelect(
      b_.CreateFCmpOLT(a, constant(weir_math::kErfSmallEnd)), small, large);
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, y);
}

llvm::Value *Emitter::powValue(DType t, llvm::Value *x, llvm::Value *y) {
  // With a constant exponent of 2 (a folded scalar constant) the select
  // folds and the unused call goes away: libm calls do not touch memory.
  llvm::Value *two = llvm::ConstantFP::get(x->getType(), 2.0);
  return b_.CreateSelect(b_.CreateFCmpOEQ(y, two), b_.CreateFMul(x, x),
                         libm("pow", t, x, y));
}

llvm::Value *Emitter::splitMix(llvm::Value *seed, llvm::Value *counter) {
  auto constant = [&](std::uint64_t v) {
    return llvm::ConstantInt::get(seed->getType(), v);
  };
  // Wrapping arithmetic: no nsw/nuw flags.
  llvm::Value *z = b_.CreateAdd(
      seed, b_.CreateMul(b_.CreateAdd(counter, constant(1)),
                         constant(weir_math::kSplitMixGamma)));
  auto mix = [&](llvm::Value *v, unsigned shift, std::uint64_t mul) {
    return b_.CreateMul(b_.CreateXor(v, b_.CreateLShr(v, shift)),
                        constant(mul));
  };
  z = mix(z, 30, weir_math::kSplitMixMul1);
  z = mix(z, 27, weir_math::kSplitMixMul2);
  return b_.CreateXor(z, b_.CreateLShr(z, 31));
}

} // namespace weir::codegen::cpu::detail
