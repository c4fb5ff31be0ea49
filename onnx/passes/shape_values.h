#pragma once
/// \file
/// The small constant tensors of a model's shape computations, and the
/// operators that compute them, evaluated the way ONNX defines them. Used by
/// shape specialization (shape_folding.h) in `weir-onnx-passes`: an exporter
/// writes `Shape -> Gather -> Div -> Slice` where the sizes are constants
/// once the inputs' shapes are fixed, and this computes those constants.
///
/// Only what such computations use is here: 64-bit and 32-bit integers,
/// booleans, f32 and f64, and the operators Shape, Size, Identity, Cast,
/// Gather, Unsqueeze, Squeeze, Concat, Slice, Reshape, Range,
/// ConstantOfShape, Expand, the elementwise arithmetic, comparisons and
/// logic (numpy broadcasting) and Where. f32 arithmetic is done in f64 and
/// rounded once, which gives the correctly rounded f32 result for +, -, *, /
/// and sqrt, as the interpreter and the backends compute them.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weir::onnx_import {

/// Tensors larger than this are neither read as inputs nor made as outputs:
/// shape computations are a few elements, and folding a large tensor is the
/// `fold-constants` transformation's work, on Weir's own program.
constexpr std::int64_t kMaxFoldedElements = 4096;

/// A constant tensor. Integers and booleans live in `ints`, floating-point
/// values in `reals`; `type` is the ONNX element type.
struct ShapeValue {
  int type = onnx::TensorProto::INT64;
  std::vector<std::int64_t> dims;
  std::vector<std::int64_t> ints;
  std::vector<double> reals;

  bool isReal() const;
  std::int64_t size() const; ///< element count
};

/// Whether Weir folds values of this ONNX element type.
bool foldableType(int type);

/// The tensor's value, or nullopt for a type outside foldableType, more
/// than kMaxFoldedElements elements, external or malformed data.
std::optional<ShapeValue> shapeValueOf(const onnx::TensorProto &t);
/// The value as an initializer named `name`.
onnx::TensorProto tensorOf(const ShapeValue &v, const std::string &name);

/// What a node needs to be evaluated: each input's value (nullptr for an
/// input the node omits) and, for Shape and Size, the static shape of input
/// 0.
struct NodeInputs {
  std::vector<const ShapeValue *> values;
  std::optional<std::vector<std::int64_t>> shape0;
};

/// The node's outputs, or nullopt when Weir does not evaluate this
/// operator, an input it needs is unknown, a result would exceed
/// kMaxFoldedElements, or the computation is undefined (integer division
/// by zero, an index out of range): then the node stays as it is.
std::optional<std::vector<ShapeValue>>
evaluateNode(const onnx::NodeProto &node, const NodeInputs &in);

} // namespace weir::onnx_import
