// SHA-256 against the FIPS 180-4 vectors, recipes (JSON round trip, errors,
// the Python trace) and sessions on disk: a round trip to the same program
// hash, a model path relative to the session's folder, a changed or missing
// model, snapshots, malformed files, and saves that replace a file whole.

#include "ir/atomic_file.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/limits.h"
#include "workspace/recipe.h"
#include "workspace/session.h"
#include "workspace/sha256.h"
#include "workspace/workspace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "workspace/temp_dir.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace weir::workspace {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using transforms::Match;
using transforms::Params;

std::string bundledModel(const std::string &name) {
  return std::string(WEIR_SOURCE_DIR) + "/resources/models/" + name;
}

using workspace_testing::TempDir;

std::string readBytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeBytes(const fs::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(out) << "cannot create " << path;
  out << bytes;
}

/// The message of the weir::Error `f` throws; fails the test when it throws
/// nothing or something else.
std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  } catch (const std::exception &e) {
    ADD_FAILURE() << "threw a non-weir exception: " << e.what();
    return "<non-weir exception>";
  }
  ADD_FAILURE() << "did not throw";
  return "<no exception>";
}

/// Every fold-batchnorm match, then expand-all: the cnn has two batchnorms.
void foldAllAndExpand(Workspace &ws) {
  for (int guard = 0; guard < 16; ++guard) {
    std::vector<Match> m = ws.matches("fold-batchnorm");
    if (m.empty())
      break;
    ws.apply("fold-batchnorm", m.front());
  }
  ws.apply("expand-all");
}

void expectSameSteps(const Recipe &a, const Recipe &b) {
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i + 1));
    EXPECT_EQ(a.steps[i].transformation, b.steps[i].transformation);
    EXPECT_EQ(a.steps[i].match, b.steps[i].match);
    EXPECT_EQ(a.steps[i].labels, b.steps[i].labels);
    EXPECT_EQ(a.steps[i].params, b.steps[i].params);
  }
}

