#include "core/runtime/npy.h"
#include "core/runtime/tensor_pb.h"

#include "ir/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace weir::runtime;
using weir::ir::DType;
namespace fs = std::filesystem;

namespace {

template <typename F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const weir::Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected weir::Error";
  return {};
}

#define EXPECT_ERROR(stmt, needle)                                             \
  do {                                                                         \
    std::string message_ = errorOf([&] { stmt; });                             \
    EXPECT_NE(message_.find(needle), std::string::npos)                        \
        << "'" << (needle) << "' not in: " << message_;                        \
  } while (0)

std::string readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const fs::path &p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string tensorBytes(const Tensor &t) {
  return std::string(reinterpret_cast<const char *>(t.data()), t.byteSize());
}

/// A private scratch folder per test, removed afterwards.
class RuntimeFiles : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("weir-npy-pb-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs a Python script with `dir_` as its argument; false when it fails.
  bool python(const std::string &script) {
    fs::path file = dir_ / "script.py";
    writeFile(file, script);
    std::string command =
        std::string(WEIR_PYTHON) + " " + file.string() + " " + dir_.string();
    return std::system(command.c_str()) == 0;
  }

  /// Skips the test when Python lacks `module`.
  bool have(const std::string &module) {
    std::string command =
        std::string(WEIR_PYTHON) + " -c 'import " + module + "' 2>/dev/null";
    return std::system(command.c_str()) == 0;
  }

  fs::path dir_;
};

/// A .npy file with the given header dict and data, framed by hand so the
/// header can be as broken as a test needs.
std::string npy(const std::string &dict, const std::string &data,
                int major = 1) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  std::size_t n = dict.size();
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
    out += static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + dict + data;
}

std::string f32Dict(const std::string &shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
}

// --- A minimal protobuf encoder for hand-made hostile TensorProtos. ---

std::string varint(std::uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  return s + static_cast<char>(v);
}
std::string intField(int field, std::uint64_t v) {
  return varint(static_cast<std::uint64_t>(field) << 3) + varint(v);
}
std::string bytesField(int field, const std::string &bytes) {
  return varint((static_cast<std::uint64_t>(field) << 3) | 2) +
         varint(bytes.size()) + bytes;
}
// TensorProto field numbers and types.
constexpr int kDims = 1, kDataType = 2, kSegment = 3, kFloatData = 4, kName = 8,
              kRawData = 9, kDataLocation = 14;
constexpr int kFloat = 1, kString = 8, kBool = 9;

} // namespace

// --- .npy written and read by Weir ---

TEST(Npy, RoundTripsEveryDType) {
  for (DType d : {DType::F32, DType::F16, DType::F64, DType::I8, DType::U8,
                  DType::I16, DType::U16, DType::I32, DType::U32, DType::I64,
                  DType::U64, DType::Bool})
    for (const std::vector<std::int64_t> &shape : {std::vector<std::int64_t>{},
                                                   {0},
                                                   {5},
                                                   {2, 3},
                                                   {2, 0, 3},
                                                   {1, 2, 3, 2}}) {
      Tensor t(d, shape);
      for (std::int64_t i = 0; i < t.elementCount(); ++i)
        t.setFromDouble(i, static_cast<double>((i * 37) % 101) - 20);
      std::string bytes = serializeNpy(t);
      EXPECT_EQ(bytes.size() % 64, t.byteSize() % 64); // header is padded
      Tensor back = parseNpy(bytes, "round trip");
      EXPECT_EQ(back.dtype(), d);
      EXPECT_EQ(back.shape(), shape);
      EXPECT_EQ(tensorBytes(back), tensorBytes(t)) << t.describe();
      EXPECT_FALSE(back.readOnly());
    }
}

TEST(Npy, Bfloat16HasNoNumpyDType) {
  Tensor t(DType::BF16, {2});
  EXPECT_ERROR(serializeNpy(t), "numpy has no bf16 dtype");
  EXPECT_ERROR(writeNpy("/tmp/never-written.npy", t),
               "cannot write '/tmp/never-written.npy'");
  EXPECT_FALSE(fs::exists("/tmp/never-written.npy"));
}

