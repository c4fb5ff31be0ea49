#pragma once
/// \file
/// `expand-all`: every library node that can be expanded is, with the
/// implementation chosen per op (or the op's default, falling back to its
/// other implementations where the default does not apply).

#include "transforms/transformation.h"

#include <map>
#include <string>

namespace weir::transforms {

class ExpandAll : public Transformation {
public:
  std::string_view id() const override { return "expand-all"; }
  Tier tier() const override { return Tier::Expansion; }
  std::string_view summary() const override {
    return "Expand every operator with its default (or chosen) implementation";
  }
  std::string_view description() const override;
  std::vector<ParamSpec> params() const override;
  Exactness exactness() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

/// "Conv=direct,MatMul=pure" as a map; throws weir::Error naming a bad item.
std::map<std::string, std::string> parseImplementationChoice(const std::string &text);

} // namespace weir::transforms