std::vector<std::string> listing(const fs::path &dir) {
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// ---------------------------------------------------------------- SHA-256

TEST(Sha256, FipsTestVectors) {
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 448 bits: the padding spills into a second block.
  EXPECT_EQ(
      sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // 896 bits.
  EXPECT_EQ(
      sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries) {
  // Lengths around the 55/56/64-byte edges of the padding (Python hashlib).
  const std::pair<std::size_t, const char *> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
  };
  for (const auto &[n, hex] : cases)
    EXPECT_EQ(sha256Hex(std::string(n, 'a')), hex) << n << " bytes";
}

TEST(Sha256, OddSizedChunksGiveTheSameDigest) {
  // All 256 byte values, 1000 times (Python hashlib).
  std::string data;
  for (int rep = 0; rep < 1000; ++rep)
    for (int b = 0; b < 256; ++b)
      data += char(b);
  const std::string want =
      "b57b64b198d5d59ce5a22a9b9f25e72a7d081476d432051aa923f3dbebb90934";
  EXPECT_EQ(sha256Hex(data), want);
  for (std::size_t chunk :
       {1u, 3u, 7u, 55u, 63u, 64u, 65u, 127u, 1000u, 4097u}) {
    Sha256 s;
    for (std::size_t at = 0; at < data.size(); at += chunk)
      s.update(data.data() + at, std::min(chunk, data.size() - at));
    EXPECT_EQ(s.hex(), want) << "chunks of " << chunk;
  }
  // Irregular chunks, including empty updates.
  Sha256 s;
  std::size_t at = 0, k = 0;
  while (at < data.size()) {
    std::size_t n =
        std::min<std::size_t>((k * 37 + 11) % 150, data.size() - at);
    s.update(data.data() + at, n);
    at += n;
    ++k;
  }
  EXPECT_EQ(s.hex(), want);
  // The one-million-'a' vector fed in pieces.
  Sha256 m;
  std::string a(997, 'a');
  std::size_t left = 1000000;
  while (left > 0) {
    std::size_t n = std::min(left, a.size());
    m.update(a.data(), n);
    left -= n;
  }
  EXPECT_EQ(m.hex(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, ShaExtensionsAgreeWithThePortableCode) {
  // Where the CPU has SHA-NI, Fastest uses it; every length up to five
  // blocks and a few large ones, fed whole and in odd chunks.
  std::string data;
  std::uint32_t x = 12345;
  for (int i = 0; i < 100000; ++i) {
    x = x * 1664525u + 1013904223u;
    data += char(x >> 24);
  }
  std::printf("[ info     ] SHA extensions %s\n",
              Sha256().usesShaExtensions() ? "used" : "absent");
  EXPECT_FALSE(Sha256(Sha256::Engine::Portable).usesShaExtensions());
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 320; ++n)
    sizes.push_back(n);
  for (std::size_t n : {4095u, 65536u, 99999u, 100000u})
    sizes.push_back(n);
  for (std::size_t n : sizes) {
    Sha256 portable(Sha256::Engine::Portable), fastest, chunked;
    portable.update(data.data(), n);
    fastest.update(data.data(), n);
    for (std::size_t at = 0; at < n; at += 77)
      chunked.update(data.data() + at, std::min<std::size_t>(77, n - at));
    std::string want = portable.hex();
    EXPECT_EQ(fastest.hex(), want) << n << " bytes";
    EXPECT_EQ(chunked.hex(), want) << n << " bytes in chunks";
  }
}

TEST(Sha256, FileDigest) {
  TempDir dir;
  std::string data;
  for (int rep = 0; rep < 1000; ++rep)
    for (int b = 0; b < 256; ++b)
      data += char(b);
  writeBytes(dir / "bytes.bin", data);
  EXPECT_EQ(sha256File(dir / "bytes.bin"),
            "b57b64b198d5d59ce5a22a9b9f25e72a7d081476d432051aa923f3dbebb90934");
  // Larger than the 1 MiB read buffer.
  writeBytes(dir / "a.bin", std::string(3 * (1 << 20) + 5, 'a'));
  EXPECT_EQ(sha256File(dir / "a.bin"),
            sha256Hex(std::string(3 * (1 << 20) + 5, 'a')));
  writeBytes(dir / "empty.bin", "");
  EXPECT_EQ(sha256File(dir / "empty.bin"),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256File(bundledModel("cnn.onnx")),
            sha256Hex(readBytes(bundledModel("cnn.onnx"))));
  std::string msg = errorOf([&] { sha256File(dir / "no-such-file.onnx"); });
  EXPECT_THAT(msg, HasSubstr("no-such-file.onnx"));
}

// ---------------------------------------------------------------- Recipes

Recipe sampleRecipe() {
  Recipe r;
  r.steps.push_back(Step{"expand-all", {}, {}, {}});
  r.steps.push_back(Step{"fold-batchnorm",
                         Match{"main", {{"conv", 12}, {"mid", 13}, {"bn", 14}}},
                         {},
                         {{"conv", "Conv_3"}, {"bn", "BatchNormalization_4"}}});
  r.steps.push_back(Step{"fold-constants",
                         Match{"main", {{"node", 7}}},
                         Params{{"enabled", true},
                                {"disabled", false},
                                {"max_bytes", std::int64_t(4096)},
                                {"offset", std::int64_t(-3)},
                                {"ratio", 0.25},
                                {"whole", 2.0},
                                {"impl", std::string("blas \"fast\"")},
                                {"tiles", transforms::IntList{16, 0, -8}}},
                         {{"node", "Add_7"}}});
  return r;
}

TEST(Recipe, JsonRoundTrip) {
  Recipe r = sampleRecipe();
  json j = r.toJson();
  EXPECT_EQ(j["format"], "weir-recipe");
  EXPECT_EQ(j["version"], 1);
  ASSERT_EQ(j["steps"].size(), 3u);
  // Whole-program steps are written without a match, labels or params.
  EXPECT_EQ(j["steps"][0], json({{"transformation", "expand-all"}}));
  EXPECT_EQ(j["steps"][1]["match"]["state"], "main");
  EXPECT_EQ(j["steps"][1]["match"]["roles"],
            json::parse(R"([["conv", 12], ["mid", 13], ["bn", 14]])"));
  EXPECT_EQ(j["steps"][1]["labels"]["bn"], "BatchNormalization_4");
  EXPECT_FALSE(j["steps"][1].contains("params"));
  const json &p = j["steps"][2]["params"];
  EXPECT_TRUE(p["enabled"].is_boolean());
  EXPECT_TRUE(p["max_bytes"].is_number_integer());
  EXPECT_TRUE(p["ratio"].is_number_float());
  EXPECT_TRUE(p["whole"].is_number_float());
  EXPECT_TRUE(p["impl"].is_string());
  EXPECT_EQ(p["tiles"], json::parse("[16, 0, -8]"));

  expectSameSteps(Recipe::fromJson(j), r);
  // Through text: a float that is a whole number stays a float.
  Recipe back = Recipe::parse(r.dump(), "sample");
  expectSameSteps(back, r);
  ASSERT_EQ(back.steps.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<double>(back.steps[2].params.at("whole")));
  EXPECT_TRUE(
      std::holds_alternative<std::int64_t>(back.steps[2].params.at("offset")));
  EXPECT_EQ(back.dump(), r.dump());
  // An empty recipe.
  EXPECT_TRUE(Recipe::parse(Recipe{}.dump(), "empty").steps.empty());
  EXPECT_EQ(r.steps[1].str(),
            "fold-batchnorm at main: conv=%12 mid=%13 bn=%14");
}

TEST(Recipe, SaveAndLoadFile) {
  TempDir dir;
  Recipe r = sampleRecipe();
  fs::path file = dir / "steps.recipe.json";
  r.save(file);
  EXPECT_EQ(readBytes(file), r.dump());
  expectSameSteps(Recipe::load(file), r);
  // Saving again replaces the file and leaves no temporary behind.
  Recipe shorter;
  shorter.steps.push_back(r.steps[0]);
  shorter.save(file);
  EXPECT_EQ(readBytes(file), shorter.dump());
  expectSameSteps(Recipe::load(file), shorter);
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"steps.recipe.json"});

  std::string msg = errorOf([&] { Recipe::load(dir / "missing.json"); });
  EXPECT_THAT(msg, HasSubstr("missing.json"));
  writeBytes(dir / "broken.json", "{\"format\": \"weir-recipe\", ");
  msg = errorOf([&] { Recipe::load(dir / "broken.json"); });
  EXPECT_THAT(msg, HasSubstr("broken.json"));
  EXPECT_THAT(msg, HasSubstr("not valid JSON"));
  writeBytes(dir / "wrong.json",
             R"({"format": "weir-recipe", "version": 2, "steps": []})");
  msg = errorOf([&] { Recipe::load(dir / "wrong.json"); });
  EXPECT_THAT(msg, HasSubstr("wrong.json"));
  EXPECT_THAT(msg, HasSubstr("version must be 1"));
}

TEST(Recipe, ErrorsNameTheProblem) {
  auto fromText = [](const std::string &text) {
    return errorOf([&] { Recipe::fromJson(json::parse(text)); });
  };
  EXPECT_THAT(
      fromText(R"({"format": "weir-session", "version": 1, "steps": []})"),
      HasSubstr("not a Weir recipe"));
  EXPECT_THAT(fromText(R"({"version": 1, "steps": []})"),
              HasSubstr("not a Weir recipe"));
  EXPECT_THAT(fromText(R"([1, 2])"), HasSubstr("not a Weir recipe"));
  EXPECT_THAT(
      fromText(R"({"format": "weir-recipe", "version": 2, "steps": []})"),
      HasSubstr("version must be 1"));
  EXPECT_THAT(
      fromText(R"({"format": "weir-recipe", "version": "1", "steps": []})"),
      HasSubstr("version must be 1"));
  EXPECT_THAT(fromText(R"({"format": "weir-recipe", "steps": []})"),
              HasSubstr("version must be 1"));
  EXPECT_THAT(fromText(R"({"format": "weir-recipe", "version": 1})"),
              HasSubstr("no \"steps\" array"));
  EXPECT_THAT(
      fromText(R"({"format": "weir-recipe", "version": 1, "steps": {}})"),
      HasSubstr("no \"steps\" array"));

  const std::string head =
      R"({"format": "weir-recipe", "version": 1, "steps": [)"
      R"({"transformation": "expand-all"}, )";
  auto step2 = [&](const std::string &step) {
    std::string msg = fromText(head + step + "]}");
    EXPECT_THAT(msg, HasSubstr("recipe step 2")) << step;
    return msg;
  };
  EXPECT_THAT(step2(R"({"params": {}})"),
              HasSubstr("needs a \"transformation\" id"));
  EXPECT_THAT(step2(R"({"transformation": 3})"),
              HasSubstr("needs a \"transformation\" id"));
  EXPECT_THAT(step2(R"("expand-all")"),
              HasSubstr("needs a \"transformation\" id"));
  EXPECT_THAT(step2(R"({"transformation": "expand", "match": {"roles": []}})"),
              HasSubstr("\"match\" needs \"state\" and \"roles\""));
  EXPECT_THAT(
      step2(R"({"transformation": "expand", "match": {"state": "main"}})"),
      HasSubstr("\"match\" needs \"state\" and \"roles\""));
  for (const char *roles :
       {R"([["node"]])", R"([["node", -1]])", R"([["node", "7"]])",
        R"([[7, 7]])", R"([{"node": 7}])", R"([["node", 1.5]])",
        R"([["node", 7, 8]])"}) {
    EXPECT_THAT(step2(std::string(R"({"transformation": "expand", )"
                                  R"("match": {"state": "main", "roles": )") +
                      roles + "}}"),
                HasSubstr("each role must be [\"name\", node id]"))
        << roles;
  }
  EXPECT_THAT(step2(R"({"transformation": "expand", "labels": ["x"]})"),
              HasSubstr("\"labels\" must be an object"));
  EXPECT_THAT(step2(R"({"transformation": "expand", "labels": {"node": 7}})"),
              HasSubstr("label of 'node' must be a string"));
  EXPECT_THAT(step2(R"({"transformation": "expand", "params": [1]})"),
              HasSubstr("\"params\" must be an object"));
  const char *kKinds = "must be a bool, number, string or list of integers";
  EXPECT_THAT(step2(R"({"transformation": "expand", "params": {"k": [1.5]}})"),
              HasSubstr("parameter 'k' " + std::string(kKinds)));
  EXPECT_THAT(
      step2(R"({"transformation": "expand", "params": {"k": ["a"]}})"),
      HasSubstr("parameter 'k' " + std::string(kKinds)));
  EXPECT_THAT(
      step2(R"({"transformation": "expand", "params": {"k": {"a": 1}}})"),
      HasSubstr("parameter 'k' " + std::string(kKinds)));
  EXPECT_THAT(step2(R"({"transformation": "expand", "params": {"k": null}})"),
              HasSubstr("parameter 'k' " + std::string(kKinds)));
  // "params": null is no parameters.
  EXPECT_TRUE(
      Recipe::fromJson(
          json::parse(head +
                      R"({"transformation": "expand-all", "params": null}]})"))
          .steps[1]
          .params.empty());

  // parse() names what it read.
  std::string msg = errorOf([] { Recipe::parse("{not json", "my.recipe"); });
  EXPECT_THAT(msg, HasSubstr("my.recipe"));
  EXPECT_THAT(msg, HasSubstr("not valid JSON"));
  msg = errorOf([] { Recipe::parse("", "empty.recipe"); });
  EXPECT_THAT(msg, HasSubstr("empty.recipe"));
  msg = errorOf([] {
    Recipe::parse(R"({"format": "weir-recipe", "version": 7, "steps": []})",
                  "old.recipe");
  });
  EXPECT_THAT(msg, HasSubstr("old.recipe: recipe version must be 1"));
  msg = errorOf([&] {
    Recipe::parse(head + R"({"transformation": "x", "params": 5}]})",
                  "p.recipe");
  });
  EXPECT_THAT(
      msg, HasSubstr("p.recipe: recipe step 2: \"params\" must be an object"));
}

TEST(Recipe, MoreStepsThanTheLimitAreRefused) {
  std::string steps;
  for (std::size_t i = 0; i <= ir::kMaxRecipeSteps; ++i)
    steps += std::string(i ? "," : "") + R"({"transformation": "x"})";
  std::string msg = errorOf([&] {
    Recipe::parse(R"({"format": "weir-recipe", "version": 1, "steps": [)" +
                      steps + "]}",
                  "long.recipe");
  });
  EXPECT_THAT(msg, HasSubstr("long.recipe: recipe has 100001 steps, more "
                             "than the limit of 100000"));
}

TEST(Recipe, AsPython) {
  Recipe r = sampleRecipe();
  std::string py = r.asPython("models/cnn.onnx");
  EXPECT_THAT(py, HasSubstr("import weir\n"));
  EXPECT_THAT(
      py, HasSubstr("ws = weir.Workspace(weir.load(\"models/cnn.onnx\"))\n"));
  std::vector<std::string> applies;
  std::istringstream lines(py);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("ws.apply(", 0) == 0)
      applies.push_back(line);
  ASSERT_EQ(applies.size(), r.steps.size()) << py;
  EXPECT_EQ(applies[0], "ws.apply(\"expand-all\")");
  EXPECT_EQ(applies[1], "ws.apply(\"fold-batchnorm\", {\"state\": \"main\", "
                        "\"conv\": 12, \"mid\": 13, \"bn\": 14})");
  const std::string &p = applies[2];
  EXPECT_THAT(p, HasSubstr("ws.apply(\"fold-constants\", {\"state\": \"main\", "
                           "\"node\": 7}"));
  EXPECT_THAT(p, HasSubstr(", enabled=True"));
  EXPECT_THAT(p, HasSubstr(", disabled=False"));
  EXPECT_THAT(p, HasSubstr(", max_bytes=4096"));
  EXPECT_THAT(p, HasSubstr(", offset=-3"));
  EXPECT_THAT(p, HasSubstr(", ratio=0.25"));
  EXPECT_THAT(p, HasSubstr(", whole=2.0"));
  EXPECT_THAT(p, HasSubstr(", impl=\"blas \\\"fast\\\"\""));
  EXPECT_THAT(py, Not(HasSubstr("true")));
  EXPECT_THAT(py, Not(HasSubstr("false")));
  // A path with quotes and backslashes stays one string literal.
  EXPECT_THAT(Recipe{}.asPython("a \"b\"\\c.onnx"),
              HasSubstr("weir.load(\"a \\\"b\\\"\\\\c.onnx\")"));
  EXPECT_THAT(Recipe{}.asPython("m.onnx"), Not(HasSubstr("ws.apply(")));
}

