/// \file
/// defineWorkspace: `weir.Workspace` — apply, check, matches, undo, redo,
/// revert, the history, the recipe (JSON and Python), verification,
/// compilation and sessions — plus `weir.Recipe` and `weir.open_session`.
/// The same C++ Workspace the command line and the GUI use.

#include "ir/error.h"
#include "ir/hash.h"
#include "python/src/bindings.h"
#include "python/src/convert.h"
#include "python/src/numpy_tensor.h"
#include "transforms/registry.h"
#include "workspace/auto_recipe.h"
#include "workspace/recipe.h"
#include "workspace/session.h"
#include "workspace/workspace.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <nlohmann/json.hpp>

namespace weir::python {

namespace {

using workspace::Recipe;
using workspace::Workspace;
using WorkspacePtr = std::shared_ptr<Workspace>;

/// A recipe with the model it was made on, so as_python() needs no path.
struct PyRecipe {
  Recipe recipe;
  std::string modelPath;
};

py::dict stepDict(const workspace::Step &s) {
  py::dict d;
  d["transformation"] = s.transformation;
  d["match"] = s.match;
  d["params"] = paramsDict(s.params);
  d["labels"] = s.labels;
  return d;
}

/// One history entry: a version of the workspace.
struct HistoryEntry {
  std::size_t index = 0;
  std::optional<workspace::Step> step;
  std::uint64_t hash = 0;
  double seconds = 0;
  transforms::Exactness exactness;
  bool current = false;
};

workspace::Source sourceOf(const py::object &program) {
  if (!py::hasattr(program, "_source"))
    return {};
  auto t = program.attr("_source").cast<std::pair<std::string, std::string>>();
  return {t.first, t.second};
}

WorkspacePtr makeWorkspace(const py::object &program) {
  auto p = program.cast<ProgramPtr>();
  return std::make_shared<Workspace>(*p, sourceOf(program));
}

void defineRecipe(py::module_ &m) {
  py::class_<PyRecipe>(m, "Recipe",
                       "The applied steps (transformation, match, "
                       "parameters), replayable on a fresh import; the same "
                       "JSON as `weir optimize --recipe`.")
      .def_property_readonly(
          "steps",
          [](const PyRecipe &r) {
            py::list l;
            for (const auto &s : r.recipe.steps)
              l.append(stepDict(s));
            return l;
          },
          "Steps as dicts: transformation, match, params, labels.")
      .def("__len__", [](const PyRecipe &r) { return r.recipe.steps.size(); })
      .def(
          "as_python",
          [](const PyRecipe &r, std::optional<std::string> model) {
            std::string path = model ? *model : r.modelPath;
            if (path.empty())
              throw Error("this recipe does not know its model file; pass "
                          "model=PATH");
            return r.recipe.asPython(path);
          },
          py::arg("model") = py::none(),
          "A Python script that replays the recipe on the model (the "
          "workspace's model file unless `model` names another).")
      .def(
          "to_json", [](const PyRecipe &r) { return r.recipe.dump(); },
          "The recipe as JSON text.")
      .def(
          "save",
          [](const PyRecipe &r, const std::filesystem::path &p) {
            r.recipe.save(p);
          },
          py::arg("path"), "Writes the JSON atomically.")
      .def_static(
          "load",
          [](const std::filesystem::path &p) {
            return PyRecipe{Recipe::load(p), ""};
          },
          py::arg("path"),
          "Reads a recipe file; weir.Error names what is wrong.")
      .def_static(
          "parse",
          [](const std::string &text) {
            return PyRecipe{Recipe::parse(text, "recipe"), ""};
          },
          py::arg("text"), "Parses recipe JSON text.")
      .def("__repr__", [](const PyRecipe &r) {
        return "<Recipe: " + std::to_string(r.recipe.steps.size()) + " steps>";
      });
}

void defineHistory(py::module_ &m) {
  py::class_<HistoryEntry>(m, "HistoryEntry",
                           "A version of the workspace: the imported program "
                           "(index 0) or the result of one step.")
      .def_readonly("index", &HistoryEntry::index, "Position in the history.")
      .def_property_readonly(
          "transformation",
          [](const HistoryEntry &h) -> py::object {
            if (!h.step)
              return py::none();
            return py::str(h.step->transformation);
          },
          "The step's transformation id (None for [0]).")
      .def_property_readonly(
          "match",
          [](const HistoryEntry &h) -> py::object {
            if (!h.step)
              return py::none();
            return py::cast(h.step->match);
          },
          "Where the step applied (None for [0]).")
      .def_property_readonly(
          "params",
          [](const HistoryEntry &h) -> py::object {
            if (!h.step)
              return py::dict();
            return paramsDict(h.step->params);
          },
          "The parameters given to the step.")
      .def_property_readonly(
          "hash", [](const HistoryEntry &h) { return ir::hashHex(h.hash); },
          "The version's structural hash.")
      .def_readonly("seconds", &HistoryEntry::seconds, "Time the step took.")
      .def_property_readonly(
          "exact", [](const HistoryEntry &h) { return h.exactness.exact; },
          "Whether the step keeps results bit-identical.")
      .def_readonly("current", &HistoryEntry::current,
                    "True for the workspace's current version.")
      .def("__str__",
           [](const HistoryEntry &h) {
             return h.step ? h.step->str() : std::string("imported");
           })
      .def("__repr__", [](const HistoryEntry &h) {
        return "<HistoryEntry " + std::to_string(h.index) + ": " +
               (h.step ? h.step->str() : std::string("imported")) + ">";
      });
}

void defineVerify(py::module_ &m) {
  py::class_<workspace::OutputCheck>(m, "OutputCheck",
                                     "One output compared by verify().")
      .def_readonly("name", &workspace::OutputCheck::name, "The output's name.")
      .def_readonly("ok", &workspace::OutputCheck::ok, "Within tolerance.")
      .def_readonly("max_abs", &workspace::OutputCheck::maxAbs,
                    "Largest absolute difference.")
      .def_readonly("max_rel", &workspace::OutputCheck::maxRel,
                    "Largest relative difference.")
      .def_readonly("problem", &workspace::OutputCheck::problem,
                    "What is wrong ('' when ok).");
  py::class_<workspace::VerifyReport>(
      m, "VerifyReport",
      "Outputs of the imported and the current program on the same inputs, "
      "compared within the tolerance the applied steps declare.")
      .def_readonly("ok", &workspace::VerifyReport::ok, "All outputs agree.")
      .def_readonly("outputs", &workspace::VerifyReport::outputs,
                    "One OutputCheck per output.")
      .def_readonly("seconds", &workspace::VerifyReport::seconds,
                    "Time the verification took.")
      .def_property_readonly(
          "tolerance",
          [](const workspace::VerifyReport &r) {
            return py::make_tuple(r.tolerance.exact, r.tolerance.rtol,
                                  r.tolerance.atol);
          },
          "(exact, rtol, atol) used.")
      .def("__bool__", [](const workspace::VerifyReport &r) { return r.ok; })
      .def("__str__", &workspace::VerifyReport::str)
      .def("__repr__", [](const workspace::VerifyReport &r) {
        return "<VerifyReport " + r.str() + ">";
      });
}

workspace::VerifyOptions verifyOptions(std::uint64_t seed,
                                       const py::object &inputs,
                                       const ir::Bindings &dims,
                                       std::optional<double> rtol,
                                       std::optional<double> atol, int threads,
                                       const ir::Program &program) {
  workspace::VerifyOptions o;
  o.seed = seed;
  o.dims = dims;
  o.threads = threads;
  if (!inputs.is_none())
    o.inputs = toTensorMap(inputs.cast<py::dict>(), program);
  if (rtol || atol)
    o.tolerance =
        transforms::Exactness{false, rtol.value_or(0), atol.value_or(0)};
  return o;
}

/// Runs `f` with the GIL released and the workspace locked. Every call
/// into a workspace goes through here (or releases the GIL before the
/// workspace locks itself): a step on another thread holds the lock while
/// its plugin needs the GIL.
template <class F> auto locked(const Workspace &w, F &&f) {
  py::gil_scoped_release release;
  auto lock = w.lock();
  return f();
}

std::string kindName(workspace::ChangeKind k) {
  switch (k) {
  case workspace::ChangeKind::Applied:
    return "applied";
  case workspace::ChangeKind::Undone:
    return "undone";
  case workspace::ChangeKind::Redone:
    return "redone";
  case workspace::ChangeKind::Reverted:
    return "reverted";
  }
  return "?";
}

} // namespace

void defineWorkspace(py::module_ &m) {
  defineRecipe(m);
  defineHistory(m);
  defineVerify(m);

  py::class_<Workspace, WorkspacePtr>(
      m, "Workspace",
      "A program and its versions: apply transformations, undo, redo, revert, "
      "verify, compile, save. A failed apply leaves the workspace exactly as "
      "it was.")
      .def(py::init(&makeWorkspace), py::arg("program"),
           "A workspace on `program` (from weir.load, which also records the "
           "model file so the workspace can be saved as a session).")
      .def_property_readonly(
          "program",
          [](const Workspace &w) {
            return share(locked(w, [&] { return w.programPtr(); }));
          },
          "The current version's program.")
      .def_property_readonly(
          "hash",
          [](const Workspace &w) {
            return ir::hashHex(locked(w, [&] { return w.hash(); }));
          },
          "The current program's structural hash (16 hex digits).")
      .def_property_readonly(
          "model_path", [](const Workspace &w) { return w.source().modelPath; },
          "The model file the workspace came from ('' when built in memory).")
      .def_property_readonly(
          "history",
          [](const Workspace &w) {
            return locked(w, [&] {
              std::vector<HistoryEntry> out;
              for (std::size_t i = 0; i < w.versions().size(); ++i) {
                const workspace::Version &v = w.versions()[i];
                out.push_back({i, v.step, v.hash(), v.seconds, v.exactness,
                               i == w.current()});
              }
              return out;
            });
          },
          "Every version: [0] is the program as imported, [k] the result of "
          "step k. Versions after `current` are what redo() reaches.")
      .def_property_readonly(
          "current",
          [](const Workspace &w) {
            return locked(w, [&] { return w.current(); });
          },
          "Index of the current version in `history`.")
      .def_property_readonly(
          "can_undo",
          [](const Workspace &w) {
            return locked(w, [&] { return w.canUndo(); });
          },
          "Whether there is a version before the current one.")
      .def_property_readonly(
          "can_redo",
          [](const Workspace &w) {
            return locked(w, [&] { return w.canRedo(); });
          },
          "Whether there is a version after the current one.")
      .def(
          "candidates",
          [](Workspace &w, const std::string &id) {
            return locked(w, [&] { return w.matches(id); });
          },
          py::arg("transformation"),
          "Every match of the transformation's pattern in the current "
          "version (from an incremental cache), not yet checked: check() "
          "says which apply and why the others do not. matches() gives "
          "those that apply.")
      .def(
          "all_candidates",
          [](Workspace &w) {
            auto all = locked(w, [&] { return w.allMatches(); });
            py::dict d;
            for (auto &[id, ms] : all)
              d[py::str(id)] = ms;
            return d;
          },
          "{transformation id: [Match]} for every registered transformation: "
          "every match of each pattern, not yet checked.")
      .def(
          "check",
          [](const Workspace &w, const std::string &id, const py::object &match,
             const py::kwargs &params) {
            auto t = transforms::requireTransformation(id);
            transforms::Match mt = toMatch(match, *t);
            transforms::Params p = toParams(params);
            return locked(w, [&] { return w.check(id, mt, p); });
          },
          py::arg("transformation"), py::arg("match") = py::none(),
          py::pos_only(),
          "Whether the step would apply: a CheckResult, true when it does, "
          "else with the reason. Parameters are keyword arguments.")
      .def(
          "apply",
          [](Workspace &w, const std::string &id, const py::object &match,
             const py::kwargs &params) -> Workspace & {
            auto t = transforms::requireTransformation(id);
            transforms::Match mt = toMatch(match, *t);
            transforms::Params p = toParams(params);
            locked(w, [&] { w.apply(id, mt, p); });
            return w;
          },
          py::arg("transformation"), py::arg("match") = py::none(),
          py::pos_only(), py::return_value_policy::reference,
          "Applies one step: the transformation by id, at `match` (a Match, "
          "or {'state': ..., role: node id}; none for whole-program ones), "
          "parameters as keyword arguments. Raises weir.Error with the reason "
          "when it does not apply; the workspace is then unchanged. Returns "
          "the workspace.")
      .def(
          "undo", [](Workspace &w) { locked(w, [&] { w.undo(); }); },
          "Back one version (weir.Error at the first).")
      .def(
          "redo", [](Workspace &w) { locked(w, [&] { w.redo(); }); },
          "Forward one version (weir.Error when there is none).")
      .def(
          "revert",
          [](Workspace &w, std::size_t index) {
            locked(w, [&] { w.revert(index); });
          },
          py::arg("index"),
          "Make history[index] current; later versions stay for redo().")
      .def_property_readonly(
          "recipe",
          [](const Workspace &w) {
            return PyRecipe{locked(w, [&] { return w.recipe(); }),
                            w.source().modelPath};
          },
          "The steps up to the current version.")
      .def(
          "replay",
          [](Workspace &w, const PyRecipe &r) {
            locked(w, [&] { w.replay(r.recipe); });
          },
          py::arg("recipe"), "Applies every step of `recipe`; all or nothing.")
      .def(
          "auto",
          [](Workspace &w, const std::string &target) {
            return locked(
                w, [&] { return workspace::applyAutoRecipe(w, target); });
          },
          py::arg("target") = "cpu",
          "Applies the auto recipe for `target`; returns the number of steps.")
      .def(
          "verify",
          [](const Workspace &w, std::uint64_t seed, const py::object &inputs,
             const ir::Bindings &dims, std::optional<double> rtol,
             std::optional<double> atol, int threads) {
            // Inputs are those of the imported program (verify runs both).
            auto first =
                locked(w, [&] { return w.versions().front().program(); });
            auto o =
                verifyOptions(seed, inputs, dims, rtol, atol, threads, *first);
            py::gil_scoped_release release;
            return w.verify(o);
          },
          py::kw_only(), py::arg("seed") = 0, py::arg("inputs") = py::none(),
          py::arg("dims") = ir::Bindings{}, py::arg("rtol") = py::none(),
          py::arg("atol") = py::none(), py::arg("threads") = 0,
          "Runs the imported and the current program on the same inputs "
          "(seeded random unless `inputs` gives them) and compares; a "
          "VerifyReport, true when they agree.")
      .def(
          "verify_step",
          [](const Workspace &w, std::size_t index, std::uint64_t seed) {
            workspace::VerifyOptions o;
            o.seed = seed;
            py::gil_scoped_release release;
            return w.verifyStep(index, o);
          },
          py::arg("index"), py::kw_only(), py::arg("seed") = 0,
          "history[index - 1] against history[index].")
      .def(
          "compile",
          [](const Workspace &w, const std::string &target, int threads,
             const std::string &gemm,
             const std::map<std::string, std::string> &impl, bool checked) {
            ProgramPtr p = share(locked(w, [&] { return w.programPtr(); }));
            return py::module_::import("weir._weir")
                .attr("compile")(
                    p, py::arg("target") = target, py::arg("threads") = threads,
                    py::arg("gemm") = gemm, py::arg("impl") = impl,
                    py::arg("checked") = checked);
          },
          py::kw_only(), py::arg("target") = "cpu", py::arg("threads") = 0,
          py::arg("gemm") = "auto",
          py::arg("impl") = std::map<std::string, std::string>{},
          py::arg("checked") = false,
          "weir.compile() of the current program.")
      .def(
          "save",
          [](const Workspace &w, const std::filesystem::path &path,
             bool snapshot) {
            locked(w, [&] { workspace::saveSession(w, path, {snapshot}); });
          },
          py::arg("path"), py::kw_only(), py::arg("snapshot") = false,
          "Saves the session (model path and digest, recipe, hash; with "
          "snapshot=True also the program) atomically.")
      .def(
          "on_change",
          [](Workspace &w, py::function callback) {
            auto cb = std::make_shared<py::function>(std::move(callback));
            auto holder = std::shared_ptr<py::function>(
                cb.get(), [cb](py::function *) mutable {
                  py::gil_scoped_acquire gil;
                  cb.reset();
                });
            workspace::Observer observer =
                [holder](const Workspace &, const workspace::Change &c) {
                  py::gil_scoped_acquire gil;
                  try {
                    (*holder)(kindName(c.kind), c.from, c.to);
                  } catch (py::error_already_set &e) {
                    // The change stands; the callback's error is printed, as
                    // Python does for errors it cannot raise.
                    e.discard_as_unraisable("weir: on_change callback");
                  }
                };
            return locked(w,
                          [&] { return w.addObserver(std::move(observer)); });
          },
          py::arg("callback"),
          "Calls callback(kind, from_index, to_index) after every change "
          "('applied', 'undone', 'redone', 'reverted'); returns an id for "
          "remove_observer. An exception in the callback is printed (as "
          "an unraisable exception) and does not undo the change.")
      .def(
          "remove_observer",
          [](Workspace &w, int id) {
            locked(w, [&] { w.removeObserver(id); });
          },
          py::arg("id"), "Stops the callback on_change returned `id` for.")
      .def("__repr__", [](const Workspace &w) {
        return "<Workspace " + w.program().name + ": version " +
               std::to_string(w.current()) + " of " +
               std::to_string(w.versions().size()) + ">";
      });

  m.def(
      "open_session",
      [](const std::filesystem::path &path, bool useSnapshot) {
        py::gil_scoped_release release;
        return WorkspacePtr(workspace::openSession(path, {useSnapshot}));
      },
      py::arg("path"), py::kw_only(), py::arg("use_snapshot") = false,
      "Opens a session saved by Workspace.save or `weir optimize -o`: "
      "imports the model, checks its digest, replays the recipe and checks "
      "the hash. With use_snapshot=True a missing or changed model falls "
      "back to the session's snapshot.");
}

} // namespace weir::python
