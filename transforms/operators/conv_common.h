#pragma once
/// \file
/// What the convolution expansions share: the geometry read from a Conv
/// node (kernel, strides, dilations, explicit pads with auto_pad resolved,
/// groups) and the zero-padded copy of the input they read windows from.

#include "transforms/operators/expansion.h"

#include <cstdint>
#include <string>
#include <vector>

namespace weir::operators {

struct ConvGeometry {
  std::vector<std::int64_t> kernel, strides, dilations;
  /// Begin pads of each spatial dimension, then end pads (ONNX order).
  std::vector<std::int64_t> pads;
  std::int64_t group = 1;
  std::int64_t outChannels = 0; ///< W's first dimension
};

/// Reads and checks the Conv node of `ctx` (inputs X and W, output Y of the
/// same rank >= 3); fails naming the node on inconsistent attributes.
ConvGeometry readConvGeometry(ExpansionContext &ctx);
/// The same for a convolution whose connectors have other names
/// (ConvInteger's and QLinearConv's x, w and y).
ConvGeometry readConvGeometry(ExpansionContext &ctx, const ir::Container &x,
                              const ir::Container &w, const ir::Container &y);

/// The container to read windows from: X itself when nothing is padded,
/// otherwise a zero-filled transient with X copied into its interior.
std::string paddedInput(ExpansionContext &ctx, const ConvGeometry &g);

} // namespace weir::operators