// ---------------------------------------------------------------- Sessions

TEST(Session, RoundTripReproducesTheHash) {
  TempDir dir;
  auto ws = openModel(bundledModel("cnn.onnx"));
  EXPECT_TRUE(fs::equivalent(ws->source().modelPath, bundledModel("cnn.onnx")));
  EXPECT_EQ(ws->source().sha256, sha256File(bundledModel("cnn.onnx")));
  std::uint64_t imported = ws->hash();
  foldAllAndExpand(*ws);
  ASSERT_EQ(ws->recipe().steps.size(), 3u); // two batchnorms, expand-all
  ASSERT_NE(ws->hash(), imported);

  fs::path file = dir / "cnn.weir";
  saveSession(*ws, file);
  json doc = json::parse(readBytes(file));
  EXPECT_EQ(doc["format"], "weir-session");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["hash"], ir::hashHex(ws->hash()));
  EXPECT_EQ(doc["model"]["sha256"], sha256File(bundledModel("cnn.onnx")));
  // The model is outside the session's folder: an absolute path.
  EXPECT_TRUE(fs::path(doc["model"]["path"].get<std::string>()).is_absolute());
  EXPECT_FALSE(doc.contains("snapshot"));

  auto back = openSession(file);
  EXPECT_EQ(back->hash(), ws->hash());
  EXPECT_EQ(ir::structuralHash(back->program()), ws->hash());
  EXPECT_EQ(back->versions().size(), ws->versions().size());
  EXPECT_EQ(back->current(), back->versions().size() - 1);
  expectSameSteps(back->recipe(), ws->recipe());
  EXPECT_EQ(back->versions().front().hash(), imported);
  EXPECT_EQ(back->source().sha256, ws->source().sha256);

  // Only the steps up to the current version are saved.
  ws->undo();
  saveSession(*ws, file);
  auto undone = openSession(file);
  EXPECT_EQ(undone->hash(), ws->hash());
  EXPECT_EQ(undone->recipe().steps.size(), 2u);
  EXPECT_EQ(undone->versions().size(), 3u);
}

