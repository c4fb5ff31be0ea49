#pragma once
/// \file
/// The ONNX operators Weir knows: each one's operator class (in the manner of
/// DNNFusion, which decides what may fuse) and how many floating-point
/// operations it performs. An operator outside this catalog is imported as an
/// unknown library node and listed as unsupported.

#include "ir/expr.h"
#include "ir/program.h"

#include <optional>
#include <string_view>
#include <vector>

namespace weir::onnx_import {

enum class OpClass : std::uint8_t {
  OneToOne,   ///< elementwise: each output element from one input element
  OneToMany,  ///< broadcast-like: Expand, Tile, ConstantOfShape
  ManyToMany, ///< Conv, MatMul, Gemm, pooling, normalization, RNNs
  Reorganize, ///< Reshape, Squeeze, Flatten: same data, new shape
  Shuffle,    ///< Transpose, Gather, Slice, Concat: data moved, not computed
  Reduction,  ///< ReduceSum, ArgMax, Softmax's reductions
  Control,    ///< If, Loop, Scan
  Source,     ///< Constant, Range, random generators, Shape
};
std::string_view opClassName(OpClass c);

struct OpInfo {
  std::string_view op;
  OpClass cls;
};

/// nullopt for an operator Weir does not know.
std::optional<OpInfo> findOp(std::string_view domain, std::string_view op);
/// Every known default-domain operator, sorted.
std::vector<std::string_view> knownOps();

/// The containers attached to a node's connectors, in ONNX positional order
/// (null where an optional input is absent).
struct OpOperands {
  std::vector<const ir::Container *> inputs;
  std::vector<const ir::Container *> outputs;
  const ir::Attributes *attributes = nullptr;
};

/// Whether the program draws random numbers: it holds a random generator
/// (RandomUniform, RandomNormal and their -Like forms, Bernoulli,
/// Multinomial) or a Dropout whose training_mode is a constant true. Its
/// outputs are then judged as samples (core/runtime/compare_samples.h).
bool drawsRandomNumbers(const ir::Program &program);

/// FLOPs of one execution; nullopt when the count depends on data (NonZero,
/// NonMaxSuppression) or on a subgraph.
std::optional<ir::Expr> estimateFlops(const OpInfo &op,
                                      const OpOperands &operands);

} // namespace weir::onnx_import
