#include "onnx/model_file.h"

#include "ir/error.h"
#include "ir/utf8.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace weir::onnx_import {
namespace {

/// Closes a file descriptor on scope exit.
class Fd {
public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  Fd(Fd &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd &operator=(Fd &&o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  int get() const { return fd_; }

private:
  int fd_;
};

std::string quote(const std::string &s) { return "'" + s + "'"; }

/// Bytes of one element of an ONNX data type; 0 for types Weir rejects.
std::uint64_t elementBytes(int dataType) {
  using T = onnx::TensorProto;
  switch (dataType) {
  case T::FLOAT:
  case T::INT32:
  case T::UINT32:
    return 4;
  case T::DOUBLE:
  case T::INT64:
  case T::UINT64:
  case T::COMPLEX64:
    return 8;
  case T::COMPLEX128:
    return 16;
  case T::FLOAT16:
  case T::BFLOAT16:
  case T::INT16:
  case T::UINT16:
    return 2;
  case T::INT8:
  case T::UINT8:
  case T::BOOL:
    return 1;
  case T::STRING:
    return 1; // variable length; sized by its string_data
  default:
    return 0;
  }
}

class Checker {
public:
  Checker(const std::filesystem::path &baseDir, const ImportLimits &limits)
      : baseDir_(baseDir), limits_(limits) {}

  void model(onnx::ModelProto &m) {
    if (!m.has_graph())
      throw Error("the model has no graph");
    graph(*m.mutable_graph(), 0, {});
    for (const onnx::FunctionProto &f : m.functions())
      for (const onnx::NodeProto &n : f.node())
        for (const onnx::AttributeProto &a : n.attribute())
          if (a.has_g() || a.graphs_size() > 0)
            throw Error("model-local function '" + f.name() +
                        "' holds subgraphs, which Weir does not read");
  }

private:
  using Scope = std::set<std::string>;

  /// Names end up in JSON and in messages; protobuf does not check that
  /// proto2 strings are UTF-8, so Weir does.
  static void checkName(const std::string &name, const std::string &what) {
    if (!isValidUtf8(name))
      throw Error(what + " has a name that is not valid UTF-8");
  }

  void graph(onnx::GraphProto &g, int depth, const Scope &outer) {
    checkName(g.name(), "a graph");
    for (const auto *list : {&g.input(), &g.output(), &g.value_info()})
      for (const onnx::ValueInfoProto &v : *list) {
        checkName(v.name(), "a value");
        if (v.type().has_tensor_type())
          for (const auto &d : v.type().tensor_type().shape().dim())
            checkName(d.dim_param(), "a dimension of a value");
      }
    for (const onnx::TensorProto &t : g.initializer())
      checkName(t.name(), "an initializer");
    for (const onnx::NodeProto &n : g.node()) {
      checkName(n.name(), "a node");
      checkName(n.op_type(), "a node's operator");
      checkName(n.domain(), "a node's domain");
      for (const auto *list : {&n.input(), &n.output()})
        for (const std::string &v : *list)
          checkName(v, "a node input or output");
      for (const onnx::AttributeProto &a : n.attribute())
        checkName(a.name(), "an attribute");
    }
    if (depth > limits_.maxGraphNesting)
      throw Error("graph '" + g.name() + "' is nested too deep (more than " +
                  std::to_string(limits_.maxGraphNesting) + " levels)");
    Scope defined = outer;
    for (onnx::TensorProto &t : *g.mutable_initializer()) {
      tensor(t, "initializer " + quote(t.name()));
      defined.insert(t.name());
    }
    for (const onnx::SparseTensorProto &s : g.sparse_initializer())
      throw Error("sparse initializer " + quote(s.values().name()) +
                  " is not supported");
    for (const onnx::ValueInfoProto &v : g.input()) {
      valueType(v, "graph input");
      defined.insert(v.name());
    }
    for (const onnx::ValueInfoProto &v : g.output())
      valueType(v, "graph output");
    for (const onnx::ValueInfoProto &v : g.value_info())
      valueType(v, "value");
    int index = 0;
    for (onnx::NodeProto &n : *g.mutable_node()) {
      std::string who =
          "node " + quote(n.name().empty()
                              ? n.op_type() + "#" + std::to_string(index)
                              : n.name());
      ++index;
      for (const std::string &in : n.input())
        if (!in.empty() && !defined.count(in))
          throw Error(who + " reads " + quote(in) +
                      ", which is missing: no graph input, initializer or "
                      "earlier node defines it");
      for (onnx::AttributeProto &a : *n.mutable_attribute()) {
        if (a.has_t())
          tensor(*a.mutable_t(), who + " attribute " + quote(a.name()));
        for (onnx::TensorProto &t : *a.mutable_tensors())
          tensor(t, who + " attribute " + quote(a.name()));
        if (a.has_g())
          graph(*a.mutable_g(), depth + 1, defined);
        for (onnx::GraphProto &sub : *a.mutable_graphs())
          graph(sub, depth + 1, defined);
      }
      for (const std::string &out : n.output())
        if (!out.empty())
          defined.insert(out);
    }
    for (const onnx::ValueInfoProto &v : g.output())
      if (!defined.count(v.name()))
        throw Error("graph output " + quote(v.name()) +
                    " is missing: nothing defines it");
  }

  void valueType(const onnx::ValueInfoProto &v, const std::string &role) {
    if (!v.has_type() || !v.type().has_tensor_type())
      return; // sequences, optionals, maps: judged by the importer
    const auto &tt = v.type().tensor_type();
    if (tt.has_elem_type() && tt.elem_type() != 0 &&
        elementBytes(tt.elem_type()) == 0)
      throw Error(role + " " + quote(v.name()) + " has invalid data_type " +
                  std::to_string(tt.elem_type()));
    if (!tt.has_shape())
      return;
    for (const auto &d : tt.shape().dim())
      if (d.has_dim_value() && d.dim_value() < 0)
        throw Error(role + " " + quote(v.name()) + " has negative dimension " +
                    std::to_string(d.dim_value()));
  }

  /// Element count from dims, in 128 bits so hostile dims cannot wrap.
  static std::uint64_t elementCount(const onnx::TensorProto &t,
                                    const std::string &who) {
    unsigned __int128 n = 1;
    for (std::int64_t d : t.dims()) {
      if (d < 0)
        throw Error(who + " has negative dimension " + std::to_string(d));
      n *= static_cast<unsigned __int128>(d);
      if (n > (static_cast<unsigned __int128>(1) << 62))
        throw Error(who + ": element count overflows (dims multiply past "
                          "2^62)");
    }
    return static_cast<std::uint64_t>(n);
  }

  void tensor(onnx::TensorProto &t, const std::string &who) {
    if (t.data_type() == onnx::TensorProto::UNDEFINED ||
        elementBytes(t.data_type()) == 0)
      throw Error(who + " has invalid data_type " +
                  std::to_string(t.data_type()));
    std::uint64_t count = elementCount(t, who);
    std::uint64_t bytes = count * elementBytes(t.data_type());
    if (bytes > limits_.maxTensorBytes)
      throw Error(who + " is too large: " + std::to_string(bytes) +
                  " bytes, the limit is " +
                  std::to_string(limits_.maxTensorBytes));
    total_ += bytes;
    if (total_ > limits_.maxTotalBytes)
      throw Error("the model's tensors are too large together (over " +
                  std::to_string(limits_.maxTotalBytes) + " bytes at " + who +
                  ")");
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      external(t, who, bytes);
      return;
    }
    if (t.external_data_size() > 0)
      throw Error(who + " has external data entries but its data_location is "
                        "not EXTERNAL");
    if (t.data_type() == onnx::TensorProto::STRING)
      return;
    std::uint64_t have = 0;
    if (t.has_raw_data())
      have = t.raw_data().size();
    else
      have = typedElementCount(t) * elementBytes(t.data_type());
    if (!t.has_raw_data() && typedElementCount(t) == 0 && count > 0 &&
        t.data_type() != onnx::TensorProto::STRING)
      throw Error(who + " is missing its data (" + std::to_string(count) +
                  " elements declared, none stored)");
    if (t.has_raw_data() && have != bytes)
      throw Error(who + ": raw data holds " + std::to_string(have) +
                  " bytes but dims and data_type need " +
                  std::to_string(bytes));
  }

  static std::uint64_t typedElementCount(const onnx::TensorProto &t) {
    using T = onnx::TensorProto;
    switch (t.data_type()) {
    case T::FLOAT:
    case T::COMPLEX64:
      return t.float_data_size() / (t.data_type() == T::COMPLEX64 ? 2 : 1);
    case T::DOUBLE:
    case T::COMPLEX128:
      return t.double_data_size() / (t.data_type() == T::COMPLEX128 ? 2 : 1);
    case T::INT64:
      return t.int64_data_size();
    case T::UINT32:
    case T::UINT64:
      return t.uint64_data_size();
    default:
      return t.int32_data_size();
    }
  }

  static std::uint64_t parseNumber(const std::string &key,
                                   const std::string &value,
                                   const std::string &who) {
    if (value.empty() || value.size() > 19 ||
        value.find_first_not_of("0123456789") != std::string::npos)
      throw Error(who + ": external data " + key + " " + quote(value) +
                  " is not a non-negative integer");
    return std::stoull(value);
  }

  /// Open `location` beneath the model folder one component at a time with
  /// O_NOFOLLOW, so no symlink anywhere on the path is followed.
  Fd openBeneath(const std::string &location, const std::string &who) {
    if (location.empty())
      throw Error(who + ": external data location is empty");
    if (location.find('\0') != std::string::npos)
      throw Error(who + ": external data location contains a NUL byte");
    if (location.front() == '/' || location.find('\\') != std::string::npos ||
        (location.size() > 1 && location[1] == ':'))
      throw Error(who + ": external data location " + quote(location) +
                  " is an absolute path, outside the model's folder");
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= location.size()) {
      std::size_t end = location.find('/', start);
      if (end == std::string::npos)
        end = location.size();
      std::string part = location.substr(start, end - start);
      if (part == "..")
        throw Error(who + ": external data location " + quote(location) +
                    " uses '..' and may point outside the model's folder");
      if (!part.empty() && part != ".")
        parts.push_back(part);
      start = end + 1;
    }
    if (parts.empty())
      throw Error(who + ": external data location " + quote(location) +
                  " names no file");
    Fd dir(::open(baseDir_.empty() ? "." : baseDir_.c_str(),
                  O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0)
      throw Error(who + ": cannot open the model's folder " +
                  quote(baseDir_.string()) + ": " + std::strerror(errno));
    for (std::size_t i = 0; i < parts.size(); ++i) {
      bool last = i + 1 == parts.size();
      int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? 0 : O_DIRECTORY);
      Fd next(::openat(dir.get(), parts[i].c_str(), flags));
      if (next.get() < 0) {
        int err = errno;
        struct stat st;
        if (::fstatat(dir.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) ==
                0 &&
            S_ISLNK(st.st_mode))
          throw Error(who + ": external data location " + quote(location) +
                      " passes through a symlink (" + parts[i] +
                      "), which Weir does not follow");
        throw Error(who + ": cannot open external data " + quote(location) +
                    ": " + std::strerror(err));
      }
      dir = std::move(next);
    }
    return dir;
  }