TEST(Session, RecordsShapeSpecializationAndHonoursOldSessions) {
  // The bundled transformer's head split is shape arithmetic, which the
  // import specializes; a session says so, and reopens the same way.
  TempDir dir;
  auto ws = openModel(bundledModel("transformer.onnx"));
  EXPECT_TRUE(ws->source().specializedShapes);
  ws->apply("expand-all");
  fs::path file = dir / "t.weir";
  saveSession(*ws, file);
  json doc = json::parse(readBytes(file));
  EXPECT_EQ(doc["import"]["shape_specialization"], true);
  EXPECT_EQ(openSession(file)->hash(), ws->hash());

  // A session saved before specialization existed has no "import": its
  // recipe was made on the unspecialized import, whose node ids differ,
  // and it must still replay to its hash.
  auto old = openModel(bundledModel("transformer.onnx"),
                       /*specializeShapes=*/false);
  ASSERT_NE(old->hash(), openModel(bundledModel("transformer.onnx"))->hash());
  old->apply("expand-all");
  saveSession(*old, file);
  doc = json::parse(readBytes(file));
  EXPECT_EQ(doc["import"]["shape_specialization"], false);
  doc.erase("import");
  writeBytes(file, doc.dump(1));
  auto back = openSession(file);
  EXPECT_EQ(back->hash(), old->hash());
  EXPECT_FALSE(back->source().specializedShapes);
}

