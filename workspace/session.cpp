#include "workspace/session.h"

#include "ir/atomic_file.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/json.h"
#include "onnx/import.h"
#include "workspace/program_cache.h"
#include "workspace/sha256.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace weir::workspace {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char *kBase64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::vector<std::byte> &in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < in.size(); i += 3) {
    std::uint32_t v = std::uint32_t(in[i]) << 16;
    if (i + 1 < in.size())
      v |= std::uint32_t(in[i + 1]) << 8;
    if (i + 2 < in.size())
      v |= std::uint32_t(in[i + 2]);
    out += kBase64[(v >> 18) & 63];
    out += kBase64[(v >> 12) & 63];
    out += i + 1 < in.size() ? kBase64[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kBase64[v & 63] : '=';
  }
  return out;
}

std::vector<std::byte> unbase64(const std::string &in,
                                const std::string &where) {
  int value[256];
  std::fill(std::begin(value), std::end(value), -1);
  for (int i = 0; i < 64; ++i)
    value[static_cast<unsigned char>(kBase64[i])] = i;
  if (in.size() % 4)
    throw Error(where + ": snapshot data is not base64");
  std::vector<std::byte> out;
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    std::uint32_t v = 0;
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      unsigned char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        ++pad;
        v <<= 6;
        continue;
      }
      if (value[c] < 0 || pad)
        throw Error(where + ": snapshot data is not base64");
      v = v << 6 | std::uint32_t(value[c]);
    }
    out.push_back(std::byte(v >> 16));
    if (pad < 2)
      out.push_back(std::byte(v >> 8));
    if (pad < 1)
      out.push_back(std::byte(v));
  }
  return out;
}

std::string readFile(const fs::path &path, const char *what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path.string() + ": cannot open the " + what);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string digestOf(const fs::path &model, const std::string &session) {
  try {
    return sha256File(model);
  } catch (const Error &e) {
    throw Error(session + ": " + e.what());
  }
}

ir::Program loadModel(const fs::path &path, bool specializeShapes) {
  if (path.extension() == ".json")
    return ir::loadProgram(path);
  onnx_import::ImportOptions options;
  options.specializeShapes = specializeShapes;
  return onnx_import::importModel(path, options).program;
}

} // namespace

std::unique_ptr<Workspace> openModel(const fs::path &path,
                                     bool specializeShapes) {
  ir::Program p = loadModel(path, specializeShapes);
  // Absolute, so a later save resolves it whatever the working folder is.
  return std::make_unique<Workspace>(
      std::move(p),
      Source{fs::absolute(path).lexically_normal().string(), sha256File(path),
             specializeShapes});
}

void saveSession(const Workspace &ws, const fs::path &path,
                 const SaveOptions &options) {
  if (ws.source().modelPath.empty() && !options.snapshot)
    throw Error(path.string() + ": this workspace has no model file; save it "
                                "with a snapshot");
  std::string modelPath = ws.source().modelPath;
  if (!modelPath.empty()) {
    // Relative to the session's folder when both are under it, so a folder
    // holding the model and the session can move as a whole.
    fs::path model = fs::absolute(modelPath).lexically_normal();
    fs::path folder = fs::absolute(path).parent_path().lexically_normal();
    fs::path rel = model.lexically_relative(folder);
    modelPath =
        !rel.empty() && *rel.begin() != ".." ? rel.string() : model.string();
  }
  json doc = {{"format", "weir-session"},
              {"version", 1},
              {"model", {{"path", modelPath}, {"sha256", ws.source().sha256}}},
              {"import",
               {{"shape_specialization", ws.source().specializedShapes}}},
              {"recipe", ws.recipe().toJson()},
              {"hash", ir::hashHex(ws.hash())}};
  if (options.snapshot) {
    ir::SerializedProgram s = ir::serialize(ws.program());
    doc["snapshot"] = {{"program", json::parse(s.json)},
                       {"binary", base64(s.binary)}};
  }
  writeFileAtomically(path, doc.dump(1) + "\n");
}

