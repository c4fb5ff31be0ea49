/// \file
/// Tensor primitive contracts (see the header).

#include "ir/primitives.h"

#include "ir/error.h"
#include "ir/program.h"

namespace weir::ir {

Attributes gemmAttributes(const GemmCall &c) {
  return {{"M", c.m.str()},
          {"N", c.n.str()},
          {"K", c.k.str()},
          {"lda", c.lda.str()},
          {"ldb", c.ldb.str()},
          {"ldc", c.ldc.str()},
          {"transA", std::int64_t(c.transA)},
          {"transB", std::int64_t(c.transB)},
          {"alpha", c.alpha},
          {"beta", c.beta}};
}

GemmCall readGemm(const PrimitiveData &p) {
  auto find = [&](const char *name) -> const AttributeValue & {
    auto it = p.attributes.find(name);
    if (it == p.attributes.end())
      throw Error("gemm primitive: attribute '" + std::string(name) +
                  "' is missing");
    return it->second;
  };
  auto expr = [&](const char *name) {
    const auto *text = std::get_if<std::string>(&find(name));
    if (!text)
      throw Error("gemm primitive: attribute '" + std::string(name) +
                  "' must be an expression written as a string");
    return parseExpr(*text);
  };
  auto integer = [&](const char *name) {
    const auto *v = std::get_if<std::int64_t>(&find(name));
    if (!v)
      throw Error("gemm primitive: attribute '" + std::string(name) +
                  "' must be an integer");
    return *v;
  };
  auto real = [&](const char *name) {
    const AttributeValue &v = find(name);
    if (const auto *d = std::get_if<double>(&v))
      return *d;
    if (const auto *i = std::get_if<std::int64_t>(&v))
      return static_cast<double>(*i);
    throw Error("gemm primitive: attribute '" + std::string(name) +
                "' must be a number");
  };
  GemmCall c;
  c.m = expr("M");
  c.n = expr("N");
  c.k = expr("K");
  c.lda = expr("lda");
  c.ldb = expr("ldb");
  c.ldc = expr("ldc");
  c.transA = integer("transA") != 0;
  c.transB = integer("transB") != 0;
  c.alpha = real("alpha");
  c.beta = real("beta");
  return c;
}

} // namespace weir::ir
