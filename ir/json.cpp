#include "ir/json.h"

#include "ir/atomic_file.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/program.h"
#include "ir/utf8.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <span>
#include <sys/mman.h>
#include <unistd.h>

namespace weir::ir {
namespace {

using nlohmann::json;

constexpr const char *kFormatName = "weir-program";

// --- Strings that are not valid UTF-8 (ONNX string attributes may hold any
// bytes) are written as hex so the JSON stays valid and the round trip exact.

json encodeString(const std::string &s) {
  if (isValidUtf8(s))
    return s;
  static const char *kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : s) {
    hex += kHex[c >> 4];
    hex += kHex[c & 15];
  }
  return json{{"hex", hex}};
}

std::string decodeString(const json &j) {
  if (j.is_string())
    return j.get<std::string>();
  if (!j.is_object() || !j.contains("hex"))
    throw Error("expected a string, found " + j.dump());
  std::string hex = j.at("hex").get<std::string>();
  if (hex.size() % 2)
    throw Error("odd-length hex string '" + hex + "'");
  auto nibble = [&](char ch) {
    if (ch >= '0' && ch <= '9')
      return ch - '0';
    if (ch >= 'a' && ch <= 'f')
      return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
      return ch - 'A' + 10;
    throw Error("invalid hex string '" + hex + "'");
  };
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2)
    out += static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1]));
  return out;
}

// JSON has no NaN or infinity; write them as strings.
json encodeDouble(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  return v;
}

double decodeDouble(const json &j) {
  if (j.is_number())
    return j.get<double>();
  std::string s = j.get<std::string>();
  if (s == "nan")
    return std::nan("");
  if (s == "inf")
    return INFINITY;
  if (s == "-inf")
    return -INFINITY;
  throw Error("expected a number, found '" + s + "'");
}

json exprList(const std::vector<Expr> &v) {
  json a = json::array();
  for (const Expr &e : v)
    a.push_back(e.str());
  return a;
}

std::vector<Expr> parseExprList(const json &a) {
  std::vector<Expr> v;
  for (const json &e : a)
    v.push_back(parseExpr(e.get<std::string>()));
  return v;
}

json connectors(const std::vector<Connector> &cs) {
  json a = json::array();
  for (const Connector &c : cs)
    a.push_back({c.name, std::string(dtypeName(c.dtype))});
  return a;
}

DType parseDTypeOrThrow(const std::string &name) {
  auto t = parseDType(name);
  if (!t)
    throw Error("unknown dtype '" + name + "'");
  return *t;
}

std::vector<Connector> parseConnectors(const json &a) {
  std::vector<Connector> cs;
  for (const json &c : a)
    cs.push_back({c.at(0).get<std::string>(),
                  parseDTypeOrThrow(c.at(1).get<std::string>())});
  return cs;
}

class Writer {
public:
  explicit Writer(const BlobWriter &writeBlob) : writeBlob_(writeBlob) {}

  json program(const Program &p) {
    json j;
    j["name"] = encodeString(p.name);
    j["symbols"] = p.symbols;
    j["next_node_id"] = p.nextNodeId();
    j["next_edge_id"] = p.nextEdgeId();
    json meta = json::object();
    for (const auto &[k, v] : p.metadata)
      meta[k] = encodeString(v);
    j["metadata"] = std::move(meta);
    // Moved, not copied, into place: a model's JSON is large, and the
    // structural hash serializes every version.
    json cs = json::array();
    for (const auto &[name, c] : p.containers)
      cs.push_back(container(c));
    j["containers"] = std::move(cs);
    j["inputs"] = p.inputs;
    j["outputs"] = p.outputs;
    json states = json::array();
    for (const State &s : p.states)
      states.push_back(state(s));
    j["states"] = std::move(states);
    return j;
  }

private:
  json container(const Container &c) {
    json j{{"name", c.name},
           {"dtype", dtypeName(c.dtype)},
           {"shape", exprList(c.shape)},
           {"strides", exprList(c.strides)},
           {"storage", storageName(c.storage)},
           {"transient", c.transient}};
    if (c.constant)
      j["data"] = writeBlob_(c.constant);
    if (c.isView())
      j["view_of"] = c.viewOf;
    return j;
  }

