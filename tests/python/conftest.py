"""Shared fixtures of the Python tests: where the sources, models and the
command line are (CMake sets WEIR_SOURCE_DIR and WEIR_CLI)."""

import os
import pathlib

import pytest

SOURCE = pathlib.Path(os.environ.get(
    "WEIR_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODELS = SOURCE / "resources" / "models"
CLI = os.environ.get("WEIR_CLI", str(SOURCE / "build" / "default" / "app" / "weir"))


@pytest.fixture
def models():
    return MODELS


@pytest.fixture
def cli():
    return CLI


# --- helpers for the API, plugin, error, numpy and parity tests -------------

import shutil
import subprocess
import sys

PYTHON = sys.executable  # ctest and the documented command use /usr/bin/python3


def make_onnx(path, nodes, inputs, outputs, initializers=(), opset=13):
    """Saves a small ONNX model built with onnx.helper; returns its path.

    inputs/outputs: (name, TensorProto type, shape) triples."""
    import onnx
    from onnx import helper

    graph = helper.make_graph(
        list(nodes), pathlib.Path(path).stem,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        list(initializers))
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, str(path))
    return pathlib.Path(path)


def clean_env(home, **extra):
    """The environment for a child `weir` or Python: this package on
    PYTHONPATH, no user plugins (HOME is `home`), plus `extra`."""
    env = dict(os.environ)
    env.pop("WEIR_NO_PLUGINS", None)
    env["HOME"] = str(home)
    env["WEIR_PLUGIN_PATH"] = ""
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_cli(args, cwd, home=None, timeout=120, **extra):
    """Runs the command line; returns the CompletedProcess (text)."""
    return subprocess.run([CLI, *map(str, args)], cwd=cwd,
                          env=clean_env(home or cwd, **extra),
                          capture_output=True, text=True, timeout=timeout)


def run_python(code_or_script, cwd, home=None, timeout=120, **extra):
    """Runs /usr/bin/python3 on a script path or `-c` code."""
    if isinstance(code_or_script, pathlib.Path):
        argv = [PYTHON, str(code_or_script)]
    else:
        argv = [PYTHON, "-c", code_or_script]
    return subprocess.run(argv, cwd=cwd, env=clean_env(home or cwd, **extra),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def cnn_path(tmp_path):
    """cnn.onnx copied into tmp_path."""
    path = tmp_path / "cnn.onnx"
    shutil.copy(MODELS / "cnn.onnx", path)
    return path


@pytest.fixture
def plugin_dir(tmp_path):
    """A folder for plugin files; plugins loaded from it are unregistered
    (and their load errors forgotten) after the test."""
    import weir

    folder = tmp_path / "user_plugins"
    folder.mkdir()
    registry = sys.modules["weir.plugins"]
    errors_before = list(registry._errors)
    yield folder
    for pid, source in list(registry._loaded.items()):
        if str(source).startswith(str(folder)):
            weir._weir._unregister_plugin(pid)
            registry._loaded.pop(pid, None)
    registry._errors[:] = errors_before
