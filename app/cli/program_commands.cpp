/// \file
/// `weir convert`, `weir print` and `weir validate`.

#include "app/cli/commands.h"
#include "app/cli/load.h"
#include "ir/hash.h"
#include "ir/json.h"
#include "ir/print.h"
#include "ir/validate.h"

#include <cstdio>

namespace weir::cli {
namespace {

std::string onePath(const Args &args, const char *command) {
  std::string path;
  for (const std::string &a : args) {
    if (!a.empty() && a[0] == '-')
      throw UsageError{std::string(command) + ": unknown option '" + a + "'"};
    if (!path.empty())
      throw UsageError{std::string(command) + ": more than one file given"};
    path = a;
  }
  if (path.empty())
    throw UsageError{std::string(command) + ": no file given"};
  return path;
}

} // namespace

int convertCommand(const Args &args) {
  std::string in, out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o" || args[i] == "--output") {
      if (i + 1 >= args.size())
        throw UsageError{"convert: -o needs a file name"};
      out = args[++i];
    } else if (!args[i].empty() && args[i][0] == '-') {
      throw UsageError{"convert: unknown option '" + args[i] + "'"};
    } else if (in.empty()) {
      in = args[i];
    } else {
      throw UsageError{"convert: more than one model given"};
    }
  }
  if (in.empty() || out.empty())
    throw UsageError{"convert: usage is 'weir convert MODEL -o PROGRAM.json'"};
  Loaded loaded = loadAny(in);
  ir::saveProgram(loaded.program, out);
  std::printf("wrote %s (%zu nodes, hash %s)\n", out.c_str(),
              loaded.program.nodeCount(),
              ir::hashHex(ir::structuralHash(loaded.program)).c_str());
  return 0;
}

int printCommand(const Args &args) {
  Loaded loaded = loadAny(onePath(args, "print"));
  std::fputs(ir::print(loaded.program).c_str(), stdout);
  return 0;
}

int validateCommand(const Args &args) {
  std::string path = onePath(args, "validate");
  Loaded loaded = loadAny(path);
  std::vector<ir::Diagnostic> diags = ir::validate(loaded.program);
  int errors = 0, warnings = 0;
  for (const ir::Diagnostic &d : diags) {
    std::printf("%s: %s\n", path.c_str(), d.str().c_str());
    (d.severity == ir::Severity::Error ? errors : warnings)++;
  }
  std::printf("%s: %d errors, %d warnings (hash %s)\n", path.c_str(), errors,
              warnings,
              ir::hashHex(ir::structuralHash(loaded.program)).c_str());
  return errors ? 1 : 0;
}

} // namespace weir::cli
