/// \file
/// `remove-identity`: an Identity, or a Dropout in inference mode, is
/// removed; its consumers read its input directly.

#include "ir/error.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"
#include "transforms/transformation.h"

#include <cstring>

namespace weir::transforms {

namespace {

/// A Dropout input that is absent or a constant false/zero.
bool trainingModeOff(const ir::Program &program, const ir::State &state,
                     ir::NodeId op) {
  std::string c = inputContainer(state, op, "training_mode");
  if (c.empty())
    return true;
  const ir::Container *t = program.findContainer(c);
  if (!t || !t->isConstant())
    return false;
  for (std::byte b : *t->constant)
    if (b != std::byte{0})
      return false;
  return true;
}

} // namespace

namespace {

class RemoveIdentity : public Transformation {
public:
  RemoveIdentity();
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace

RemoveIdentity::RemoveIdentity()
    : Transformation({
          .id = "remove-identity",
          .tier = Tier::Expansion,
          .summary = "Remove Identity and inference-mode Dropout operators",
          .description =
              "Exporters leave Identity nodes (PyTorch emits one per shared "
              "weight) and Dropout, which does nothing at inference. Each is a "
              "full copy of its input; removing it lets the consumers read the "
              "input directly. When the copy's output is a program output, the "
              "producer of the input writes that output instead. Exact: no "
              "value changes.",
          .pattern =
              Pattern()
                  .node("input", ir::NodeKind::Access)
                  .node("op", ir::NodeKind::Library, {"Identity", "Dropout"})
                  .node("output", ir::NodeKind::Access)
                  .edge("input", "op")
                  .edge("op", "output", std::string("output")),
      }) {}

CheckResult RemoveIdentity::check(const ir::Program &program,
                                  const Match &match, const Params &) const {
  const ir::State &state = stateNamed(program, match.state);
  ir::NodeId op = match.node("op");
  const ir::Node *node = state.findNode(op);
  const std::string &in =
      state.findNode(match.node("input"))->access().container;
  const std::string &out =
      state.findNode(match.node("output"))->access().container;
  if (inputContainer(state, op,
                     node->library().op == "Dropout" ? "data" : "input") != in)
    return CheckResult::failure("'" + in + "' is not the operator's data input",
                                {op});
  if (node->library().op == "Dropout") {
    if (!trainingModeOff(program, state, op))
      return CheckResult::failure(
          "Dropout's training_mode is not a constant false", {op});
    std::string mask = outputContainer(state, op, "mask");
    if (!mask.empty() &&
        (isArgument(program, mask) || containerUses(program, mask).reads > 0))
      return CheckResult::failure(
          "Dropout's mask output '" + mask + "' is used", {op});
  }
  const ir::Container &ci = program.container(in), &co = program.container(out);
  if (ci.dtype != co.dtype || ci.shape.size() != co.shape.size())
    return CheckResult::failure(
        "'" + in + "' and '" + out + "' differ in dtype or rank", {op});
  for (std::size_t i = 0; i < ci.shape.size(); ++i)
    if (!(ci.shape[i] == co.shape[i]))
      return CheckResult::failure(
          "'" + in + "' and '" + out + "' differ in shape", {op});
  ContainerUses outUses = containerUses(program, out);
  if (outUses.writes != 1)
    return CheckResult::failure("'" + out + "' is written " +
                                    std::to_string(outUses.writes) +
                                    " times; only the copy may write it",
                                {op});
  if (isArgument(program, out)) {
    // The producer of `in` must write `out` instead, so `in` must be a
    // plain transient written in this program.
    if (isArgument(program, in) || ci.isConstant() ||
        containerUses(program, in).writes == 0)
      return CheckResult::failure(
          "'" + out + "' is a program output and '" + in +
              "' is a program input or constant: the copy is needed",
          {op});
  }
  return CheckResult::success();
}

ApplyResult RemoveIdentity::apply(const ir::Program &program,
                                  const Match &match, const Params &) const {
  ApplyResult r{program, {}};
  ir::State &state = stateNamed(r.program, match.state);
  ir::NodeId op = match.node("op"), inNode = match.node("input"),
             outNode = match.node("output");
  std::string in = state.findNode(inNode)->access().container;
  std::string out = state.findNode(outNode)->access().container;
  // Consumers of the copy's output read from the input's access node.
  state.edges.editWhere([&](const ir::Edge &e) { return e.src == outNode; },
                        [&](ir::Edge &e) { e.src = inNode; });
  removeNode(state, op, &r.idMap);
  removeNode(state, outNode, &r.idMap);
  r.idMap[outNode] = inNode;
  if (isArgument(r.program, out)) {
    renameContainerUses(r.program, in, out);
    r.program.containers.erase(in);
  } else {
    renameContainerUses(r.program, out, in);
    r.program.containers.erase(out);
  }
  removeUnused(r.program, &r.idMap); // an unused Dropout mask goes here
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<RemoveIdentity>()};

} // namespace weir::transforms
