#include "core/runtime/npy.h"

#include "ir/atomic_file.h"
#include "ir/error.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace weir::runtime {
namespace {

// Tensors are little-endian in memory; a big-endian host would need swaps on
// the little-endian path instead.
static_assert(std::endian::native == std::endian::little,
              "the .npy reader assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
/// numpy's own reader refuses headers over 10,000 bytes unless told
/// otherwise; a little more room costs nothing and bounds what a hostile
/// length field can make us read.
constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t(1) << 20;
/// numpy pads the header so the data starts on this boundary.
constexpr std::size_t kHeaderAlign = 64;

/// Closes a file descriptor on scope exit.
class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  int get() const { return fd_; }
  /// Closes now so the caller sees the error close() reports.
  int release() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

private:
  int fd_;
};

std::string quote(const std::filesystem::path &p) {
  return "'" + p.string() + "'";
}

/// What the header says about the data that follows it.
struct Layout {
  ir::DType dtype = ir::DType::F32;
  std::vector<std::int64_t> shape;
  bool fortranOrder = false;
  bool bigEndian = false;
  std::uint64_t dataOffset = 0;
  std::uint64_t dataBytes = 0;
};

/// A recursive-descent reader for the one Python literal numpy writes:
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
public:
  HeaderParser(std::string_view text, const std::string &name)
      : text_(text), name_(name) {}

  void parse(Layout &layout) {
    std::optional<std::string> descr;
    std::optional<bool> fortran;
    std::optional<std::vector<std::int64_t>> shape;
    expect('{');
    while (!peekIs('}')) {
      std::string key = string();
      expect(':');
      if (key == "descr") {
        if (peekIs('['))
          fail("structured dtypes (a list as 'descr') are not supported");
        setOnce(descr, string(), key);
      } else if (key == "fortran_order") {
        setOnce(fortran, boolean(), key);
      } else if (key == "shape") {
        setOnce(shape, tuple(), key);
      } else {
        fail("unexpected key '" + key + "' in the header");
      }
      if (!peekIs('}'))
        expect(',');
    }
    expect('}');
    skipSpace();
    if (pos_ != text_.size())
      fail("unexpected text after the header dictionary");
    if (!descr || !fortran || !shape)
      fail(std::string("the header lacks '") +
           (!descr     ? "descr"
            : !fortran ? "fortran_order"
                       : "shape") +
           "'");
    dtype(*descr, layout);
    layout.fortranOrder = *fortran;
    layout.shape = std::move(*shape);
  }

private:
  [[noreturn]] void fail(const std::string &problem) const {
    throw Error(name_ + ": malformed .npy header: " + problem);
  }

  template <typename T>
  void setOnce(std::optional<T> &slot, T value, const std::string &key) {
    if (slot)
      fail("key '" + key + "' appears twice");
    slot = std::move(value);
  }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool peekIs(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  void expect(char c) {
    if (!peekIs(c))
      fail(std::string("expected '") + c + "' at offset " +
           std::to_string(pos_));
    ++pos_;
  }

  std::string string() {
    skipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      fail("expected a quoted string at offset " + std::to_string(pos_));
    char q = text_[pos_++];
    std::size_t end = text_.find(q, pos_);
    if (end == std::string_view::npos)
      fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    if (s.find('\\') != std::string::npos)
      fail("escapes in strings are not supported");
    pos_ = end + 1;
    return s;
  }

  bool boolean() {
    skipSpace();
    for (auto [word, value] : {std::pair{std::string_view("True"), true},
                               std::pair{std::string_view("False"), false}})
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    fail("'fortran_order' must be True or False");
  }

  std::int64_t integer() {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == '-')
      fail("negative dimension in 'shape'");
    std::size_t start = pos_;
    std::uint64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      auto digit = static_cast<std::uint64_t>(text_[pos_] - '0');
      if (v > (static_cast<std::uint64_t>(INT64_MAX) - digit) / 10)
        fail("dimension in 'shape' overflows 64 bits");
      v = v * 10 + digit;
      ++pos_;
    }
    if (pos_ == start)
      fail("expected a dimension at offset " + std::to_string(start));
    if (pos_ < text_.size() && text_[pos_] == 'L') // Python 2 longs
      ++pos_;
    return static_cast<std::int64_t>(v);
  }

  /// A tuple of integers as Python spells it: (), (3,), (2, 3) or (2, 3,).
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> dims;
    if (!peekIs('('))
      fail("'shape' must be a tuple");
    ++pos_;
    while (!peekIs(')')) {
      dims.push_back(integer());
      if (peekIs(')')) {
        if (dims.size() == 1)
          fail("'shape' must be a tuple: (n) is an integer, write (n,)");
        break;
      }
      expect(',');
    }
    ++pos_;
    return dims;
  }

  void dtype(const std::string &descr, Layout &layout) {
    char order = descr.empty() ? '\0' : descr[0];
    std::string_view code =
        descr.empty() ? std::string_view() : std::string_view(descr).substr(1);
    static constexpr std::pair<std::string_view, ir::DType> kCodes[] = {
        {"f2", ir::DType::F16}, {"f4", ir::DType::F32}, {"f8", ir::DType::F64},
        {"i1", ir::DType::I8},  {"u1", ir::DType::U8},  {"i2", ir::DType::I16},
        {"u2", ir::DType::U16}, {"i4", ir::DType::I32}, {"u4", ir::DType::U32},
        {"i8", ir::DType::I64}, {"u8", ir::DType::U64}, {"b1", ir::DType::Bool},
    };
    const auto *it =
        std::find_if(std::begin(kCodes), std::end(kCodes),
                     [&](const auto &c) { return c.first == code; });
    if (it == std::end(kCodes) ||
        std::string_view("<>|=").find(order) == std::string_view::npos) {
      std::string hint;
      if (code.starts_with('O'))
        hint = " (object arrays hold pickled Python objects)";
      else if (code.starts_with('U') || code.starts_with('S'))
        hint = " (string arrays)";
      else if (code.starts_with('c'))
        hint = " (complex numbers)";
      throw Error(name_ + ": unsupported .npy dtype '" + descr + "'" + hint +
                  "; Weir reads f2, f4, f8, i1-i8, u1-u8 and b1");
    }
    layout.dtype = it->second;
    if (order == '|' && ir::dtypeSize(layout.dtype) > 1)
      fail("dtype '" + descr + "' has no byte order");
    layout.bigEndian = order == '>' && ir::dtypeSize(layout.dtype) > 1;
  }

  std::string_view text_;
  const std::string &name_;
  std::size_t pos_ = 0;
};