TEST(Session, RelativeModelPathMovesWithTheFolder) {
  TempDir root;
  fs::path a = root / "a";
  fs::create_directories(a);
  fs::copy_file(bundledModel("cnn.onnx"), a / "cnn.onnx");
  auto ws = openModel(a / "cnn.onnx");
  foldAllAndExpand(*ws);
  saveSession(*ws, a / "work.weir");
  json doc = json::parse(readBytes(a / "work.weir"));
  EXPECT_EQ(doc["model"]["path"], "cnn.onnx");

  // A model in a subfolder of the session's folder stays relative too.
  fs::create_directories(a / "models");
  fs::copy_file(bundledModel("cnn.onnx"), a / "models" / "cnn.onnx");
  auto sub = openModel(a / "models" / "cnn.onnx");
  sub->apply("expand-all");
  saveSession(*sub, a / "sub.weir");
  EXPECT_EQ(json::parse(readBytes(a / "sub.weir"))["model"]["path"],
            (fs::path("models") / "cnn.onnx").string());

  fs::path moved = root / "elsewhere" / "b";
  fs::create_directories(moved.parent_path());
  fs::rename(a, moved);
  ASSERT_FALSE(fs::exists(a));
  auto back = openSession(moved / "work.weir");
  EXPECT_EQ(back->hash(), ws->hash());
  EXPECT_EQ(back->versions().size(), ws->versions().size());
  expectSameSteps(back->recipe(), ws->recipe());
  EXPECT_EQ(fs::path(back->source().modelPath).filename(), "cnn.onnx");
  EXPECT_TRUE(fs::equivalent(back->source().modelPath, moved / "cnn.onnx"));
  auto backSub = openSession(moved / "sub.weir");
  EXPECT_EQ(backSub->hash(), sub->hash());

  // Re-saving the reopened session keeps the path relative.
  saveSession(*back, moved / "again.weir");
  EXPECT_EQ(json::parse(readBytes(moved / "again.weir"))["model"]["path"],
            "cnn.onnx");
  EXPECT_EQ(openSession(moved / "again.weir")->hash(), ws->hash());

  // The model beside the folder (one level up) is written absolute.
  fs::copy_file(bundledModel("cnn.onnx"), root / "top.onnx");
  auto top = openModel(root / "top.onnx");
  saveSession(*top, moved / "top.weir");
  std::string topPath =
      json::parse(readBytes(moved / "top.weir"))["model"]["path"]
          .get<std::string>();
  EXPECT_TRUE(fs::path(topPath).is_absolute()) << topPath;
  EXPECT_EQ(openSession(moved / "top.weir")->hash(), top->hash());
}

TEST(Session, ChangedOrMissingModelIsReported) {
  TempDir dir;
  fs::copy_file(bundledModel("cnn.onnx"), dir / "cnn.onnx");
  auto ws = openModel(dir / "cnn.onnx");
  foldAllAndExpand(*ws);
  saveSession(*ws, dir / "s.weir");
  ASSERT_EQ(openSession(dir / "s.weir")->hash(), ws->hash());

  // One byte appended: the model still imports but its digest differs.
  {
    std::ofstream out(dir / "cnn.onnx", std::ios::binary | std::ios::app);
    out.put('\0');
  }
  std::string msg = errorOf([&] { openSession(dir / "s.weir"); });
  EXPECT_THAT(msg, HasSubstr("s.weir"));
  EXPECT_THAT(msg, HasSubstr("cnn.onnx"));
  EXPECT_THAT(msg, HasSubstr("changed since the session was saved"));
  EXPECT_THAT(msg, Not(HasSubstr("snapshot")));
  // Without a snapshot, asking for it changes nothing.
  msg = errorOf([&] { openSession(dir / "s.weir", {.useSnapshot = true}); });
  EXPECT_THAT(msg, HasSubstr("changed since the session was saved"));

  // Rewritten with entirely different content.
  fs::copy_file(bundledModel("mlp.onnx"), dir / "cnn.onnx",
                fs::copy_options::overwrite_existing);
  msg = errorOf([&] { openSession(dir / "s.weir"); });
  EXPECT_THAT(msg, HasSubstr("changed since the session was saved"));

  // Restored: it opens again.
  fs::copy_file(bundledModel("cnn.onnx"), dir / "cnn.onnx",
                fs::copy_options::overwrite_existing);
  EXPECT_EQ(openSession(dir / "s.weir")->hash(), ws->hash());

  fs::remove(dir / "cnn.onnx");
  msg = errorOf([&] { openSession(dir / "s.weir"); });
  EXPECT_THAT(msg, HasSubstr("s.weir"));
  EXPECT_THAT(msg, HasSubstr("cnn.onnx"));
  EXPECT_THAT(msg, HasSubstr("missing"));
}