  json attribute(const AttributeValue &v) {
    return std::visit(
        [&](const auto &x) -> json {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::int64_t>)
            return {{"int", x}};
          else if constexpr (std::is_same_v<T, double>)
            return {{"float", encodeDouble(x)}};
          else if constexpr (std::is_same_v<T, std::string>)
            return {{"string", encodeString(x)}};
          else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>)
            return {{"ints", x}};
          else if constexpr (std::is_same_v<T, std::vector<double>>) {
            json a = json::array();
            for (double d : x)
              a.push_back(encodeDouble(d));
            return {{"floats", a}};
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            json a = json::array();
            for (const std::string &s : x)
              a.push_back(encodeString(s));
            return {{"strings", a}};
          } else if constexpr (std::is_same_v<T, TensorValue>) {
            json t{{"dtype", dtypeName(x.dtype)}, {"shape", x.shape}};
            t["data"] = x.data ? writeBlob_(x.data) : json(nullptr);
            return {{"tensor", t}};
          } else {
            return {{"graph", x ? program(*x) : json(nullptr)}};
          }
        },
        v);
  }

  json attributes(const Attributes &attrs) {
    json j = json::object();
    for (const auto &[name, v] : attrs)
      j[name] = attribute(v);
    return j;
  }

  json node(const Node &n) {
    json j{{"id", n.id},
           {"kind", nodeKindName(n.kind)},
           {"label", encodeString(n.label)},
           {"inputs", connectors(n.inputs)},
           {"outputs", connectors(n.outputs)}};
    switch (n.kind) {
    case NodeKind::Access:
      j["container"] = n.access().container;
      break;
    case NodeKind::Tasklet:
      j["code"] = n.tasklet().source;
      break;
    case NodeKind::MapEntry:
    case NodeKind::MapExit: {
      const MapData &m = n.map();
      json ranges = json::array();
      for (const Range &r : m.ranges)
        ranges.push_back(r.str());
      j["params"] = m.params;
      j["ranges"] = ranges;
      j["schedule"] = scheduleName(m.schedule);
      j["partner"] = m.partner;
      break;
    }
    case NodeKind::Library: {
      const LibraryData &l = n.library();
      j["op"] = l.op;
      j["domain"] = l.domain;
      j["opset"] = l.opsetVersion;
      j["implementation"] = l.implementation;
      j["attributes"] = attributes(l.attributes);
      if (l.flops)
        j["flops"] = l.flops->str();
      if (l.unknown)
        j["unknown"] = true;
      break;
    }
    case NodeKind::Primitive:
      j["primitive"] = n.primitive().primitive;
      j["attributes"] = attributes(n.primitive().attributes);
      break;
    }
    return j;
  }

  json state(const State &s) {
    json nodes = json::array();
    for (const Node &n : s.nodes)
      nodes.push_back(node(n));
    json edges = json::array();
    for (const Edge &e : s.edges) {
      json m = json::object();
      if (!e.memlet.empty()) {
        m["container"] = e.memlet.container;
        m["subset"] = e.memlet.subset.str();
        if (e.memlet.wcr)
          m["wcr"] = wcrName(*e.memlet.wcr);
      }
      json edge = json::object();
      edge["id"] = e.id;
      edge["src"] = e.src;
      edge["src_conn"] = e.srcConn;
      edge["dst"] = e.dst;
      edge["dst_conn"] = e.dstConn;
      edge["memlet"] = std::move(m);
      edges.push_back(std::move(edge));
    }
    json j = json::object();
    j["name"] = s.name;
    j["nodes"] = std::move(nodes);
    j["edges"] = std::move(edges);
    return j;
  }

  const BlobWriter &writeBlob_;
};

class Reader {
public:
  explicit Reader(const BlobReader &readBlob) : readBlob_(readBlob) {}

  Program program(const json &j) {
    Program p;
    p.name = decodeString(j.at("name"));
    p.symbols = j.at("symbols").get<std::vector<std::string>>();
    for (const auto &[k, v] : j.at("metadata").items())
      p.metadata[k] = decodeString(v);
    for (const json &c : j.at("containers"))
      p.addContainer(container(c));
    p.inputs = j.at("inputs").get<std::vector<std::string>>();
    p.outputs = j.at("outputs").get<std::vector<std::string>>();
    for (const json &s : j.at("states"))
      p.states.push_back(state(s));
    p.setNextIds(j.at("next_node_id").get<NodeId>(),
                 j.at("next_edge_id").get<EdgeId>());
    return p;
  }

private:
  Container container(const json &j) {
    Container c;
    c.name = j.at("name").get<std::string>();
    c.dtype = parseDTypeOrThrow(j.at("dtype").get<std::string>());
    c.shape = parseExprList(j.at("shape"));
    c.strides = parseExprList(j.at("strides"));
    auto storage = parseStorage(j.at("storage").get<std::string>());
    if (!storage)
      throw Error("container '" + c.name + "' has unknown storage " +
                  j.at("storage").dump());
    c.storage = *storage;
    c.transient = j.at("transient").get<bool>();
    if (j.contains("data"))
      c.constant = readBlob_(j.at("data"));
    if (j.contains("view_of"))
      c.viewOf = j.at("view_of").get<std::string>();
    return c;
  }

