/// \file
/// Tensor primitive contracts (see the header).

#include "ir/primitives.h"

#include "ir/error.h"
#include "ir/program.h"
#include "ir/tasklet.h"

#include <algorithm>

namespace weir::ir {

bool isGemmReservedName(std::string_view name) {
  return name == "A" || name == "B" || name == "Cin" || name == "C" ||
         name == "acc";
}

Attributes gemmAttributes(const GemmCall &c) {
  Attributes a{{"M", c.m.str()},
          {"N", c.n.str()},
          {"K", c.k.str()},
          {"lda", c.lda.str()},
          {"ldb", c.ldb.str()},
          {"ldc", c.ldc.str()},
          {"transA", std::int64_t(c.transA)},
          {"transB", std::int64_t(c.transB)},
          {"alpha", c.alpha},
          {"beta", c.beta}};
  if (!c.epilogue.empty())
    a["epilogue"] = c.epilogue;
  for (const GemmOperand &o : c.operands) {
    a[o.connector + ".row"] = o.row.str();
    a[o.connector + ".col"] = o.col.str();
  }
  return a;
}

GemmCall readGemm(const PrimitiveData &p) {
  auto find = [&](const char *name) -> const AttributeValue & {
    auto it = p.attributes.find(name);
    if (it == p.attributes.end())
      throw Error("gemm primitive: attribute '" + std::string(name) +
                  "' is missing");
    return it->second;
  };
  auto expr = [&](const std::string &name) {
    const auto *text = std::get_if<std::string>(&find(name.c_str()));
    if (!text)
      throw Error("gemm primitive: attribute '" + name +
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
  if (auto it = p.attributes.find("epilogue"); it != p.attributes.end()) {
    const auto *code = std::get_if<std::string>(&it->second);
    if (!code)
      throw Error("gemm primitive: attribute 'epilogue' must be tasklet code "
                  "written as a string");
    c.epilogue = *code;
  }
  // Operands in connector-name order (attributes are a sorted map).
  for (const auto &[key, value] : p.attributes) {
    if (!key.ends_with(".row"))
      continue;
    std::string conn = key.substr(0, key.size() - 4);
    if (isGemmReservedName(conn))
      throw Error("gemm primitive: '" + conn +
                  "' cannot be an epilogue operand (the name is reserved)");
    c.operands.push_back({conn, expr(key), expr(conn + ".col")});
  }
  if (!c.operands.empty() && c.epilogue.empty())
    throw Error("gemm primitive: epilogue operands without an 'epilogue'");
  return c;
}

std::shared_ptr<const tasklet::Code>
gemmEpilogue(const GemmCall &call, const std::vector<Connector> &inputs) {
  if (call.epilogue.empty())
    return nullptr;
  tasklet::ConnectorTypes in{{"acc", DType::F32}};
  for (const GemmOperand &o : call.operands) {
    auto c = std::find_if(inputs.begin(), inputs.end(), [&](const Connector &c) {
      return c.name == o.connector;
    });
    if (c == inputs.end())
      throw Error("gemm epilogue: operand '" + o.connector +
                  "' is not an input connector");
    in[o.connector] = c->dtype;
  }
  for (const Connector &c : inputs)
    if (!in.count(c.name) && c.name != "A" && c.name != "B" && c.name != "Cin")
      throw Error("gemm epilogue: input connector '" + c.name +
                  "' has no '" + c.name + ".row' and '" + c.name +
                  ".col' strides");
  auto code = std::make_shared<tasklet::Code>(tasklet::parse(call.epilogue));
  std::vector<tasklet::TypeIssue> issues =
      tasklet::typeCheck(*code, in, {{"C", DType::F32}});
  if (!issues.empty())
    throw Error("gemm epilogue: " + issues[0].message);
  return code;
}

} // namespace weir::ir
