"""Plugin transformations: write one in Python, and the command line, recipes,
the workspace and the GUI see it beside the built-in ones.

    import weir

    @weir.transformation(id="swap-relu-maxpool", tier="fusion",
                         summary="Run Relu after MaxPool, on 4x fewer values")
    class SwapReluMaxPool:
        '''Longer description: the docstring is what users read.'''
        pattern = (weir.Pattern()
                   .node("relu", "library", ops=["Relu"])
                   .node("mid", "access")
                   .node("pool", "library", ops=["MaxPool"])
                   .edge("relu", "mid").edge("mid", "pool"))

        def can_apply(self, program, match, params):
            return True          # or False, or a string saying why not

        def apply(self, editor, match, params):
            ...                  # edit through weir.Editor

The pattern uses the vocabulary of the C++ patterns: roles with a node kind
(access, tasklet, map-entry, map-exit, library, primitive) and optionally the
ops a library node may have, and edges between roles (optionally with
connector names). Declare roles so that each is connected to an earlier one.

can_apply(program, match, params) sees a read-only copy of the program;
apply(editor, match, params) edits a weir.Editor. The result is validated
before it reaches a workspace. A plugin that raises, builds an invalid program
or runs past its time limit (time_limit seconds, default 10) fails that one
step with its message; the workspace stays as it was.

Discovery: load_plugins() imports every *.py file (not starting with "_") in
Weir's plugins/ folder, in each folder of $WEIR_PLUGIN_PATH (separated by
":"), and in ~/.local/share/weir/plugins, in that order. A file that fails to
import is skipped with a warning; plugin_errors() lists them, and none of its
plugins stays registered (not even those its decorators registered before the
error). Reloading a file replaces its plugins; one it no longer registers (a
class renamed or removed) leaves the registry.
"""

import importlib.util
import inspect
import os
import sys
import traceback
import warnings

from . import _weir

# `list` is a list of ints (an int-list parameter, as map-tiling's tiles).
_KINDS = {bool: "bool", int: "int", float: "float", str: "string",
          list: "int-list"}
_loaded = {}      # plugin id -> source file
_errors = []      # (file, message)
_registered = []  # ids the decorator registered during the current load


class Param:
    """A typed parameter of a plugin transformation."""

    def __init__(self, name, kind, default, description="", min=None,
                 max=None, choices=None):
        if kind not in _KINDS:
            raise TypeError(f"parameter {name!r}: kind must be bool, int, "
                            f"float, str or list (of int), not {kind!r}")
        if kind is list:
            default = [int(x) for x in default]
        self.name, self.kind, self.default = name, kind, kind(default)
        self.description, self.min, self.max = description, min, max
        self.choices = list(choices) if choices else []

    def _declaration(self):
        return {"name": self.name, "kind": _KINDS[self.kind],
                "default": self.default, "description": self.description,
                "min": self.min, "max": self.max, "choices": self.choices}


class Pattern:
    """Roles (nodes) and the edges between them that a match must have."""

    def __init__(self):
        self.nodes = []   # (role, kind, ops)
        self.edges = []   # (src, dst, src_conn, dst_conn)

    def node(self, role, kind, ops=()):
        self.nodes.append((role, kind, list(ops)))
        return self

    def edge(self, src, dst, src_conn=None, dst_conn=None):
        self.edges.append((src, dst, src_conn, dst_conn))
        return self


def transformation(*, id, tier, summary, params=(), exact=True, rtol=0.0,
                   atol=0.0, time_limit=10.0):
    """Class decorator: registers the class as a transformation.

    id: kebab-case, unique. tier: "expansion", "fusion", "movement" or
    "tensorize". summary: one line; the class docstring is the description.
    params: weir.Param list. exact=False with rtol/atol declares the
    tolerance verification allows. time_limit: seconds each can_apply and
    apply may run.
    """
    def register(cls):
        pattern = getattr(cls, "pattern", None) or Pattern()
        if not isinstance(pattern, Pattern):
            raise TypeError(f"plugin {id!r}: pattern must be a weir.Pattern")
        try:
            source = inspect.getsourcefile(cls) or "<unknown>"
        except TypeError:  # defined in exec'd code or an interactive prompt
            source = "<unknown>"
        declaration = {
            "id": id, "tier": tier, "summary": summary,
            "description": inspect.cleandoc(cls.__doc__ or summary),
            "params": [p._declaration() for p in params],
            "exact": bool(exact), "rtol": float(rtol), "atol": float(atol),
            "pattern_nodes": pattern.nodes, "pattern_edges": pattern.edges,
            "time_limit": float(time_limit), "source": source,
        }
        _weir._register_plugin(cls(), declaration)
        _loaded[id] = source
        _registered.append(id)
        cls.weir_id = id
        return cls
    return register