TEST(Session, ProgramOfARunComesFromTheCacheOnlyForTheSameModel) {
  TempDir dir;
  const char *before = std::getenv("WEIR_CACHE_DIR");
  std::string saved = before ? before : "";
  ::setenv("WEIR_CACHE_DIR", (dir / "cache").c_str(), 1);
  fs::copy_file(bundledModel("cnn.onnx"), dir / "cnn.onnx");
  auto ws = openModel(dir / "cnn.onnx");
  foldAllAndExpand(*ws);
  saveSession(*ws, dir / "s.weir");

  bool fromCache = true;
  ir::Program first = openSessionProgram(dir / "s.weir", &fromCache);
  EXPECT_FALSE(fromCache) << "nothing was cached yet: the recipe replays";
  EXPECT_EQ(ir::structuralHash(first), ws->hash());
  ir::Program second = openSessionProgram(dir / "s.weir", &fromCache);
  EXPECT_TRUE(fromCache);
  EXPECT_EQ(ir::structuralHash(second), ws->hash());

  // A damaged entry is not trusted: the recipe replays and the entry is
  // written again.
  fs::path entry = dir / "cache" / (ir::hashHex(ws->hash()) + ".wprog");
  ASSERT_TRUE(fs::exists(entry));
  std::string good = readBytes(entry);
  writeBytes(entry, good.substr(0, good.size() / 2));
  EXPECT_EQ(ir::structuralHash(openSessionProgram(dir / "s.weir", &fromCache)),
            ws->hash());
  EXPECT_FALSE(fromCache);
  writeBytes(dir / "cache" / (ir::hashHex(ws->hash()) + ".wprog.bin"),
             "scribbled");
  EXPECT_EQ(ir::structuralHash(openSessionProgram(dir / "s.weir", &fromCache)),
            ws->hash());
  EXPECT_FALSE(fromCache);
  openSessionProgram(dir / "s.weir", &fromCache);
  EXPECT_TRUE(fromCache);

  // A changed model is refused as openSession refuses it, cache or not.
  fs::copy_file(bundledModel("mlp.onnx"), dir / "cnn.onnx",
                fs::copy_options::overwrite_existing);
  std::string msg = errorOf([&] { openSessionProgram(dir / "s.weir"); });
  EXPECT_THAT(msg, HasSubstr("changed since the session was saved"));
  if (before)
    ::setenv("WEIR_CACHE_DIR", saved.c_str(), 1);
  else
    ::unsetenv("WEIR_CACHE_DIR");
}

TEST(Session, SnapshotOpensWithoutTheModel) {
  TempDir dir;
  fs::copy_file(bundledModel("cnn.onnx"), dir / "cnn.onnx");
  auto ws = openModel(dir / "cnn.onnx");
  foldAllAndExpand(*ws);
  saveSession(*ws, dir / "snap.weir", {.snapshot = true});
  json doc = json::parse(readBytes(dir / "snap.weir"));
  ASSERT_TRUE(doc.contains("snapshot"));
  EXPECT_TRUE(doc["snapshot"]["binary"].is_string());
  // With the model intact the recipe replays, snapshot or not.
  auto replayed = openSession(dir / "snap.weir", {.useSnapshot = true});
  EXPECT_EQ(replayed->hash(), ws->hash());
  EXPECT_EQ(replayed->versions().size(), ws->versions().size());

  {
    std::ofstream out(dir / "cnn.onnx", std::ios::binary | std::ios::app);
    out.put('x');
  }
  std::string msg = errorOf([&] { openSession(dir / "snap.weir"); });
  EXPECT_THAT(msg, HasSubstr("changed since the session was saved"));
  EXPECT_THAT(msg, HasSubstr("has a snapshot"));

  auto snap = openSession(dir / "snap.weir", {.useSnapshot = true});
  EXPECT_EQ(snap->hash(), ws->hash());
  EXPECT_EQ(ir::structuralHash(snap->program()), ws->hash());
  EXPECT_EQ(ir::hashHex(snap->hash()), doc["hash"]);
  EXPECT_EQ(snap->versions().size(), 1u);

  fs::remove(dir / "cnn.onnx");
  auto missing = openSession(dir / "snap.weir", {.useSnapshot = true});
  EXPECT_EQ(missing->hash(), ws->hash());
  EXPECT_THAT(errorOf([&] { openSession(dir / "snap.weir"); }),
              HasSubstr("missing"));

  // A snapshot that does not hash to the recorded hash is refused.
  json damaged = doc;
  damaged["hash"] = "0123456789abcdef";
  writeBytes(dir / "damaged.weir", damaged.dump());
  EXPECT_THAT(errorOf([&] {
                openSession(dir / "damaged.weir", {.useSnapshot = true});
              }),
              HasSubstr("snapshot is damaged"));
  // Snapshot data that is not base64.
  json garbled = doc;
  garbled["snapshot"]["binary"] = "not*base64!";
  writeBytes(dir / "garbled.weir", garbled.dump());
  EXPECT_THAT(errorOf([&] {
                openSession(dir / "garbled.weir", {.useSnapshot = true});
              }),
              HasSubstr("not base64"));

  // A workspace built in memory has no model file: it saves only with a
  // snapshot, and that snapshot opens.
  Workspace memory(ws->program());
  EXPECT_THAT(errorOf([&] { saveSession(memory, dir / "memory.weir"); }),
              HasSubstr("snapshot"));
  EXPECT_FALSE(fs::exists(dir / "memory.weir"));
  saveSession(memory, dir / "memory.weir", {.snapshot = true});
  EXPECT_THAT(errorOf([&] { openSession(dir / "memory.weir"); }),
              HasSubstr("names no model"));
  EXPECT_EQ(openSession(dir / "memory.weir", {.useSnapshot = true})->hash(),
            memory.hash());
}