/// Reads the preamble and header from the start of a file of `fileSize`
/// bytes; `start` holds the file's first bytes (at least the whole header
/// when the file has it). Checks everything the data size depends on.
Layout parseLayout(std::string_view start, std::uint64_t fileSize,
                   const std::string &name, std::uint64_t maxTensorBytes) {
  if (start.size() < kMagic.size() || start.substr(0, kMagic.size()) != kMagic)
    throw Error(name + ": not a .npy file (it does not start with "
                       "\"\\x93NUMPY\")");
  if (start.size() < 8)
    throw Error(name + ": truncated .npy header (no format version)");
  auto major = static_cast<unsigned char>(start[6]);
  auto minor = static_cast<unsigned char>(start[7]);
  if (minor != 0 || major < 1 || major > 3)
    throw Error(name + ": unsupported .npy format version " +
                std::to_string(major) + "." + std::to_string(minor) +
                " (Weir reads 1.0, 2.0 and 3.0)");
  std::size_t lengthBytes = major == 1 ? 2 : 4;
  std::size_t preamble = 8 + lengthBytes;
  if (start.size() < preamble)
    throw Error(name + ": truncated .npy header (no header length)");
  std::uint64_t headerLength = 0;
  for (std::size_t i = 0; i < lengthBytes; ++i)
    headerLength |=
        static_cast<std::uint64_t>(static_cast<unsigned char>(start[8 + i]))
        << (8 * i);
  if (headerLength > kMaxHeaderBytes)
    throw Error(name + ": .npy header length " + std::to_string(headerLength) +
                " is absurd (the limit is " + std::to_string(kMaxHeaderBytes) +
                ")");
  Layout layout;
  layout.dataOffset = preamble + headerLength;
  if (layout.dataOffset > fileSize || layout.dataOffset > start.size())
    throw Error(name + ": truncated .npy header (header length " +
                std::to_string(headerLength) + " runs past the end of the " +
                std::to_string(fileSize) + "-byte file)");
  HeaderParser(start.substr(preamble, headerLength), name).parse(layout);
  layout.dataBytes =
      checkedTensorBytes(layout.dtype, layout.shape, maxTensorBytes, name);
  std::uint64_t have = fileSize - layout.dataOffset;
  if (have < layout.dataBytes)
    throw Error(name + ": truncated .npy data: " + std::to_string(have) +
                " bytes, but " + std::string(ir::dtypeName(layout.dtype)) +
                " shape needs " + std::to_string(layout.dataBytes));
  if (have > layout.dataBytes)
    throw Error(name + ": " + std::to_string(have - layout.dataBytes) +
                " unexpected bytes after the .npy data (numpy never writes "
                "trailing data)");
  return layout;
}

