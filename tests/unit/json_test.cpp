#include "ir/json.h"

#include "ir/error.h"
#include "ir/hash.h"
#include "ir/validate.h"
#include "tests/unit/ir_builders.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

using namespace weir::ir;
using namespace weir::ir::builders;
namespace fs = std::filesystem;

namespace {

template <typename F>
void expectError(F &&f, std::initializer_list<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "expected weir::Error";
  } catch (const weir::Error &e) {
    std::string message = e.what();
    for (const std::string &needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos)
          << "'" << needle << "' not in: " << message;
  }
}

Blob makeBlob(std::vector<std::uint8_t> bytes) {
  auto v = std::make_shared<std::vector<std::byte>>(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i)
    (*v)[i] = static_cast<std::byte>(bytes[i]);
  return v;
}

/// f32 values 0, 1, 2, ... as bytes.
Blob floatBlob(std::size_t count) {
  auto v = std::make_shared<std::vector<std::byte>>(count * 4);
  for (std::size_t i = 0; i < count; ++i) {
    float f = static_cast<float>(i);
    std::memcpy(v->data() + 4 * i, &f, 4);
  }
  return v;
}

/// serialize -> deserialize -> serialize; expects identical text and bytes
/// and returns the program read back.
Program roundTrip(const Program &p) {
  SerializedProgram first = serialize(p);
  Program back = deserialize(first.json, first.binary);
  SerializedProgram second = serialize(back);
  EXPECT_EQ(first.json, second.json);
  EXPECT_EQ(first.binary, second.binary);
  EXPECT_EQ(structuralHash(p), structuralHash(back));
  EXPECT_EQ(back.nextNodeId(), p.nextNodeId());
  EXPECT_EQ(back.nextEdgeId(), p.nextEdgeId());
  return back;
}

/// libraryRelu with extra attributes on the Relu node.
Program withAttributes(Attributes attrs) {
  Program p = libraryRelu();
  std::get<LibraryData>(p.states[0].findNode(ReluIds::relu)->payload)
      .attributes = std::move(attrs);
  return p;
}

const Attributes &attributesOf(const Program &p) {
  return p.states[0].findNode(ReluIds::relu)->library().attributes;
}

/// A program with two constant containers sharing one blob, a third with
/// its own, and a tensor attribute sharing the first blob too.
Program withConstants() {
  Program p = libraryRelu();
  Blob shared = floatBlob(8);
  for (const char *name : {"W1", "W2"}) {
    Container c = argument(name, DType::F32, {Expr(2), Expr(4)});
    c.constant = shared;
    p.addContainer(c);
  }
  Container b = argument("bias", DType::F32, {Expr(3)});
  b.constant = floatBlob(3);
  p.addContainer(b);
  p.states[0].findNode(ReluIds::relu)->library().attributes["value"] =
      TensorValue{DType::F32, {8}, shared};
  return p;
}

