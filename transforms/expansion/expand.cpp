/// \file
/// `expand`: one library node becomes its chosen implementation (the op's
/// default when the `implementation` parameter is empty). See
/// expansion.h for the implementations themselves.

#include "ir/error.h"
#include "transforms/operators/expansion.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"
#include "transforms/transformation.h"

namespace weir::transforms {

namespace {

class Expand : public Transformation {
public:
  Expand();
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace

Expand::Expand()
    : Transformation({
          .id = "expand",
          .tier = Tier::Expansion,
          .summary = "Replace one operator by an implementation (maps and "
                     "tasklets, or a library call)",
          .description =
              "The library node is replaced by one of its operator's "
              "implementations: `pure` builds maps, tasklets and memlets, so "
              "every byte the operator moves becomes an edge later tiers can "
              "fuse, tile or tensorize; `blas` and `im2col` call a tuned GEMM. "
              "With no implementation given the operator's documented default "
              "is used. Different implementations sum in different orders, so "
              "results agree within rounding.",
          .params = {{"implementation", ParamSpec::Kind::String, std::string(),
                      "implementation name (pure, blas, im2col, ...); empty = "
                      "the op's default"}},
          .exactness = {false, 1e-3, 1e-4},
          .pattern = Pattern().node(
              "node", ir::NodeKind::Library, {},
              [](const ir::Program &, const StateGraph &, const ir::Node &n) {
                return !n.library().unknown &&
                       !operators::implementationsOf(n.library().op).empty();
              }),
      }) {}

CheckResult Expand::check(const ir::Program &program, const Match &match,
                          const Params &params) const {
  ir::NodeId id = match.node("node");
  const std::string &impl = stringParam(params, "implementation");
  const ir::Node *node = stateNamed(program, match.state).findNode(id);
  if (!impl.empty()) {
    bool known = false;
    std::string names;
    for (const operators::Implementation *i :
         operators::implementationsOf(node->library().op)) {
      known = known || i->name == impl;
      names += (names.empty() ? "" : ", ") + i->name;
    }
    if (!known)
      return CheckResult::failure(node->library().op +
                                      " has no implementation '" + impl +
                                      "' (it has: " + names + ")",
                                  {id});
  }
  // The expanders decide applicability while building; a dry run on a copy
  // gives the exact reason without touching the program.
  ir::Program scratch = program;
  try {
    operators::expandNode(scratch, id, impl);
  } catch (const Error &e) {
    return CheckResult::failure(e.what(), {id});
  }
  return CheckResult::success();
}

ApplyResult Expand::apply(const ir::Program &program, const Match &match,
                          const Params &params) const {
  ApplyResult r{program, {}};
  ir::NodeId id = match.node("node");
  operators::expandNode(r.program, id, stringParam(params, "implementation"));
  r.idMap.erase(id);
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<Expand>()};

} // namespace weir::transforms
