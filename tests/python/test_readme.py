"""The README's Python examples work as written: the recipe script runs on
the bundled CNN, and the plugin example registers and applies."""

import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

import weir
from conftest import SOURCE


def python_blocks():
    text = (SOURCE / "README.md").read_text()
    section = text[text.index("## Python"):text.index("## The GUI")]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_has_the_three_examples():
    blocks = python_blocks()
    assert len(blocks) == 3
    assert "weir.Workspace" in blocks[0]
    assert "weir.compile_module" in blocks[1]
    assert "@weir.transformation" in blocks[2]


def test_pytorch_example_runs(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(python_blocks()[1])
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert float(run.stdout.split()[-1]) < 1e-4, run.stdout


def test_recipe_example_runs(tmp_path):
    (tmp_path / "resources" / "models").mkdir(parents=True)
    shutil.copy(SOURCE / "resources" / "models" / "cnn.onnx",
                tmp_path / "resources" / "models" / "cnn.onnx")
    script = tmp_path / "example.py"
    script.write_text(python_blocks()[0])
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    # The refused check names the missing node; the shape and verification
    # come from running the program.
    assert "%99" in lines[0]
    assert "(1, 10)" in lines[-1] and "verified" in lines[-1]
    assert (tmp_path / "cnn.weir").exists()
    replay = subprocess.run([sys.executable, "recipe.py"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert replay.returncode == 0, replay.stderr


def double_relu_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu1"),
         helper.make_node("Relu", ["r"], ["y"], name="relu2")],
        "double_relu", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, str(path))


def test_plugin_example_applies(tmp_path):
    namespace = {}
    exec(compile(python_blocks()[2], "README plugin", "exec"), namespace)
    try:
        double_relu_model(tmp_path / "m.onnx")
        ws = weir.Workspace(weir.load(str(tmp_path / "m.onnx")))
        (match,) = ws.matches("drop-double-relu")
        assert ws.check("drop-double-relu", match)
        ws.apply("drop-double-relu", match)
        ops = [n.op for n in ws.program.states[0].nodes if n.kind == "library"]
        assert ops == ["Relu"]
        report = ws.verify(seed=3)
        assert report.ok and report.tolerance[0]
        x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
        out = ws.compile().run({"x": x})["y"]
        assert np.array_equal(out, np.maximum(x, 0))
    finally:
        weir._weir._unregister_plugin("drop-double-relu")