  AttributeValue attribute(const std::string &name, const json &j) {
    if (!j.is_object() || j.size() != 1)
      throw Error("attribute '" + name + "' is not a one-key object");
    // Not `*j.items().begin()`: its operator* returns a reference to the
    // temporary iterator, which dies before the bindings are used.
    auto first = j.begin();
    const std::string &kind = first.key();
    const json &v = first.value();
    if (kind == "int")
      return v.get<std::int64_t>();
    if (kind == "float")
      return decodeDouble(v);
    if (kind == "string")
      return decodeString(v);
    if (kind == "ints")
      return v.get<std::vector<std::int64_t>>();
    if (kind == "floats") {
      std::vector<double> d;
      for (const json &x : v)
        d.push_back(decodeDouble(x));
      return d;
    }
    if (kind == "strings") {
      std::vector<std::string> s;
      for (const json &x : v)
        s.push_back(decodeString(x));
      return s;
    }
    if (kind == "tensor") {
      TensorValue t;
      t.dtype = parseDTypeOrThrow(v.at("dtype").get<std::string>());
      t.shape = v.at("shape").get<std::vector<std::int64_t>>();
      if (!v.at("data").is_null())
        t.data = readBlob_(v.at("data"));
      return t;
    }
    if (kind == "graph") {
      if (v.is_null())
        return std::shared_ptr<const Program>();
      return std::make_shared<const Program>(program(v));
    }
    throw Error("attribute '" + name + "' has unknown kind '" + kind + "'");
  }

  Attributes attributes(const json &j) {
    Attributes a;
    for (const auto &[name, v] : j.items())
      a.emplace(name, attribute(name, v));
    return a;
  }

  Node node(const json &j) {
    Node n;
    n.id = j.at("id").get<NodeId>();
    std::string kind = j.at("kind").get<std::string>();
    auto k = parseNodeKind(kind);
    if (!k)
      throw Error("node " + std::to_string(n.id) + " has unknown kind '" +
                  kind + "'");
    n.kind = *k;
    n.label = decodeString(j.at("label"));
    n.inputs = parseConnectors(j.at("inputs"));
    n.outputs = parseConnectors(j.at("outputs"));
    switch (n.kind) {
    case NodeKind::Access:
      n.payload = AccessData{j.at("container").get<std::string>()};
      break;
    case NodeKind::Tasklet: {
      std::string src = j.at("code").get<std::string>();
      auto code = std::make_shared<const tasklet::Code>(tasklet::parse(src));
      n.payload = TaskletData{std::move(src), std::move(code)};
      break;
    }
    case NodeKind::MapEntry:
    case NodeKind::MapExit: {
      MapData m;
      m.params = j.at("params").get<std::vector<std::string>>();
      for (const json &r : j.at("ranges"))
        m.ranges.push_back(parseRange(r.get<std::string>()));
      auto sched = parseSchedule(j.at("schedule").get<std::string>());
      if (!sched)
        throw Error("node " + std::to_string(n.id) + " has unknown schedule " +
                    j.at("schedule").dump());
      m.schedule = *sched;
      m.partner = j.at("partner").get<NodeId>();
      n.payload = std::move(m);
      break;
    }
    case NodeKind::Library: {
      LibraryData l;
      l.op = j.at("op").get<std::string>();
      l.domain = j.at("domain").get<std::string>();
      l.opsetVersion = j.at("opset").get<int>();
      l.implementation = j.at("implementation").get<std::string>();
      l.attributes = attributes(j.at("attributes"));
      if (j.contains("flops"))
        l.flops = parseExpr(j.at("flops").get<std::string>());
      l.unknown = j.value("unknown", false);
      n.payload = std::move(l);
      break;
    }
    case NodeKind::Primitive:
      n.payload = PrimitiveData{j.at("primitive").get<std::string>(),
                                attributes(j.at("attributes"))};
      break;
    }
    return n;
  }

