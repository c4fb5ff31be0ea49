/// \file
/// `weir convert`, `weir print` and `weir validate`.

#include "app/cli/commands.h"
#include "app/cli/load.h"
#include "app/cli/options.h"
#include "ir/hash.h"
#include "ir/json.h"
#include "ir/print.h"
#include "ir/validate.h"

#include <cstdio>
#include <optional>

namespace weir::cli {
const CommandSpec &convertSpec() {
  static const CommandSpec spec{
      "convert",
      "MODEL",
      "import a model and save it as a Weir program (JSON plus a "
      "PROGRAM.json.bin sidecar)",
      {{"--output", OptionKind::Text, "PROGRAM.json", "where to save it",
        "-o"}}};
  return spec;
}

const CommandSpec &printSpec() {
  static const CommandSpec spec{
      "print", "FILE", "the readable text form of a model or program", {}};
  return spec;
}

const CommandSpec &validateSpec() {
  static const CommandSpec spec{
      "validate", "FILE", "structural checks of a model or program", {}};
  return spec;
}

int convertCommand(const Args &args) {
  ParsedArgs parsed = parseArgs(convertSpec(), args);
  const std::string &in = parsed.operands()[0];
  std::optional<std::string> out = parsed.text("--output");
  if (!out)
    throw UsageError{"convert: usage is 'weir convert MODEL -o PROGRAM.json'"};
  Loaded loaded = loadAny(in);
  ir::saveProgram(loaded.program, *out);
  std::printf("wrote %s (%zu nodes, hash %s)\n", out->c_str(),
              loaded.program.nodeCount(),
              ir::hashHex(ir::structuralHash(loaded.program)).c_str());
  return 0;
}

int printCommand(const Args &args) {
  Loaded loaded = loadAny(parseArgs(printSpec(), args).operands()[0]);
  std::fputs(ir::print(loaded.program).c_str(), stdout);
  return 0;
}

int validateCommand(const Args &args) {
  std::string path = parseArgs(validateSpec(), args).operands()[0];
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