/// A fresh, empty directory under the system temp dir, removed at exit.
class TempDir {
public:
  TempDir() {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ =
        fs::temp_directory_path() /
        ("weir_json_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path &path() const { return path_; }

private:
  fs::path path_;
};

std::string readText(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeText(const fs::path &p, const std::string &text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

} // namespace

// --- Round trips ---------------------------------------------------------

TEST(Json, RoundTripBuilderPrograms) {
  Expr n = Expr::symbol("N");
  for (const Program &p :
       {elementwiseAdd(16), elementwiseAdd(n), matmulWithWcr(8, 16, 4),
        matmulWithWcr(n, n * 2, 3), libraryRelu(), nestedMaps(4, n)}) {
    SCOPED_TRACE(p.name);
    Program back = roundTrip(p);
    EXPECT_TRUE(validate(back).empty());
    EXPECT_EQ(back.name, p.name);
    EXPECT_EQ(back.symbols, p.symbols);
    EXPECT_EQ(back.inputs, p.inputs);
    EXPECT_EQ(back.outputs, p.outputs);
  }
}

TEST(Json, DocumentShape) {
  nlohmann::json doc = nlohmann::json::parse(serialize(elementwiseAdd(4)).json);
  EXPECT_EQ(doc["format"], "weir-program");
  EXPECT_EQ(doc["version"], kJsonFormatVersion);
  const nlohmann::json &p = doc["program"];
  EXPECT_EQ(p["containers"].size(), 3u);
  EXPECT_EQ(p["containers"][0]["shape"], nlohmann::json::array({"4"}));
  const nlohmann::json &edge = p["states"][0]["edges"][2];
  EXPECT_EQ(edge["src_conn"], "OUT_A");
  EXPECT_EQ(edge["dst_conn"], "a");
  EXPECT_EQ(edge["memlet"]["subset"], "i");
  const nlohmann::json &tasklet = p["states"][0]["nodes"][4];
  EXPECT_EQ(tasklet["code"], "c = a + b\n");
}

TEST(Json, SymbolicShapes) {
  Program p = elementwiseAdd(Expr::symbol("N") * 4);
  Program back = roundTrip(p);
  EXPECT_EQ(back.symbols, std::vector<std::string>{"N"});
  EXPECT_EQ(back.container("A").shape[0], Expr::symbol("N") * 4);
  EXPECT_EQ(back.container("A").shape[0].str(), "N*4");
}

TEST(Json, WcrMemlets) {
  Program back = roundTrip(matmulWithWcr(8, 16, 4));
  const State &s = back.states[0];
  ASSERT_EQ(s.edges.size(), 6u);
  EXPECT_EQ(s.edges[4].memlet.wcr, Wcr::Sum);
  EXPECT_EQ(s.edges[4].memlet.str(), "C[i, j] (sum)");
  EXPECT_EQ(s.edges[5].memlet.str(), "C[0:8, 0:16] (sum)");
  EXPECT_FALSE(s.edges[0].memlet.wcr.has_value());
  EXPECT_EQ(s.findNode(MatmulIds::entry)->map().schedule,
            Schedule::CpuParallel);
}

TEST(Json, EmptyMemletsAndScalars) {
  Program p = libraryRelu();
  State &s = p.states[0];
  // A pure ordering edge that moves nothing.
  addEdge(p, s, ReluIds::x, "", ReluIds::y, "", Memlet{});
  // A rank-0 container moved with an empty subset.
  Container scalar = argument("s", DType::I64, {});
  p.addContainer(scalar);
  NodeId a = addAccess(p, s, "s");
  NodeId b = addAccess(p, s, "s");
  addEdge(p, s, a, "", b, "", Memlet{"s", Subset{}, {}});
  ASSERT_FALSE(hasErrors(validate(p)));
  Program back = roundTrip(p);
  ASSERT_EQ(back.states[0].edges.size(), 4u);
  EXPECT_TRUE(back.states[0].edges[2].memlet.empty());
  EXPECT_EQ(back.states[0].edges[3].memlet.container, "s");
  EXPECT_TRUE(back.states[0].edges[3].memlet.subset.dims.empty());
}

TEST(Json, StridesStorageAndMetadata) {
  Program p = elementwiseAdd(8);
  p.metadata["producer"] = "unit test";
  p.metadata["source"] = "model\xff.onnx"; // not UTF-8
  Container t;
  t.name = "tile";
  t.shape = {Expr(4), Expr(4)};
  t.strides = {Expr(1), Expr(4)};
  t.storage = Storage::GpuShared;
  p.addContainer(t);
  Program back = roundTrip(p);
  EXPECT_EQ(back.metadata, p.metadata);
  EXPECT_EQ(back.container("tile").strides, t.strides);
  EXPECT_EQ(back.container("tile").storage, Storage::GpuShared);
  EXPECT_TRUE(back.container("tile").transient);
}

TEST(Json, EveryAttributeKind) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  auto graph = std::make_shared<const Program>(withConstants());
  Attributes attrs{
      {"int", std::int64_t{-7}},
      {"int_max", std::numeric_limits<std::int64_t>::max()},
      {"float", 0.1},
      {"float_neg_zero", -0.0},
      {"float_nan", nan},
      {"float_inf", inf},
      {"float_neg_inf", -inf},
      {"string", std::string("héllo \"quoted\"\n")},
      {"string_bytes", std::string("\xff\xfe\x00z", 4)},
      {"ints", std::vector<std::int64_t>{1, -2, 3}},
      {"ints_empty", std::vector<std::int64_t>{}},
      {"floats", std::vector<double>{1.5, nan, -inf, 1e-300}},
      {"strings", std::vector<std::string>{"a", "", "\x80"}},
      {"tensor", TensorValue{DType::I8, {2, 2}, makeBlob({1, 2, 3, 255})}},
      {"tensor_no_data", TensorValue{DType::F16, {0}, nullptr}},
      {"graph", graph},
      {"graph_none", std::shared_ptr<const Program>()},
  };
  Program back = roundTrip(withAttributes(attrs));
  const Attributes &got = attributesOf(back);
  ASSERT_EQ(got.size(), attrs.size());
  EXPECT_EQ(std::get<std::int64_t>(got.at("int")), -7);
  EXPECT_EQ(std::get<std::int64_t>(got.at("int_max")),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(std::get<double>(got.at("float")), 0.1);
  EXPECT_TRUE(std::signbit(std::get<double>(got.at("float_neg_zero"))));
  EXPECT_TRUE(std::isnan(std::get<double>(got.at("float_nan"))));
  EXPECT_EQ(std::get<double>(got.at("float_inf")), inf);
  EXPECT_EQ(std::get<double>(got.at("float_neg_inf")), -inf);
  EXPECT_EQ(std::get<std::string>(got.at("string")), "héllo \"quoted\"\n");
  EXPECT_EQ(std::get<std::string>(got.at("string_bytes")),
            std::string("\xff\xfe\x00z", 4));
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(got.at("ints")),
            (std::vector<std::int64_t>{1, -2, 3}));
  EXPECT_TRUE(
      std::get<std::vector<std::int64_t>>(got.at("ints_empty")).empty());
  auto floats = std::get<std::vector<double>>(got.at("floats"));
  ASSERT_EQ(floats.size(), 4u);
  EXPECT_EQ(floats[0], 1.5);
  EXPECT_TRUE(std::isnan(floats[1]));
  EXPECT_EQ(floats[2], -inf);
  EXPECT_EQ(floats[3], 1e-300);
  EXPECT_EQ(std::get<std::vector<std::string>>(got.at("strings")),
            (std::vector<std::string>{"a", "", "\x80"}));
  const auto &tensor = std::get<TensorValue>(got.at("tensor"));
  EXPECT_EQ(tensor.dtype, DType::I8);
  EXPECT_EQ(tensor.shape, (std::vector<std::int64_t>{2, 2}));
  ASSERT_NE(tensor.data, nullptr);
  EXPECT_EQ(*tensor.data, *makeBlob({1, 2, 3, 255}));
  EXPECT_EQ(std::get<TensorValue>(got.at("tensor_no_data")).data, nullptr);
  const auto &inner = std::get<std::shared_ptr<const Program>>(got.at("graph"));
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(serialize(*inner).json, serialize(*graph).json);
  EXPECT_EQ(*inner->container("W1").constant, *graph->container("W1").constant);
  EXPECT_EQ(std::get<std::shared_ptr<const Program>>(got.at("graph_none")),
            nullptr);
}

TEST(Json, StringsThatAreNotUtf8) {
  // Each of these is rejected by strict UTF-8 decoders (and by nlohmann's
  // dump): stray continuation, truncated sequence, overlong encoding,
  // surrogate, code point above U+10FFFF, bytes that never occur.
  std::vector<std::string> bad = {"\x80",
                                  "\xc3",
                                  "\xe2\x82",
                                  "\xc0\xaf",
                                  "\xc1\xbf",
                                  "\xe0\x80\xaf",
                                  "\xed\xa0\x80",
                                  "\xf0\x80\x80\xaf",
                                  "\xf4\x90\x80\x80",
                                  "\xf5\x80\x80\x80",
                                  "\xf8\x88\x80\x80\x80",
                                  "\xfe",
                                  "ok\xffok"};
  std::vector<std::string> good = {"",
                                   "plain",
                                   "\xc2\xa9",
                                   "\xe2\x82\xac",
                                   "\xed\x9f\xbf",
                                   "\xee\x80\x80",
                                   "\xf0\x9f\x98\x80",
                                   "\xf4\x8f\xbf\xbf"};
  Attributes attrs;
  std::vector<std::string> all = bad;
  all.insert(all.end(), good.begin(), good.end());
  attrs["strings"] = all;
  for (std::size_t i = 0; i < all.size(); ++i)
    attrs["s" + std::to_string(i)] = all[i];
  Program p = withAttributes(attrs);
  p.states[0].findNode(ReluIds::relu)->label = "relu\xc0\x80";
  Program back = roundTrip(p);
  const Attributes &got = attributesOf(back);
  EXPECT_EQ(std::get<std::vector<std::string>>(got.at("strings")), all);
  for (std::size_t i = 0; i < all.size(); ++i)
    EXPECT_EQ(std::get<std::string>(got.at("s" + std::to_string(i))), all[i])
        << i;
  EXPECT_EQ(back.states[0].findNode(ReluIds::relu)->label, "relu\xc0\x80");
  // Valid UTF-8 stays a plain JSON string.
  nlohmann::json doc = nlohmann::json::parse(serialize(p).json);
  const nlohmann::json &json =
      doc["program"]["states"][0]["nodes"][1]["attributes"];
  for (std::size_t i = 0; i < all.size(); ++i)
    EXPECT_EQ(json["s" + std::to_string(i)]["string"].is_string(),
              i >= bad.size())
        << i;
}

TEST(Json, RandomByteStringsRoundTrip) {
  // Random short byte strings biased toward UTF-8 lead and continuation
  // bytes: every one must serialize (the writer's UTF-8 check agrees with
  // the JSON library's) and come back unchanged.
  std::mt19937 rng(12345);
  const std::uint8_t interesting[] = {'a',  0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f,
                                      0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0,
                                      0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1,
                                      0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xfe, 0xff};
  std::vector<std::string> strings;
  for (int n = 0; n < 3000; ++n) {
    std::string s(rng() % 6, '\0');
    for (char &c : s)
      c = static_cast<char>(interesting[rng() % sizeof interesting]);
    strings.push_back(s);
  }
  Program back = roundTrip(withAttributes({{"s", strings}}));
  EXPECT_EQ(std::get<std::vector<std::string>>(attributesOf(back).at("s")),
            strings);
}

TEST(Json, InvalidUtf8InANameIsAWeirError) {
  // Container names are written as plain JSON strings; bytes that are not
  // UTF-8 must fail with weir::Error rather than a JSON library exception.
  Program p = libraryRelu();
  p.addContainer(argument("bad\xff", DType::F32, {Expr(1)}));
  expectError([&] { serialize(p); },
              {"cannot write program 'relu' as JSON", "UTF-8"});
}

TEST(Json, SharedBlobsAreWrittenOnceAndStayShared) {
  Program p = withConstants();
  ASSERT_FALSE(hasErrors(validate(p)));
  ASSERT_EQ(p.container("W1").constant, p.container("W2").constant);
  SerializedProgram s = serialize(p);
  // W1/W2/tensor share 32 bytes at offset 0; bias (12 bytes) at offset 64.
  EXPECT_EQ(s.binary.size(), 64u + 12u);
  Program back = roundTrip(p);
  const Blob &w1 = back.container("W1").constant;
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w1, back.container("W2").constant);
  EXPECT_EQ(w1, std::get<TensorValue>(attributesOf(back).at("value")).data);
  EXPECT_NE(w1, back.container("bias").constant);
  EXPECT_EQ(*w1, *floatBlob(8));
  EXPECT_EQ(*back.container("bias").constant, *floatBlob(3));
}

TEST(Json, EmptyBlobsDoNotAliasTheNextOne) {
  // A zero-size constant is written at the same offset as the blob after it;
  // reading must still give each container its own bytes.
  Program p = libraryRelu();
  Container empty = argument("E", DType::F32, {Expr(0)});
  empty.constant = makeBlob({});
  p.addContainer(empty);
  Container w = argument("W", DType::F32, {Expr(2)});
  w.constant = floatBlob(2);
  p.addContainer(w);
  Program back = roundTrip(p);
  ASSERT_NE(back.container("E").constant, nullptr);
  EXPECT_TRUE(back.container("E").constant->empty());
  ASSERT_NE(back.container("W").constant, nullptr);
  EXPECT_EQ(*back.container("W").constant, *floatBlob(2));
}

// --- Files ---------------------------------------------------------------

TEST(Json, SaveAndLoadWithSidecar) {
  TempDir dir;
  fs::path path = dir.path() / "program.json";
  Program p = withConstants();
  saveProgram(p, path);
  ASSERT_TRUE(fs::exists(path));
  ASSERT_TRUE(fs::exists(dir.path() / "program.json.bin"));
  EXPECT_EQ(fs::file_size(dir.path() / "program.json.bin"),
            serialize(p).binary.size());
  EXPECT_EQ(readText(path), serialize(p).json);
  // Nothing but the two files is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()),
                          fs::directory_iterator()),
            2);
  Program back = loadProgram(path);
  EXPECT_EQ(serialize(back).json, serialize(p).json);
  EXPECT_EQ(back.container("W1").constant, back.container("W2").constant);
}

