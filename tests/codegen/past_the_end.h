#pragma once
/// \file
/// A program whose only fault is an access lowering alone can see, for the
/// tests of bounds guards in every backend (codegen/lower/bounds_proof.h):
/// `a[i] = x[i]` over i in [0, 4), then `y[i] = a[i]` over i in [0, 6),
/// which reads a (4 elements) at 4 and 5. Both maps name their parameter
/// i, so the validator cannot tell which range an edge sees and leaves the
/// access to lowering.

#include "ir/mapped_tasklet.h"
#include "ir/program.h"
#include "unit/ir_builders.h"

namespace weir::codegen::fixtures {

inline ir::Program readsPastTheEnd() {
  using ir::Expr;
  using ir::Range;
  ir::Program p;
  p.name = "past_the_end";
  ir::State &s = p.states.emplace_back();
  s.name = "main";
  p.addContainer(ir::builders::argument("x", ir::DType::F32, {4}));
  ir::Container a = ir::builders::argument("a", ir::DType::F32, {4});
  a.transient = true;
  p.addContainer(a);
  p.addContainer(ir::builders::argument("y", ir::DType::F32, {6}));
  p.inputs = {"x"};
  p.outputs = {"y"};
  ir::AccessNodes access;
  Expr i = Expr::symbol("i");
  ir::addMappedTasklet(p, s, "fill", {"i"}, {Range(0, 4)}, {{"v", "x", {i}}},
                       "o = v", {{"o", "a", {i}, std::nullopt}}, access);
  ir::addMappedTasklet(p, s, "read", {"i"}, {Range(0, 6)}, {{"v", "a", {i}}},
                       "o = v", {{"o", "y", {i}, std::nullopt}}, access);
  return p;
}

/// The same program with the second map over [0, 4): every access inside
/// (y's elements 4 and 5 stay 0).
inline ir::Program readsInside() {
  ir::Program p = readsPastTheEnd();
  for (ir::Node &n : p.states[0].nodes.editable())
    if (n.kind == ir::NodeKind::MapEntry && n.label == "read")
      n.map().ranges[0] = ir::Range(0, 4);
  return p;
}

} // namespace weir::codegen::fixtures
