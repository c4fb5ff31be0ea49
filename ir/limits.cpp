#include "ir/limits.h"

#include "ir/error.h"
#include "ir/memory.h"

namespace weir::ir {
namespace {

/// The container's bytes under `symbols`, in 128 bits so that no product
/// wraps; nullopt when a symbol is unbound.
std::optional<unsigned __int128> bytesOf(const Container &c,
                                         const Bindings &symbols) {
  unsigned __int128 bytes = dtypeSize(c.dtype);
  for (const Expr &d : c.shape) {
    for (const std::string &s : d.freeSymbols())
      if (!symbols.count(s))
        return std::nullopt;
    std::int64_t n = d.evaluate(symbols);
    if (n <= 0)
      return 0; // empty; a negative extent is the binder's error
    bytes *= static_cast<unsigned __int128>(n);
    if (bytes >> 64)
      return bytes; // past every limit already
  }
  return bytes;
}

std::string bytesText(unsigned __int128 bytes) {
  if (bytes >> 62)
    return "more than 2^62 bytes";
  return formatBytes(static_cast<std::int64_t>(bytes));
}

} // namespace

void checkRunLimits(const Program &program, const Bindings &symbols,
                    const RunLimits &limits) {
  for (const auto &[name, value] : symbols)
    if (value > limits.maxSymbolValue)
      throw Error("symbol '" + name + "' is bound to " + std::to_string(value) +
                  ", more than the limit of " +
                  std::to_string(limits.maxSymbolValue));
  for (const auto &[name, c] : program.containers) {
    if (c.isView())
      continue; // no storage of its own
    std::optional<unsigned __int128> bytes = bytesOf(c, symbols);
    if (bytes && *bytes > static_cast<unsigned __int128>(limits.maxTensorBytes))
      throw Error("container '" + c.name + "' would take " + bytesText(*bytes) +
                  ", more than the limit of " +
                  formatBytes(limits.maxTensorBytes) + " for one tensor");
  }
  // Every single buffer is now below 2^62 bytes where bound; the total is
  // ir/memory.h's, which throws for an overflow of its own.
  MemoryReport memory = transientMemory(program, symbols);
  if (memory.allocated > limits.maxTransientBytes)
    throw Error("the program's transient buffers would take " +
                formatBytes(memory.allocated) + " (" +
                std::to_string(memory.buffers) +
                " buffers), more than the limit of " +
                formatBytes(limits.maxTransientBytes));
}

} // namespace weir::ir
