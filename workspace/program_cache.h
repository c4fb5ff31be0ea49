#pragma once
/// \file
/// Programs that sessions' recipes produced, kept on disk by structural
/// hash beside the compiled pieces (codegen/cpu/object_cache.h: the same
/// folder, size limit and eviction), so `weir run SESSION` on a session
/// opened before skips replaying its recipe. An entry is the program's
/// JSON and binary files (`<hash>.wprog`, `<hash>.wprog.bin`); one that does
/// not load, or whose structural hash is not its name, is ignored.

#include "ir/program.h"

#include <optional>
#include <string>

namespace weir::workspace {

/// The program of structural hash `hashHex` (16 hex digits), when cached.
std::optional<ir::Program> cachedProgram(const std::string &hashHex);
/// Keeps `program`, whose structural hash is `hashHex`; a failure to write
/// only loses the entry.
void cacheProgram(const ir::Program &program, const std::string &hashHex);

} // namespace weir::workspace