  State state(const json &j) {
    State s;
    s.name = j.at("name").get<std::string>();
    for (const json &n : j.at("nodes"))
      s.nodes.push_back(node(n));
    for (const json &e : j.at("edges")) {
      Edge edge;
      edge.id = e.at("id").get<EdgeId>();
      edge.src = e.at("src").get<NodeId>();
      edge.srcConn = e.at("src_conn").get<std::string>();
      edge.dst = e.at("dst").get<NodeId>();
      edge.dstConn = e.at("dst_conn").get<std::string>();
      const json &m = e.at("memlet");
      if (m.contains("container")) {
        edge.memlet.container = m.at("container").get<std::string>();
        edge.memlet.subset = parseSubset(m.at("subset").get<std::string>());
        if (m.contains("wcr")) {
          auto w = parseWcr(m.at("wcr").get<std::string>());
          if (!w)
            throw Error("edge " + std::to_string(edge.id) +
                        " has unknown write-conflict resolution " +
                        m.at("wcr").dump());
          edge.memlet.wcr = *w;
        }
      }
      s.edges.push_back(std::move(edge));
    }
    return s;
  }

  const BlobReader &readBlob_;
};

} // namespace

json toJson(const Program &program, const BlobWriter &writeBlob) {
  json body = Writer(writeBlob).program(program);
  json doc{{"format", kFormatName}, {"version", kJsonFormatVersion}};
  doc["program"] = std::move(body);
  return doc;
}

Program fromJson(const json &doc, const BlobReader &readBlob) {
  try {
    if (!doc.is_object() || doc.value("format", "") != kFormatName)
      throw Error("not a Weir program (missing \"format\": \"weir-program\")");
    int version = doc.at("version").get<int>();
    if (version > kJsonFormatVersion || version < 1)
      throw Error("format version " + std::to_string(version) +
                  " is not supported (this Weir reads version " +
                  std::to_string(kJsonFormatVersion) + ")");
    return Reader(readBlob).program(doc.at("program"));
  } catch (const json::exception &e) {
    throw Error(std::string("malformed program JSON: ") + e.what());
  }
}

namespace {

/// toJson with each constant appended once to the binary section, at an
/// offset aligned to 64 bytes, through `append`.
std::string serializeWith(const Program &program,
                          const std::function<void(std::string_view)> &append) {
  std::uint64_t size = 0;
  std::map<const void *, json> written;
  static const char kZeros[64] = {};
  BlobWriter writeBlob = [&](const Blob &b) -> json {
    auto it = written.find(b.get());
    if (it != written.end())
      return it->second;
    std::uint64_t offset = (size + 63) / 64 * 64;
    append(std::string_view(kZeros, offset - size));
    append(std::string_view(reinterpret_cast<const char *>(b->data()),
                            b->size()));
    size = offset + b->size();
    json ref{{"offset", offset},
             {"bytes", b->size()},
             {"hash", hashHex(hashBytes(b->data(), b->size()))}};
    written.emplace(b.get(), ref);
    return ref;
  };
  try {
    return toJson(program, writeBlob).dump(1);
  } catch (const json::exception &e) {
    // Names other than labels, metadata and string attributes are written
    // as plain strings, so invalid UTF-8 in one cannot be represented.
    throw Error("cannot write program '" + program.name +
                "' as JSON: " + e.what());
  }
}

} // namespace

SerializedProgram serialize(const Program &program) {
  SerializedProgram out;
  out.json = serializeWith(program, [&](std::string_view bytes) {
    const auto *p = reinterpret_cast<const std::byte *>(bytes.data());
    out.binary.insert(out.binary.end(), p, p + bytes.size());
  });
  return out;
}