def plugin_paths():
    """The folders searched for plugins, in order (existing or not)."""
    from . import _paths
    paths = [_paths.SHIPPED_PLUGINS]
    paths += [p for p in os.environ.get("WEIR_PLUGIN_PATH", "").split(":") if p]
    paths.append(os.path.join(os.path.expanduser("~"), ".local", "share",
                              "weir", "plugins"))
    return paths


def load_plugins(paths=None):
    """Imports the plugin files of `paths` (default: plugin_paths()).

    Returns the ids the files registered (again, for a file loaded before: a
    reload replaces its plugins, and drops those it no longer registers). A
    file that raises is skipped, with none of its plugins registered, and a
    warning naming it and the line; plugin_errors() keeps the list. A folder
    of `paths` that does not exist is listed and warned about the same way
    (the default folders need not exist).
    """
    start = len(_registered)
    explicit = paths is not None
    for folder in plugin_paths() if paths is None else paths:
        if not os.path.isdir(folder):
            # The default folders need not exist; one asked for must.
            if explicit:
                _report(os.fspath(folder), f"{folder}: no such folder",
                        stacklevel=2)
            continue
        _errors[:] = [e for e in _errors if e[0] != os.fspath(folder)]
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".py") or name.startswith("_"):
                continue
            _load_file(os.path.join(folder, name))
    return sorted(set(_registered[start:]))


def _location(e, path):
    """Where in the plugin file `e` happened: the line of a syntax error,
    else the deepest traceback frame inside the file."""
    if isinstance(e, SyntaxError) and e.filename:
        return f"line {e.lineno} of {e.filename}"
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if os.path.abspath(f.filename) == os.path.abspath(path)]
    if frames:
        return f"line {frames[-1].lineno} of {frames[-1].filename}"
    last = traceback.extract_tb(e.__traceback__)[-1]
    return f"line {last.lineno} of {last.filename}"


def _report(path, message, stacklevel):
    """Lists `path` in plugin_errors() (in place of an earlier entry) and
    warns with `message`."""
    _errors[:] = [e for e in _errors if e[0] != path]
    _errors.append((path, message))
    warnings.warn(f"weir: plugin not loaded: {message}",
                  stacklevel=stacklevel + 1)


def _load_file(path):
    _errors[:] = [e for e in _errors if e[0] != path]  # this load decides
    module_name = "weir_plugin_" + "".join(
        c if c.isalnum() else "_" for c in os.path.abspath(path))
    start = len(_registered)
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    except Exception as e:  # a broken plugin must not stop Weir
        sys.modules.pop(module_name, None)
        # Nothing of a file that failed stays registered: the decorators
        # that ran before the error registered their classes already.
        for pid in _registered[start:]:
            unregister(pid)
        del _registered[start:]  # nor among the ids load_plugins returns
        _report(path, f"{path}: {type(e).__name__}: {e} "
                      f"({_location(e, path)})", stacklevel=3)
        return
    # A reload: the plugins this file registered before and did not
    # register again (a class renamed or removed) leave the registry.
    again = set(_registered[start:])
    here = os.path.abspath(path)
    for pid, source in list(_loaded.items()):
        if pid not in again and os.path.abspath(source) == here:
            unregister(pid)


def unregister(id):
    """Removes a plugin transformation from the registry (and from
    plugins()); False when no plugin has that id."""
    _loaded.pop(id, None)
    return _weir._unregister_plugin(id)


def plugins():
    """{id: source file} of the plugin transformations registered."""
    return dict(_loaded)


def plugin_errors():
    """[(file, message)] for plugin files that failed to load."""
    return list(_errors)
