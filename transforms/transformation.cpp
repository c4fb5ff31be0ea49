#include "transforms/transformation.h"

#include "transforms/accepted_step.h"

#include "ir/error.h"
#include "ir/validate.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace weir::transforms {

const std::vector<TierInfo> &tiers() {
  static const std::vector<TierInfo> kTiers = {
      {Tier::Expansion, 1, "expansion", "Operator expansion"},
      {Tier::Fusion, 2, "fusion", "Fusion"},
      {Tier::Movement, 3, "movement", "Data movement"},
      {Tier::Tensorize, 4, "tensorize", "Tensorization"},
  };
  return kTiers;
}

const TierInfo &tierInfo(Tier t) {
  for (const TierInfo &info : tiers())
    if (info.tier == t)
      return info;
  throw Error("unknown tier " + std::to_string(int(t)));
}

std::string_view tierName(Tier t) { return tierInfo(t).name; }

std::optional<Tier> parseTier(std::string_view name) {
  for (const TierInfo &info : tiers())
    if (info.name == name)
      return info.tier;
  return std::nullopt;
}

std::string tierNameList() {
  std::string list;
  const std::vector<TierInfo> &all = tiers();
  for (std::size_t i = 0; i < all.size(); ++i)
    list += std::string(i == 0                ? ""
                        : i + 1 == all.size() ? " or "
                                              : ", ") +
            std::string(all[i].name);
  return list;
}

std::string Transformation::description() const {
  const TierInfo &t = tierInfo(tier());
  return std::string(t.title) + " (tier " + std::to_string(t.number) + "). " +
         declaration_.description;
}

std::string_view paramKindName(ParamSpec::Kind k) {
  switch (k) {
  case ParamSpec::Kind::Bool:
    return "bool";
  case ParamSpec::Kind::Int:
    return "int";
  case ParamSpec::Kind::Float:
    return "float";
  case ParamSpec::Kind::String:
    return "string";
  case ParamSpec::Kind::IntList:
    return "int-list";
  }
  return "?";
}

std::optional<IntList> parseIntList(std::string_view text) {
  auto trim = [](std::string_view t) {
    while (!t.empty() && t.front() == ' ')
      t.remove_prefix(1);
    while (!t.empty() && t.back() == ' ')
      t.remove_suffix(1);
    return t;
  };
  std::string_view t = trim(text);
  if (t.size() >= 2 && t.front() == '[' && t.back() == ']')
    t = trim(t.substr(1, t.size() - 2));
  IntList out;
  if (t.empty())
    return out;
  // Items between commas; "16 0" is not a list of two.
  for (std::size_t at = 0; at <= t.size();) {
    std::size_t comma = std::min(t.find(',', at), t.size());
    std::string item(trim(t.substr(at, comma - at)));
    std::int64_t v = 0;
    auto [end, err] =
        std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || err != std::errc() || end != item.data() + item.size())
      return std::nullopt;
    out.push_back(v);
    at = comma + 1;
  }
  return out;
}

std::string paramValueText(const ParamValue &v) {
  return std::visit(
      [](const auto &x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>)
          return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::int64_t>)
          return std::to_string(x);
        else if constexpr (std::is_same_v<T, double>) {
          std::ostringstream s;
          s.precision(17);
          s << x;
          return s.str();
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + x + "\"";
        } else {
          std::string list;
          for (std::int64_t n : x)
            list += (list.empty() ? "" : ", ") + std::to_string(n);
          return "[" + list + "]";
        }
      },
      v);
}

ir::NodeId Match::node(std::string_view role) const {
  for (const auto &[r, id] : roles)
    if (r == role)
      return id;
  throw Error("match " + str() + " binds no role '" + std::string(role) + "'");
}

std::string Match::str() const {
  if (roles.empty())
    return "program";
  std::string s = state + ":";
  for (const auto &[role, id] : roles)
    s += " " + role + "=%" + std::to_string(id);
  return s;
}

