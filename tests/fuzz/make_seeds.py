#!/usr/bin/python3
"""Writes the seed corpus of every fuzz harness into tests/fuzz/corpus/.

Usage: /usr/bin/python3 tests/fuzz/make_seeds.py WEIR

WEIR is a built `weir` command line (build/default/app/weir): sessions,
recipes and program JSON are made with it, from the bundled models. ONNX
seeds are the bundled models and a choice of small conformance node tests
(libonnx-testdata); tensor seeds are those tests' .pb inputs and .npy files
written here. The corpus is checked in; rerunning rewrites it identically
except for the sessions' file digests, which follow the bundled model.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
MODELS = os.path.join(ROOT, "resources", "models")
NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
# Small node tests of the operators CNNs and transformers use, each passing
# `weir conformance`.
CONFORMANCE = [
    "test_add_bcast", "test_averagepool_2d_pads", "test_batchnorm_example",
    "test_concat_2d_axis_1", "test_conv_with_strides_padding",
    "test_convtranspose", "test_flatten_axis1", "test_gather_0",
    "test_gemm_default_single_elem_vector_bias", "test_globalaveragepool",
    "test_matmul_3d", "test_maxpool_2d_pads", "test_reduce_mean_keepdims_example",
    "test_relu", "test_reshape_reordered_all_dims", "test_slice",
    "test_softmax_axis_1", "test_transpose_all_permutations_1",
    "test_layer_normalization_2d_axis1", "test_where_example",
    "test_expand_dim_changed", "test_split_equal_parts_1d", "test_pad",
    "test_clip", "test_cast_FLOAT_to_DOUBLE", "test_einsum_transpose",
]


def fresh(name):
    d = os.path.join(CORPUS, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    weir = os.path.abspath(sys.argv[1])
    onnx_seeds = fresh("onnx")  # both ONNX harnesses
    for m in ("cnn.onnx", "mlp.onnx", "transformer.onnx"):
        shutil.copy(os.path.join(MODELS, m), onnx_seeds)
    tensors = fresh("tensor_file")
    for t in CONFORMANCE:
        folder = os.path.join(NODE_TESTS, t)
        if not os.path.isdir(folder):
            continue
        with open(os.path.join(folder, "model.onnx"), "rb") as f:
            model = f.read()
        write(os.path.join(onnx_seeds, t + ".onnx"), model)
        pb = os.path.join(folder, "test_data_set_0", "input_0.pb")
        if os.path.exists(pb):
            with open(pb, "rb") as f:
                write(os.path.join(tensors, t + ".pb.seed"), b"\x01" + f.read())
    # .npy seeds: the first byte (even) selects the .npy reader.
    rng = np.random.default_rng(7)
    arrays = {
        "f32_2x3": rng.standard_normal((2, 3)).astype(np.float32),
        "f16_4": rng.standard_normal(4).astype(np.float16),
        "i64_fortran": np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3)),
        "bool_scalar": np.array(True),
        "u8_big_endian": np.arange(5, dtype=">u2"),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    for name, a in arrays.items():
        with tempfile.TemporaryFile() as f:
            np.save(f, a)
            f.seek(0)
            write(os.path.join(tensors, name + ".npy.seed"), b"\x00" + f.read())

    with tempfile.TemporaryDirectory() as tmp:
        # Program JSON: the MLP imported and saved; JSON, NUL, sidecar.
        programs = fresh("program_json")
        for m in ("mlp.onnx", "cnn.onnx"):
            out = os.path.join(tmp, m + ".json")
            subprocess.run([weir, "convert", os.path.join(MODELS, m), "-o", out],
                           check=True, stdout=subprocess.DEVNULL)
            data = open(out, "rb").read()
            if os.path.exists(out + ".bin"):
                data += b"\0" + open(out + ".bin", "rb").read()
            write(os.path.join(programs, m + ".seed"), data)
        # Sessions and recipes on the CNN, saved next to it as model.onnx
        # (the name the session harness gives its copy).
        shutil.copy(os.path.join(MODELS, "cnn.onnx"), os.path.join(tmp, "model.onnx"))
        sessions = fresh("session")
        recipes = fresh("recipe")
        def session(name, recipe):
            s = os.path.join(tmp, name + ".weir")
            subprocess.run([weir, "optimize", os.path.join(tmp, "model.onnx"),
                            "--recipe", recipe, "-o", s, "--no-plugins"],
                           check=True, stdout=subprocess.DEVNULL)
            doc = open(s, "rb").read()
            write(os.path.join(sessions, name + ".weir"), doc)
            write(os.path.join(recipes, name + ".json"),
                  json.dumps(json.loads(doc)["recipe"], indent=1).encode())
            return json.loads(doc)["recipe"]

        auto = session("auto", "auto")
        for name, steps in (("none", []), ("first5", auto["steps"][:5])):
            r = os.path.join(tmp, name + ".recipe.json")
            with open(r, "w") as f:
                json.dump(dict(auto, steps=steps), f)
            session(name, r)

    exprs = fresh("expr_text")
    # First byte even: an expression; odd: a tasklet body.
    for i, e in enumerate(["N*4 + 2", "floordiv(i, 8) + mod(j, 3)",
                           "min(a, b) - max(c, 1)", "ceildiv(H - 3, 2) + 1"]):
        write(os.path.join(exprs, f"expr{i}"), b"\x00" + e.encode())
    for i, t in enumerate(["out = a + b * 2.5",
                           "y = max(x, 0.0)",
                           "t = exp(x - m)\nout = t / (1.0 + t)",
                           "out = select(x > 0, x, 0.01 * x)",
                           "o = f32(i64(x) % 3)"]):
        write(os.path.join(exprs, f"tasklet{i}"), b"\x01" + t.encode())


if __name__ == "__main__":
    main()
