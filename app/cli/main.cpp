/// \file
/// `weir` — the command-line front end of the Weir workbench.

#include "app/cli/commands.h"
#include "app/cli/conformance.h"
#include "app/cli/options.h"
#include "app/python_host/plugin_host.h"
#include "ir/error.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
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

/// The options every command takes (taken out by takePluginOptions).
const std::vector<weir::cli::Option> &pluginOptions() {
  using weir::cli::OptionKind;
  static const std::vector<weir::cli::Option> options = {
      {"--plugins", OptionKind::Text, "DIR",
       "also load the Python plugin transformations in DIR (repeatable; an "
       "error when DIR cannot be loaded)"},
      {"--no-plugins", OptionKind::Flag, "",
       "load no plugins from Weir's plugins/ folder, $WEIR_PLUGIN_PATH or "
       "~/.local/share/weir/plugins (a default folder that cannot be loaded "
       "is only a warning)"}};
  return options;
}

/// Every command's option table, in the order the usage lists them.
std::vector<const weir::cli::CommandSpec *> commandSpecs() {
  using namespace weir::cli;
  return {&inspectSpec(),    &convertSpec(), &printSpec(),
          &validateSpec(),   &runSpec(),     &conformanceSpec(),
          &transformsSpec(), &matchesSpec(), &optimizeSpec()};
}

/// The usage text, from the commands' option tables.
std::string usage() {
  using namespace weir::cli;
  std::string out = "usage: weir <command> [options]\n\ncommands:\n";
  for (const CommandSpec *spec : commandSpecs())
    out += usageOf(*spec);
  out += "\nplugin options (any command):\n";
  out += usageOf(pluginOptions());
  out += "MODEL is an ONNX file; FILE is an ONNX file or a Weir program "
         "(.json);\nSESSION is a .weir file written by optimize -o.\n";
  return out;
}

} // namespace

int main(int argc, char **argv) {
  using namespace weir::cli;
  if (argc < 2 || std::string(argv[1]) == "--help" ||
      std::string(argv[1]) == "-h") {
    std::fputs(usage().c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string command = argv[1];
  Args args(argv + 2, argv + argc);
  try {
    PluginOptions plugins = takePluginOptions(args);
    // Commands that list or apply transformations (or open a session, whose
    // recipe may name a plugin) see the plugin transformations too.
    std::optional<weir::app::PluginHost> host;
    bool session =
        std::any_of(args.begin(), args.end(), [](const std::string &a) {
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
    // One command's usage when the command is known, else all of it.
    std::string text = usage();
    for (const weir::cli::CommandSpec *spec : commandSpecs())
      if (spec->name == command)
        text = "usage:\n" + weir::cli::usageOf(*spec) +
               "(`weir --help` lists every command)\n";
    std::fprintf(stderr, "weir: %s\n\n%s", e.message.c_str(), text.c_str());
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
