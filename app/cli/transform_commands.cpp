/// \file
/// `weir transforms`, `weir matches` and `weir optimize`: the registry, the
/// matches in a model or session, and applying a recipe (or `auto`) with the
/// effect of each step.
#include "app/cli/commands.h"
#include "app/cli/options.h"
#include "app/cli/step_report.h"
#include "ir/analysis.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/memory.h"
#include "transforms/registry.h"
#include "workspace/auto_recipe.h"
#include "workspace/program_cache.h"
#include "workspace/session.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

namespace weir::cli {
namespace {

using nlohmann::json;
using transforms::ParamSpec;
namespace fs = std::filesystem;

json paramValue(const transforms::ParamValue &v) {
  return std::visit([](const auto &x) { return json(x); }, v);
}

/// A model, or a session (a file whose JSON says "weir-session").
std::unique_ptr<workspace::Workspace> openAny(const std::string &path) {
  if (fs::path(path).extension() == ".weir")
    return workspace::openSession(path);
  return workspace::openModel(path);
}

/// Bytes moved, FLOPs and transient memory (allocated, live peak; symbols
/// taken as 1) after each tier the workspace's history went through: the
/// version after the last step of that tier (the history of a recipe that
/// applies the tiers in order, as auto does).
/// The last program each tier's steps made, kept as the steps apply: the
/// workspace drops most versions' programs, and rebuilding one to print
/// its line replayed up to checkpointEvery() steps.
using TierEnds = std::map<transforms::Tier, std::shared_ptr<const ir::Program>>;

void printTiers(const ir::Program &imported, const TierEnds &ends) {
  auto line = [](const char *name, const ir::Program &p) {
    ir::ProgramAnalysis a = ir::analyze(p);
    std::string memory = "-";
    try {
      ir::MemoryReport m = ir::transientMemory(p);
      memory = "allocated " + std::to_string(m.allocated) + " peak " +
               std::to_string(m.peak);
    } catch (const Error &) {
      // A size the analysis cannot evaluate: the line says "-".
    }
    std::printf("tier %-10s bytes moved %-14s FLOPs %-14s transients %s\n",
                name, amount(a.bytesMoved).c_str(), amount(a.flops).c_str(),
                memory.c_str());
  };
  line("import", imported);
  for (const auto &[tier, program] : ends)
    line(std::string(transforms::tierName(tier)).c_str(), *program);
}

} // namespace

const CommandSpec &transformsSpec() {
  static const CommandSpec spec{
      "transforms",
      "",
      "the registered transformations by tier (" + transforms::tierNameList() +
          ")",
      {{"--tier", OptionKind::Text, "TIER", "only this tier's"},
       {"--json", OptionKind::Flag, "", "as JSON, with every declaration"}},
      0,
      0};
  return spec;
}

const CommandSpec &matchesSpec() {
  static const CommandSpec spec{
      "matches",
      "MODEL|SESSION",
      "every match of every transformation, with whether it applies or why "
      "not",
      {{"--transform", OptionKind::Text, "ID", "only this transformation's"},
       {"--json", OptionKind::Flag, "", "as JSON"}}};
  return spec;
}

const CommandSpec &optimizeSpec() {
  static const CommandSpec spec{
      "optimize",
      "MODEL",
      "apply a recipe (JSON) or the auto recipe; print each step's time and "
      "the change in FLOPs and bytes moved",
      {{"--recipe", OptionKind::Text, "FILE|auto", "the recipe (required)"},
       {"--output", OptionKind::Text, "SESSION",
        "save the session (model digest + recipe)", "-o"},
       {"--verify", OptionKind::Flag, "",
        "run before and after on seeded inputs; exit 1 when outputs differ "
        "beyond the tolerance the steps declare"},
       {"--target", OptionKind::Text, "cpu", "the auto recipe's target"}}};
  return spec;
}

int transformsCommand(const Args &args) {
  ParsedArgs parsed = parseArgs(transformsSpec(), args);
  bool asJson = parsed.flag("--json");
  std::optional<transforms::Tier> tier;
  if (auto name = parsed.text("--tier")) {
    tier = transforms::parseTier(*name);
    if (!tier)
      throw UsageError{"--tier must be " + transforms::tierNameList() +
                       ", not '" + *name + "'"};
  }
  json list = json::array();
  for (const auto &t : transforms::transformations()) {
    if (tier && t->tier() != *tier)
      continue;
    if (asJson) {
      json params = json::array();
      for (const ParamSpec &p : t->params()) {
        json j = {{"name", p.name},
                  {"kind", transforms::paramKindName(p.kind)},
                  {"default", paramValue(p.defaultValue)},
                  {"description", p.description}};
        if (p.min)
          j["min"] = *p.min;
        if (p.max)
          j["max"] = *p.max;
        if (!p.choices.empty())
          j["choices"] = p.choices;
        params.push_back(j);
      }
      transforms::Exactness e = t->exactness();
      json entry = {
          {"id", t->id()},           {"tier", transforms::tierName(t->tier())},
          {"summary", t->summary()}, {"description", t->description()},
          {"params", params},        {"exact", e.exact}};
      if (!e.exact)
        entry["tolerance"] = {{"rtol", e.rtol}, {"atol", e.atol}};
      list.push_back(entry);
      continue;
    }
    std::printf("%-10s %-18s %s%s\n",
                std::string(transforms::tierName(t->tier())).c_str(),
                std::string(t->id()).c_str(), std::string(t->summary()).c_str(),
                t->exactness().exact ? "" : " [within tolerance]");
    for (const ParamSpec &p : t->params())
      std::printf("%30s %s: %s = %s  %s\n", "", p.name.c_str(),
                  std::string(transforms::paramKindName(p.kind)).c_str(),
                  transforms::paramValueText(p.defaultValue).c_str(),
                  p.description.c_str());
  }
  if (asJson)
    std::printf("%s\n", list.dump(2).c_str());
  return 0;
}

int matchesCommand(const Args &args) {
  ParsedArgs parsed = parseArgs(matchesSpec(), args);
  const std::string &path = parsed.operands()[0];
  std::string only = parsed.text("--transform").value_or("");
  bool asJson = parsed.flag("--json");
  auto ws = openAny(path);
  std::vector<std::pair<std::string, std::vector<transforms::Match>>> all;
  auto start = std::chrono::steady_clock::now();
  if (!only.empty())
    all.emplace_back(only, ws->matches(only));
  else
    all = ws->allMatches();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  json out = json::array();
  for (const auto &[id, matches] : all) {
    for (const transforms::Match &m : matches) {
      transforms::CheckResult c = ws->check(id, m);
      if (asJson) {
        json roles = json::object();
        for (const auto &[role, node] : m.roles)
          roles[role] = node;
        json j = {{"transformation", id},
                  {"state", m.state},
                  {"roles", roles},
                  {"ok", c.ok}};
        if (!c.ok)
          j["reason"] = c.reason;
        out.push_back(j);
      } else {
        std::printf("%-18s %-40s %s\n", id.c_str(), m.str().c_str(),
                    c.ok ? "ok" : ("no: " + c.reason).c_str());
      }
    }
  }
  if (asJson)
    std::printf("%s\n", out.dump(2).c_str());
  else
    std::printf("(matched in %.1f ms)\n", seconds * 1e3);
  return 0;
}

int optimizeCommand(const Args &args) {
  ParsedArgs parsed = parseArgs(optimizeSpec(), args);
  const std::string &model = parsed.operands()[0];
  std::string recipe = parsed.text("--recipe").value_or("");
  std::string output = parsed.text("--output").value_or("");
  std::string target = parsed.text("--target").value_or("cpu");
  bool verify = parsed.flag("--verify");
  if (recipe.empty())
    throw UsageError{"optimize: usage: weir optimize MODEL --recipe FILE|auto "
                     "[-o SESSION] [--verify] [--target cpu]"};
  if (target != "cpu")
    throw UsageError{
        "optimize: --target must be cpu (the only backend so far)"};
  auto ws = openAny(model);
  std::printf("model        %s (%zu nodes, hash %s)\n", model.c_str(),
              ws->program().nodeCount(), ir::hashHex(ws->hash()).c_str());
  // The per-step lines, analyzed beside the recipe (step_report.h).
  StepReport steps;
  TierEnds tierEnds;
  auto tierOf = [](const workspace::Version &v) {
    auto t = transforms::findTransformation(v.step->transformation);
    return t ? std::optional(t->tier()) : std::nullopt;
  };
  std::map<transforms::Tier, std::size_t> sessionEnds; // a session's steps
  for (std::size_t i = 1; i <= ws->current(); ++i)
    if (auto t = tierOf(ws->versions()[i]))
      sessionEnds[*t] = i;
  for (const auto &[tier, i] : sessionEnds)
    tierEnds[tier] = ws->versions()[i].program();
  auto report = [&](const workspace::Version &before,
                    const workspace::Version &after) {
    // The auto recipe reports each step as it makes it: `after` is current.
    steps.add(before, after,
              recipe == "auto" ? ws->sharedMemo() : nullptr);
    if (auto t = tierOf(after))
      tierEnds[*t] = after.program();
  };
  if (recipe == "auto") {
    workspace::applyAutoRecipe(*ws, target, report);
  } else {
    workspace::Recipe r = workspace::Recipe::load(recipe);
    std::size_t first = ws->current();
    ws->replay(r);
    for (std::size_t i = first + 1; i <= ws->current(); ++i)
      report(ws->versions()[i - 1], ws->versions()[i]);
  }
  steps.finish();
  printTiers(*ws->versions()[0].program(), tierEnds);
  ir::ProgramAnalysis a = ir::analyze(*ws->versions()[0].program(),
                                      ir::AnalysisDetail::Totals),
                      b = ir::analyze(ws->program(), ir::AnalysisDetail::Totals);
  std::printf("total        %d steps; FLOPs %s -> %s, bytes moved %s -> %s; "
              "hash %s\n",
              steps.steps(), amount(a.flops).c_str(), amount(b.flops).c_str(),
              amount(a.bytesMoved).c_str(), amount(b.bytesMoved).c_str(),
              ir::hashHex(ws->hash()).c_str());
  int status = 0;
  if (verify) {
    workspace::VerifyReport v = ws->verify();
    std::printf("verify       %s (%.2f s)\n", v.str().c_str(), v.seconds);
    status = v.ok ? 0 : 1;
  }
  if (!output.empty()) {
    workspace::saveSession(*ws, output);
    // `weir run SESSION` most often comes next: with the program cached it
    // compiles without replaying the recipe.
    workspace::cacheProgram(ws->program(), ir::hashHex(ws->hash()));
    std::printf("saved        %s\n", output.c_str());
  }
  return status;
}

} // namespace weir::cli