TEST(Json, SaveWithoutConstantsWritesNoSidecar) {
  TempDir dir;
  fs::path path = dir.path() / "add.json";
  saveProgram(elementwiseAdd(4), path);
  EXPECT_FALSE(fs::exists(dir.path() / "add.json.bin"));
  EXPECT_EQ(serialize(loadProgram(path)).json,
            serialize(elementwiseAdd(4)).json);
}

TEST(Json, SaveOverwrites) {
  TempDir dir;
  fs::path path = dir.path() / "p.json";
  saveProgram(elementwiseAdd(4), path);
  saveProgram(matmulWithWcr(2, 3, 4), path);
  EXPECT_EQ(loadProgram(path).name, "matmul");
}

// --- Errors --------------------------------------------------------------

TEST(Json, WrongFormatName) {
  std::string text = serialize(elementwiseAdd(4)).json;
  std::string wrong = text;
  wrong.replace(wrong.find("weir-program"), 12, "onnx-program");
  expectError([&] { deserialize(wrong, {}); }, {"not a Weir program"});
  expectError([&] { deserialize("[1, 2]", {}); }, {"not a Weir program"});
}

TEST(Json, NewerVersionIsRejected) {
  nlohmann::json doc = nlohmann::json::parse(serialize(elementwiseAdd(4)).json);
  doc["version"] = kJsonFormatVersion + 1;
  expectError([&] { deserialize(doc.dump(), {}); },
              {"format version 2 is not supported", "reads version 1"});
  doc["version"] = 0;
  expectError([&] { deserialize(doc.dump(), {}); },
              {"format version 0 is not supported"});
}

