#include "onnx/tensor_data.h"

#include "ir/error.h"

#include <onnx/onnx_pb.h>

#include <cstring>

namespace weir::onnx_import {

std::optional<ir::DType> dtypeFromOnnx(int dataType) {
  using T = onnx::TensorProto;
  using ir::DType;
  switch (dataType) {
  case T::FLOAT:
    return DType::F32;
  case T::FLOAT16:
    return DType::F16;
  case T::BFLOAT16:
    return DType::BF16;
  case T::DOUBLE:
    return DType::F64;
  case T::INT8:
    return DType::I8;
  case T::UINT8:
    return DType::U8;
  case T::INT16:
    return DType::I16;
  case T::UINT16:
    return DType::U16;
  case T::INT32:
    return DType::I32;
  case T::UINT32:
    return DType::U32;
  case T::INT64:
    return DType::I64;
  case T::UINT64:
    return DType::U64;
  case T::BOOL:
    return DType::Bool;
  default:
    return std::nullopt;
  }
}

int onnxDataType(ir::DType dtype) {
  using T = onnx::TensorProto;
  using ir::DType;
  switch (dtype) {
  case DType::F32:
    return T::FLOAT;
  case DType::F16:
    return T::FLOAT16;
  case DType::BF16:
    return T::BFLOAT16;
  case DType::F64:
    return T::DOUBLE;
  case DType::I8:
    return T::INT8;
  case DType::U8:
    return T::UINT8;
  case DType::I16:
    return T::INT16;
  case DType::U16:
    return T::UINT16;
  case DType::I32:
    return T::INT32;
  case DType::U32:
    return T::UINT32;
  case DType::I64:
    return T::INT64;
  case DType::U64:
    return T::UINT64;
  case DType::Bool:
    return T::BOOL;
  }
  return T::UNDEFINED;
}

std::string onnxTypeName(int dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dataType));
  return "data_type " + std::to_string(dataType);
}

namespace {

template <typename To, typename Field>
void packField(const Field &field, std::vector<std::byte> &out) {
  out.resize(static_cast<std::size_t>(field.size()) * sizeof(To));
  for (int i = 0; i < field.size(); ++i) {
    auto v = static_cast<To>(field.Get(i));
    std::memcpy(out.data() + static_cast<std::size_t>(i) * sizeof(To), &v,
                sizeof(To));
  }
}

} // namespace

ir::TensorValue tensorValue(const onnx::TensorProto &t,
                            const std::string &who) {
  auto dtype = dtypeFromOnnx(t.data_type());
  if (!dtype)
    throw Error(who + " has element type " + onnxTypeName(t.data_type()) +
                ", which Weir does not support");
  ir::TensorValue v;
  v.dtype = *dtype;
  v.shape.assign(t.dims().begin(), t.dims().end());
  std::uint64_t count = 1;
  for (std::int64_t d : v.shape)
    count *= static_cast<std::uint64_t>(d); // bounded by checkAndInlineModel
  std::uint64_t bytes = count * ir::dtypeSize(v.dtype);
  auto data = std::make_shared<std::vector<std::byte>>();
  if (t.has_raw_data()) {
    data->resize(t.raw_data().size());
    if (!t.raw_data().empty()) // memcpy from an empty string is undefined
      std::memcpy(data->data(), t.raw_data().data(), t.raw_data().size());
  } else {
    using ir::DType;
    switch (v.dtype) {
    case DType::F32:
      packField<float>(t.float_data(), *data);
      break;
    case DType::F64:
      packField<double>(t.double_data(), *data);
      break;
    case DType::I64:
      packField<std::int64_t>(t.int64_data(), *data);
      break;
    case DType::U32:
      packField<std::uint32_t>(t.uint64_data(), *data);
      break;
    case DType::U64:
      packField<std::uint64_t>(t.uint64_data(), *data);
      break;
    case DType::I32:
      packField<std::int32_t>(t.int32_data(), *data);
      break;
    case DType::I16:
      packField<std::int16_t>(t.int32_data(), *data);
      break;
    case DType::U16:
    case DType::F16:
    case DType::BF16: // 16-bit patterns stored in int32_data
      packField<std::uint16_t>(t.int32_data(), *data);
      break;
    case DType::I8:
      packField<std::int8_t>(t.int32_data(), *data);
      break;
    case DType::U8:
      packField<std::uint8_t>(t.int32_data(), *data);
      break;
    case DType::Bool:
      packField<std::uint8_t>(t.int32_data(), *data);
      for (std::byte &b : *data)
        b = b != std::byte{0} ? std::byte{1} : std::byte{0};
      break;
    }
  }
  if (data->size() != bytes)
    throw Error(who + " holds " + std::to_string(data->size()) +
                " bytes of data but its dims need " + std::to_string(bytes) +
                " (raw data or typed data missing)");
  v.data = std::move(data);
  return v;
}

} // namespace weir::onnx_import
