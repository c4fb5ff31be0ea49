#pragma once
/// \file
/// The Transformation interface every tier implements (docs/DESIGN.md,
/// "Transformations"). A transformation is declared once — id, tier,
/// summary, description, typed parameters, exactness and a pattern — and the
/// registry, the command line, recipes, Python and the GUI all read that one
/// declaration.
///
/// Programs are values: `apply` takes the program it is given and returns a
/// new one with an old→new node-id map, so references into the old version
/// (a selection, a recipe's later steps) still resolve.

#include "ir/error.h"
#include "ir/program.h"
#include "transforms/id_map.h"
#include "transforms/pattern.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace weir::transforms {

/// The four tiers, in the order a recipe usually applies them.
enum class Tier : std::uint8_t { Expansion, Fusion, Movement, Tensorize };

/// A tier as the front ends show it. The table (tiers()) is the one place
/// a tier is named: `--tier`, JSON and Python read `name`, descriptions
/// and the GUI's grouping `title` and `number`.
struct TierInfo {
  Tier tier;
  int number;             ///< 1 to 4
  std::string_view name;  ///< "movement"
  std::string_view title; ///< "Data movement"
};
/// Every tier, in order.
const std::vector<TierInfo> &tiers();
const TierInfo &tierInfo(Tier t);
std::string_view tierName(Tier t); ///< "expansion", "fusion", ...
std::optional<Tier> parseTier(std::string_view name);
/// "expansion, fusion, movement or tensorize", for usage messages.
std::string tierNameList();

using IntList = std::vector<std::int64_t>;
/// In the order of ParamSpec::Kind.
using ParamValue =
    std::variant<bool, std::int64_t, double, std::string, IntList>;
/// Parameter values by name; absent names take their defaults.
using Params = std::map<std::string, ParamValue, std::less<>>;

/// One typed parameter with its default and, for numbers, its range (for
/// an int list, every element's); for strings an optional list of allowed
/// values.
struct ParamSpec {
  enum class Kind : std::uint8_t { Bool, Int, Float, String, IntList };
  std::string name;
  Kind kind = Kind::Int;
  ParamValue defaultValue;
  std::string description;
  std::optional<double> min, max;
  std::vector<std::string> choices; ///< String only; empty = any string
};
/// "bool", "int", "float", "string", "int-list".
std::string_view paramKindName(ParamSpec::Kind k);
/// A value as text: `true`, `3`, `0.5`, `"blas"`, `[16, 0, 8]`.
std::string paramValueText(const ParamValue &v);
/// "16, 0, 8" (or "16,0,8", "[16, 0, 8]", "") as an int list; nullopt when
/// it is not one. Recipes written before int lists existed hold such
/// strings, and the GUI's line edits give them.
std::optional<IntList> parseIntList(std::string_view text);

/// Whether a transformation keeps results bit for bit, or only within a
/// tolerance (it reassociates, changes an implementation's summation order
/// or rounds a folded constant).
struct Exactness {
  bool exact = true;
  double rtol = 0;
  double atol = 0;
};

/// A pattern's roles bound to node ids in one state, in the pattern's role
/// order. A whole-program transformation has one match with no roles.
/// Matches name nodes by id; ids are assigned deterministically on import
/// and by transformations, so a recipe's matches replay on a fresh import.
struct Match {
  std::string state;
  std::vector<std::pair<std::string, ir::NodeId>> roles;

  /// The node bound to `role`; throws weir::Error when it is unbound.
  ir::NodeId node(std::string_view role) const;
  /// "main: conv=%3 bn=%5", or "program" for a whole-program match.
  std::string str() const;
  friend bool operator==(const Match &, const Match &) = default;
  friend auto operator<=>(const Match &, const Match &) = default;
};

/// The answer of `check`: ok, or a reason a person can read and the node
/// ids involved (a viewer highlights them).
struct CheckResult {
  bool ok = true;
  std::string reason;
  std::vector<ir::NodeId> nodes;

  static CheckResult success() { return {}; }
  static CheckResult failure(std::string reason,
                             std::vector<ir::NodeId> nodes = {}) {
    return {false, std::move(reason), std::move(nodes)};
  }
  explicit operator bool() const { return ok; }
};

struct ApplyResult {
  ir::Program program;
  IdMap idMap;
};

/// What a transformation is, declared once as data (the way MLIR declares
/// its passes): the registry, the command line, recipes, Python, the GUI
/// and the docs all read this one record.
struct Declaration {
  std::string id; ///< kebab-case, e.g. "map-fusion"
  Tier tier = Tier::Expansion;
  std::string summary; ///< one line
  /// What it does and refuses. The tier is not written here: description()
  /// puts "Fusion (tier 2). " in front.
  std::string description;
  std::vector<ParamSpec> params = {};
  Exactness exactness = {};
  /// The shape of a match. An empty pattern matches once per program.
  Pattern pattern = {};
};