TEST(Json, MalformedJson) {
  expectError([] { deserialize("{\"format\": ", {}); },
              {"cannot parse program JSON"});
  // Well-formed JSON missing a key.
  nlohmann::json doc = nlohmann::json::parse(serialize(elementwiseAdd(4)).json);
  doc["program"].erase("states");
  expectError([&] { deserialize(doc.dump(), {}); },
              {"malformed program JSON", "states"});
  // A value of the wrong type.
  doc = nlohmann::json::parse(serialize(elementwiseAdd(4)).json);
  doc["program"]["states"][0]["nodes"][0]["id"] = "one";
  expectError([&] { deserialize(doc.dump(), {}); }, {"malformed program JSON"});
}

TEST(Json, BadValuesNameTheProblem) {
  auto mutate = [](auto &&change) {
    nlohmann::json doc =
        nlohmann::json::parse(serialize(matmulWithWcr(2, 3, 4)).json);
    change(doc["program"]);
    return doc.dump();
  };
  expectError(
      [&] {
        deserialize(
            mutate([](auto &p) { p["containers"][0]["dtype"] = "f31"; }), {});
      },
      {"unknown dtype 'f31'"});
  expectError(
      [&] {
        deserialize(
            mutate([](auto &p) { p["containers"][0]["storage"] = "tape"; }),
            {});
      },
      {"unknown storage", "tape"});
  expectError(
      [&] {
        deserialize(mutate([](auto &p) {
                      p["states"][0]["nodes"][0]["kind"] = "blob";
                    }),
                    {});
      },
      {"node 1 has unknown kind 'blob'"});
  expectError(
      [&] {
        deserialize(mutate([](auto &p) {
                      p["states"][0]["edges"][4]["memlet"]["wcr"] = "avg";
                    }),
                    {});
      },
      {"edge 5", "avg"});
  expectError(
      [&] {
        deserialize(mutate([](auto &p) {
                      p["states"][0]["nodes"][2]["schedule"] = "quantum";
                    }),
                    {});
      },
      {"node 3 has unknown schedule", "quantum"});
  expectError(
      [&] {
        deserialize(mutate([](auto &p) { p["name"] = {{"hex", "zz"}}; }), {});
      },
      {"hex", "zz"});
  expectError(
      [&] {
        deserialize(mutate([](auto &p) { p["name"] = {{"hex", "abc"}}; }), {});
      },
      {"odd-length hex string 'abc'"});
}

