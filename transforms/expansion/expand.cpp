#include "transforms/expansion/expand.h"

#include "ir/error.h"
#include "transforms/expansion/expansion.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

namespace weir::transforms {

std::string_view Expand::description() const {
  return "Operator expansion (tier 1). The library node is replaced by one of "
         "its operator's implementations: `pure` builds maps, tasklets and "
         "memlets, so every byte the operator moves becomes an edge later "
         "tiers can fuse, tile or tensorize; `blas` and `im2col` call a tuned "
         "GEMM. With no implementation given the operator's documented "
         "default is used. Different implementations sum in different orders, "
         "so results agree within rounding.";
}

std::vector<ParamSpec> Expand::params() const {
  return {{"implementation", ParamSpec::Kind::String, std::string(),
           "implementation name (pure, blas, im2col, ...); empty = the op's "
           "default"}};
}

Exactness Expand::exactness() const { return {false, 1e-3, 1e-4}; }

const Pattern &Expand::pattern() const {
  static const Pattern p = Pattern().node(
      "node", ir::NodeKind::Library, {},
      [](const ir::Program &, const StateGraph &, const ir::Node &n) {
        return !n.library().unknown &&
               !expansion::implementationsOf(n.library().op).empty();
      });
  return p;
}

CheckResult Expand::check(const ir::Program &program, const Match &match,
                          const Params &params) const {
  ir::NodeId id = match.node("node");
  const std::string &impl = stringParam(params, "implementation");
  const ir::Node *node = stateNamed(program, match.state).findNode(id);
  if (!impl.empty()) {
    bool known = false;
    std::string names;
    for (const expansion::Implementation *i :
         expansion::implementationsOf(node->library().op)) {
      known = known || i->name == impl;
      names += (names.empty() ? "" : ", ") + i->name;
    }
    if (!known)
      return CheckResult::failure(node->library().op + " has no implementation '" +
                                      impl + "' (it has: " + names + ")",
                                  {id});
  }
  // The expanders decide applicability while building; a dry run on a copy
  // gives the exact reason without touching the program.
  ir::Program scratch = program;
  try {
    expansion::expandNode(scratch, id, impl);
  } catch (const Error &e) {
    return CheckResult::failure(e.what(), {id});
  }
  return CheckResult::success();
}

ApplyResult Expand::apply(const ir::Program &program, const Match &match,
                          const Params &params) const {
  ApplyResult r{program, identityIdMap(program)};
  ir::NodeId id = match.node("node");
  expansion::expandNode(r.program, id, stringParam(params, "implementation"));
  r.idMap.erase(id);
  return r;
}

static const TransformationRegistrar kRegister{std::make_shared<Expand>()};

} // namespace weir::transforms