namespace {

/// Copies `out.size()` bytes at `offset` of the binary section into `out`.
using BinaryRead =
    std::function<void(std::uint64_t offset, std::span<std::byte> out)>;

/// Reserves `bytes` in `v`; for large constants, asks the kernel for huge
/// pages first (fresh memory costs a page fault per page, and on a virtual
/// machine each fault costs more than filling the page).
void reserveLarge(std::vector<std::byte> &v, std::size_t bytes) {
  v.reserve(bytes);
  constexpr std::uintptr_t kHuge = std::uintptr_t(2) << 20;
  if (bytes < 2 * kHuge)
    return;
  auto begin = (reinterpret_cast<std::uintptr_t>(v.data()) + kHuge - 1) &
               ~(kHuge - 1);
  auto end = (reinterpret_cast<std::uintptr_t>(v.data()) + bytes) &
             ~(kHuge - 1);
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
}

/// deserialize with the binary section read on demand: each constant is
/// read once, straight into its own blob.
Program deserializeWith(const std::string &text, std::uint64_t binarySize,
                        const BinaryRead &read) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception &e) {
    throw Error(std::string("cannot parse program JSON: ") + e.what());
  }
  // Keyed by offset and length: a zero-length blob shares its offset with
  // the blob written after it.
  std::map<std::pair<std::uint64_t, std::uint64_t>, Blob> shared;
  BlobReader readBlob = [&](const json &ref) -> Blob {
    auto offset = ref.at("offset").get<std::uint64_t>();
    auto bytes = ref.at("bytes").get<std::uint64_t>();
    if (offset > binarySize || bytes > binarySize - offset)
      throw Error("constant data at offset " + std::to_string(offset) + " (" +
                  std::to_string(bytes) +
                  " bytes) lies past the end of the binary section (" +
                  std::to_string(binarySize) + " bytes)");
    if (auto it = shared.find({offset, bytes}); it != shared.end())
      return it->second;
    auto data = std::make_shared<std::vector<std::byte>>();
    reserveLarge(*data, bytes);
    data->resize(bytes);
    read(offset, *data);
    Blob blob = std::move(data);
    if (hashHex(hashBytes(blob->data(), blob->size())) !=
        ref.at("hash").get<std::string>())
      throw Error("constant data at offset " + std::to_string(offset) +
                  " does not match its hash (binary section changed?)");
    shared.emplace(std::pair{offset, bytes}, blob);
    return blob;
  };
  return fromJson(doc, readBlob);
}

} // namespace

Program deserialize(const std::string &text,
                    const std::vector<std::byte> &binary) {
  return deserializeWith(
      text, binary.size(), [&](std::uint64_t offset, std::span<std::byte> out) {
        std::copy_n(binary.begin() + std::ptrdiff_t(offset), out.size(),
                    out.begin());
      });
}

void saveProgram(const Program &program, const std::filesystem::path &path,
                 Durability durability) {
  std::filesystem::path bin = path;
  bin += ".bin";
  // The constants go straight to the file, not through one more copy of
  // them in memory.
  std::string text;
  bool anyBinary = false;
  writeFileAtomically(
      bin,
      [&](const FileAppend &append) {
        text = serializeWith(program, [&](std::string_view bytes) {
          anyBinary = anyBinary || !bytes.empty();
          append(bytes);
        });
      },
      durability);
  if (!anyBinary) {
    std::error_code ec;
    std::filesystem::remove(bin, ec);
  }
  writeFileAtomically(path, text, durability);
}

namespace {
/// The whole file, read in one call.
std::string readAll(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    throw Error("cannot open '" + path.string() + "'");
  std::string out(std::size_t(std::streamoff(in.tellg())), '\0');
  in.seekg(0);
  if (!out.empty() && !in.read(out.data(), std::streamsize(out.size())))
    throw Error("cannot read '" + path.string() + "'");
  return out;
}
} // namespace

Program loadProgram(const std::filesystem::path &path) {
  std::string text = readAll(path);
  std::filesystem::path bin = path;
  bin += ".bin";
  std::ifstream binary;
  std::uint64_t binarySize = 0;
  if (std::filesystem::exists(bin)) {
    binary.open(bin, std::ios::binary | std::ios::ate);
    if (!binary)
      throw Error("cannot open '" + bin.string() + "'");
    binarySize = std::uint64_t(std::streamoff(binary.tellg()));
  }
  try {
    return deserializeWith(
        text, binarySize, [&](std::uint64_t offset, std::span<std::byte> out) {
          binary.seekg(std::streamoff(offset));
          if (!binary.read(reinterpret_cast<char *>(out.data()),
                           std::streamsize(out.size())))
            throw Error("cannot read " + std::to_string(out.size()) +
                        " bytes at offset " + std::to_string(offset) + " of '" +
                        bin.string() + "'");
        });
  } catch (const Error &e) {
    throw Error(path.string() + ": " + e.what());
  }
}

} // namespace weir::ir