TEST(Npy, HeaderMatchesNumpyByteForByte) {
  Tensor t(DType::F32, {3, 4});
  std::string bytes = serializeNpy(t);
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
  ASSERT_EQ(bytes.size(), 128u + 48u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(bytes.substr(10, header.size()), header);
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(serializeNpy(Tensor(DType::Bool, {5})).substr(10, 60),
            "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }   ");
  EXPECT_NE(serializeNpy(Tensor(DType::I64, {})).find("'shape': (), }"),
            std::string::npos);
}

TEST(Npy, LongHeadersUseVersion2) {
  // 30,000 dimensions of 1 cannot fit version 1.0's 16-bit header length.
  Tensor t(DType::U8, std::vector<std::int64_t>(30000, 1));
  std::string bytes = serializeNpy(t);
  EXPECT_EQ(bytes[6], '\x02');
  EXPECT_EQ((bytes.size() - 1) % 64, 0u);
  Tensor back = parseNpy(bytes, "long");
  EXPECT_EQ(back.rank(), 30000u);
}

// --- .npy written by numpy ---

TEST_F(RuntimeFiles, ReadsWhatNumpyWrites) {
  if (!have("numpy"))
    GTEST_SKIP() << WEIR_PYTHON << " has no numpy";
  // Each array is saved as NAME.npy, plus NAME.raw: its values as C-ordered
  // little-endian bytes, the ground truth to compare with.
  ASSERT_TRUE(python(R"(
import sys, numpy as np, numpy.lib.format as fmt
d = sys.argv[1]
arrays = {
  'c_f32': np.arange(24, dtype='<f4').reshape(2, 3, 4) * 0.5 - 3,
  'f_f64': np.asfortranarray(np.arange(24, dtype='<f8').reshape(2, 3, 4) / 7),
  'f_i32': np.asfortranarray(np.arange(15, dtype='<i4').reshape(3, 5) - 7),
  'f_1d': np.asfortranarray(np.arange(4, dtype='<i2')),
  'bool': np.array([[True, False, True], [False, False, True]]),
  'f16': np.array([0, 1, -2, 65504, 6e-8, np.inf, -np.inf, np.nan, 0.1],
                  dtype='<f2'),
  'i64': np.array([-2**63, 2**63 - 1, 0, -1, 12345678901234], dtype='<i8'),
  'u64': np.array([2**64 - 1, 0, 2**53 + 1], dtype='<u8'),
  'i8': np.array([-128, 127, 0, -1], dtype='i1'),
  'u8': np.array([255, 0, 7], dtype='u1'),
  'u16': np.array([65535, 1], dtype='<u2'),
  'u32': np.array([4294967295, 1], dtype='<u4'),
  'scalar': np.array(3.25, dtype='<f4'),
  'empty': np.zeros((0, 3), dtype='<f4'),
  'be_i4': np.arange(5, dtype='>i4') * 1000003,
  'be_f8': np.array([[1.5, -2.25], [1e300, 5e-324]], dtype='>f8'),
  'be_f_u2': np.asfortranarray(np.arange(6, dtype='>u2').reshape(2, 3) * 4099),
}
for name, a in arrays.items():
  np.save(f'{d}/{name}.npy', a)
  le = np.ascontiguousarray(a).astype(a.dtype.newbyteorder('<'))
  open(f'{d}/{name}.raw', 'wb').write(le.tobytes())
for version in [(2, 0), (3, 0)]:
  a = np.arange(6, dtype='<i2').reshape(2, 3)
  name = f'v{version[0]}'
  with open(f'{d}/{name}.npy', 'wb') as f:
    fmt.write_array(f, a, version=version)
  open(f'{d}/{name}.raw', 'wb').write(a.tobytes())
np.save(f'{d}/complex.npy', np.zeros(2, dtype='<c8'))
np.save(f'{d}/object.npy', np.array([1, 'a'], dtype=object), allow_pickle=True)
np.save(f'{d}/structured.npy', np.zeros(2, dtype=[('a', '<f4'), ('b', '<i4')]))
)"));
  struct Case {
    const char *name;
    DType dtype;
    std::vector<std::int64_t> shape;
    bool fortran;
  };
  const Case cases[] = {
      {"c_f32", DType::F32, {2, 3, 4}, false},
      {"f_f64", DType::F64, {2, 3, 4}, true},
      {"f_i32", DType::I32, {3, 5}, true},
      {"f_1d", DType::I16, {4}, false}, // 1-d is C-ordered too
      {"bool", DType::Bool, {2, 3}, false},
      {"f16", DType::F16, {9}, false},
      {"i64", DType::I64, {5}, false},
      {"u64", DType::U64, {3}, false},
      {"i8", DType::I8, {4}, false},
      {"u8", DType::U8, {3}, false},
      {"u16", DType::U16, {2}, false},
      {"u32", DType::U32, {2}, false},
      {"scalar", DType::F32, {}, false},
      {"empty", DType::F32, {0, 3}, false},
      {"be_i4", DType::I32, {5}, false},
      {"be_f8", DType::F64, {2, 2}, false},
      {"be_f_u2", DType::U16, {2, 3}, true},
      {"v2", DType::I16, {2, 3}, false},
      {"v3", DType::I16, {2, 3}, false},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    fs::path file = dir_ / (std::string(c.name) + ".npy");
    std::string header = readFile(file).substr(0, 128);
    EXPECT_EQ(header.find("'fortran_order': True") != std::string::npos,
              c.fortran);
    Tensor t = readNpy(file);
    EXPECT_EQ(t.dtype(), c.dtype);
    EXPECT_EQ(t.shape(), c.shape);
    EXPECT_EQ(tensorBytes(t), readFile(dir_ / (std::string(c.name) + ".raw")));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 64, 0u);
    // Numpy's own file, read from memory, gives the same.
    Tensor fromMemory = parseNpy(readFile(file), c.name);
    EXPECT_EQ(tensorBytes(fromMemory), tensorBytes(t));
  }
  Tensor f = readNpy(dir_ / "f_i32.npy");
  EXPECT_EQ(f.getAsDouble(0), -7); // [0, 0]
  EXPECT_EQ(f.getAsDouble(1), -6); // [0, 1]: C order after the transpose
  EXPECT_EQ(f.getAsDouble(5), -2); // [1, 0]
  Tensor h = readNpy(dir_ / "f16.npy");
  EXPECT_EQ(h.getAsDouble(3), 65504);
  EXPECT_EQ(h.getAsDouble(4), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(h.getAsDouble(5)));
  EXPECT_TRUE(std::isnan(h.getAsDouble(7)));
  EXPECT_EQ(h.as<std::uint16_t>()[8], 0x2E66);
  Tensor be = readNpy(dir_ / "be_f8.npy");
  EXPECT_EQ(be.getAsDouble(2), 1e300);
  EXPECT_EQ(be.getAsDouble(3), 5e-324);
  EXPECT_EQ(readNpy(dir_ / "i64.npy").as<std::int64_t>()[0], INT64_MIN);
  EXPECT_EQ(readNpy(dir_ / "scalar.npy").getAsDouble(0), 3.25);

  // What Weir writes for numpy's C-ordered little-endian arrays is the file
  // numpy wrote, byte for byte.
  for (const char *name : {"c_f32", "bool", "f16", "i64", "scalar", "empty"})
    EXPECT_EQ(serializeNpy(readNpy(dir_ / (std::string(name) + ".npy"))),
              readFile(dir_ / (std::string(name) + ".npy")))
        << name;

  EXPECT_ERROR(readNpy(dir_ / "complex.npy"),
               "unsupported .npy dtype '<c8' (complex numbers)");
  EXPECT_ERROR(readNpy(dir_ / "object.npy"), "'|O' (object arrays");
  EXPECT_ERROR(readNpy(dir_ / "structured.npy"), "structured dtypes");
}

TEST_F(RuntimeFiles, NumpyReadsWhatWeirWrites) {
  if (!have("numpy"))
    GTEST_SKIP() << WEIR_PYTHON << " has no numpy";
  Tensor f(DType::F16, {2, 3});
  Tensor b(DType::Bool, {4});
  Tensor u(DType::U64, {});
  for (int i = 0; i < 6; ++i)
    f.setFromDouble(i, i * 0.25 - 1);
  b.setFromDouble(2, 1);
  u.mutableAs<std::uint64_t>()[0] = UINT64_MAX;
  writeNpy(dir_ / "f.npy", f);
  writeNpy(dir_ / "b.npy", b);
  writeNpy(dir_ / "u.npy", u);
  EXPECT_TRUE(python(R"(
import sys, numpy as np
d = sys.argv[1]
f = np.load(f'{d}/f.npy')
assert f.dtype == np.float16 and f.shape == (2, 3), f
assert (f == np.arange(6).reshape(2, 3) * 0.25 - 1).all(), f
b = np.load(f'{d}/b.npy')
assert b.dtype == np.bool_ and b.tolist() == [False, False, True, False], b
u = np.load(f'{d}/u.npy')
assert u.shape == () and u.dtype == np.uint64 and int(u) == 2**64 - 1, u
)"));
}

TEST_F(RuntimeFiles, WriteIsAtomicAndOverwrites) {
  Tensor t(DType::I32, {3});
  t.setFromDouble(1, 5);
  fs::path file = dir_ / "t.npy";
  writeFile(file, "old contents");
  writeNpy(file, t);
  EXPECT_EQ(readNpy(file).getAsDouble(1), 5);
  // Only the file itself is left: no temporary beside it.
  int entries = 0;
  for (const auto &e : fs::directory_iterator(dir_)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  EXPECT_ERROR(writeNpy(dir_ / "missing" / "t.npy", t),
               "cannot write '" + (dir_ / "missing" / "t.npy").string() + "'");
  fs::create_directory(dir_ / "adir");
  EXPECT_ERROR(writeNpy(dir_ / "adir", t), "rename failed");
  EXPECT_EQ(
      std::distance(fs::directory_iterator(dir_), fs::directory_iterator()),
      2); // t.npy and adir; the failed temporary was removed
}

// --- hostile .npy ---

TEST(NpyHostile, PreambleProblems) {
  EXPECT_ERROR(parseNpy("", "e.npy"), "e.npy: not a .npy file");
  EXPECT_ERROR(parseNpy("PK\x03\x04 zip file", "z.npy"), "not a .npy file");
  EXPECT_ERROR(parseNpy(std::string("\x93NUMPX\x01\x00", 8), "x"),
               "not a .npy file");
  EXPECT_ERROR(parseNpy("\x93NUMPY", "x"), "no format version");
  EXPECT_ERROR(parseNpy(std::string("\x93NUMPY\x04\x00\x00\x00", 10), "x"),
               "unsupported .npy format version 4.0");
  EXPECT_ERROR(parseNpy(std::string("\x93NUMPY\x01\x01\x00\x00", 10), "x"),
               "version 1.1");
  EXPECT_ERROR(parseNpy(std::string("\x93NUMPY\x01\x00\x10", 9), "x"),
               "no header length");
  EXPECT_ERROR(parseNpy(std::string("\x93NUMPY\x02\x00\x10\x00\x00", 11), "x"),
               "no header length");
  // The length field promises more header than the file holds.
  std::string good = npy(f32Dict("(1,)"), std::string(4, '\0'));
  EXPECT_ERROR(parseNpy(good.substr(0, 30), "cut.npy"),
               "cut.npy: truncated .npy header (header length");
  EXPECT_ERROR(
      parseNpy(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff{", 13), "x"),
      "header length 4294967295 is absurd");
}

TEST(NpyHostile, MalformedDictionaries) {
  const std::string data(24, '\0');
  auto bad = [&](const std::string &dict, const std::string &needle) {
    EXPECT_ERROR(parseNpy(npy(dict, data), "h.npy"), needle);
  };
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ",
      "h.npy: malformed .npy header: expected");
  bad("{'descr': '<f4', 'fortran_order': False}", "lacks 'shape'");
  bad("{'fortran_order': False, 'shape': (6,)}", "lacks 'descr'");
  bad("{'descr': '<f4', 'shape': (6,)}", "lacks 'fortran_order'");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}",
      "unexpected key 'x'");
  bad("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
      "'shape': (6,)}",
      "'descr' appears twice");
  bad("{'descr': '<f4', 'fortran_order': 0, 'shape': (6,)}", "True or False");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (6)}",
      "(n) is an integer");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': [6]}",
      "must be a tuple");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} junk",
      "unexpected text after");
  bad("{'descr': '<f4, 'fortran_order': False, 'shape': (6,)}", "expected");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'a",
      "unterminated string");
  bad("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (6,)}", "escapes");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}",
      "expected a dimension");
  bad("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,)}",
      "structured dtypes");
  bad("{'descr': '<c16', 'fortran_order': False, 'shape': (6,)}",
      "unsupported .npy dtype '<c16'");
  bad("{'descr': 'f4', 'fortran_order': False, 'shape': (6,)}",
      "unsupported .npy dtype 'f4'");
  bad("{'descr': '|f4', 'fortran_order': False, 'shape': (6,)}",
      "'|f4' has no byte order");
  bad("{'descr': '<U4', 'fortran_order': False, 'shape': (6,)}",
      "(string arrays)");
  bad("", "expected '{'");
  // Whitespace, double quotes, a missing trailing comma and Python 2 longs
  // are all valid.
  Tensor t = parseNpy(npy("  {\"shape\": (2L, 3L) ,'fortran_order':False,"
                          "'descr':'<f4'}   \n",
                          data),
                      "ok");
  EXPECT_EQ(t.describe(), "f32[2, 3]");
}