TEST(Json, BadAttributeNamesTheAttribute) {
  nlohmann::json doc = nlohmann::json::parse(serialize(libraryRelu()).json);
  auto &attrs = doc["program"]["states"][0]["nodes"][1]["attributes"];
  attrs["alpha"] = {{"complex", 1}};
  expectError([&] { deserialize(doc.dump(), {}); },
              {"attribute 'alpha' has unknown kind 'complex'"});
  attrs["alpha"] = {{"int", 1}, {"float", 2.0}};
  expectError([&] { deserialize(doc.dump(), {}); },
              {"attribute 'alpha' is not a one-key object"});
}

TEST(Json, CorruptedSidecar) {
  TempDir dir;
  fs::path path = dir.path() / "w.json";
  saveProgram(withConstants(), path);
  fs::path bin = dir.path() / "w.json.bin";
  std::string bytes = readText(bin);
  bytes[5] ^= 0x40;
  writeText(bin, bytes);
  expectError(
      [&] { loadProgram(path); },
      {path.string(), "constant data at offset 0", "does not match its hash"});
}

TEST(Json, TruncatedSidecar) {
  TempDir dir;
  fs::path path = dir.path() / "w.json";
  saveProgram(withConstants(), path);
  fs::path bin = dir.path() / "w.json.bin";
  fs::resize_file(bin, 70);
  expectError([&] { loadProgram(path); },
              {path.string(), "offset 64 (12 bytes)",
               "past the end of the binary section (70 bytes)"});
  fs::remove(bin);
  expectError([&] { loadProgram(path); },
              {path.string(), "past the end of the binary section (0 bytes)"});
}

