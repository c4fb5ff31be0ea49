#include "workspace/recipe.h"

#include "ir/atomic_file.h"
#include "ir/error.h"
#include "ir/limits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace weir::workspace {

using nlohmann::json;

std::string Step::str() const { return transformation + " at " + match.str(); }

json paramsToJson(const transforms::Params &params) {
  json j = json::object();
  for (const auto &[name, v] : params) {
    if (const double *d = std::get_if<double>(&v); d && !std::isfinite(*d))
      throw Error("parameter '" + name + "' is " + std::to_string(*d) +
                  "; a recipe holds finite numbers only");
    std::visit([&](const auto &x) { j[name] = x; }, v);
  }
  return j;
}

bool isFormat(const json &doc, const char *format) {
  return doc.is_object() && doc.contains("format") &&
         doc["format"].is_string() &&
         doc["format"].get<std::string>() == format;
}

bool isVersion(const json &doc, std::int64_t version) {
  return doc.contains("version") && doc["version"].is_number_integer() &&
         !(doc["version"].is_number_unsigned() &&
           doc["version"].get<std::uint64_t>() > std::uint64_t(INT64_MAX)) &&
         doc["version"].get<std::int64_t>() == version;
}

transforms::Params paramsFromJson(const json &j, const std::string &where) {
  transforms::Params out;
  if (j.is_null())
    return out;
  if (!j.is_object())
    throw Error(where + ": \"params\" must be an object");
  for (const auto &[name, v] : j.items()) {
    if (v.is_boolean())
      out[name] = v.get<bool>();
    else if (v.is_number_unsigned() &&
             v.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
      throw Error(where + ": parameter '" + name + "' is too large");
    else if (v.is_number_integer())
      out[name] = v.get<std::int64_t>();
    else if (v.is_number())
      out[name] = v.get<double>();
    else if (v.is_string())
      out[name] = v.get<std::string>();
    else if (v.is_array() && std::all_of(v.begin(), v.end(), [](const json &x) {
               return x.is_number_integer() &&
                      !(x.is_number_unsigned() &&
                        x.get<std::uint64_t>() > std::uint64_t(INT64_MAX));
             }))
      out[name] = v.get<transforms::IntList>();
    else
      throw Error(where + ": parameter '" + name +
                  "' must be a bool, number, string or list of integers");
  }
  return out;
}

json Recipe::toJson() const {
  json steps = json::array();
  for (const Step &s : this->steps) {
    json j = {{"transformation", s.transformation}};
    if (!s.match.roles.empty()) {
      json roles = json::array();
      for (const auto &[role, id] : s.match.roles)
        roles.push_back(json::array({role, id}));
      j["match"] = {{"state", s.match.state}, {"roles", roles}};
    }
    if (!s.labels.empty())
      j["labels"] = s.labels;
    if (!s.params.empty())
      j["params"] = paramsToJson(s.params);
    steps.push_back(std::move(j));
  }
  return {{"format", "weir-recipe"}, {"version", 1}, {"steps", steps}};
}

Recipe Recipe::fromJson(const json &doc) {
  if (!isFormat(doc, "weir-recipe"))
    throw Error("not a Weir recipe (expected \"format\": \"weir-recipe\")");
  if (!isVersion(doc, 1))
    throw Error("recipe version must be 1");
  if (!doc.contains("steps") || !doc["steps"].is_array())
    throw Error("recipe has no \"steps\" array");
  if (doc["steps"].size() > ir::kMaxRecipeSteps)
    throw Error("recipe has " + std::to_string(doc["steps"].size()) +
                " steps, more than the limit of " +
                std::to_string(ir::kMaxRecipeSteps));
  Recipe r;
  int index = 0;
  for (const json &j : doc["steps"]) {
    std::string where = "recipe step " + std::to_string(++index);
    if (!j.is_object() || !j.contains("transformation") ||
        !j["transformation"].is_string())
      throw Error(where + ": needs a \"transformation\" id");
    Step s;
    s.transformation = j["transformation"].get<std::string>();
    if (j.contains("match")) {
      const json &m = j["match"];
      if (!m.is_object() || !m.contains("state") || !m["state"].is_string() ||
          !m.contains("roles") || !m["roles"].is_array())
        throw Error(where + ": \"match\" needs \"state\" and \"roles\"");
      s.match.state = m["state"].get<std::string>();
      for (const json &r2 : m["roles"]) {
        if (!r2.is_array() || r2.size() != 2 || !r2[0].is_string() ||
            !r2[1].is_number_unsigned())
          throw Error(where + ": each role must be [\"name\", node id]");
        s.match.roles.emplace_back(r2[0].get<std::string>(),
                                   r2[1].get<ir::NodeId>());
      }
    }
    if (j.contains("labels")) {
      if (!j["labels"].is_object())
        throw Error(where + ": \"labels\" must be an object");
      for (const auto &[role, label] : j["labels"].items()) {
        if (!label.is_string())
          throw Error(where + ": label of '" + role + "' must be a string");
        s.labels[role] = label.get<std::string>();
      }
    }
    s.params = paramsFromJson(j.value("params", json()), where);
    r.steps.push_back(std::move(s));
  }
  return r;
}

std::string Recipe::dump() const { return toJson().dump(2) + "\n"; }

Recipe Recipe::parse(const std::string &text, const std::string &what) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception &e) {
    throw Error(what + ": not valid JSON: " + jsonErrorText(e));
  }
  try {
    return fromJson(doc);
  } catch (const Error &e) {
    throw Error(what + ": " + e.what());
  }
}

