/// \file
/// `reshape-to-view`: a Reshape, Flatten, Squeeze or Unsqueeze whose output
/// is a plain transient becomes a view of its input — the same elements
/// under a new shape, copied by nobody.

#include "ir/error.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"
#include "transforms/transformation.h"

namespace weir::transforms {

namespace {

/// ONNX connector names of the data input and output per op (opset 13).
std::pair<const char *, const char *> connectors(const std::string &op) {
  if (op == "Reshape")
    return {"data", "reshaped"};
  if (op == "Flatten")
    return {"input", "output"};
  if (op == "Squeeze")
    return {"data", "squeezed"};
  return {"data", "expanded"}; // Unsqueeze
}

bool rowMajor(const ir::Container &c) {
  return c.strides == ir::rowMajorStrides(c.shape);
}

} // namespace

namespace {

class ReshapeToView : public Transformation {
public:
  ReshapeToView();
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace

ReshapeToView::ReshapeToView()
    : Transformation({
          .id = "reshape-to-view",
          .tier = Tier::Expansion,
          .summary = "Turn a Reshape, Flatten, Squeeze or Unsqueeze into a "
                     "view of its input (no copy)",
          .description =
              "Reshape, Flatten, Squeeze and Unsqueeze change a tensor's "
              "shape, not its row-major order of elements, yet expanded as "
              "operators they copy every element. When the output is a plain "
              "transient and the input is not written again, the output can "
              "instead be a view: a container with its own shape that shares "
              "the input's storage. The copy, and its bytes moved, disappear; "
              "an empty edge from the input to the view keeps readers after "
              "the input's producer. Exact.",
          .pattern = Pattern()
                         .node("op", ir::NodeKind::Library,
                               {"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
                         .node("input", ir::NodeKind::Access)
                         .node("output", ir::NodeKind::Access)
                         .edge("input", "op")
                         .edge("op", "output"),
      }) {}

CheckResult ReshapeToView::check(const ir::Program &program, const Match &match,
                                 const Params &) const {
  const ir::State &state = stateNamed(program, match.state);
  ir::NodeId op = match.node("op");
  const ir::Node &node = *state.findNode(op);
  auto [dataConn, outConn] = connectors(node.library().op);
  const std::string &in =
      state.findNode(match.node("input"))->access().container;
  const std::string &out =
      state.findNode(match.node("output"))->access().container;
  if (inputContainer(state, op, dataConn) != in)
    return CheckResult::failure("'" + in + "' is not the operator's data input",
                                {op});
  if (outputContainer(state, op, outConn) != out)
    return CheckResult::failure("'" + out + "' is not the operator's output",
                                {op});
  const ir::Container &ci = program.container(in), &co = program.container(out);
  if (isArgument(program, out) || !co.transient || co.isConstant() ||
      co.isView())
    return CheckResult::failure("the output '" + out +
                                    "' is a program argument, constant or "
                                    "already a view",
                                {op});
  if (containerUses(program, out).writes != 1)
    return CheckResult::failure(
        "'" + out + "' is written by more than this operator", {op});
  if (ci.dtype != co.dtype)
    return CheckResult::failure(
        "'" + in + "' and '" + out + "' differ in dtype", {op});
  auto a = ci.elementCount().asConstant(), b = co.elementCount().asConstant();
  if (a && b ? *a != *b : !(ci.elementCount() == co.elementCount()))
    return CheckResult::failure("'" + in + "' and '" + out +
                                    "' do not provably hold as many elements",
                                {op});
  if (!rowMajor(ci) || !rowMajor(co))
    return CheckResult::failure(
        "'" + in + "' or '" + out + "' is not laid out row-major", {op});
  // The view sees later writes of its target, so the input must be final
  // when the operator reads it: written at most once (by its producer).
  const std::string &root = ci.isView() ? ci.viewOf : in;
  if (containerUses(program, root).writes > 1)
    return CheckResult::failure("'" + root +
                                    "' is written more than once, so a view "
                                    "of it could see a later value",
                                {op});
  return CheckResult::success();
}

ApplyResult ReshapeToView::apply(const ir::Program &program, const Match &match,
                                 const Params &) const {
  ApplyResult r{program, {}};
  ir::Program &p = r.program;
  ir::State &state = stateNamed(p, match.state);
  ir::NodeId op = match.node("op"), inNode = match.node("input"),
             outNode = match.node("output");
  const ir::Container &ci =
      p.container(state.findNode(inNode)->access().container);
  std::string root = ci.isView() ? ci.viewOf : ci.name;
  std::string out = state.findNode(outNode)->access().container;
  removeNode(state, op, &r.idMap);
  p.containers.at(out).viewOf = root;
  // Readers of the view stay after the input's producer.
  ir::addEdge(p, state, inNode, "", outNode, "", ir::Memlet{});
  removeUnused(p, &r.idMap);
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<ReshapeToView>()};

} // namespace weir::transforms
