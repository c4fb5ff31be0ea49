#pragma once
/// \file
/// The blocked channel layout NCHWc that `layout-transform` (tier 3)
/// moves convolutions to, as three operators of Weir's own domain
/// ("weir"), each with a pure expansion:
/// - `ToBlockedLayout` (X → Y, attribute `block` b): Y[n, cb, h, w, ci] =
///   X[n, cb·b + ci, h, w], Y of shape [N, C/b, H, W, b].
/// - `FromBlockedLayout`: the inverse.
/// - `BlockedConv` (X, W, optional B → Y): a 2-D convolution, group 1, on
///   blocked X [N, C/b, H, W, b] and Y [N, K/b, OH, OW, b] with weights
///   W [K/b, C/b, KH, KW, b (in), b (out)]; attributes `block`,
///   `kernel_shape`, `strides`, `dilations` and explicit `pads` (begin,
///   end). Its expansion sums over [cb, kh, kw, ci] with the output block
///   innermost, so the lowering can vectorize it over b channels at unit
///   stride in Y and W.

#include <string_view>

namespace weir::operators {

inline constexpr std::string_view kBlockedDomain = "weir";
inline constexpr std::string_view kToBlocked = "ToBlockedLayout";
inline constexpr std::string_view kFromBlocked = "FromBlockedLayout";
inline constexpr std::string_view kBlockedConv = "BlockedConv";

} // namespace weir::operators
