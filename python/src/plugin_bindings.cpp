/// \file
/// definePlugins: registering Python transformations in the one registry the
/// command line, recipes, the workspace and the GUI read. The decorator and
/// discovery live in python/weir/plugins.py; this is what they call.

#include "ir/error.h"
#include "python/src/bindings.h"
#include "python/src/python_transformation.h"
#include "transforms/registry.h"

#include <pybind11/stl.h>

#include <set>
#include <utility>

namespace weir::python {

namespace {

/// Ids registered from Python, so they can be replaced on reload and
/// removed before the interpreter shuts down.
std::set<std::string> &pluginIds() {
  static std::set<std::string> ids;
  return ids;
}

transforms::ParamSpec paramSpecOf(const py::dict &d) {
  transforms::ParamSpec s;
  s.name = d["name"].cast<std::string>();
  auto kind = d["kind"].cast<std::string>();
  py::object def = d["default"];
  if (kind == "bool") {
    s.kind = transforms::ParamSpec::Kind::Bool;
    s.defaultValue = def.cast<bool>();
  } else if (kind == "int") {
    s.kind = transforms::ParamSpec::Kind::Int;
    s.defaultValue = def.cast<std::int64_t>();
  } else if (kind == "float") {
    s.kind = transforms::ParamSpec::Kind::Float;
    s.defaultValue = def.cast<double>();
  } else if (kind == "string") {
    s.kind = transforms::ParamSpec::Kind::String;
    s.defaultValue = def.cast<std::string>();
  } else if (kind == "int-list") {
    s.kind = transforms::ParamSpec::Kind::IntList;
    s.defaultValue = def.cast<transforms::IntList>();
  } else {
    throw Error("parameter '" + s.name +
                "': kind must be bool, int, float, string or int-list, not '" +
                kind + "'");
  }
  if (d.contains("description"))
    s.description = d["description"].cast<std::string>();
  if (d.contains("min") && !d["min"].is_none())
    s.min = d["min"].cast<double>();
  if (d.contains("max") && !d["max"].is_none())
    s.max = d["max"].cast<double>();
  if (d.contains("choices") && !d["choices"].is_none())
    s.choices = d["choices"].cast<std::vector<std::string>>();
  return s;
}

/// nodes: [(role, kind, [ops])], edges: [(src, dst, src_conn, dst_conn)].
transforms::Pattern patternOf(const py::list &nodes, const py::list &edges) {
  transforms::Pattern p;
  for (py::handle h : nodes) {
    auto t = h.cast<py::tuple>();
    auto role = t[0].cast<std::string>();
    auto kindName = t[1].cast<std::string>();
    auto kind = ir::parseNodeKind(kindName);
    if (!kind)
      throw Error("pattern role '" + role + "': unknown node kind '" +
                  kindName +
                  "' (access, tasklet, map-entry, map-exit, "
                  "library, primitive)");
    if (p.roleIndex(role) >= 0)
      throw Error("pattern role '" + role + "' is declared twice");
    p.node(role, *kind, t[2].cast<std::vector<std::string>>());
  }
  for (py::handle h : edges) {
    auto t = h.cast<py::tuple>();
    auto src = t[0].cast<std::string>(), dst = t[1].cast<std::string>();
    for (const std::string &r : {src, dst})
      if (p.roleIndex(r) < 0)
        throw Error("pattern edge " + src + " -> " + dst + ": no role '" + r +
                    "'");
    p.edge(src, dst, t[2].cast<std::optional<std::string>>(),
           t[3].cast<std::optional<std::string>>());
  }
  return p;
}

void registerPlugin(py::object instance, const py::dict &decl) {
  PluginDeclaration d;
  d.id = decl["id"].cast<std::string>();
  auto tier = transforms::parseTier(decl["tier"].cast<std::string>());
  if (!tier)
    throw Error("plugin '" + d.id + "': tier must be " +
                transforms::tierNameList());
  d.tier = *tier;
  d.summary = decl["summary"].cast<std::string>();
  d.description = decl["description"].cast<std::string>();
  for (py::handle p : decl["params"].cast<py::list>())
    d.params.push_back(paramSpecOf(p.cast<py::dict>()));
  d.exactness.exact = decl["exact"].cast<bool>();
  d.exactness.rtol = decl["rtol"].cast<double>();
  d.exactness.atol = decl["atol"].cast<double>();
  d.pattern = patternOf(decl["pattern_nodes"].cast<py::list>(),
                        decl["pattern_edges"].cast<py::list>());
  d.timeLimitSeconds = decl["time_limit"].cast<double>();
  d.sourceFile = decl["source"].cast<std::string>();
  // A day at most: longer waits overflow the clock's duration type.
  if (!(d.timeLimitSeconds > 0 && d.timeLimitSeconds <= 86400))
    throw Error("plugin '" + d.id +
                "': time_limit must be between 0 and "
                "86400 seconds");
  if (!py::hasattr(instance, "apply"))
    throw Error("plugin '" + d.id + "' has no apply(editor, match, params)");

  bool reload = pluginIds().count(d.id) > 0;
  if (!reload && transforms::findTransformation(d.id))
    throw Error("plugin '" + d.id + "' (" + d.sourceFile +
                "): that id is taken by a built-in transformation");
  if (reload) {
    // Reloading a file replaces its plugins; another file may not.
    auto old = std::dynamic_pointer_cast<const PythonTransformation>(
        transforms::findTransformation(d.id));
    if (old && old->sourceFile() != d.sourceFile)
      throw Error("plugin '" + d.id + "' (" + d.sourceFile +
                  "): that id is taken by the plugin in " + old->sourceFile() +
                  " (unregister it first to replace it)");
  }
  auto t =
      std::make_shared<PythonTransformation>(std::move(d), std::move(instance));
  if (reload)
    transforms::unregisterTransformation(t->id());
  transforms::registerTransformation(t);
  pluginIds().insert(std::string(t->id()));
}

void unregisterPlugins() {
  // Taken out first: a plugin's destructor runs Python, which may register
  // or unregister plugins meanwhile.
  std::set<std::string> ids = std::exchange(pluginIds(), {});
  for (const std::string &id : ids)
    transforms::unregisterTransformation(id);
}

} // namespace

void definePlugins(py::module_ &m) {
  m.attr("PluginTimeLimit") = timeLimitException();
  m.def("_register_plugin", &registerPlugin, py::arg("instance"),
        py::arg("declaration"),
        "Used by @weir.transformation: registers (or, for an id registered "
        "from Python before, replaces) a plugin transformation.");
  m.def(
      "_unregister_plugin",
      [](const std::string &id) {
        if (!pluginIds().erase(id))
          return false;
        return transforms::unregisterTransformation(id);
      },
      py::arg("id"),
      "Removes one plugin transformation; False when there is none.");
  m.def("_unregister_plugins", &unregisterPlugins,
        "Removes every plugin (the package calls it at exit, before the "
        "interpreter that runs them goes away).");
  m.def(
      "_plugin_source",
      [](const std::string &id) -> py::object {
        auto t = std::dynamic_pointer_cast<const PythonTransformation>(
            transforms::findTransformation(id));
        if (!t)
          return py::none();
        return py::str(t->sourceFile());
      },
      py::arg("id"), "The file a plugin came from; None for built-ins.");
}

} // namespace weir::python