TEST(NpyHostile, ShapesAndSizes) {
  EXPECT_ERROR(parseNpy(npy(f32Dict("(-1,)"), ""), "n.npy"),
               "n.npy: malformed .npy header: negative dimension");
  EXPECT_ERROR(parseNpy(npy(f32Dict("(99999999999999999999,)"), ""), "x"),
               "overflows 64 bits");
  EXPECT_ERROR(parseNpy(npy(f32Dict("(9223372036854775808,)"), ""), "x"),
               "overflows 64 bits");
  EXPECT_ERROR(parseNpy(npy(f32Dict("(4294967296, 4294967296)"), ""), "x"),
               "overflows");
  EXPECT_ERROR(parseNpy(npy(f32Dict("(0, 4294967296, 4294967296)"), ""), "x"),
               "overflows");
  // 8 GiB claimed by a tiny file: refused before anything is allocated.
  EXPECT_ERROR(parseNpy(npy(f32Dict("(1073741824, 2)"), ""), "big.npy"),
               "big.npy: tensor f32[1073741824, 2] is too large (8589934592 "
               "bytes; the limit is 4294967296)");
  EXPECT_ERROR(parseNpy(npy(f32Dict("(4,)"), std::string(16, '\0')), "x", 15),
               "the limit is 15");
  EXPECT_ERROR(parseNpy(npy(f32Dict("(2, 3)"), std::string(23, '\0')), "s"),
               "truncated .npy data: 23 bytes, but f32 shape needs 24");
  EXPECT_ERROR(parseNpy(npy(f32Dict("(2, 3)"), std::string(25, '\0')), "s"),
               "1 unexpected bytes after the .npy data");
  EXPECT_ERROR(parseNpy(npy(f32Dict("()"), ""), "s"), "truncated .npy data");
  EXPECT_EQ(parseNpy(npy(f32Dict("(0, 4294967296)"), ""), "x").elementCount(),
            0);
}