TEST(Json, MissingAndMalformedFiles) {
  TempDir dir;
  fs::path path = dir.path() / "nothing.json";
  expectError([&] { loadProgram(path); }, {"cannot open", path.string()});
  writeText(path, "{ not json");
  expectError([&] { loadProgram(path); },
              {path.string(), "cannot parse program JSON"});
}

// --- Structural hash -----------------------------------------------------

TEST(StructuralHash, StableAcrossRoundTrips) {
  Program p = withConstants();
  Program back = deserialize(serialize(p).json, serialize(p).binary);
  EXPECT_EQ(structuralHash(p), structuralHash(back));
  EXPECT_EQ(structuralHash(p), structuralHash(withConstants()));
  EXPECT_EQ(hashHex(structuralHash(p)).size(), 16u);
}

TEST(StructuralHash, IgnoresNameAndMetadata) {
  Program p = elementwiseAdd(16);
  std::uint64_t h = structuralHash(p);
  p.name = "renamed";
  p.metadata["source"] = "/some/where/model.onnx";
  EXPECT_EQ(structuralHash(p), h);
  // The same holds inside nested subgraphs.
  Program outer = libraryRelu();
  Program inner = elementwiseAdd(4);
  outer.states[0].findNode(ReluIds::relu)->library().attributes["g"] =
      std::make_shared<const Program>(inner);
  std::uint64_t ho = structuralHash(outer);
  inner.name = "other";
  inner.metadata["x"] = "y";
  outer.states[0].findNode(ReluIds::relu)->library().attributes["g"] =
      std::make_shared<const Program>(inner);
  EXPECT_EQ(structuralHash(outer), ho);
}

