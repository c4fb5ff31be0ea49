#pragma once
/// \file
/// The command line's options, declared once per command as a table: the
/// usage text and the parser both come from it, so an option is spelled,
/// described and checked in one place, and every command reads a count
/// (`--threads 2.5` is refused everywhere) or a number the same way.

#include "app/cli/commands.h"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weir::cli {

/// What an option takes.
enum class OptionKind : std::uint8_t {
  Flag,   ///< nothing
  Text,   ///< one word
  Count,  ///< one whole number, at least Option::min
  Number, ///< one real number
  Pair,   ///< one NAME=VALUE word
  Pairs,  ///< one or more NAME=VALUE words
};

struct Option {
  std::string name; ///< "--threads"
  OptionKind kind = OptionKind::Flag;
  std::string value;      ///< the value's name in the usage ("N", "FILE")
  std::string help;       ///< what it does, for the usage text
  std::string alias = {}; ///< "-o", or empty
  std::int64_t min = 0;   ///< Count only
  /// Every value is kept (else the last one given counts).
  bool repeatable = false;
  std::int64_t max = std::numeric_limits<std::int32_t>::max(); ///< Count
};

/// One command: how it is called and what it takes.
struct CommandSpec {
  std::string name;     ///< "run"
  std::string operands; ///< "MODEL", for the usage
  std::string help;     ///< what it does
  std::vector<Option> options;
  /// How many operands it takes (MODEL, FILE): at least, at most.
  std::size_t minOperands = 1, maxOperands = 1;
};

/// A command line parsed against a CommandSpec: the values are checked,
/// so the accessors only convert.
class ParsedArgs {
public:
  bool flag(std::string_view name) const;
  /// The last value given, if any.
  std::optional<std::string> text(std::string_view name) const;
  std::vector<std::string> texts(std::string_view name) const;
  std::optional<std::int64_t> count(std::string_view name) const;
  std::optional<double> number(std::string_view name) const;
  /// Every NAME=VALUE given (Pair and Pairs), in order.
  std::vector<std::pair<std::string, std::string>>
  pairs(std::string_view name) const;
  const std::vector<std::string> &operands() const { return operands_; }

private:
  friend ParsedArgs parseArgs(const CommandSpec &, const Args &);
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
  std::vector<std::string> operands_;
};

/// Parses `args` against `spec`: throws UsageError ("run: --threads takes
/// a whole number from 0 to 2147483647, got '2.5'") for an unknown option,
/// a missing or malformed value, or too few or too many operands. An
/// option that is not repeatable takes the last value given.
ParsedArgs parseArgs(const CommandSpec &spec, const Args &args);

/// `spec`'s lines of the usage text: the command and its operands, then one
/// line (or more) per option.
std::string usageOf(const CommandSpec &spec);
/// The usage lines of `options` alone.
std::string usageOf(const std::vector<Option> &options);

} // namespace weir::cli