TEST(NpyHostile, BoolBytesAreCanonical) {
  Tensor t =
      parseNpy(npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}",
                   std::string("\x00\x07\xff", 3)),
               "b");
  EXPECT_EQ(tensorBytes(t), std::string("\x00\x01\x01", 3));
}

TEST(NpyHostile, BigEndianIsSwapped) {
  Tensor t =
      parseNpy(npy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,)}",
                   std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8)),
               "be");
  EXPECT_EQ(t.getAsDouble(0), 258);
  EXPECT_EQ(t.getAsDouble(1), -2);
  // Byte order means nothing for one-byte types; any marker is fine.
  Tensor u = parseNpy(
      npy("{'descr': '>u1', 'fortran_order': False, 'shape': (1,)}", "\x05"),
      "u");
  EXPECT_EQ(u.getAsDouble(0), 5);
}

TEST(NpyHostile, EveryTruncationAndByteFlipIsAnErrorOrATensor) {
  Tensor t(DType::I16, {2, 3});
  for (int i = 0; i < 6; ++i)
    t.setFromDouble(i, i);
  std::string good = serializeNpy(t);
  for (std::size_t n = 0; n < good.size(); ++n)
    EXPECT_THROW(parseNpy(good.substr(0, n), "cut"), weir::Error) << n;
  for (std::size_t i = 0; i < 128; ++i)
    for (int v : {0x00, 0x20, 0x29, 0x2C, 0x2D, 0x39, 0x7F, 0xFF}) {
      std::string bad = good;
      bad[i] = static_cast<char>(v);
      try {
        Tensor r = parseNpy(bad, "flip");
        EXPECT_LE(r.byteSize(), bad.size());
      } catch (const weir::Error &) {
      }
    }
}