/// Turns raw file data, already copied into `t`, into the C-ordered,
/// little-endian, canonical-bool form every tensor has.
Tensor finish(Tensor t, const Layout &layout) {
  std::size_t size = ir::dtypeSize(t.dtype());
  auto count = static_cast<std::size_t>(t.elementCount());
  std::byte *p = t.mutableData();
  if (layout.bigEndian)
    for (std::size_t i = 0; i < count; ++i)
      std::reverse(p + i * size, p + (i + 1) * size);
  if (t.dtype() == ir::DType::Bool)
    // A bool byte other than 0 or 1 is undefined behaviour when read as bool.
    for (std::size_t i = 0; i < count; ++i)
      p[i] = p[i] != std::byte{0} ? std::byte{1} : std::byte{0};
  if (!layout.fortranOrder || t.rank() < 2 || count == 0)
    return t;
  // Walk the C-ordered result while tracking the element's offset in the
  // Fortran-ordered source (first index fastest).
  const std::vector<std::int64_t> &shape = t.shape();
  std::size_t rank = shape.size();
  std::vector<std::size_t> fortranStride(rank, 1);
  for (std::size_t k = 1; k < rank; ++k)
    fortranStride[k] =
        fortranStride[k - 1] * static_cast<std::size_t>(shape[k - 1]);
  Tensor out(t.dtype(), shape);
  std::byte *dst = out.mutableData();
  std::vector<std::int64_t> index(rank, 0);
  std::size_t offset = 0;
  for (std::size_t o = 0; o < count; ++o) {
    std::memcpy(dst + o * size, p + offset * size, size);
    for (std::size_t k = rank; k-- > 0;) {
      offset += fortranStride[k];
      if (++index[k] < shape[k])
        break;
      offset -= fortranStride[k] * static_cast<std::size_t>(shape[k]);
      index[k] = 0;
    }
  }
  return out;
}

std::string_view descr(ir::DType dtype) {
  using ir::DType;
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::F64:
    return "<f8";
  case DType::I8:
    return "|i1";
  case DType::U8:
    return "|u1";
  case DType::I16:
    return "<i2";
  case DType::U16:
    return "<u2";
  case DType::I32:
    return "<i4";
  case DType::U32:
    return "<u4";
  case DType::I64:
    return "<i8";
  case DType::U64:
    return "<u8";
  case DType::Bool:
    return "|b1";
  case DType::BF16:
    break;
  }
  return {};
}

} // namespace

Tensor parseNpy(std::string_view bytes, const std::string &name,
                std::uint64_t maxTensorBytes) {
  Layout layout = parseLayout(bytes, bytes.size(), name, maxTensorBytes);
  Tensor t(layout.dtype, layout.shape);
  if (layout.dataBytes > 0)
    std::memcpy(t.mutableData(), bytes.data() + layout.dataOffset,
                layout.dataBytes);
  return finish(std::move(t), layout);
}

Tensor readNpy(const std::filesystem::path &path,
               std::uint64_t maxTensorBytes) {
  std::string name = quote(path);
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    throw Error("cannot open " + name + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(name + " is not a regular file");
  auto fileSize = static_cast<std::uint64_t>(st.st_size);
  // Read the header region first so the data can go straight into the
  // tensor instead of through a second file-sized buffer.
  auto readAt = [&](std::byte *dst, std::uint64_t offset, std::uint64_t n) {
    std::uint64_t done = 0;
    while (done < n) {
      ssize_t got = ::pread(fd.get(), dst + done, n - done,
                            static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        throw Error("reading " + name + " failed" +
                    (got < 0 ? std::string(": ") + std::strerror(errno)
                             : std::string(": the file shrank")));
      done += static_cast<std::uint64_t>(got);
    }
  };
  std::string start(std::min<std::uint64_t>(fileSize, 12 + kMaxHeaderBytes),
                    '\0');
  readAt(reinterpret_cast<std::byte *>(start.data()), 0, start.size());
  Layout layout = parseLayout(start, fileSize, name, maxTensorBytes);
  Tensor t(layout.dtype, layout.shape);
  if (layout.dataBytes > 0)
    readAt(t.mutableData(), layout.dataOffset, layout.dataBytes);
  return finish(std::move(t), layout);
}

std::string serializeNpy(const Tensor &tensor) {
  std::string_view d = descr(tensor.dtype());
  if (d.empty())
    throw Error("cannot write tensor " + tensor.describe() +
                " as .npy: numpy has no " +
                std::string(ir::dtypeName(tensor.dtype())) +
                " dtype (convert it to f32 first)");
  // Byte for byte what numpy.lib.format writes, so files diff cleanly.
  std::string dict =
      "{'descr': '" + std::string(d) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < tensor.rank(); ++i)
    dict += std::to_string(tensor.shape()[i]) + ", ";
  if (tensor.rank() > 1)
    dict.resize(dict.size() - 2);
  else if (tensor.rank() == 1)
    dict.pop_back(); // "(3,)"
  dict += "), }";
  auto frame = [&](std::size_t lengthBytes) {
    std::size_t preamble = 8 + lengthBytes;
    std::size_t pad =
        kHeaderAlign - (preamble + dict.size() + 1) % kHeaderAlign;
    return dict + std::string(pad, ' ') + "\n";
  };
  std::string header = frame(2);
  std::uint8_t major = 1;
  if (header.size() > 0xFFFF) {
    header = frame(4);
    major = 2;
  }
  std::string out(kMagic);
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  out += header;
  out.append(reinterpret_cast<const char *>(tensor.data()), tensor.byteSize());
  return out;
}

void writeNpy(const std::filesystem::path &path, const Tensor &tensor) {
  std::string bytes;
  try {
    bytes = serializeNpy(tensor);
  } catch (const Error &e) {
    throw Error("cannot write " + quote(path) + ": " + e.what());
  }
  writeFileAtomically(path, bytes);
}

} // namespace weir::runtime