void Recipe::save(const std::filesystem::path &path) const {
  writeFileAtomically(path, dump());
}

Recipe Recipe::load(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path.string() + ": cannot open the recipe");
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path.string());
}

namespace {

std::string pyString(const std::string &s) {
  return json(s).dump(); // a JSON string literal is a Python one
}

std::string pyValue(const transforms::ParamValue &v) {
  return std::visit(
      [](const auto &x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>)
          return x ? "True" : "False";
        else if constexpr (std::is_same_v<T, std::string>)
          return pyString(x);
        else if constexpr (std::is_same_v<T, double>) {
          if (std::isnan(x))
            return "float(\"nan\")";
          if (std::isinf(x))
            return x > 0 ? "float(\"inf\")" : "float(\"-inf\")";
          return json(x).dump();
        } else
          return json(x).dump();
      },
      v);
}

/// A name usable as a Python keyword argument: an identifier that is not
/// one of Python's keywords.
bool isIdentifier(const std::string &s) {
  static const std::set<std::string> keywords{
      "False",  "None",   "True",    "and",      "as",       "assert", "async",
      "await",  "break",  "class",   "continue", "def",      "del",    "elif",
      "else",   "except", "finally", "for",      "from",     "global", "if",
      "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
      "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) ||
      keywords.count(s))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

} // namespace

std::string Recipe::asPython(const std::string &modelPath) const {
  std::string s = "# Replays a Weir recipe (" + std::to_string(steps.size()) +
                  " steps).\nimport weir\n\nws = weir.Workspace(weir.load(" +
                  pyString(modelPath) + "))\n";
  for (const Step &step : steps) {
    s += "ws.apply(" + pyString(step.transformation);
    if (!step.match.roles.empty()) {
      s += ", {\"state\": " + pyString(step.match.state);
      for (const auto &[role, id] : step.match.roles)
        s += ", " + pyString(role) + ": " + std::to_string(id);
      s += "}";
    }
    // Parameter names that are not Python identifiers (a hand-written
    // recipe) go through a dict, so the script stays valid and inert.
    std::string odd;
    for (const auto &[name, v] : step.params)
      if (isIdentifier(name))
        s += ", " + name + "=" + pyValue(v);
      else
        odd += (odd.empty() ? "" : ", ") + pyString(name) + ": " + pyValue(v);
    if (!odd.empty())
      s += ", **{" + odd + "}";
    s += ")\n";
  }
  return s;
}

std::string jsonErrorText(const std::exception &e) {
  std::string s = e.what();
  if (auto at = s.find("; last read:"); at != std::string::npos)
    s.erase(at);
  if (s.size() > 300)
    s = s.substr(0, 300) + "...";
  return s;
}

} // namespace weir::workspace