  void external(onnx::TensorProto &t, const std::string &who,
                std::uint64_t bytes) {
    std::map<std::string, std::string> kv;
    for (const onnx::StringStringEntryProto &e : t.external_data())
      kv[e.key()] = e.value();
    if (!kv.count("location"))
      throw Error(who + ": external data has no location");
    std::uint64_t offset =
        kv.count("offset") ? parseNumber("offset", kv["offset"], who) : 0;
    std::uint64_t length =
        kv.count("length") ? parseNumber("length", kv["length"], who) : bytes;
    if (length != bytes)
      throw Error(who + ": external data length " + std::to_string(length) +
                  " differs from the " + std::to_string(bytes) +
                  " bytes its dims and data_type need");
    Fd fd = openBeneath(kv["location"], who);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0)
      throw Error(who + ": cannot stat external data " + quote(kv["location"]));
    if (!S_ISREG(st.st_mode))
      throw Error(who + ": external data " + quote(kv["location"]) +
                  " is not a regular file");
    if (st.st_nlink != 1)
      throw Error(who + ": external data " + quote(kv["location"]) +
                  " is a hardlink (" + std::to_string(st.st_nlink) +
                  " links), which Weir refuses: it may alias a file outside "
                  "the model's folder");
    auto size = static_cast<std::uint64_t>(st.st_size);
    if (offset > size || length > size - offset)
      throw Error(who + ": external data range [" + std::to_string(offset) +
                  ", +" + std::to_string(length) + ") lies past the end of " +
                  quote(kv["location"]) + " (" + std::to_string(size) +
                  " bytes)");
    std::string data(length, '\0');
    std::uint64_t done = 0;
    while (done < length) {
      ssize_t n = ::pread(fd.get(), data.data() + done, length - done,
                          static_cast<off_t>(offset + done));
      if (n <= 0)
        throw Error(who + ": reading external data " + quote(kv["location"]) +
                    " failed");
      done += static_cast<std::uint64_t>(n);
    }
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
    t.set_raw_data(std::move(data));
  }

