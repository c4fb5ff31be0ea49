#include "core/runtime/tensor_pb.h"

#include "core/runtime/npy.h"
#include "ir/atomic_file.h"
#include "ir/error.h"
#include "onnx/tensor_data.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace weir::runtime {
namespace {

/// protobuf cannot parse or serialize a message past 2 GiB.
constexpr std::uint64_t kMaxMessageBytes = INT_MAX;

void parseFile(const std::filesystem::path &path, const std::string &name,
               onnx::TensorProto &t) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error("cannot open " + name + ": " + std::strerror(errno));
  google::protobuf::io::FileInputStream raw(fd);
  raw.SetCloseOnDelete(true);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(name + " is not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > kMaxMessageBytes)
    throw Error(name + " is too large for a TensorProto (" +
                std::to_string(st.st_size) + " bytes; protobuf stops at " +
                std::to_string(kMaxMessageBytes) + ")");
  if (st.st_size == 0)
    throw Error("cannot parse " + name + ": the file is empty");
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(static_cast<int>(kMaxMessageBytes));
  if (!t.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    throw Error("cannot parse " + name +
                ": not a serialized ONNX TensorProto (truncated or corrupt "
                "protobuf)");
}

} // namespace

Tensor readTensorPb(const std::filesystem::path &path,
                    std::uint64_t maxTensorBytes) {
  std::string name = "'" + path.string() + "'";
  onnx::TensorProto t;
  parseFile(path, name, t);
  std::string who =
      name + (t.name().empty() ? "" : " (tensor '" + t.name() + "')");
  // A SequenceProto or OptionalProto parses as a TensorProto: its values
  // land in `segment` or the typed fields, its name in the dims. Catch the
  // common shape of that mistake before the dims produce odd messages.
  if (t.has_segment() || !t.unknown_fields().empty())
    throw Error(who +
                " is not a plain TensorProto (segmented, or a sequence, map "
                "or optional value), which Weir does not read");
  if (t.data_location() == onnx::TensorProto::EXTERNAL ||
      t.external_data_size() > 0)
    throw Error(who + " keeps its data in an external file, which Weir does "
                      "not follow for a single-tensor .pb file");
  auto dtype = onnx_import::dtypeFromOnnx(t.data_type());
  if (!dtype)
    throw Error(who + " has element type " +
                onnx_import::onnxTypeName(t.data_type()) +
                ", which Weir does not support");
  std::vector<std::int64_t> shape(t.dims().begin(), t.dims().end());
  // tensorValue trusts the dims, so they are bounded here first.
  std::uint64_t bytes = checkedTensorBytes(*dtype, shape, maxTensorBytes, who);
  if (t.has_raw_data() && t.raw_data().empty()) {
    // tensorValue would memcpy from an empty string into an empty vector,
    // passing null pointers (undefined behaviour), so empty data stops here.
    if (bytes != 0)
      throw Error(who + " holds 0 bytes of data but its dims need " +
                  std::to_string(bytes));
    return Tensor(*dtype, std::move(shape));
  }
  ir::TensorValue value = onnx_import::tensorValue(t, who);
  // Files give writable, 64-byte aligned tensors like readNpy does; the
  // blob is only 16-byte aligned and would be read-only, hence the clone.
  Tensor result =
      Tensor::fromBlob(value.dtype, std::move(value.shape), value.data).clone();
  if (result.dtype() == ir::DType::Bool) {
    // raw_data may hold any byte; a bool must be 0 or 1.
    std::byte *p = result.mutableData();
    for (std::size_t i = 0; i < result.byteSize(); ++i)
      p[i] = p[i] != std::byte{0} ? std::byte{1} : std::byte{0};
  }
  return result;
}

void writeTensorPb(const std::filesystem::path &path, const Tensor &tensor,
                   const std::string &name) {
  if (tensor.byteSize() > kMaxMessageBytes - 1024)
    throw Error("cannot write " + ("'" + path.string() + "'") + ": tensor " +
                tensor.describe() + " is too large for one protobuf message");
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx_import::onnxDataType(tensor.dtype()));
  for (std::int64_t d : tensor.shape())
    t.add_dims(d);
  t.set_raw_data(reinterpret_cast<const char *>(tensor.data()),
                 tensor.byteSize());
  writeFileAtomically(path, t.SerializeAsString());
}

} // namespace weir::runtime