TEST(Session, MalformedFilesAreRejectedAndLeftAlone) {
  TempDir dir;
  fs::copy_file(bundledModel("cnn.onnx"), dir / "cnn.onnx");
  auto ws = openModel(dir / "cnn.onnx");
  foldAllAndExpand(*ws);
  saveSession(*ws, dir / "good.weir");
  const json good = json::parse(readBytes(dir / "good.weir"));
  ASSERT_EQ(good["recipe"]["steps"].size(), 3u);
  ASSERT_TRUE(good["recipe"]["steps"][0].contains("labels"));

  int n = 0;
  // Writes `text` to a fresh file, opens it, checks the message and that
  // the file is unchanged, and returns the message.
  auto openText = [&](const std::string &text) {
    fs::path file = dir / ("bad" + std::to_string(++n) + ".weir");
    writeBytes(file, text);
    std::string msg = errorOf([&] { openSession(file); });
    EXPECT_THAT(msg, HasSubstr(file.filename().string()));
    EXPECT_EQ(readBytes(file), text) << "openSession changed " << file;
    return msg;
  };
  auto openDoc = [&](const json &doc) { return openText(doc.dump(1)); };

  EXPECT_THAT(openText("this is not JSON"), HasSubstr("invalid JSON"));
  EXPECT_THAT(openText(""), HasSubstr("invalid JSON"));
  EXPECT_THAT(openText(good.dump().substr(0, good.dump().size() / 2)),
              HasSubstr("invalid JSON"));
  EXPECT_THAT(openText("[1, 2, 3]"), HasSubstr("not a Weir session"));

  json doc = good;
  doc["format"] = "weir-recipe";
  EXPECT_THAT(openDoc(doc), HasSubstr("not a Weir session"));
  doc = good;
  doc.erase("format");
  EXPECT_THAT(openDoc(doc), HasSubstr("not a Weir session"));
  doc = good;
  doc["version"] = 2;
  EXPECT_THAT(openDoc(doc), HasSubstr("unsupported session version"));
  doc = good;
  doc.erase("version");
  EXPECT_THAT(openDoc(doc), HasSubstr("unsupported session version"));

  for (const char *key : {"model", "hash"}) {
    doc = good;
    doc.erase(key);
    EXPECT_THAT(openDoc(doc), HasSubstr("the session needs \"model\"")) << key;
  }
  for (const char *key : {"path", "sha256"}) {
    doc = good;
    doc["model"].erase(key);
    EXPECT_THAT(openDoc(doc), HasSubstr("the session needs \"model\"")) << key;
  }
  doc = good;
  doc["model"] = "cnn.onnx";
  EXPECT_THAT(openDoc(doc), HasSubstr("the session needs \"model\""));
  doc = good;
  doc["hash"] = 42;
  EXPECT_THAT(openDoc(doc), HasSubstr("the session needs \"model\""));

  doc = good;
  doc.erase("recipe");
  EXPECT_THAT(openDoc(doc), HasSubstr("recipe"));
  doc = good;
  doc["recipe"]["format"] = "something-else";
  EXPECT_THAT(openDoc(doc), HasSubstr("not a Weir recipe"));
  doc = good;
  doc["recipe"]["steps"][1].erase("transformation");
  EXPECT_THAT(openDoc(doc),
              HasSubstr("recipe step 2: needs a \"transformation\" id"));

  doc = good;
  doc["recipe"]["steps"][2]["transformation"] = "no-such-transformation";
  std::string msg = openDoc(doc);
  EXPECT_THAT(msg, HasSubstr("recipe step 3"));
  EXPECT_THAT(msg, HasSubstr("no-such-transformation"));

  // Labels that do not match the model's nodes.
  doc = good;
  json &labels = doc["recipe"]["steps"][0]["labels"];
  std::string role = labels.begin().key();
  std::string real = labels.begin().value().get<std::string>();
  labels[role] = "NotTheNodeYouRecorded";
  msg = openDoc(doc);
  EXPECT_THAT(msg, HasSubstr("recipe step 1 (fold-batchnorm)"));
  EXPECT_THAT(msg, HasSubstr("the recipe expects 'NotTheNodeYouRecorded'"));
  EXPECT_THAT(msg, HasSubstr("'" + real + "'"));

  // A match naming a node that does not exist.
  doc = good;
  doc["recipe"]["steps"][0]["match"]["roles"][0][1] = 987654;
  msg = openDoc(doc);
  EXPECT_THAT(msg, HasSubstr("recipe step 1"));
  EXPECT_THAT(msg, HasSubstr("987654"));

  // A recipe that replays, but not to the recorded program.
  doc = good;
  doc["hash"] = "0123456789abcdef";
  msg = openDoc(doc);
  EXPECT_THAT(msg, HasSubstr("replaying the recipe gave program " +
                             ir::hashHex(ws->hash())));
  EXPECT_THAT(msg, HasSubstr("0123456789abcdef"));

  // A session file that does not exist.
  msg = errorOf([&] { openSession(dir / "absent.weir"); });
  EXPECT_THAT(msg, HasSubstr("absent.weir"));

  // The good one still opens, unchanged.
  std::string before = readBytes(dir / "good.weir");
  EXPECT_EQ(openSession(dir / "good.weir")->hash(), ws->hash());
  EXPECT_EQ(readBytes(dir / "good.weir"), before);
}

