"""`cmake --install` to a prefix gives a `weir` package that imports from
there (with the shipped plugins) and a `weir` command that finds it — with
nothing from the build tree on the path."""

import os
import pathlib
import subprocess
import sys

import pytest

from conftest import SOURCE

BUILD = os.environ.get("WEIR_BUILD_DIR", str(SOURCE / "build" / "default"))


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    run = subprocess.run(["cmake", "--install", BUILD, "--prefix", str(prefix)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return prefix


def clean_env(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "WEIR_PLUGIN_PATH")}
    env["HOME"] = str(tmp_path)  # no user plugins
    return env


def test_installed_package_imports(prefix, tmp_path):
    site = prefix / "lib" / "python3.11" / "site-packages"
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import weir\n"
            "print(weir.__file__)\n"
            "print(sorted(weir.plugins().values()))\n"
            "ws = weir.Workspace(weir.load(%r))\n"
            "ws.apply('expand-all')\n"
            "print(ws.verify(seed=0).ok)\n") % (
        str(site), str(SOURCE / "resources" / "models" / "mlp.onnx"))
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path,
                         env=clean_env(tmp_path), capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith(str(site))
    shipped = prefix / "share" / "weir" / "plugins"
    assert str(shipped / "fuse_erf_gelu.py") in lines[1]
    assert lines[2] == "True"


def test_installed_command_finds_the_package(prefix, tmp_path):
    run = subprocess.run([str(prefix / "bin" / "weir"), "transforms"],
                         cwd=tmp_path, env=clean_env(tmp_path),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "swap-relu-maxpool" in run.stdout
    assert "expand-all" in run.stdout
