#pragma once
/// \file
/// A recipe: the list of applied steps — transformation id, the match, the
/// parameters — that replays on a fresh import of the same model and yields
/// a program with the same hash. The GUI's history, the Python trace and the
/// command line's `--recipe` are this one object.
///
/// JSON form (`weir optimize --recipe FILE`):
///
///     {"format": "weir-recipe", "version": 1, "steps": [
///       {"transformation": "expand-all"},
///       {"transformation": "fold-batchnorm",
///        "match": {"state": "main", "roles": [["conv", 12], ["mid", 13],
///                                               ["bn", 14]]},
///        "labels": {"conv": "Conv_3", "bn": "BatchNormalization_4"},
///        "params": {}}]}
///
/// `labels` records what each matched node was called; replay checks them,
/// so a recipe applied to a different model fails with a clear message
/// instead of transforming the wrong nodes.

#include "transforms/transformation.h"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace weir::workspace {

struct Step {
  std::string transformation;
  transforms::Match match;
  transforms::Params params; ///< as given (defaults are not written out)
  std::map<std::string, std::string> labels; ///< role -> node label

  /// "fold-batchnorm at main: conv=%12 mid=%13 bn=%14"
  std::string str() const;
};

struct Recipe {
  std::vector<Step> steps;

  nlohmann::json toJson() const;
  /// Throws weir::Error naming the step and key that are wrong.
  static Recipe fromJson(const nlohmann::json &doc);
  std::string dump() const; ///< pretty-printed JSON text
  static Recipe parse(const std::string &text, const std::string &what);

  /// Written atomically; loading throws weir::Error naming the file.
  void save(const std::filesystem::path &path) const;
  static Recipe load(const std::filesystem::path &path);

  /// A Python script that replays the recipe with the `weir` package on
  /// `modelPath`.
  std::string asPython(const std::string &modelPath) const;
};

/// Throws weir::Error for a non-finite float (JSON cannot hold one).
nlohmann::json paramsToJson(const transforms::Params &params);
transforms::Params paramsFromJson(const nlohmann::json &j,
                                  const std::string &where);
/// Whether `doc` is an object whose "format" is the string `format`, and
/// whose "version" is the integer `version`.
bool isFormat(const nlohmann::json &doc, const char *format);
/// A JSON library error for a message: without the "last read" quote, which
/// for a damaged file can be megabytes of base64.
std::string jsonErrorText(const std::exception &e);
bool isVersion(const nlohmann::json &doc, std::int64_t version);

} // namespace weir::workspace