TEST(Session, SavingReplacesTheFileWhole) {
  TempDir dir;
  fs::copy_file(bundledModel("cnn.onnx"), dir / "cnn.onnx");
  auto big = openModel(dir / "cnn.onnx");
  foldAllAndExpand(*big);
  auto small = openModel(dir / "cnn.onnx");
  small->apply("fold-batchnorm", small->matches("fold-batchnorm").at(0));
  ASSERT_NE(big->hash(), small->hash());

  fs::path file = dir / "s.weir";
  saveSession(*big, file, {.snapshot = true});
  std::string first = readBytes(file);
  saveSession(*small, file);
  std::string second = readBytes(file);
  ASSERT_LT(second.size(), first.size());
  json doc = json::parse(second); // no tail of the longer file
  EXPECT_FALSE(doc.contains("snapshot"));
  EXPECT_EQ(doc["hash"], ir::hashHex(small->hash()));
  EXPECT_EQ(openSession(file)->hash(), small->hash());
  EXPECT_EQ(second.back(), '\n');

  // Over a file that is not a session at all, and back to the big one.
  writeBytes(file, std::string(1 << 20, '#'));
  saveSession(*big, file, {.snapshot = true});
  EXPECT_EQ(readBytes(file), first);
  EXPECT_EQ(openSession(file)->hash(), big->hash());
  // No temporaries are left beside it.
  EXPECT_EQ(listing(dir.path()),
            (std::vector<std::string>{"cnn.onnx", "s.weir"}));

  // A failed save (the folder is gone) leaves nothing and throws.
  fs::path gone = dir / "no-such-folder" / "s.weir";
  std::string msg = errorOf([&] { saveSession(*small, gone); });
  EXPECT_THAT(msg, HasSubstr("s.weir"));
  EXPECT_FALSE(fs::exists(gone));
  // writeFileAtomically likewise.
  msg = errorOf([&] { writeFileAtomically(gone, "x"); });
  EXPECT_THAT(msg, HasSubstr("no-such-folder"));
}

} // namespace
} // namespace weir::workspace

namespace weir::workspace {
namespace {

// Hostile or odd fields must give weir::Error naming the problem, never a
// JSON library exception, a silently wrong value or an invalid script.
TEST(Session, HostileFieldsGiveClearErrors) {
  EXPECT_THAT(errorOf([] {
                Recipe::parse(R"({"format":5,"version":1,"steps":[]})",
                              "r.json");
              }),
              HasSubstr("not a Weir recipe"));
  EXPECT_THAT(
      errorOf([] {
        Recipe::parse(
            R"({"format":"weir-recipe","version":4294967297,"steps":[]})",
            "r.json");
      }),
      HasSubstr("version must be 1"));
  EXPECT_THAT(errorOf([] {
                Recipe::parse(R"({"format":"weir-recipe","version":1,"steps":[
                  {"transformation":"x","params":{"k":18446744073709551615}}]})",
                              "r.json");
              }),
              HasSubstr("too large"));
  Recipe nan;
  nan.steps.push_back(
      {"fold-constants", {}, {{"max_bytes", std::nan("")}}, {}});
  EXPECT_THAT(errorOf([&] { nan.dump(); }), HasSubstr("finite"));
  EXPECT_THAT(nan.asPython("m.onnx"), HasSubstr("float(\"nan\")"));
  Recipe odd;
  odd.steps.push_back({"expand-all", {}, {{"not an identifier", true}}, {}});
  std::string py = odd.asPython("m.onnx");
  EXPECT_THAT(py, HasSubstr("**{\"not an identifier\": True}"));
  EXPECT_THAT(py, Not(HasSubstr(", not an identifier=")));

  TempDir dir;
  fs::copy_file(bundledModel("cnn.onnx"), dir / "cnn.onnx");
  auto ws = openModel(dir / "cnn.onnx");
  saveSession(*ws, dir / "s.weir", {.snapshot = true});
  json doc = json::parse(readBytes(dir / "s.weir"));
  json badFormat = doc;
  badFormat["format"] = 5;
  writeBytes(dir / "f.weir", badFormat.dump());
  EXPECT_THAT(errorOf([&] { openSession(dir / "f.weir"); }),
              HasSubstr("not a Weir session"));
  // A changed model and an empty or mistyped snapshot.
  {
    std::ofstream out(dir / "cnn.onnx", std::ios::binary | std::ios::app);
    out.put('x');
  }
  for (json snapshot : {json::object(), json{{"program", 1}, {"binary", 5}},
                        json{{"program", json::object()}, {"binary", ""}}}) {
    json bad = doc;
    bad["snapshot"] = snapshot;
    writeBytes(dir / "b.weir", bad.dump());
    EXPECT_THAT(
        errorOf([&] { openSession(dir / "b.weir", {.useSnapshot = true}); }),
        HasSubstr((dir / "b.weir").string() + ": the snapshot is damaged"));
  }
  // A model path that is a folder: the error names the session too.
  json folder = doc;
  fs::create_directory(dir / "sub");
  folder["model"]["path"] = "sub";
  writeBytes(dir / "d.weir", folder.dump());
  EXPECT_THAT(errorOf([&] { openSession(dir / "d.weir"); }),
              HasSubstr((dir / "d.weir").string()));
}

} // namespace
} // namespace weir::workspace