TEST(StructuralHash, ChangesWithEveryStructuralEdit) {
  const Program base = withConstants();
  const std::uint64_t h = structuralHash(base);
  auto expectChanged = [&](const char *what, auto &&edit) {
    Program p = base;
    edit(p);
    EXPECT_NE(structuralHash(p), h) << what;
  };
  expectChanged("dtype",
                [](Program &p) { p.containers.at("X").dtype = DType::F16; });
  expectChanged("shape",
                [](Program &p) { p.containers.at("bias").shape = {Expr(4)}; });
  expectChanged("memlet subset", [](Program &p) {
    p.states[0].edges.edit(0).memlet.subset.dims[0] = Range(0, 2);
  });
  expectChanged("wcr", [](Program &p) {
    p.states[0].edges.edit(1).memlet.wcr = Wcr::Max;
  });
  expectChanged("node label", [](Program &p) {
    p.states[0].findNode(ReluIds::relu)->label = "relu1";
  });
  expectChanged("implementation", [](Program &p) {
    p.states[0].findNode(ReluIds::relu)->library().implementation = "pure";
  });
  expectChanged("attribute", [](Program &p) {
    p.states[0].findNode(ReluIds::relu)->library().attributes["alpha"] = 0.5;
  });
  expectChanged("storage", [](Program &p) {
    p.containers.at("Y").storage = Storage::GpuGlobal;
  });
  expectChanged("argument order", [](Program &p) {
    p.inputs = {"X", "Y"};
    p.outputs = {};
  });
  expectChanged("constant byte", [](Program &p) {
    auto bytes = *p.containers.at("bias").constant;
    bytes[11] ^= std::byte{1};
    p.containers.at("bias").constant =
        std::make_shared<const std::vector<std::byte>>(bytes);
  });
}

TEST(HashBytes, DependsOnEveryByteAndTheLength) {
  std::vector<std::uint8_t> data(37);
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<std::uint8_t>(i * 7);
  std::uint64_t h = hashBytes(data.data(), data.size());
  EXPECT_EQ(h, hashBytes(data.data(), data.size()));
  EXPECT_NE(h, hashBytes(data.data(), data.size(), 1));
  for (std::size_t i = 0; i < data.size(); ++i) {
    auto copy = data;
    copy[i] ^= 1;
    EXPECT_NE(hashBytes(copy.data(), copy.size()), h) << i;
  }
  // Trailing zero bytes still change the hash.
  std::vector<std::uint8_t> zeros(8, 0);
  EXPECT_NE(hashBytes(zeros.data(), 7), hashBytes(zeros.data(), 8));
  EXPECT_NE(hashBytes(zeros.data(), 0), hashBytes(zeros.data(), 1));
  EXPECT_EQ(hashHex(0x0123456789abcdefull), "0123456789abcdef");
}