TEST_F(RuntimeFiles, ReadNpyFileProblems) {
  EXPECT_ERROR(readNpy(dir_ / "absent.npy"), "cannot open '");
  EXPECT_ERROR(readNpy(dir_), "is not a regular file");
  writeFile(dir_ / "short.npy", npy(f32Dict("(3,)"), std::string(8, 'x')));
  EXPECT_ERROR(readNpy(dir_ / "short.npy"),
               "'" + (dir_ / "short.npy").string() +
                   "': truncated .npy data: 8 bytes");
  writeFile(dir_ / "long.npy", npy(f32Dict("(1,)"), std::string(8, 'x')));
  EXPECT_ERROR(readNpy(dir_ / "long.npy"), "4 unexpected bytes");
  writeFile(dir_ / "empty.npy", "");
  EXPECT_ERROR(readNpy(dir_ / "empty.npy"), "not a .npy file");
}

// --- ONNX TensorProto files ---

namespace {
const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";
}

TEST(TensorPb, ReadsTestAdd) {
  fs::path dir = kNodeTests / "test_add" / "test_data_set_0";
  if (!fs::exists(dir))
    GTEST_SKIP() << dir << " is missing (Debian's libonnx-testdata)";
  for (const char *name : {"input_0.pb", "input_1.pb", "output_0.pb"}) {
    Tensor t = readTensorPb(dir / name);
    EXPECT_EQ(t.describe(), "f32[3, 4, 5]") << name;
    EXPECT_FALSE(t.readOnly());
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 64, 0u);
  }
  Tensor a = readTensorPb(dir / "input_0.pb");
  Tensor b = readTensorPb(dir / "input_1.pb");
  Tensor sum = readTensorPb(dir / "output_0.pb");
  for (std::int64_t i = 0; i < sum.elementCount(); ++i)
    ASSERT_EQ(static_cast<float>(a.getAsDouble(i) + b.getAsDouble(i)),
              sum.getAsDouble(i));
}

