/// \file
/// See options.h.

#include "app/cli/options.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace weir::cli {
namespace {

const Option *findOption(const CommandSpec &spec, std::string_view word) {
  for (const Option &o : spec.options)
    if (o.name == word || (!o.alias.empty() && o.alias == word))
      return &o;
  return nullptr;
}

bool isPair(const std::string &word) {
  auto eq = word.find('=');
  return eq != std::string::npos && eq > 0 && eq + 1 < word.size();
}

std::optional<std::int64_t> wholeNumber(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return std::nullopt;
  return v;
}

std::optional<double> realNumber(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (*end != '\0')
    return std::nullopt;
  return v;
}

/// Checks one value of `o`; throws UsageError naming the command.
void checkValue(const CommandSpec &spec, const Option &o,
                const std::string &value) {
  auto fail = [&](const std::string &what) {
    throw UsageError{spec.name + ": " + o.name + " takes " + what + ", got '" +
                     value + "'"};
  };
  switch (o.kind) {
  case OptionKind::Count:
    if (auto v = wholeNumber(value); !v || *v < o.min || *v > o.max)
      fail("a whole number from " + std::to_string(o.min) + " to " +
           std::to_string(o.max));
    break;
  case OptionKind::Number:
    if (!realNumber(value))
      fail("a number");
    break;
  case OptionKind::Pair:
  case OptionKind::Pairs:
    if (!isPair(value))
      fail(o.value);
    break;
  case OptionKind::Flag:
  case OptionKind::Text:
    break;
  }
}

/// `left` padded to the help column, then `help` wrapped at 78 columns
/// under it; a `left` too wide for the column gets a line of its own.
std::string usageLine(const std::string &left, const std::string &help) {
  constexpr std::size_t kColumn = 32, kWidth = 78 - kColumn;
  std::vector<std::string> rows;
  std::string row, word;
  std::istringstream words(help);
  while (words >> word) {
    if (!row.empty() && row.size() + 1 + word.size() > kWidth) {
      rows.push_back(row);
      row.clear();
    }
    row += (row.empty() ? "" : " ") + word;
  }
  rows.push_back(row);
  std::string out, head = left;
  if (head.size() >= kColumn) {
    out += head + "\n";
    head.clear();
  }
  for (const std::string &r : rows) {
    if (!r.empty())
      head.resize(kColumn, ' ');
    out += head + r + "\n";
    head.clear();
  }
  return out;
}

} // namespace

bool ParsedArgs::flag(std::string_view name) const {
  return values_.find(name) != values_.end();
}

std::optional<std::string> ParsedArgs::text(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty())
    return std::nullopt;
  return it->second.back();
}

std::vector<std::string> ParsedArgs::texts(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<std::int64_t> ParsedArgs::count(std::string_view name) const {
  auto t = text(name);
  return t ? wholeNumber(*t) : std::nullopt;
}

std::optional<double> ParsedArgs::number(std::string_view name) const {
  auto t = text(name);
  return t ? realNumber(*t) : std::nullopt;
}

std::vector<std::pair<std::string, std::string>>
ParsedArgs::pairs(std::string_view name) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string &word : texts(name)) {
    auto eq = word.find('=');
    out.emplace_back(word.substr(0, eq), word.substr(eq + 1));
  }
  return out;
}

ParsedArgs parseArgs(const CommandSpec &spec, const Args &args) {
  ParsedArgs parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string &word = args[i];
    if (word.size() < 2 || word[0] != '-') {
      parsed.operands_.push_back(word);
      continue;
    }
    const Option *o = findOption(spec, word);
    if (!o)
      throw UsageError{spec.name + ": unknown option '" + word + "'"};
    auto &values = parsed.values_[o->name];
    if (o->kind == OptionKind::Flag)
      continue;
    // Given again, an option that takes one value takes the last.
    if (!o->repeatable)
      values.clear();
    if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
      throw UsageError{spec.name + ": " + o->name + " needs " + o->value};
    if (o->kind == OptionKind::Pairs) {
      // One or more NAME=VALUE words follow.
      do {
        checkValue(spec, *o, args[i + 1]);
        values.push_back(args[++i]);
      } while (i + 1 < args.size() && isPair(args[i + 1]) &&
               args[i + 1].rfind("-", 0) != 0);
      continue;
    }
    checkValue(spec, *o, args[i + 1]);
    values.push_back(args[++i]);
  }
  std::size_t n = parsed.operands_.size();
  if (n < spec.minOperands)
    throw UsageError{spec.name + ": no " +
                     (spec.operands.empty() ? "operand" : spec.operands) +
                     " given"};
  if (n > spec.maxOperands)
    throw UsageError{spec.name + ": more than " +
                     (spec.maxOperands == 1
                          ? std::string("one ") + spec.operands
                          : std::to_string(spec.maxOperands) + " operands") +
                     " given ('" + parsed.operands_.back() + "')"};
  return parsed;
}

std::string usageOf(const std::vector<Option> &options) {
  std::string out;
  for (const Option &o : options) {
    std::string left =
        "      " + (o.alias.empty() ? "" : o.alias + ", ") + o.name;
    if (o.kind != OptionKind::Flag)
      left += " " + o.value;
    out += usageLine(left, o.help);
  }
  return out;
}

std::string usageOf(const CommandSpec &spec) {
  return usageLine("  " + spec.name +
                       (spec.operands.empty() ? "" : " " + spec.operands),
                   spec.help) +
         usageOf(spec.options);
}

} // namespace weir::cli
