/// \file
/// weir-onnx-passes: ONNX's version converter, checker and shape inference
/// (with data propagation), and Weir's check of declared shapes against
/// inferred ones, in a process of their own. The importer starts it for
/// every model (onnx/onnx_passes.h): ONNX's passes trust their input, and a
/// crash or a hang here costs a refusal, not the user's process.
///
/// Reads the serialized model on standard input and writes the records of
/// protocol.h on standard output.

#include "onnx/passes/explicit_defaults.h"
#include "onnx/passes/inline_if.h"
#include "onnx/passes/legacy_prelu.h"
#include "onnx/passes/protocol.h"
#include "onnx/passes/shape_consistency.h"
#include "onnx/passes/shape_folding.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unistd.h>

// In a sanitized build, a memory error in ONNX's code aborts (a crash the
// importer reports as one) rather than exiting with the sanitizer's code.
extern "C" const char *__asan_default_options() {
  return "abort_on_error=1:detect_leaks=0";
}

namespace {

using weir::onnx_import::passes::Tag;

class Sender {
public:
  void send(Tag tag, std::string_view bytes = {}) {
    char header[weir::onnx_import::passes::kHeaderBytes];
    header[0] = static_cast<char>(tag);
    std::uint64_t n = bytes.size();
    std::memcpy(header + 1, &n, sizeof n);
    // The importer is gone or stopped reading: nothing more to do.
    if (!weir::onnx_import::passes::writeAll(STDOUT_FILENO, header,
                                             sizeof header) ||
        !weir::onnx_import::passes::writeAll(STDOUT_FILENO, bytes.data(),
                                             bytes.size()))
      _exit(3);
  }
};

struct Options {
  int originalOpset = 0;
  int targetOpset = 0;
  bool upgrade = false;
  bool check = false;
  bool foldConstants = false;
  bool specialize = true;
};

/// ONNX's converter, checker and shape inference throw on models they cannot
/// handle; those are notes, not failures, as long as Weir's checks passed.
template <typename F> bool tryOnnx(F &&f, std::string &what) {
  try {
    f();
    return true;
  } catch (const std::exception &e) {
    what = e.what();
    return false;
  }
}

void dropData(onnx::TensorProto &t) {
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_double_data();
  t.clear_uint64_data();
  t.clear_string_data();
}

/// ONNX's shape inference with data propagation; false, with the reason in
/// `what`, when it stops early.
bool inferShapes(onnx::ModelProto &model, std::string &what) {
  return tryOnnx(
      [&] {
        onnx::ShapeInferenceOptions si(/*check_type=*/false,
                                       /*error_mode=*/0,
                                       /*data_prop=*/true);
        onnx::shape_inference::InferShapes(
            model, onnx::OpSchemaRegistry::Instance(), si);
      },
      what);
}

/// Drops the value_info entries inference added (those not among
/// `declared`), so that inferring again starts from the declarations.
void forgetInferred(onnx::ModelProto &model,
                    const std::set<std::string> &declared) {
  auto *infos = model.mutable_graph()->mutable_value_info();
  infos->erase(std::remove_if(infos->begin(), infos->end(),
                              [&](const onnx::ValueInfoProto &v) {
                                return !declared.count(v.name());
                              }),
               infos->end());
}

/// At most this many rounds of folding and inference: each round settles
/// the shapes the next one's Shape nodes read, so a network of B blocks,
/// each with its own shape arithmetic, may take about B rounds (ShuffleNetV2
/// exported with a dynamic batch takes 29 under --dim N=1).
constexpr int kMaxRounds = 64;

/// Shape specialization (shape_folding.h): folds the shape computations
/// whose inputs are settled and infers again, until nothing more folds.
/// `declared` names the value_info entries the model itself has; returns
/// whether the last inference finished.
bool specializeShapes(onnx::ModelProto &model,
                      const std::set<std::string> &declared, bool inferred,
                      bool foldConstants, std::string &what, Sender &out) {
  int nodes = 0, rounds = 0;
  std::set<std::string> ops;
  for (int round = 0; round < kMaxRounds; ++round) {
    out.send(Tag::Pass, "shape specialization");
    weir::onnx_import::FoldedShapes folded =
        weir::onnx_import::foldShapeComputations(model, foldConstants);
    if (int n = weir::onnx_import::inlineConstantIfs(model)) {
      folded.nodes += n;
      folded.ops.push_back("If");
    }
    if (folded.nodes == 0)
      break;
    nodes += folded.nodes;
    ++rounds;
    ops.insert(folded.ops.begin(), folded.ops.end());
    forgetInferred(model, declared);
    out.send(Tag::Pass, "shape inference after specialization");
    inferred = inferShapes(model, what);
  }
  if (nodes > 0) {
    std::string list;
    for (const std::string &op : ops)
      list += (list.empty() ? "" : ", ") + op;
    out.send(Tag::Note, "shapes specialized: " + std::to_string(nodes) +
                            " shape computations folded into constants in " +
                            std::to_string(rounds) +
                            (rounds == 1 ? " round (" : " rounds (") + list +
                            ")");
  }
  return inferred;
}

void runPasses(onnx::ModelProto &model, const Options &options, Sender &out) {
  std::string what;
  bool upgraded = false;
  if (options.upgrade && options.originalOpset > 0 &&
      options.originalOpset < options.targetOpset) {
    out.send(Tag::Pass, "version converter");
    if (options.originalOpset < 7)
      if (int n = weir::onnx_import::adaptLegacyPReluSlopes(model))
        out.send(Tag::Note, "gave " + std::to_string(n) +
                                " PRelu slope(s) their per-channel shape "
                                "(opset < 7)");
    onnx::ModelProto converted;
    if (tryOnnx(
            [&] {
              converted = onnx::version_conversion::ConvertVersion(
                  model, options.targetOpset);
            },
            what)) {
      model = std::move(converted);
      upgraded = true;
      out.send(Tag::Note, "upgraded from opset " +
                              std::to_string(options.originalOpset) + " to " +
                              std::to_string(options.targetOpset));
    } else {
      out.send(Tag::Note, "kept opset " +
                              std::to_string(options.originalOpset) +
                              ": the version converter failed: " + what);
    }
  }
  if (options.check) {
    out.send(Tag::Pass, "checker");
    if (!tryOnnx([&] { onnx::checker::check_model(model); }, what))
      out.send(Tag::Note, "ONNX checker: " + what);
  }
  // The model's own initializers come first, in order; specialization
  // appends its constants after them, and those travel with their data.
  const int ownInitializers = model.graph().initializer_size();
  std::set<std::string> declared;
  for (const onnx::ValueInfoProto &v : model.graph().value_info())
    declared.insert(v.name());
  if (int n = weir::onnx_import::writeOutDefaults(model))
    out.send(Tag::Note, "wrote out " + std::to_string(n) +
                            " attribute default(s) ONNX 1.12's shape "
                            "inference reads differently (STFT onesided=1)");
  out.send(Tag::Pass, "shape inference");
  bool inferred = inferShapes(model, what);
  if (options.specialize)
    inferred = specializeShapes(model, declared, inferred,
                                options.foldConstants, what, out);
  if (!inferred) {
    // A declaration that contradicts the operators is refused outright;
    // any other stop leaves the shapes unverified: the program can be
    // looked at and transformed, not run (ir::requireRunnable).
    out.send(Tag::Pass, "shape inference without the declared shapes");
    if (std::optional<std::string> mismatch =
            weir::onnx_import::declaredShapeMismatch(model)) {
      out.send(Tag::Mismatch, *mismatch);
      out.send(Tag::Done);
      return;
    }
    out.send(Tag::Unverified, "shape inference stopped early: " + what);
  }
  // The passes leave the initializers as they were unless the converter
  // ran: the importer keeps its own copy of their data.
  if (!upgraded) {
    for (int i = 0; i < ownInitializers; ++i)
      dropData(*model.mutable_graph()->mutable_initializer(i));
    out.send(Tag::DataOmitted, std::to_string(ownInitializers));
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    out.send(Tag::Mismatch, "the upgraded model is too large to serialize "
                            "(over 2 GiB)");
    out.send(Tag::Done);
    return;
  }
  out.send(Tag::Model, bytes);
  out.send(Tag::Done);
}

bool parseOptions(int argc, char **argv, Options &options) {
  namespace p = weir::onnx_import::passes;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == p::kUpgrade)
      options.upgrade = true;
    else if (arg == p::kCheck)
      options.check = true;
    else if (arg == p::kFoldConstants)
      options.foldConstants = true;
    else if (arg == p::kNoSpecialization)
      options.specialize = false;
    else if ((arg == p::kOriginalOpset || arg == p::kTargetOpset) &&
             i + 1 < argc)
      (arg == p::kOriginalOpset ? options.originalOpset
                                : options.targetOpset) =
          std::atoi(argv[++i]);
    else
      return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parseOptions(argc, argv, options)) {
    std::fprintf(stderr,
                 "weir-onnx-passes: started by Weir's importer, with the "
                 "model on standard input\n");
    return 2;
  }
  Sender out;
  onnx::ModelProto model;
  out.send(Tag::Pass, "reading of the model");
  if (!model.ParseFromFileDescriptor(STDIN_FILENO))
    return 5;
  try {
    runPasses(model, options, out);
  } catch (...) {
    return 4;
  }
  // No destructors for the model: the process ends here.
  _exit(0);
}
