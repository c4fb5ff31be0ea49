#include "core/runtime/tensor.h"

#include "ir/float16.h"

#include "ir/error.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace weir::runtime {
namespace {

constexpr std::size_t kAlignment = 64;
/// Largest buffer a shape may describe. Keeps byte sizes, element counts and
/// strides far from int64 overflow wherever they are multiplied later.
constexpr unsigned __int128 kMaxBytes = static_cast<unsigned __int128>(1) << 62;

std::string shapeText(const std::vector<std::int64_t> &shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

/// Element count of `shape`, checked in 128 bits. Zero-sized dimensions do
/// not excuse the others: strides multiply the non-zero ones, so their
/// product must fit as well. `who` starts the error message.
std::int64_t checkedCount(ir::DType dtype,
                          const std::vector<std::int64_t> &shape,
                          const std::string &who) {
  unsigned __int128 strideSpan = 1;
  bool empty = false;
  for (std::int64_t d : shape) {
    if (d < 0)
      throw Error(who + ": shape " + shapeText(shape) +
                  " has a negative dimension");
    if (d == 0) {
      empty = true;
      continue;
    }
    strideSpan *= static_cast<unsigned __int128>(d);
    // Each factor is below 2^63 and the running product below 2^62, so the
    // multiplication above cannot wrap 128 bits.
    if (strideSpan * ir::dtypeSize(dtype) > kMaxBytes)
      throw Error(who + ": shape " + shapeText(shape) + " of " +
                  std::string(ir::dtypeName(dtype)) +
                  " overflows (more than 2^62 bytes)");
  }
  return empty ? 0 : static_cast<std::int64_t>(strideSpan);
}

std::int64_t checkedCount(ir::DType dtype,
                          const std::vector<std::int64_t> &shape) {
  return checkedCount(dtype, shape, "tensor");
}

/// A zeroed buffer of at least `bytes` bytes (never a null pointer, even for
/// empty tensors), aligned to kAlignment.
std::shared_ptr<void> allocateZeroed(std::size_t bytes) {
  std::size_t rounded =
      bytes == 0 ? kAlignment
                 : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void *p = std::aligned_alloc(kAlignment, rounded);
  if (!p)
    throw Error("cannot allocate a tensor of " + std::to_string(bytes) +
                " bytes");
  std::memset(p, 0, rounded);
  return std::shared_ptr<void>(p, [](void *q) { std::free(q); });
}

template <typename T> double load(const std::byte *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<double>(v);
}

template <typename T> void store(std::byte *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

/// Truncates toward zero and saturates, so any double (NaN becomes 0) gives
/// a defined integer instead of undefined behaviour.
template <typename T> T toInteger(double v) {
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  // One past the maximum, 2^digits, which double holds exactly (max itself
  // it may not).
  constexpr double kUpper =
      2.0 * static_cast<double>(std::numeric_limits<T>::max() / 2 + 1);
  constexpr double kLower = static_cast<double>(std::numeric_limits<T>::min());
  if (v >= kUpper)
    return std::numeric_limits<T>::max();
  if (v <= kLower)
    return std::numeric_limits<T>::min();
  return static_cast<T>(v);
}

} // namespace

std::uint64_t checkedTensorBytes(ir::DType dtype,
                                 const std::vector<std::int64_t> &shape,
                                 std::uint64_t maxBytes,
                                 const std::string &who) {
  auto bytes = static_cast<std::uint64_t>(checkedCount(dtype, shape, who)) *
               ir::dtypeSize(dtype);
  if (bytes > maxBytes)
    throw Error(who + ": tensor " + std::string(ir::dtypeName(dtype)) +
                shapeText(shape) + " is too large (" + std::to_string(bytes) +
                " bytes; the limit is " + std::to_string(maxBytes) + ")");
  return bytes;
}

Tensor::Tensor() : Tensor(ir::DType::F32, {0}) {}

Tensor::Tensor(ir::DType dtype, std::vector<std::int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  count_ = checkedCount(dtype_, shape_);
  auto buffer = allocateZeroed(byteSize());
  data_ = static_cast<std::byte *>(buffer.get());
  owner_ = std::move(buffer);
}

Tensor Tensor::wrap(ir::DType dtype, std::vector<std::int64_t> shape,
                    std::shared_ptr<const void> owner, const std::byte *data) {
  Tensor t;
  t.dtype_ = dtype;
  t.count_ = checkedCount(dtype, shape);
  t.shape_ = std::move(shape);
  if (reinterpret_cast<std::uintptr_t>(data) % ir::dtypeSize(dtype) != 0)
    throw Error("tensor " + t.describe() + " to wrap is not aligned to its " +
                std::to_string(ir::dtypeSize(dtype)) + "-byte elements");
  t.readOnly_ = true;
  // The const_cast is safe: readOnly_ keeps mutableData() from handing the
  // pointer out for writing.
  t.data_ = const_cast<std::byte *>(data);
  t.owner_ = std::move(owner);
  return t;
}

Tensor Tensor::fromBlob(ir::DType dtype, std::vector<std::int64_t> shape,
                        ir::Blob blob) {
  Tensor t;
  t.dtype_ = dtype;
  t.count_ = checkedCount(dtype, shape);
  t.shape_ = std::move(shape);
  std::size_t have = blob ? blob->size() : 0;
  if (have != t.byteSize())
    throw Error("constant data of " + std::to_string(have) +
                " bytes does not match tensor " + t.describe() + " (" +
                std::to_string(t.byteSize()) + " bytes)");
  t.readOnly_ = true;
  // operator new aligns the vector to at least 16 bytes, enough for every
  // element type; only a foreign allocator could break that, so copy then.
  if (blob && !blob->empty() &&
      reinterpret_cast<std::uintptr_t>(blob->data()) % ir::dtypeSize(dtype) ==
          0) {
    // The const_cast is safe: readOnly_ keeps mutableData() from handing
    // the pointer out for writing.
    t.data_ = const_cast<std::byte *>(blob->data());
    t.owner_ = std::move(blob);
  } else if (blob && !blob->empty()) {
    auto buffer = allocateZeroed(have);
    std::memcpy(buffer.get(), blob->data(), have);
    t.data_ = static_cast<std::byte *>(buffer.get());
    t.owner_ = std::move(buffer);
  }
  // An empty blob keeps the default constructor's (aligned, non-null)
  // buffer.
  return t;
}

std::size_t Tensor::byteSize() const {
  return static_cast<std::size_t>(count_) * ir::dtypeSize(dtype_);
}

ir::TensorValue Tensor::value() const {
  return {dtype_, shape_,
          std::make_shared<const std::vector<std::byte>>(data_,
                                                         data_ + byteSize())};
}

std::vector<std::int64_t> Tensor::strides() const {
  std::vector<std::int64_t> s(shape_.size());
  std::int64_t stride = 1;
  for (std::size_t i = shape_.size(); i-- > 0;) {
    s[i] = stride;
    // Zero-sized dimensions leave the stride alone (numpy does the same in
    // spirit); checkedCount bounded the product of the others.
    stride *= std::max<std::int64_t>(shape_[i], 1);
  }
  return s;
}

std::byte *Tensor::mutableData() {
  if (readOnly_)
    throw Error("tensor " + describe() +
                " wraps read-only constant data; clone() it to write");
  return data_;
}

double Tensor::getAsDouble(std::int64_t flatIndex) const {
  assert(flatIndex >= 0 && flatIndex < count_);
  const std::byte *p =
      data_ + static_cast<std::size_t>(flatIndex) * ir::dtypeSize(dtype_);
  using ir::DType;
  switch (dtype_) {
  case DType::F32:
    return load<float>(p);
  case DType::F64:
    return load<double>(p);
  case DType::F16: {
    std::uint16_t bits;
    std::memcpy(&bits, p, 2);
    return ir::halfToFloat(bits);
  }
  case DType::BF16: {
    std::uint16_t bits;
    std::memcpy(&bits, p, 2);
    return ir::bfloat16ToFloat(bits);
  }
  case DType::I8:
    return load<std::int8_t>(p);
  case DType::U8:
    return load<std::uint8_t>(p);
  case DType::I16:
    return load<std::int16_t>(p);
  case DType::U16:
    return load<std::uint16_t>(p);
  case DType::I32:
    return load<std::int32_t>(p);
  case DType::U32:
    return load<std::uint32_t>(p);
  case DType::I64:
    return load<std::int64_t>(p);
  case DType::U64:
    return load<std::uint64_t>(p);
  case DType::Bool:
    // Read as a byte: a stray value other than 0/1 must not be UB.
    return load<std::uint8_t>(p) != 0 ? 1.0 : 0.0;
  }
  assert(false && "unknown dtype");
  return 0;
}

void Tensor::setFromDouble(std::int64_t flatIndex, double value) {
  assert(flatIndex >= 0 && flatIndex < count_);
  std::byte *p = mutableData() +
                 static_cast<std::size_t>(flatIndex) * ir::dtypeSize(dtype_);
  using ir::DType;
  switch (dtype_) {
  case DType::F32:
    // IEEE conversion: rounds to nearest even, overflows to infinity.
    return store(p, static_cast<float>(value));
  case DType::F64:
    return store(p, value);
  case DType::F16:
    return store(p, ir::doubleToHalf(value));
  case DType::BF16:
    return store(p, ir::doubleToBfloat16(value));
  case DType::I8:
    return store(p, toInteger<std::int8_t>(value));
  case DType::U8:
    return store(p, toInteger<std::uint8_t>(value));
  case DType::I16:
    return store(p, toInteger<std::int16_t>(value));
  case DType::U16:
    return store(p, toInteger<std::uint16_t>(value));
  case DType::I32:
    return store(p, toInteger<std::int32_t>(value));
  case DType::U32:
    return store(p, toInteger<std::uint32_t>(value));
  case DType::I64:
    return store(p, toInteger<std::int64_t>(value));
  case DType::U64:
    return store(p, toInteger<std::uint64_t>(value));
  case DType::Bool:
    return store(p, static_cast<std::uint8_t>(value != 0 ? 1 : 0));
  }
  assert(false && "unknown dtype");
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (byteSize() > 0)
    std::memcpy(t.data_, data_, byteSize());
  return t;
}

Tensor Tensor::reshaped(std::vector<std::int64_t> shape) const {
  std::int64_t count = checkedCount(dtype_, shape);
  if (count != count_)
    throw Error("cannot reshape tensor " + describe() + " to " +
                shapeText(shape) + ": " + std::to_string(count) +
                " elements instead of " + std::to_string(count_));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

std::string Tensor::describe() const {
  return std::string(ir::dtypeName(dtype_)) + shapeText(shape_);
}

} // namespace weir::runtime
