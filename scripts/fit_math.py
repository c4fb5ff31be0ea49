#!/usr/bin/python3
"""Coefficients of the f32 exp and erf that the CPU backend inlines
(codegen/cpu/llvm_math.cpp), and their error, emulated in float32.

exp(x) = 2^k · e^r, k = round(x / ln 2), r = x - k·ln 2 (two-part ln 2):
e^r is Taylor's polynomial of degree 7 (|r| <= ln 2 / 2, remainder < 1e-8).
erf(x) for |x| < 1 is x · P(x²) and for 1 <= |x| < 4 is Q(|x| - 2.5) with
the sign of x; at |x| >= 4 it is ±1 (erf(4) rounds to 1 in f32). P and Q are
least-squares fits on Chebyshev nodes (P of erf(x)/x, so its error is
relative). Run: /usr/bin/python3 scripts/fit_math.py
"""
import math
import numpy as np

f32 = np.float32
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4


def horner(coefs, t):
    p = np.full_like(t, f32(coefs[0]))
    for c in coefs[1:]:
        p = (p * t + f32(c)).astype(f32)
    return p


def nodes(lo, hi, n=4000):
    return (np.cos(np.linspace(0, np.pi, n)) * 0.5 + 0.5) * (hi - lo) + lo


def ulps(got, want):
    return np.max(np.abs(got.astype(np.float64) - want) /
                  np.spacing(np.abs(want).astype(f32)).astype(np.float64))


def main():
    erf = np.vectorize(math.erf)
    taylor = [1.0 / math.factorial(k) for k in range(7, -1, -1)]
    x = np.linspace(-87, 88, 400001).astype(f32)
    k = np.round(x * f32(1.4426950408889634)).astype(f32)
    r = (x - k * f32(LN2_HI)).astype(f32)
    r = (r - k * f32(LN2_LO)).astype(f32)
    y = horner(taylor, r) * np.exp2(k.astype(np.float64))
    print("exp: max error %.2f ulp on [-87, 88]" % ulps(y.astype(f32), np.exp(x.astype(np.float64))))

    t = nodes(1e-9, 1.0)
    p = np.polyfit(t * t, erf(t) / t, 5)
    t = nodes(1.0, 4.0)
    q = np.polyfit(t - 2.5, erf(t), 12)
    xs = np.linspace(1e-6, 1, 200001).astype(f32)
    small = (horner(p, (xs * xs).astype(f32)) * xs).astype(f32)
    xl = np.linspace(1, 4, 300001).astype(f32)
    large = np.minimum(horner(q, (xl - f32(2.5)).astype(f32)), f32(1))
    print("erf: max error %.2f ulp on [0, 1), %.2f ulp on [1, 4)" %
          (ulps(small, erf(xs.astype(np.float64))), ulps(large, erf(xl.astype(np.float64)))))
    for name, c in (("kErfSmall", p), ("kErfLarge", q)):
        print("constexpr float %s[%d] = {" % (name, len(c)))
        print(",\n".join("    %.9ef" % f32(v) for v in c) + "};")


if __name__ == "__main__":
    main()