std::vector<Match> matchesInState(const ir::Program &program,
                                  const Pattern &pattern,
                                  const ir::State &state) {
  std::vector<Match> out;
  std::shared_ptr<const StateGraph> shared = sharedStateGraph(state);
  const StateGraph &graph = *shared;
  for (const std::vector<ir::NodeId> &b :
       matchPattern(pattern, program, graph)) {
    Match m{state.name, {}};
    for (std::size_t k = 0; k < b.size(); ++k)
      m.roles.emplace_back(pattern.nodes[k].role, b[k]);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Match> findMatches(const ir::Program &program,
                               const Transformation &t) {
  const Pattern &pattern = t.pattern();
  if (pattern.empty())
    return {Match{}};
  std::vector<Match> out;
  for (const ir::State &state : program.states) {
    std::vector<Match> here = matchesInState(program, pattern, state);
    out.insert(out.end(), here.begin(), here.end());
  }
  return out;
}

namespace {

std::string kindOf(const ParamValue &v) {
  static const char *kNames[] = {"bool", "int", "float", "string", "int-list"};
  return kNames[v.index()];
}

} // namespace

Params resolveParams(const Transformation &t, const Params &params) {
  const std::vector<ParamSpec> &specs = t.params();
  std::string where = std::string(t.id()) + ": parameter '";
  for (const auto &[name, value] : params) {
    bool known = false;
    for (const ParamSpec &s : specs)
      known = known || s.name == name;
    if (!known) {
      std::string list;
      for (const ParamSpec &s : specs)
        list += (list.empty() ? "" : ", ") + s.name;
      throw Error(where + name + "' is unknown (parameters: " +
                  (list.empty() ? "none" : list) + ")");
    }
  }
  Params out;
  for (const ParamSpec &s : specs) {
    auto it = params.find(s.name);
    ParamValue v = it == params.end() ? s.defaultValue : it->second;
    if (s.kind == ParamSpec::Kind::Float &&
        std::holds_alternative<std::int64_t>(v))
      v = double(std::get<std::int64_t>(v));
    if (s.kind == ParamSpec::Kind::IntList)
      if (const std::string *text = std::get_if<std::string>(&v))
        if (auto list = parseIntList(*text))
          v = std::move(*list);
    if (v.index() != std::size_t(s.kind))
      throw Error(where + s.name + "' must be " +
                  std::string(paramKindName(s.kind)) + ", got " + kindOf(v) +
                  " " + paramValueText(v));
    if (const IntList *list = std::get_if<IntList>(&v))
      for (std::int64_t n : *list)
        if ((s.min && double(n) < *s.min) || (s.max && double(n) > *s.max))
          throw Error(
              where + s.name + "' = " + paramValueText(v) + ": " +
              std::to_string(n) + " is outside [" +
              (s.min ? std::to_string(std::int64_t(*s.min)) : "-inf") + ", " +
              (s.max ? std::to_string(std::int64_t(*s.max)) : "inf") + "]");
    double number = std::holds_alternative<std::int64_t>(v)
                        ? double(std::get<std::int64_t>(v))
                    : std::holds_alternative<double>(v) ? std::get<double>(v)
                                                        : 0.0;
    if (std::holds_alternative<double>(v) && !std::isfinite(number))
      throw Error(where + s.name + "' must be finite");
    bool scalar = std::holds_alternative<std::int64_t>(v) ||
                  std::holds_alternative<double>(v);
    if (scalar && ((s.min && number < *s.min) || (s.max && number > *s.max))) {
      std::ostringstream range;
      range << "[" << (s.min ? std::to_string(*s.min) : "-inf") << ", "
            << (s.max ? std::to_string(*s.max) : "inf") << "]";
      throw Error(where + s.name + "' = " + paramValueText(v) + " is outside " +
                  range.str());
    }
    if (s.kind == ParamSpec::Kind::String && !s.choices.empty()) {
      const std::string &text = std::get<std::string>(v);
      bool allowed = false;
      std::string list;
      for (const std::string &c : s.choices) {
        allowed = allowed || c == text;
        list += (list.empty() ? "" : ", ") + c;
      }
      if (!allowed)
        throw Error(where + s.name + "' = \"" + text + "\" is not one of " +
                    list);
    }
    out[s.name] = std::move(v);
  }
  return out;
}

namespace {

/// "conv, mid, bn": the pattern's roles in order.
std::string roleList(const Pattern &pattern) {
  std::string r;
  for (const PatternNode &n : pattern.nodes)
    r += (r.empty() ? "" : ", ") + n.role;
  return r;
}

} // namespace

namespace {

/// Whether `match` fits `t`'s pattern in `program` (checkMatch's first
/// half); the reason names what does not.
CheckResult fitsPattern(const ir::Program &program, const Transformation &t,
                        const Match &match, const Params &params) {
  const Pattern &pattern = t.pattern();
  if (pattern.empty()) {
    if (!match.roles.empty())
      return CheckResult::failure(
          "this transformation applies to the whole program; the match must "
          "bind no roles");
  } else {
    if (match.state.empty() && match.roles.empty())
      return CheckResult::failure("it needs a match binding the roles " +
                                  roleList(pattern) +
                                  " (list them with `weir matches`)");
    const ir::State *state = nullptr;
    for (const ir::State &s : program.states)
      if (s.name == match.state)
        state = &s;
    if (!state)
      return CheckResult::failure("there is no state '" + match.state + "'");
    std::vector<ir::NodeId> binding;
    for (std::size_t k = 0; k < pattern.nodes.size(); ++k) {
      if (k >= match.roles.size() ||
          match.roles[k].first != pattern.nodes[k].role)
        return CheckResult::failure("the match must bind the roles " +
                                    roleList(pattern) + " in that order");
      binding.push_back(match.roles[k].second);
    }
    if (match.roles.size() != pattern.nodes.size())
      return CheckResult::failure(
          "the match binds more roles than the pattern has");
    std::shared_ptr<const StateGraph> shared = sharedStateGraph(*state);
    const StateGraph &graph = *shared;
    if (auto why = explainMismatch(pattern, program, graph, binding)) {
      // A predicate's refusal is better explained by check(), which knows
      // why (an input that is not constant, ...); the structural reason is
      // the fallback.
      CheckResult detailed = CheckResult::success();
      bool structural = why->find(kPredicateRefused) == std::string::npos;
      if (!structural) {
        try {
          detailed = t.check(program, match, resolveParams(t, params));
        } catch (const std::exception &) {
          structural = true;
        }
      }
      if (!structural && !detailed.ok)
        return detailed;
      return CheckResult::failure(*why, binding);
    }
  }
  return CheckResult::success();
}

/// `params` resolved, or the reason they do not resolve.
std::variant<CheckResult, Params> resolved(const Transformation &t,
                                           const Params &params) {
  try {
    return resolveParams(t, params);
  } catch (const Error &e) {
    return CheckResult::failure(e.what());
  }
}

} // namespace

CheckResult checkMatch(const ir::Program &program, const Transformation &t,
                       const Match &match, const Params &params) {
  if (CheckResult fits = fitsPattern(program, t, match, params); !fits)
    return fits;
  auto values = resolved(t, params);
  if (auto *refusal = std::get_if<CheckResult>(&values))
    return *refusal;
  try {
    return t.check(program, match, std::get<Params>(values));
  } catch (const Error &e) {
    return CheckResult::failure(e.what());
  }
}

std::variant<CheckResult, ApplyResult>
Transformation::checkAndApply(const ir::Program &program, const Match &match,
                              const Params &params) const {
  CheckResult c = CheckResult::success();
  try {
    c = check(program, match, params);
  } catch (const Error &e) {
    c = CheckResult::failure(e.what());
  }
  if (!c)
    return c;
  return apply(program, match, params);
}

namespace {

/// checkMatch and the transformation's own check and apply: the refusal,
/// or the result, not yet validated.
std::variant<CheckResult, ApplyResult> checkedOutcome(const ir::Program &program,
                                                      const Transformation &t,
                                                      const Match &match,
                                                      const Params &params) {
  if (CheckResult fits = fitsPattern(program, t, match, params); !fits)
    return fits;
  auto values = resolved(t, params);
  if (auto *refusal = std::get_if<CheckResult>(&values))
    return *refusal;
  return t.checkAndApply(program, match, std::get<Params>(values));
}

/// Validates `result`, made by `t` from `program`; throws when it has errors.
void requireValidResult(const ir::Program &result, const ir::Program &program,
                        const Transformation &t, const Match &match,
                        InputValidity input) {
  std::vector<ir::Diagnostic> d = input == InputValidity::Valid
                                      ? ir::validate(result, program)
                                      : ir::validate(result);
  if (ir::hasErrors(d))
    throw Error(std::string(t.id()) + " at " + match.str() +
                " produced an invalid program: " + d.front().str());
}

} // namespace

std::variant<CheckResult, ApplyResult>
applyIfAccepted(const ir::Program &program, const Transformation &t,
                const Match &match, const Params &params,
                InputValidity input) {
  auto outcome = checkedOutcome(program, t, match, params);
  if (auto *r = std::get_if<ApplyResult>(&outcome))
    requireValidResult(r->program, program, t, match, input);
  return outcome;
}

std::variant<CheckResult, AcceptedStep>
acceptStep(const ir::Program &program, const Transformation &t,
           const Match &match, const Params &params, InputValidity input,
           ResultCheck check) {
  auto outcome = checkedOutcome(program, t, match, params);
  if (auto *refused = std::get_if<CheckResult>(&outcome))
    return std::move(*refused);
  ApplyResult &r = std::get<ApplyResult>(outcome);
  auto result = std::make_shared<const ir::Program>(std::move(r.program));
  auto memo = std::make_shared<const ir::StateMemo>(result);
  if (check == ResultCheck::Validate) {
    // Inside the caller's memo (the input's), which the validation's
    // comparisons with the input use.
    ir::UseStateMemo use(memo.get());
    requireValidResult(*result, program, t, match, input);
  }
  return AcceptedStep{std::move(result), std::move(r.idMap), std::move(memo)};
}

Error refusalError(std::string_view id, const Match &match,
                   const CheckResult &refusal) {
  return Error(std::string(id) + " at " + match.str() + ": " + refusal.reason);
}

ApplyResult applyChecked(const ir::Program &program, const Transformation &t,
                         const Match &match, const Params &params) {
  auto outcome = applyIfAccepted(program, t, match, params);
  if (auto *refusal = std::get_if<CheckResult>(&outcome))
    throw refusalError(t.id(), match, *refusal);
  return std::move(std::get<ApplyResult>(outcome));
}

namespace {

template <typename T> const T &param(const Params &p, std::string_view name) {
  auto it = p.find(name);
  if (it == p.end() || !std::holds_alternative<T>(it->second))
    throw Error("parameter '" + std::string(name) + "' is missing or mistyped");
  return std::get<T>(it->second);
}

} // namespace

std::int64_t intParam(const Params &p, std::string_view name) {
  return param<std::int64_t>(p, name);
}
double floatParam(const Params &p, std::string_view name) {
  return param<double>(p, name);
}
bool boolParam(const Params &p, std::string_view name) {
  return param<bool>(p, name);
}
const std::string &stringParam(const Params &p, std::string_view name) {
  return param<std::string>(p, name);
}

const IntList &intListParam(const Params &p, std::string_view name) {
  return param<IntList>(p, name);
}

} // namespace weir::transforms