namespace {

/// What a session file says, checked for form.
struct Header {
  json doc;
  fs::path modelPath; ///< resolved against the session's folder
  std::string wantSha, wantHash;
};

Header readHeader(const fs::path &path) {
  std::string where = path.string();
  Header h;
  try {
    h.doc = json::parse(readFile(path, "session"));
  } catch (const json::exception &e) {
    throw Error(where + ": not a Weir session (invalid JSON: " +
                jsonErrorText(e) + ")");
  }
  const json &doc = h.doc;
  if (!isFormat(doc, "weir-session"))
    throw Error(where +
                ": not a Weir session (no \"format\": \"weir-session\")");
  if (!isVersion(doc, 1))
    throw Error(where + ": unsupported session version");
  const json &model = doc.value("model", json::object());
  if (!model.is_object() || !model.value("path", json()).is_string() ||
      !model.value("sha256", json()).is_string() ||
      !doc.value("hash", json()).is_string())
    throw Error(where + ": the session needs \"model\": {\"path\", "
                        "\"sha256\"} and \"hash\"");
  h.modelPath = model["path"].get<std::string>();
  if (!h.modelPath.empty() && h.modelPath.is_relative())
    h.modelPath = path.parent_path() / h.modelPath;
  h.wantSha = model["sha256"].get<std::string>();
  h.wantHash = doc["hash"].get<std::string>();
  return h;
}

/// Why the session's model cannot be used ("" when it can); `haveSha` gets
/// the model's digest when it was computed.
std::string modelProblem(const Header &h, const std::string &where,
                         std::string &haveSha) {
  if (h.modelPath.empty())
    return "the session names no model";
  if (!fs::exists(h.modelPath))
    return "model '" + h.modelPath.string() + "' is missing";
  if ((haveSha = digestOf(h.modelPath, where)) != h.wantSha)
    return "model '" + h.modelPath.string() +
           "' changed since the session was saved (sha256 was " +
           h.wantSha.substr(0, 12) + "..., is " + haveSha.substr(0, 12) +
           "...)";
  return "";
}

/// openSession once the header is read and the model checked.
std::unique_ptr<Workspace> openChecked(const fs::path &path, const Header &h,
                                       const std::string &problem,
                                       const std::string &haveSha,
                                       const OpenOptions &options) {
  std::string where = path.string();
  const json &doc = h.doc;
  const fs::path &modelPath = h.modelPath;
  const std::string &wantHash = h.wantHash;
  if (!problem.empty()) {
    if (options.useSnapshot && doc.contains("snapshot")) {
      const json &snap = doc["snapshot"];
      ir::Program p;
      try {
        if (!snap.is_object() || !snap.contains("program") ||
            !snap.contains("binary") || !snap["binary"].is_string())
          throw Error("it needs \"program\" and a base64 \"binary\"");
        p = ir::deserialize(snap["program"].dump(),
                            unbase64(snap["binary"].get<std::string>(), where));
      } catch (const std::exception &e) {
        throw Error(where + ": the snapshot is damaged: " + jsonErrorText(e));
      }
      if (ir::hashHex(ir::structuralHash(p)) != wantHash)
        throw Error(where + ": the snapshot is damaged (its hash differs)");
      return std::make_unique<Workspace>(std::move(p), Source{});
    }
    throw Error(where + ": " + problem +
                (doc.contains("snapshot") ? "; the session has a snapshot to "
                                            "open instead"
                                          : ""));
  }
  Recipe recipe;
  try {
    recipe = Recipe::fromJson(doc.at("recipe"));
  } catch (const std::exception &e) {
    throw Error(where + ": " + e.what());
  }
  // A session saved before shape specialization existed says nothing of
  // it, and its recipe was made on a model imported without it.
  bool specialized = false;
  if (const auto i = doc.find("import");
      i != doc.end() && i->is_object() &&
      i->value("shape_specialization", json()).is_boolean())
    specialized = (*i)["shape_specialization"].get<bool>();
  auto ws = std::make_unique<Workspace>(
      loadModel(modelPath, specialized),
      Source{fs::absolute(modelPath).lexically_normal().string(), haveSha,
             specialized});
  try {
    ws->replay(recipe);
  } catch (const Error &e) {
    throw Error(where + ": " + e.what());
  }
  if (ir::hashHex(ws->hash()) != wantHash)
    throw Error(where + ": replaying the recipe gave program " +
                ir::hashHex(ws->hash()) + ", the session recorded " + wantHash +
                " (was it saved by another version of Weir?)");
  return ws;
}

} // namespace

std::unique_ptr<Workspace> openSession(const fs::path &path,
                                       const OpenOptions &options) {
  Header h = readHeader(path);
  std::string haveSha;
  std::string problem = modelProblem(h, path.string(), haveSha);
  return openChecked(path, h, problem, haveSha, options);
}

ir::Program openSessionProgram(const fs::path &path, bool *fromCache) {
  if (fromCache)
    *fromCache = false;
  Header h = readHeader(path);
  std::string haveSha;
  std::string problem = modelProblem(h, path.string(), haveSha);
  // With the model the session was saved on, the program the recipe
  // reproduces is the one of the recorded hash, which the cache may hold.
  if (problem.empty())
    if (std::optional<ir::Program> p = cachedProgram(h.wantHash)) {
      if (fromCache)
        *fromCache = true;
      return std::move(*p);
    }
  std::unique_ptr<Workspace> ws = openChecked(path, h, problem, haveSha, {});
  cacheProgram(ws->program(), h.wantHash);
  return ws->program();
}

} // namespace weir::workspace
