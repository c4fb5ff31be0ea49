/// \file
/// `weir inspect MODEL [--json]`: what a model is made of and what it costs.

#include "app/cli/commands.h"
#include "app/cli/load.h"
#include "app/cli/options.h"
#include "ir/analysis.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>

namespace weir::cli {
namespace {

using nlohmann::json;

json exprJson(const ir::Expr &e) {
  if (auto v = e.asConstant())
    return *v;
  return e.str();
}

std::string shapeText(const std::vector<ir::Expr> &shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}

json valueList(const ir::Program &p, const std::vector<std::string> &names) {
  json list = json::array();
  for (const std::string &n : names) {
    const ir::Container &c = p.container(n);
    json shape = json::array();
    for (const ir::Expr &d : c.shape)
      shape.push_back(exprJson(d));
    list.push_back(
        {{"name", n}, {"dtype", ir::dtypeName(c.dtype)}, {"shape", shape}});
  }
  return list;
}

/// Thousands separators make FLOP counts readable.
std::string grouped(const ir::Expr &e) {
  auto v = e.asConstant();
  if (!v)
    return e.str();
  std::string digits = std::to_string(*v);
  std::string out;
  int n = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (n && n % 3 == 0 && *it != '-')
      out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++n;
  }
  return out;
}

} // namespace

const CommandSpec &inspectSpec() {
  static const CommandSpec spec{
      "inspect",
      "MODEL",
      "op counts, inputs, outputs, weights, FLOPs, bytes moved and "
      "unsupported ops of a model",
      {{"--json", OptionKind::Flag, "", "one JSON object"}}};
  return spec;
}

int inspectCommand(const Args &args) {
  ParsedArgs parsed = parseArgs(inspectSpec(), args);
  const std::string &path = parsed.operands()[0];
  bool asJson = parsed.flag("--json");

  Loaded loaded = loadAny(path);
  const ir::Program &p = loaded.program;
  ir::ProgramAnalysis analysis = ir::analyze(p);

  std::map<std::string, int> ops;
  std::size_t libraryNodes = 0;
  for (const ir::State &s : p.states)
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Library) {
        const ir::LibraryData &l = n.library();
        ++ops[l.domain.empty() ? l.op : l.domain + "." + l.op];
        ++libraryNodes;
      }
  std::size_t weightCount = 0;
  std::uint64_t weightBytes = 0;
  for (const auto &[name, c] : p.containers)
    if (c.constant) {
      ++weightCount;
      weightBytes += c.constant->size();
    }
  std::vector<std::string> unsupported = loaded.report.unsupportedOps;
  if (!loaded.fromOnnx)
    for (const auto &[op, count] : ops)
      for (const ir::State &s : p.states)
        for (const ir::Node &n : s.nodes)
          if (n.kind == ir::NodeKind::Library && n.library().unknown &&
              n.library().op == op &&
              std::find(unsupported.begin(), unsupported.end(), op) ==
                  unsupported.end())
            unsupported.push_back(op);

  if (asJson) {
    json j;
    j["model"] = path;
    j["name"] = p.name;
    j["ops"] = ops;
    j["nodes"] = libraryNodes;
    j["flops"] = exprJson(analysis.flops);
    j["bytes_moved"] = exprJson(analysis.bytesMoved);
    if (auto ai = analysis.arithmeticIntensity())
      j["arithmetic_intensity"] = *ai;
    j["inputs"] = valueList(p, p.inputs);
    j["outputs"] = valueList(p, p.outputs);
    j["weights"] = {{"count", weightCount}, {"bytes", weightBytes}};
    j["symbols"] = p.symbols;
    j["unsupported"] = unsupported;
    j["notes"] = loaded.report.notes;
    j["shape_inputs"] = json::array();
    for (const onnx_import::ShapeInput &s : loaded.report.shapeInputs)
      j["shape_inputs"].push_back({{"name", s.name}, {"decides", s.decides}});
    if (loaded.fromOnnx)
      j["opset"] = loaded.report.opset;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }

  std::printf("model    %s (%s)\n", path.c_str(), p.name.c_str());
  if (loaded.fromOnnx)
    std::printf("opset    %d%s\n", loaded.report.opset,
                loaded.report.originalOpset != loaded.report.opset
                    ? (" (upgraded from " +
                       std::to_string(loaded.report.originalOpset) + ")")
                          .c_str()
                    : "");
  auto printValues = [&](const char *title,
                         const std::vector<std::string> &names) {
    std::printf("%s\n", title);
    for (const std::string &n : names) {
      const ir::Container &c = p.container(n);
      std::printf("  %-24s %s%s\n", n.c_str(),
                  std::string(ir::dtypeName(c.dtype)).c_str(),
                  shapeText(c.shape).c_str());
    }
  };
  printValues("inputs", p.inputs);
  printValues("outputs", p.outputs);
  std::printf(
      "weights  %zu tensors, %s bytes\n", weightCount,
      grouped(ir::Expr(static_cast<std::int64_t>(weightBytes))).c_str());
  std::printf("ops      %zu nodes\n", libraryNodes);
  for (const auto &[op, count] : ops)
    std::printf("  %-24s %d\n", op.c_str(), count);
  std::printf("FLOPs        %s\n", grouped(analysis.flops).c_str());
  std::printf("bytes moved  %s\n", grouped(analysis.bytesMoved).c_str());
  if (auto ai = analysis.arithmeticIntensity())
    std::printf("intensity    %.3f FLOP/byte\n", *ai);
  if (unsupported.empty()) {
    std::printf("unsupported  none\n");
  } else {
    std::printf("unsupported ");
    for (const std::string &op : unsupported)
      std::printf(" %s", op.c_str());
    std::printf("\n");
  }
  for (const std::string &note : loaded.report.notes)
    std::printf("note: %s\n", note.c_str());
  for (const onnx_import::ShapeInput &s : loaded.report.shapeInputs)
    std::printf("note: input '%s' decides sizes (it is %s): the sizes after "
                "it are settled when its value is given (weir run --inputs)\n",
                s.name.c_str(), s.decides.c_str());
  return 0;
}

} // namespace weir::cli
