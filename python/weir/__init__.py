"""Weir from Python: the same core as the command line and weir-studio.

    import numpy as np, weir
    ws = weir.Workspace(weir.load("model.onnx"))
    ws.apply("expand-all")
    for m in ws.matches("map-fusion"):
        ws.apply("map-fusion", m)
    ws.undo(); ws.redo()
    exe = ws.compile(target="cpu", threads=2)
    out = exe.run({"input": np.random.rand(1, 3, 32, 32).astype(np.float32)})
    print(ws.verify(seed=0))
    ws.save("model.weir")

Plugin transformations are classes decorated with @weir.transformation
(see weir.plugins); those in Weir's plugins/ folder, in $WEIR_PLUGIN_PATH
and in ~/.local/share/weir/plugins load on import (set WEIR_NO_PLUGINS=1
to skip them).
"""

import atexit as _atexit
import os as _os

from ._weir import (  # noqa: F401  (re-exported)
    Analysis,
    CheckResult,
    Container,
    Edge,
    Editor,
    Error,
    Executable,
    HistoryEntry,
    Match,
    Node,
    OutputCheck,
    PluginTimeLimit,
    Program,
    Recipe,
    State,
    TransformationInfo,
    VerifyReport,
    Workspace,
    compile,
    load,
    open_session,
    random_inputs,
    transformation_info,
    transformations,
)
from . import _weir
from . import workspace as _workspace  # noqa: F401  (adds Workspace.matches)
from .workspace import MatchList  # noqa: F401
from .pytorch import compile_module, from_torch  # noqa: F401
from .plugins import (  # noqa: F401
    Param,
    Pattern,
    load_plugins,
    plugin_errors,
    plugin_paths,
    plugins,
    transformation,
    unregister,
)

__all__ = [name for name in dir() if not name.startswith("_")]

# Plugins hold Python objects; they leave the registry before the
# interpreter that runs them goes away.
_atexit.register(_weir._unregister_plugins)

if _os.environ.get("WEIR_NO_PLUGINS") != "1":
    load_plugins()
