/// \file
/// `expand-all`: every library node that can be expanded is, with the
/// implementation chosen per op (or the op's default, falling back to its
/// other implementations where the default does not apply).

#include "transforms/expansion/expand_all.h"

#include "ir/error.h"
#include "transforms/operators/expansion.h"
#include "transforms/registry.h"

#include <algorithm>
#include <vector>

namespace weir::transforms {

std::map<std::string, std::string>
parseImplementationChoice(const std::string &text) {
  std::map<std::string, std::string> out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(at, end - at);
    std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw Error("implementation choice '" + item + "' is not OP=IMPL");
    std::string op = item.substr(0, eq), impl = item.substr(eq + 1);
    bool known = false;
    for (const operators::Implementation *i : operators::implementationsOf(op))
      known = known || i->name == impl;
    if (!known)
      throw Error("implementation choice '" + item + "': " + op +
                  " has no implementation '" + impl + "'");
    out[op] = impl;
    at = end + 1;
  }
  return out;
}

namespace {

class ExpandAll : public Transformation {
public:
  ExpandAll();
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace

ExpandAll::ExpandAll()
    : Transformation({
          .id = "expand-all",
          .tier = Tier::Expansion,
          .summary = "Expand every operator with its default (or chosen) "
                     "implementation",
          .description =
              "The whole program at once: each library node becomes the "
              "implementation the `implementations` parameter names for its op "
              "(\"Conv=direct,MatMul=pure\"), or else the op's documented "
              "default, or else the first of its other implementations that "
              "applies. Nodes no implementation can handle stay library nodes "
              "and are reported. Implementations sum in their own orders, so "
              "results agree within rounding.",
          .params =
              {{"implementations", ParamSpec::Kind::String, std::string(),
                "per-op choices, \"Op=impl,Op=impl\"; empty = the defaults"}},
          .exactness = {false, 1e-3, 1e-4},
      }) {}

CheckResult ExpandAll::check(const ir::Program &program, const Match &,
                             const Params &params) const {
  parseImplementationChoice(stringParam(params, "implementations"));
  for (const ir::State &s : program.states)
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Library && !n.library().unknown &&
          !operators::implementationsOf(n.library().op).empty())
        return CheckResult::success();
  return CheckResult::failure("the program has no expandable operator left");
}

ApplyResult ExpandAll::apply(const ir::Program &program, const Match &,
                             const Params &params) const {
  ApplyResult r{program, {}};
  operators::ExpandAllReport report = operators::expandAll(
      r.program,
      parseImplementationChoice(stringParam(params, "implementations")));
  if (report.expanded == 0)
    throw Error("no operator could be expanded: " +
                (report.skipped.empty() ? std::string("none left")
                                        : report.skipped.front()));
  // Expanded library nodes are gone; everything else keeps its id.
  std::vector<ir::NodeId> now;
  for (const ir::State &s : r.program.states)
    for (const ir::Node &n : s.nodes)
      now.push_back(n.id);
  std::sort(now.begin(), now.end());
  for (const ir::State &s : program.states)
    for (const ir::Node &n : s.nodes)
      if (!std::binary_search(now.begin(), now.end(), n.id))
        r.idMap.erase(n.id);
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<ExpandAll>()};

} // namespace weir::transforms