TEST_F(RuntimeFiles, TensorPbMatchesOnnxPython) {
  if (!have("onnx") || !fs::exists(kNodeTests))
    GTEST_SKIP() << "needs Python onnx and libonnx-testdata";
  // For each file, onnx's own numpy_helper says what it holds; typed-field
  // (not raw_data) tensors are made with onnx.helper.
  ASSERT_TRUE(python(R"(
import sys, numpy as np, onnx
from onnx import numpy_helper, helper, TensorProto
d = sys.argv[1]
node = '/usr/share/libonnx-testdata/data/node/'
files = ['test_abs/test_data_set_0/input_0.pb',
         'test_and2d/test_data_set_0/input_0.pb',
         'test_cast_DOUBLE_to_FLOAT16/test_data_set_0/output_0.pb',
         'test_bitshift_left_uint64/test_data_set_0/input_0.pb',
         'test_clip_default_int8_inbounds/test_data_set_0/input_0.pb',
         'test_adagrad/test_data_set_0/input_1.pb',
         'test_tril_zero/test_data_set_0/input_0.pb']
with open(f'{d}/manifest.txt', 'w') as m:
  for i, f in enumerate(files):
    t = onnx.TensorProto()
    t.ParseFromString(open(node + f, 'rb').read())
    a = numpy_helper.to_array(t)
    open(f'{d}/{i}.raw', 'wb').write(np.ascontiguousarray(a).tobytes())
    m.write(f'{node + f} {d}/{i}.raw {a.dtype} {list(a.shape)}\n')
  typed = [('float', TensorProto.FLOAT, [1.5, -2, 3e38], np.float32),
           ('int8', TensorProto.INT8, [-128, 127, -1], np.int8),
           ('int64', TensorProto.INT64, [-2**63, 5, 2**63 - 1], np.int64),
           ('uint64', TensorProto.UINT64, [2**64 - 1, 0, 1], np.uint64),
           ('double', TensorProto.DOUBLE, [0.1, -0.0, 1e-310], np.float64),
           ('bool', TensorProto.BOOL, [True, False, True], np.bool_),
           ('uint16', TensorProto.UINT16, [65535, 0, 9], np.uint16),
           ('float16', TensorProto.FLOAT16,
            np.array([0.1, -65504, 6e-8], dtype=np.float16), np.float16)]
  for name, dt, values, npt in typed:
    t = helper.make_tensor(name, dt, [3], values, raw=False)
    assert not t.raw_data
    open(f'{d}/{name}.pb', 'wb').write(t.SerializeToString())
    a = numpy_helper.to_array(t)
    assert a.dtype == npt, (name, a.dtype)
    open(f'{d}/{name}.raw', 'wb').write(a.tobytes())
    m.write(f'{d}/{name}.pb {d}/{name}.raw {a.dtype} [3]\n')
)"));
  std::ifstream manifest(dir_ / "manifest.txt");
  std::string pb, raw, dtype, shape;
  int checked = 0;
  const std::pair<const char *, const char *> kNames[] = {
      {"float32", "f32"}, {"float64", "f64"}, {"float16", "f16"},
      {"int8", "i8"},     {"int64", "i64"},   {"uint64", "u64"},
      {"uint16", "u16"},  {"bool", "bool"}};
  while (manifest >> pb >> raw >> dtype && std::getline(manifest, shape)) {
    SCOPED_TRACE(pb);
    Tensor t = readTensorPb(pb);
    std::string ours = t.describe();
    const auto *n = std::find_if(std::begin(kNames), std::end(kNames),
                                 [&](auto &p) { return dtype == p.first; });
    ASSERT_NE(n, std::end(kNames)) << dtype;
    shape.erase(0, shape.find('['));
    EXPECT_EQ(ours, n->second + shape);
    EXPECT_EQ(tensorBytes(t), readFile(raw));
    ++checked;
  }
  EXPECT_EQ(checked, 15);
}

TEST_F(RuntimeFiles, TensorPbRoundTrip) {
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I8,
                  DType::U8, DType::I16, DType::U16, DType::I32, DType::U32,
                  DType::I64, DType::U64, DType::Bool}) {
    Tensor t(d, {2, 3});
    for (int i = 0; i < 6; ++i)
      t.setFromDouble(i, i * 3 - 4);
    fs::path file = dir_ / "t.pb";
    writeTensorPb(file, t, "x");
    Tensor back = readTensorPb(file);
    EXPECT_EQ(back.describe(), t.describe());
    EXPECT_EQ(tensorBytes(back), tensorBytes(t));
  }
  Tensor scalar(DType::I64, {});
  writeTensorPb(dir_ / "s.pb", scalar, "s");
  EXPECT_EQ(readTensorPb(dir_ / "s.pb").describe(), "i64[]");
  if (have("onnx")) {
    Tensor f(DType::F32, {2});
    f.setFromDouble(1, 2.5);
    writeTensorPb(dir_ / "f.pb", f, "weights");
    EXPECT_TRUE(python(R"(
import sys, onnx
from onnx import numpy_helper
t = onnx.load_tensor(sys.argv[1] + '/f.pb')
assert t.name == 'weights' and t.data_type == onnx.TensorProto.FLOAT
assert numpy_helper.to_array(t).tolist() == [0.0, 2.5]
)"));
  }
}

