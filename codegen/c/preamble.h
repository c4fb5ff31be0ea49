#pragma once
/// \file
/// The text every C++ export starts with, in order: the includes
/// (kPreamble), the tasklet language's own f32 exp and erf (kTaskletMath,
/// ir/tasklet_math.h as text) and the reference interpreter's arithmetic in
/// plain C++17 (kHelpers: guarded division, saturating casts, f16/bf16
/// rounding, NaN-propagating min/max, ...). codegen/c/export.cpp writes
/// them before the entry function.

namespace weir::codegen::c_export {

extern const char *const kPreamble;
extern const char *const kTaskletMath;
extern const char *const kHelpers;

} // namespace weir::codegen::c_export
