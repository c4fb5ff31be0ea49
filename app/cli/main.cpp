/// \file
/// `weir` — the command-line front end of the Weir workbench.

#include "app/cli/commands.h"
#include "app/cli/conformance.h"
#include "app/python_host/plugin_host.h"
#include "ir/error.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <exception>
#include <string>

namespace {

struct PluginOptions {
  std::vector<std::string> folders; ///< --plugins DIR, in order
  bool discover = true;             ///< false with --no-plugins
  bool enabled = true;
};

/// Takes the global plugin options out of `args`.
PluginOptions takePluginOptions(weir::cli::Args &args) {
  PluginOptions o;
  weir::cli::Args rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--plugins") {
      if (i + 1 == args.size())
        throw weir::cli::UsageError{"--plugins needs a folder"};
      o.folders.push_back(args[++i]);
    } else if (args[i] == "--no-plugins") {
      o.discover = false;
    } else {
      rest.push_back(args[i]);
    }
  }
  o.enabled = o.discover || !o.folders.empty();
  args = std::move(rest);
  return o;
}

/// Error messages are printed on one line, whatever the library said.
std::string oneLine(std::string s) {
  for (char &c : s)
    if (c == '\n' || c == '\r')
      c = ' ';
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  return s;
}

constexpr const char *kUsage =
    R"(usage: weir <command> [options]

commands:
  inspect MODEL [--json]        op counts, inputs, outputs, weights, FLOPs,
                                bytes moved and unsupported ops of a model
  convert MODEL -o PROGRAM.json import a model and save it as a Weir program
                                (JSON plus a PROGRAM.json.bin sidecar)
  print FILE                    the readable text form of a model or program
  validate FILE                 structural checks of a model or program
  run MODEL [options]           expand every operator, compile the model for
                                the CPU (LLVM JIT) and run it
      --inputs NAME=FILE ...    input tensors (.npy or ONNX .pb); the others
                                are seeded random (--random SEED, default 0)
      --expected NAME=FILE ...  compare outputs; exit 1 when one differs by
                                more than --atol A + --rtol R * |expected|
                                (defaults 1e-4, 1e-3)
      --dim NAME=N              value of a symbolic dimension (batch size)
      --impl OP=IMPL            choose an operator's expansion
      --save-outputs DIR        write each output as DIR/NAME.npy
      --threads N               threads for parallel loops (0: all cores)
      --loop-ir FILE            write the loop IR the backend compiled
      --gemm auto|weir|openblas what runs GEMMs: OpenBLAS (auto) or Weir's
                                own AVX-512 micro-kernel (weir)
      --repeat N                run N times after one warm-up run; print
                                the median time
      --check                   also run the reference interpreter and
                                compare (exit 1 on a mismatch)
      --interpreter             run on the reference interpreter instead
      --profile                 time every loop nest and library call;
                                print the slowest
  conformance [options]         run the ONNX backend tests (node,
                                pytorch-converted, pytorch-operator, simple)
                                through import, expand-all and the CPU
                                backend; print pass/fail/skip and totals
      --json                    one JSON object: passed, failed, skipped,
                                tests [{name, status, reason, ms}]
      --filter FILE             skip the tests FILE lists (`dir/test  # why`)
      --dir DIR                 test-data root (default
                                /usr/share/libonnx-testdata/data)
      --only SUBSTRING          only tests whose dir/name contains it
      --interpreter             the reference interpreter, not the backend
      --threads N               threads for parallel loops (0: all cores)
      --jobs N                  tests run at once, each in its own process
      --timeout S               per-test limit in seconds (default 120)
      --no-fork                 run the tests in this process

  transforms [--tier T] [--json] the registered transformations by tier
                                (expansion, fusion, movement, tensorize)
  matches MODEL|SESSION         every match of every transformation, with
      --transform ID            whether it applies or why not (--json)
  optimize MODEL --recipe FILE|auto
                                apply a recipe (JSON) or the auto recipe;
                                print each step's time and the change in
                                FLOPs and bytes moved
      -o SESSION                save the session (model digest + recipe)
      --verify                  run before and after on seeded inputs;
                                exit 1 when outputs differ beyond the
                                tolerance the steps declare
      --target cpu              the auto recipe's target

plugin options (any command):
  --plugins DIR                 also load the Python plugin transformations
                                in DIR (repeatable)
  --no-plugins                  load no plugins from Weir's plugins/ folder,
                                $WEIR_PLUGIN_PATH or ~/.local/share/weir/plugins
MODEL is an ONNX file; FILE is an ONNX file or a Weir program (.json);
SESSION is a .weir file written by optimize -o.
)";

} // namespace

int main(int argc, char **argv) {
  using namespace weir::cli;
  if (argc < 2 || std::string(argv[1]) == "--help" ||
      std::string(argv[1]) == "-h") {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string command = argv[1];
  Args args(argv + 2, argv + argc);
  try {
    PluginOptions plugins = takePluginOptions(args);
    // Commands that list or apply transformations (or open a session, whose
    // recipe may name a plugin) see the plugin transformations too.
    std::optional<weir::app::PluginHost> host;
    bool session = std::any_of(args.begin(), args.end(), [](const std::string &a) {
      return a.size() > 5 && a.ends_with(".weir");
    });
    if (plugins.enabled &&
        (!plugins.folders.empty() || session || command == "transforms" ||
         command == "matches" || command == "optimize"))
      host.emplace(plugins.folders, plugins.discover);
    if (command == "inspect")
      return inspectCommand(args);
    if (command == "transforms")
      return transformsCommand(args);
    if (command == "matches")
      return matchesCommand(args);
    if (command == "optimize")
      return optimizeCommand(args);
    if (command == "convert")
      return convertCommand(args);
    if (command == "print")
      return printCommand(args);
    if (command == "validate")
      return validateCommand(args);
    if (command == "run")
      return runCommand(args);
    if (command == "conformance")
      return conformanceCommand(args);
    throw UsageError{"unknown command '" + command + "'"};
  } catch (const UsageError &e) {
    std::fprintf(stderr, "weir: %s\n\n%s", e.message.c_str(), kUsage);
    return 2;
  } catch (const weir::Error &e) {
    std::fprintf(stderr, "weir: error: %s\n", oneLine(e.what()).c_str());
    return 1;
  } catch (const weir::Interrupted &e) {
    std::fprintf(stderr, "weir: %s\n", oneLine(e.what()).c_str());
    return e.exit() ? 1 : 130;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "weir: internal error: %s\n",
                 oneLine(e.what()).c_str());
    return 3;
  }
}
