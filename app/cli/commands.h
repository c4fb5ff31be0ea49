#pragma once
/// \file
/// The `weir` command line: one function per subcommand. Each returns the
/// process exit status; errors a user can cause arrive as weir::Error and are
/// printed by main as one line naming the file and the problem.

#include <string>
#include <vector>

namespace weir::cli {

using Args = std::vector<std::string>;
struct CommandSpec;

/// Each command's options, declared once (options.h): the parser and the
/// usage text read them.
const CommandSpec &inspectSpec();
const CommandSpec &convertSpec();
const CommandSpec &printSpec();
const CommandSpec &validateSpec();
const CommandSpec &runSpec();
const CommandSpec &transformsSpec();
const CommandSpec &matchesSpec();
const CommandSpec &optimizeSpec();
const CommandSpec &conformanceSpec();

int inspectCommand(const Args &args);
int convertCommand(const Args &args);
int printCommand(const Args &args);
int validateCommand(const Args &args);
int runCommand(const Args &args);
int transformsCommand(const Args &args);
int matchesCommand(const Args &args);
int optimizeCommand(const Args &args);

/// Thrown for a malformed command line; main prints usage and exits 2.
struct UsageError {
  std::string message;
};

} // namespace weir::cli