TEST_F(RuntimeFiles, TensorPbHostile) {
  auto check = [&](const std::string &bytes, const std::string &needle) {
    fs::path file = dir_ / "h.pb";
    writeFile(file, bytes);
    EXPECT_ERROR(readTensorPb(file), needle);
  };
  const std::string f32 = intField(kDataType, kFloat);
  check("", "the file is empty");
  check(std::string(8, '\xff'), "not a serialized ONNX TensorProto");
  check(f32 + intField(kDims, 3) + bytesField(kRawData, "abc"),
        "holds 3 bytes of data but its dims need 12");
  check(f32 + intField(kDims, 3) + intField(kDataLocation, 1) +
            bytesField(13, bytesField(1, "location") + bytesField(2, "x.bin")),
        "keeps its data in an external file");
  check(f32 + intField(kDims, 3) + intField(kDataLocation, 1), "external file");
  check(intField(kDataType, kString) + intField(kDims, 1) +
            bytesField(6, "hello"),
        "element type STRING, which Weir does not support");
  check(intField(kDataType, 0), "element type UNDEFINED");
  check(intField(kDataType, 99), "data_type 99");
  check(f32 + intField(kDims, static_cast<std::uint64_t>(-2)),
        "negative dimension");
  check(f32 + intField(kDims, 1ull << 40) + intField(kDims, 1ull << 40),
        "overflows");
  check(f32 + intField(kDims, 1ull << 31) + intField(kDims, 4), "is too large");
  check(f32 + intField(kDims, 3) + bytesField(kRawData, std::string(8, 'a')) +
            bytesField(kName, "x"),
        "(tensor 'x') holds 8 bytes of data but its dims need 12");
  check(f32 + intField(kDims, 2) + bytesField(kFloatData, std::string(4, 'a')),
        "holds 4 bytes");
  check(f32 + bytesField(kSegment, intField(1, 0) + intField(2, 1)),
        "not a plain TensorProto");
  check(f32 + intField(kDims, 1) + bytesField(kRawData, "abcd") +
            intField(100, 1),
        "not a plain TensorProto");
  // A sequence value (what SequenceProto looks like through TensorProto's
  // eyes): refused, not misread.
  check(bytesField(1, "seq") + intField(2, 1) +
            bytesField(3,
                       f32 + intField(kDims, 1) + bytesField(kRawData, "abcd")),
        "not a plain TensorProto");
  EXPECT_ERROR(readTensorPb(dir_ / "absent.pb"), "cannot open");
  EXPECT_ERROR(readTensorPb(dir_), "not a regular file");

  writeFile(dir_ / "b.pb", intField(kDataType, kBool) + intField(kDims, 3) +
                               bytesField(kRawData, std::string("\0\2\1", 3)));
  EXPECT_EQ(tensorBytes(readTensorPb(dir_ / "b.pb")), std::string("\0\1\1", 3));
}

