"""The auto recipe on the squeeze-and-excitation pattern of EfficientNet and
RegNet: an exp-based activation (SiLU, x * sigmoid(x)) whose output feeds
both a global average pool and the scaling after it. Fusing the activation
into the pool's sum would put sigmoid into a loop that accumulates into one
element per channel and cannot vectorize; the recipe must leave that pair
apart and keep the activation's own loop vectorized, and the result must
match the plain expansion."""

import numpy as np
import onnx
from onnx import TensorProto, helper

import weir


def squeeze_excitation(path):
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["g"]),
        helper.make_node("Mul", ["x", "g"], ["s"]),
        helper.make_node("GlobalAveragePool", ["s"], ["p"]),
        helper.make_node("Mul", ["s", "p"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "squeeze_excitation",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 16, 16])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              str(path))


def innermost_loops(loop_ir, label):
    """The innermost `for` lines of the loop nests labelled `label`."""
    lines = [l.strip() for l in loop_ir.splitlines()]
    found = []
    for i, line in enumerate(lines):
        if line.startswith(("for ", "vectorized for ", "parallel for ")) and \
                line.endswith(label) and i + 1 < len(lines) and \
                not lines[i + 1].startswith(("for ", "vectorized for ", "parallel for ")):
            found.append(line)
    return found


def test_activation_stays_vectorized_beside_the_pool(tmp_path):
    path = tmp_path / "se.onnx"
    squeeze_excitation(path)
    program = weir.load(str(path))
    ws = weir.Workspace(program)
    assert ws.auto() > 0
    exe = weir.compile(ws.program, threads=1)
    loops = innermost_loops(exe.loop_ir, "Sigmoid_0.map")
    assert loops, exe.loop_ir
    assert all(l.startswith("vectorized for") for l in loops), loops
    x = np.random.default_rng(0).standard_normal((1, 32, 16, 16)).astype(np.float32)
    want = weir.compile(program, threads=1).run({"x": x})["y"]
    np.testing.assert_allclose(exe.run({"x": x})["y"], want, rtol=1e-5, atol=1e-6)
