#pragma once
/// \file
/// A dense, row-major, dtype-aware tensor whose buffer is 64-byte aligned.
/// Copies share the buffer (like a numpy view of the whole array); clone()
/// makes an independent copy. Constant program data (ir::Blob) can be wrapped
/// without copying; such a tensor is read-only and mutableData() throws.

#include "ir/attribute.h"
#include "ir/dtype.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace weir::runtime {

/// Largest tensor the file readers accept unless told otherwise, as for
/// model initializers (onnx_import::ImportLimits::maxTensorBytes).
inline constexpr std::uint64_t kDefaultMaxTensorBytes = std::uint64_t(4) << 30;

/// Byte size of a `dtype` tensor of `shape`, checked before anything is
/// allocated from a file's claims: throws weir::Error starting with `who`
/// for a negative dimension, an element count that overflows (in 128 bits),
/// or more than `maxBytes` bytes.
std::uint64_t checkedTensorBytes(ir::DType dtype,
                                 const std::vector<std::int64_t> &shape,
                                 std::uint64_t maxBytes,
                                 const std::string &who);

class Tensor {
public:
  /// An empty f32 tensor of shape [0].
  Tensor();
  /// Zero-filled. Throws weir::Error for a negative dimension or a size that
  /// overflows.
  Tensor(ir::DType dtype, std::vector<std::int64_t> shape);
  /// Wraps constant data without copying; read-only. Throws weir::Error when
  /// the blob's size does not match dtype and shape. The data keeps the
  /// blob's alignment (16 bytes from operator new, enough for any element
  /// type), not 64; clone() for an aligned, writable copy.
  static Tensor fromBlob(ir::DType dtype, std::vector<std::int64_t> shape,
                         ir::Blob blob);

  /// Wraps memory someone else owns (a numpy array, say) without copying;
  /// read-only. `owner` keeps the memory alive as long as any copy of the
  /// tensor. Throws weir::Error when `data` is not aligned to the element
  /// size.
  static Tensor wrap(ir::DType dtype, std::vector<std::int64_t> shape,
                     std::shared_ptr<const void> owner, const std::byte *data);

  ir::DType dtype() const { return dtype_; }
  const std::vector<std::int64_t> &shape() const { return shape_; }
  std::size_t rank() const { return shape_.size(); }
  std::int64_t elementCount() const { return count_; }
  std::size_t byteSize() const;
  /// Row-major strides in elements.
  std::vector<std::int64_t> strides() const;

  const std::byte *data() const { return data_; }
  /// Throws weir::Error when the tensor wraps read-only constant data.
  std::byte *mutableData();
  bool readOnly() const { return readOnly_; }

  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(data_);
  }
  template <typename T> T *mutableAs() {
    return reinterpret_cast<T *>(mutableData());
  }

  /// Element `flatIndex` converted to double (for comparisons and printing;
  /// f16/bf16 decoded).
  double getAsDouble(std::int64_t flatIndex) const;
  /// Store `value` converted to this tensor's dtype (round to nearest even for
  /// f16/bf16, truncation toward zero for integers, != 0 for bool).
  void setFromDouble(std::int64_t flatIndex, double value);

  /// Independent, writable copy.
  Tensor clone() const;
  /// A copy of the contents as constant program data (an input's value
  /// fixed at load, onnx_import::ImportOptions::values).
  ir::TensorValue value() const;
  /// Same buffer, new shape with the same element count (throws otherwise).
  Tensor reshaped(std::vector<std::int64_t> shape) const;

  /// "f32[1, 3, 32, 32]"
  std::string describe() const;

private:
  ir::DType dtype_ = ir::DType::F32;
  std::vector<std::int64_t> shape_;
  std::int64_t count_ = 0;
  std::shared_ptr<const void> owner_; ///< keeps the buffer alive
  std::byte *data_ = nullptr;
  bool readOnly_ = false;
};

} // namespace weir::runtime
