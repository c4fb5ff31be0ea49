#pragma once
/// \file
/// Attribute defaults that ONNX 1.12's shape inference reads differently
/// from the operator's definition, written out before inference runs.
/// STFT's `onesided` defaults to 1 in its schema, but 1.12's inference
/// function takes 0 when the attribute is absent, so it infers the
/// two-sided frame count (16 for a 16-point frame instead of 9) and the
/// model's declared output shape disagrees with it. Writing the default
/// out changes nothing a conforming runtime would compute.

namespace onnx {
class ModelProto;
} // namespace onnx

namespace weir::onnx_import {

/// Sets the attributes above on every default-domain node of `model`'s
/// main graph that omits them; returns how many were set.
int writeOutDefaults(onnx::ModelProto &model);

} // namespace weir::onnx_import
