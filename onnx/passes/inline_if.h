#pragma once
/// \file
/// An If whose condition is a constant runs one branch only: shape
/// specialization replaces it with that branch's nodes. Exporters leave If
/// nodes on conditions that become constants once the inputs' shapes are
/// fixed (TorchScript's `if x.size(0) > 1`), and a condition given as an
/// input is fixed at load like the other values that decide sizes
/// (onnx/shape_inputs.h).

namespace onnx {
class ModelProto;
} // namespace onnx

namespace weir::onnx_import {

/// Replaces every top-level If of `model` whose `cond` is a scalar
/// initializer by its taken branch: the branch's initializers join the
/// graph's, its nodes take the If's place, and an Identity gives each of
/// the If's outputs the branch output's value. An If whose branch defines
/// a name the graph already uses stays. Returns how many were replaced.
int inlineConstantIfs(onnx::ModelProto &model);

} // namespace weir::onnx_import