class Transformation {
public:
  explicit Transformation(Declaration declaration)
      : declaration_(std::move(declaration)) {}
  virtual ~Transformation() = default;

  const Declaration &declaration() const { return declaration_; }
  std::string_view id() const { return declaration_.id; }
  Tier tier() const { return declaration_.tier; }
  std::string_view summary() const { return declaration_.summary; }
  /// The declared description after the tier: "Fusion (tier 2). A map ...".
  std::string description() const;
  const std::vector<ParamSpec> &params() const { return declaration_.params; }
  const Exactness &exactness() const { return declaration_.exactness; }
  const Pattern &pattern() const { return declaration_.pattern; }

  /// Preconditions beyond the pattern's. Called only with matches of the
  /// pattern (or matches a recipe claims are such; `checkMatch` verifies
  /// that first). Must not throw for a bad program: a failure is a reason.
  virtual CheckResult check(const ir::Program &program, const Match &match,
                            const Params &params) const = 0;
  /// The rewrite. Called only after check() succeeded; may still throw
  /// weir::Error, which leaves the input untouched (it is const).
  virtual ApplyResult apply(const ir::Program &program, const Match &match,
                            const Params &params) const = 0;
  /// check() and apply() in one, for callers that do both (applyChecked):
  /// the refusal, or the result. By default check then apply; a
  /// transformation whose check computes a plan (planned.h) plans once and
  /// hands the plan to its rewrite.
  virtual std::variant<CheckResult, ApplyResult>
  checkAndApply(const ir::Program &program, const Match &match,
                const Params &params) const;
  /// Whether the same step on the same program always makes the same
  /// program. Weir's own transformations do (the workspace may then drop a
  /// version's program and rebuild it by replaying the step); a plugin's
  /// code may not, and its results are kept.
  virtual bool replaysExactly() const { return true; }

private:
  Declaration declaration_;
};

/// Every match of `t` in `program`, in deterministic order (states in
/// order, then the pattern matcher's order), not yet filtered by check().
std::vector<Match> findMatches(const ir::Program &program,
                               const Transformation &t);
/// The matches of a non-empty pattern in one state, as Matches.
std::vector<Match> matchesInState(const ir::Program &program,
                                  const Pattern &pattern,
                                  const ir::State &state);

/// `params` completed with defaults and checked against the declaration:
/// unknown names, wrong kinds, values out of range or not among the
/// choices throw weir::Error naming the transformation and parameter. An
/// int given for a float parameter is converted, and so is a string that
/// parseIntList reads for an int-list parameter.
Params resolveParams(const Transformation &t, const Params &params);

/// check() after verifying that the match fits the pattern in `program`
/// (the state exists, every role is bound to a node of the right kind
/// and the pattern's edges are there), and resolving the parameters. The
/// reason names what is wrong.
CheckResult checkMatch(const ir::Program &program, const Transformation &t,
                       const Match &match, const Params &params = {});

/// What a caller knows of the program it hands to applyIfAccepted.
enum class InputValidity : std::uint8_t {
  Unknown, ///< the result is validated in full
  /// It validated without errors (a workspace's versions after the first
  /// do): the result is validated against it, which checks again only what
  /// the step changed (ir::validate's two-program form).
  Valid,
};

/// checkMatch and apply in one (the check plans once, planned.h), then
/// validate: the refusal when the check refuses, else the result. Throws
/// weir::Error "<id> at <match> produced an invalid program: ..." when the
/// result does not validate (a faulty transformation or plugin).
std::variant<CheckResult, ApplyResult>
applyIfAccepted(const ir::Program &program, const Transformation &t,
                const Match &match, const Params &params = {},
                InputValidity input = InputValidity::Unknown);

/// The error a refused step is reported with: "<id> at <match>: <reason>".
Error refusalError(std::string_view id, const Match &match,
                   const CheckResult &refusal);

/// applyIfAccepted, throwing weir::Error with
/// "<id> at <match>: <reason>" when the check fails and when the result is
/// not a valid program (a faulty transformation or plugin).
ApplyResult applyChecked(const ir::Program &program, const Transformation &t,
                         const Match &match, const Params &params = {});

/// Typed parameter readers for apply()/check() (after resolveParams).
std::int64_t intParam(const Params &p, std::string_view name);
double floatParam(const Params &p, std::string_view name);
bool boolParam(const Params &p, std::string_view name);
const std::string &stringParam(const Params &p, std::string_view name);
const IntList &intListParam(const Params &p, std::string_view name);

} // namespace weir::transforms