TEST(TensorPb, SweepOfEveryOnnxTestDataFile) {
  if (!fs::exists(kNodeTests))
    GTEST_SKIP() << kNodeTests << " is missing (Debian's libonnx-testdata)";
  int total = 0, loaded = 0;
  std::vector<std::string> failures;
  for (const auto &test : fs::directory_iterator(kNodeTests))
    for (const auto &set : fs::directory_iterator(test.path())) {
      if (!set.is_directory() ||
          !set.path().filename().string().starts_with("test_data_set_"))
        continue;
      for (const auto &file : fs::directory_iterator(set.path())) {
        if (file.path().extension() != ".pb")
          continue;
        ++total;
        try {
          Tensor t = readTensorPb(file.path());
          EXPECT_EQ(t.byteSize(), static_cast<std::size_t>(t.elementCount()) *
                                      weir::ir::dtypeSize(t.dtype()));
          ++loaded;
        } catch (const weir::Error &e) {
          std::string message = e.what();
          EXPECT_NE(message.find(file.path().string()), std::string::npos)
              << message;
          failures.push_back(message);
        }
      }
    }
  std::cout << "[ sweep    ] " << loaded << " of " << total
            << " ONNX test-data .pb files load\n";
  // A sample of the refusals, to see that their messages read well.
  for (std::size_t i = 0; i < failures.size(); i += 8)
    std::cout << "[ refused  ] " << failures[i] << "\n";
  EXPECT_GT(total, 2000);
  EXPECT_GE(loaded * 100, total * 95);
}