  std::filesystem::path baseDir_;
  const ImportLimits &limits_;
  std::uint64_t total_ = 0;
};

} // namespace

void parseModelFile(const std::filesystem::path &path,
                    const ImportLimits &limits, onnx::ModelProto &model) {
  std::string name = "'" + path.string() + "'";
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    throw Error("cannot open " + name + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(name + " is not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > limits.maxModelFileBytes)
    throw Error(name + " is too large (" + std::to_string(st.st_size) +
                " bytes; the limit is " +
                std::to_string(limits.maxModelFileBytes) + ")");
  if (st.st_size == 0)
    throw Error("cannot parse " + name + ": the file is empty");
  google::protobuf::io::FileInputStream raw(fd.get());
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(static_cast<int>(
      std::min<std::uint64_t>(limits.maxModelFileBytes, INT32_MAX)));
  // protobuf's default recursion limit (100) stays: it bounds nesting at
  // parse time, before our own depth check sees the graph.
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    throw Error("cannot parse " + name +
                ": not a valid ONNX model (truncated or corrupt protobuf, or "
                "nested deeper than the parser allows)");
  if (!model.has_graph())
    throw Error("cannot parse " + name +
                ": no graph (is this an ONNX model file?)");
}

void checkAndInlineModel(onnx::ModelProto &model,
                         const std::filesystem::path &baseDir,
                         const ImportLimits &limits) {
  Checker(baseDir, limits).model(model);
}

} // namespace weir::onnx_import
