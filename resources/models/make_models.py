#!/usr/bin/python3
"""Deterministically build Weir's small reference ONNX models.

Usage:
    /usr/bin/python3 resources/models/make_models.py [OUTDIR]

Writes cnn.onnx, mlp.onnx and transformer.onnx to OUTDIR (default: the
directory holding this script).  Needs Debian's python3-onnx (1.12) and
numpy; run it with /usr/bin/python3.

Every run produces byte-identical files: weights come from fixed numpy seeds,
no timestamps or host data go into the models, and nothing depends on dict or
set ordering.  Each model is

  * built with onnx.helper / onnx.numpy_helper at opset 13, IR version 8;
  * checked with onnx.checker.check_model(full_check=True);
  * shape-inferred (strict, with data propagation) and saved in that form, so
    every intermediate value carries value_info with a complete shape;
  * executed by a small numpy interpreter (below) whose intermediate shapes
    must agree with the inferred value_info, and whose outputs must agree with
    an independent, hand-written numpy forward pass of the same network.
"""

import hashlib
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
IR_VERSION = 8
PRODUCER = "weir/resources/models/make_models.py"
MAX_BYTES = 2 * 1024 * 1024

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------

class Builder:
    """Collects nodes and initializers for one graph."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.nodes = []
        self.inits = []
        self.weights = {}  # name -> np.ndarray, for the hand-written reference

    def he(self, name, shape, fan_in, scale=1.0):
        """He-normal float32 weight, stored as an initializer."""
        w = self.rng.standard_normal(shape) * (scale * math.sqrt(2.0 / fan_in))
        return self.init(name, w.astype(np.float32))

    def small(self, name, shape, scale=0.05, offset=0.0):
        w = offset + self.rng.standard_normal(shape) * scale
        return self.init(name, w.astype(np.float32))

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(array, name))
        self.weights[name] = array
        return name

    def node(self, op, inputs, outputs, name, **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def const(self, name, array):
        """A Constant node (what torch.onnx emits for scalars and shapes)."""
        t = numpy_helper.from_array(np.asarray(array), name + "_value")
        return self.node("Constant", [], [name], name=name, value=t)


def make_model(builder, name, inputs, outputs, doc):
    graph = helper.make_graph(builder.nodes, name, inputs, outputs,
                              initializer=builder.inits, doc_string=doc)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name=PRODUCER,
        producer_version="1",
        doc_string=doc,
    )
    model.ir_version = IR_VERSION
    model.model_version = 1
    return model


def finalize(model, feeds):
    """check_model, infer shapes, complete them, check again.

    ONNX 1.12's Reshape inference cannot use a shape that is computed at run
    time (Shape -> Gather -> Unsqueeze -> Concat), even with data propagation,
    so the values downstream of such a Reshape come back without a shape.
    For those (and only those) the shape is taken from a reference run on
    `feeds`, the way torch.onnx records traced shapes; check_model then
    re-runs strict inference, which must agree with what was filled in.
    """
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(
        model, check_type=True, strict_mode=True, data_prop=True)
    env = run_reference(inferred, feeds)
    g = inferred.graph
    known = {vi.name: vi for vi in list(g.input) + list(g.output) + list(g.value_info)}
    for node in g.node:
        for name in node.output:
            vi = known.get(name)
            if vi is not None and vi.type.tensor_type.HasField("shape") and all(
                    d.HasField("dim_value") or d.HasField("dim_param")
                    for d in vi.type.tensor_type.shape.dim):
                continue
            elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[env[name].dtype]
            full = helper.make_tensor_value_info(name, elem, list(env[name].shape))
            if vi is None:
                g.value_info.append(full)
            else:
                vi.CopyFrom(full)
    onnx.checker.check_model(inferred, full_check=True)
    return inferred


def value_shapes(model):
    """name -> tuple of dims (int, or str for dim_param) for every typed value."""
    shapes = {}
    g = model.graph
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            raise AssertionError(f"{model.graph.name}: value {vi.name!r} has no shape")
        dims = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                dims.append(d.dim_value)
            elif d.HasField("dim_param"):
                dims.append(d.dim_param)
            else:
                raise AssertionError(
                    f"{model.graph.name}: value {vi.name!r} has an unknown dim")
        shapes[vi.name] = tuple(dims)
    for t in g.initializer:
        shapes[t.name] = tuple(t.dims)
    return shapes


def check_every_value_typed(model):
    shapes = value_shapes(model)
    for n in model.graph.node:
        for v in list(n.input) + list(n.output):
            if v and v not in shapes:
                raise AssertionError(
                    f"{model.graph.name}: value {v!r} (node {n.name}) lacks value_info")
    return shapes


# --------------------------------------------------------------------------
# A tiny numpy interpreter for exactly the ops these models use
# --------------------------------------------------------------------------

def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _conv2d(x, w, b, pads, strides=(1, 1)):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    assert cg == c, "grouped conv not used here"
    pt, pl, pb, pr = pads
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    sh, sw = strides
    oh = (h + pt + pb - kh) // sh + 1
    ow = (wd + pl + pr - kw) // sw + 1
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw]
    y = np.einsum("nckluv,mckl->nmuv", cols, w.astype(np.float64))
    if b is not None:
        y += b.reshape(1, m, 1, 1)
    return y


def _maxpool2d(x, k, s):
    n, c, h, w = x.shape
    oh, ow = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
    y = np.full((n, c, oh, ow), -np.inf)
    for i in range(k[0]):
        for j in range(k[1]):
            y = np.maximum(y, x[:, :, i:i + s[0] * oh:s[0], j:j + s[1] * ow:s[1]])
    return y


_erf = np.vectorize(math.erf)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def run_reference(model, feeds):
    """Execute `model` on `feeds` (name -> array).  Returns every value."""
    env = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    env.update(feeds)
    for node in model.graph.node:
        a = _attrs(node)
        x = [env[i] if i else None for i in node.input]
        op = node.op_type
        if op == "Constant":
            y = numpy_helper.to_array(a["value"])
        elif op == "Conv":
            k = len(a.get("kernel_shape", x[1].shape[2:]))
            pads = a.get("pads", [0] * 2 * k)
            pads = (pads[0], pads[1], pads[2], pads[3])
            y = _conv2d(x[0], x[1], x[2] if len(x) > 2 else None, pads,
                        tuple(a.get("strides", [1, 1])))
        elif op == "BatchNormalization":
            _, scale, bias, mean, var = x
            sh = (1, -1, 1, 1)
            y = ((x[0] - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + a.get("epsilon", 1e-5))
                 * scale.reshape(sh) + bias.reshape(sh))
        elif op == "Relu":
            y = np.maximum(x[0], 0)
        elif op == "MaxPool":
            y = _maxpool2d(x[0], a["kernel_shape"], a.get("strides", [1, 1]))
        elif op == "GlobalAveragePool":
            y = x[0].mean(axis=(2, 3), keepdims=True)
        elif op == "Flatten":
            ax = a.get("axis", 1)
            y = x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)
        elif op == "Gemm":
            A = x[0].T if a.get("transA", 0) else x[0]
            B = x[1].T if a.get("transB", 0) else x[1]
            y = a.get("alpha", 1.0) * (A @ B)
            if len(x) > 2:
                y = y + a.get("beta", 1.0) * x[2]
        elif op == "MatMul":
            y = np.matmul(x[0], x[1])
        elif op == "Add":
            y = x[0] + x[1]
        elif op == "Sub":
            y = x[0] - x[1]
        elif op == "Mul":
            y = x[0] * x[1]
        elif op == "Div":
            y = x[0] / x[1]
        elif op == "Pow":
            y = np.power(x[0], x[1])
        elif op == "Sqrt":
            y = np.sqrt(x[0])
        elif op == "Erf":
            y = _erf(x[0])
        elif op == "Softmax":
            y = _softmax(x[0], a.get("axis", -1))
        elif op == "ReduceMean":
            y = x[0].mean(axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))
        elif op == "Reshape":
            y = x[0].reshape(tuple(int(d) for d in x[1]))
        elif op == "Transpose":
            y = np.transpose(x[0], a["perm"])
        elif op == "Unsqueeze":
            y = x[0]
            axes = sorted(int(v) % (x[0].ndim + len(x[1])) for v in x[1])
            for ax in axes:
                y = np.expand_dims(y, ax)
        elif op == "Shape":
            y = np.array(x[0].shape, dtype=np.int64)
        elif op == "Gather":
            y = np.take(x[0], x[1], axis=a.get("axis", 0))
        elif op == "Concat":
            y = np.concatenate(x, axis=a["axis"])
        else:
            raise NotImplementedError(op)
        if isinstance(y, np.ndarray) and y.dtype == np.float64:
            y = y.astype(np.float32)
        env[node.output[0]] = np.asarray(y)
    return env


def verify(model, feeds, expected, sym=None, rtol=1e-4, atol=1e-5):
    """Finalize, run the interpreter, compare shapes to value_info and outputs
    to `expected`.  Returns (finalized model, every value of the run)."""
    model = finalize(model, feeds)
    shapes = check_every_value_typed(model)
    env = run_reference(model, feeds)
    for name, want in shapes.items():
        got = env[name].shape
        want = tuple(sym.get(d, d) if isinstance(d, str) else d for d in want)
        if got != want:
            raise AssertionError(f"{model.graph.name}: {name}: ran to shape {got}, "
                                 f"value_info says {want}")
        if env[name].dtype.kind == "f" and not np.all(np.isfinite(env[name])):
            raise AssertionError(f"{model.graph.name}: {name} is not finite")
    for name, want in expected.items():
        np.testing.assert_allclose(env[name], want, rtol=rtol, atol=atol,
                                   err_msg=f"{model.graph.name}: output {name}")
    return model, env


# --------------------------------------------------------------------------
# cnn.onnx
# --------------------------------------------------------------------------

def build_cnn():
    b = Builder(seed=1301)
    conv = lambda name, x, cin, cout, k: b.node(   # noqa: E731
        "Conv", [x, b.he(name + ".weight", (cout, cin, k, k), cin * k * k),
                 b.small(name + ".bias", (cout,), 0.01)],
        [name + "_out"], name=name, kernel_shape=[k, k], pads=[k // 2] * 4,
        strides=[1, 1])

    def bn(name, x, c):
        ins = [x,
               b.small(name + ".weight", (c,), 0.1, 1.0),
               b.small(name + ".bias", (c,), 0.05),
               b.small(name + ".running_mean", (c,), 0.05),
               b.init(name + ".running_var",
                      (1.0 + np.abs(b.rng.standard_normal(c)) * 0.2).astype(np.float32))]
        return b.node("BatchNormalization", ins, [name + "_out"], name=name,
                      epsilon=1e-5, momentum=0.9)

    x = conv("conv1", "input", 3, 16, 3)
    x = bn("bn1", x, 16)
    x = b.node("Relu", [x], ["relu1_out"], name="relu1")
    pooled = b.node("MaxPool", [x], ["pool1_out"], name="pool1",
                    kernel_shape=[2, 2], strides=[2, 2])
    x = conv("conv2", pooled, 16, 32, 3)
    x = bn("bn2", x, 32)
    x = b.node("Relu", [x], ["relu2_out"], name="relu2")
    proj = conv("proj", pooled, 16, 32, 1)
    x = b.node("Add", [x, proj], ["residual_out"], name="residual_add")
    x = b.node("GlobalAveragePool", [x], ["gap_out"], name="gap")
    x = b.node("Flatten", [x], ["flatten_out"], name="flatten", axis=1)
    b.node("Gemm", [x, b.he("fc.weight", (10, 32), 32), b.small("fc.bias", (10,), 0.01)],
           ["logits"], name="fc", alpha=1.0, beta=1.0, transB=1)

    model = make_model(
        b, "weir_cnn",
        [helper.make_tensor_value_info("input", F32, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("logits", F32, [1, 10])],
        "Small residual CNN: Conv-BN-Relu-MaxPool-Conv-BN-Relu + 1x1 projection, "
        "GlobalAveragePool, Flatten, Gemm.")

    # Hand-written reference forward pass.
    w = b.weights
    rng = np.random.RandomState(2301)
    inp = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)

    def bn_ref(y, p):
        sh = (1, -1, 1, 1)
        return ((y - w[p + ".running_mean"].reshape(sh))
                / np.sqrt(w[p + ".running_var"].reshape(sh) + 1e-5)
                * w[p + ".weight"].reshape(sh) + w[p + ".bias"].reshape(sh))

    h = np.maximum(bn_ref(_conv2d(inp, w["conv1.weight"], w["conv1.bias"], (1,) * 4), "bn1"), 0)
    p = h.reshape(1, 16, 16, 2, 16, 2).max(axis=(3, 5))
    h = np.maximum(bn_ref(_conv2d(p, w["conv2.weight"], w["conv2.bias"], (1,) * 4), "bn2"), 0)
    h = h + _conv2d(p, w["proj.weight"], w["proj.bias"], (0,) * 4)
    logits = h.mean(axis=(2, 3)) @ w["fc.weight"].T + w["fc.bias"]
    model, _ = verify(model, {"input": inp}, {"logits": logits})
    return model


# --------------------------------------------------------------------------
# mlp.onnx
# --------------------------------------------------------------------------

def build_mlp():
    b = Builder(seed=1302)
    x = "input"
    dims = [64, 128, 128, 10]
    for i in range(3):
        fin, fout = dims[i], dims[i + 1]
        wname = b.he(f"fc{i + 1}.weight", (fin, fout), fin)
        bname = b.small(f"fc{i + 1}.bias", (fout,), 0.01)
        x = b.node("MatMul", [x, wname], [f"fc{i + 1}_matmul_out"], name=f"fc{i + 1}_matmul")
        x = b.node("Add", [x, bname], [f"fc{i + 1}_out"], name=f"fc{i + 1}_add")
        if i < 2:
            x = b.node("Relu", [x], [f"relu{i + 1}_out"], name=f"relu{i + 1}")
    b.node("Softmax", [x], ["probs"], name="softmax", axis=-1)

    model = make_model(
        b, "weir_mlp",
        [helper.make_tensor_value_info("input", F32, ["N", 64])],
        [helper.make_tensor_value_info("probs", F32, ["N", 10])],
        "Three-layer MLP (64-128-128-10) with a symbolic batch dimension N.")

    w = b.weights
    inp = np.random.RandomState(2302).standard_normal((3, 64)).astype(np.float32)
    h = np.maximum(inp @ w["fc1.weight"] + w["fc1.bias"], 0)
    h = np.maximum(h @ w["fc2.weight"] + w["fc2.bias"], 0)
    probs = _softmax(h @ w["fc3.weight"] + w["fc3.bias"], -1)
    model, env = verify(model, {"input": inp}, {"probs": probs}, sym={"N": 3})
    np.testing.assert_allclose(env["probs"].sum(-1), 1.0, rtol=1e-5)
    return model


# --------------------------------------------------------------------------
# transformer.onnx
# --------------------------------------------------------------------------

SEQ, HID, HEADS, HDIM, FFN = 16, 64, 4, 16, 256


def build_transformer():
    b = Builder(seed=1303)
    P = "/encoder/layer.0"

    def linear(prefix, x, fin, fout):
        wname = b.he(prefix.strip("/").replace("/", ".") + ".weight", (fin, fout), fin, 0.5)
        bname = b.small(prefix.strip("/").replace("/", ".") + ".bias", (fout,), 0.02)
        y = b.node("MatMul", [x, wname], [prefix + "/MatMul_output_0"], name=prefix + "/MatMul")
        return b.node("Add", [bname, y], [prefix + "/Add_output_0"], name=prefix + "/Add")

    def layer_norm(prefix, x, out=None):
        """LayerNorm decomposed exactly as torch.onnx opset<17 emits it."""
        gamma = b.small(prefix.strip("/").replace("/", ".") + ".weight", (HID,), 0.05, 1.0)
        beta = b.small(prefix.strip("/").replace("/", ".") + ".bias", (HID,), 0.02)
        mean = b.node("ReduceMean", [x], [prefix + "/ReduceMean_output_0"],
                      name=prefix + "/ReduceMean", axes=[-1], keepdims=1)
        d = b.node("Sub", [x, mean], [prefix + "/Sub_output_0"], name=prefix + "/Sub")
        two = b.const(prefix + "/Constant_output_0", np.array(2.0, np.float32))
        sq = b.node("Pow", [d, two], [prefix + "/Pow_output_0"], name=prefix + "/Pow")
        var = b.node("ReduceMean", [sq], [prefix + "/ReduceMean_1_output_0"],
                     name=prefix + "/ReduceMean_1", axes=[-1], keepdims=1)
        eps = b.const(prefix + "/Constant_1_output_0", np.array(1e-12, np.float32))
        ve = b.node("Add", [var, eps], [prefix + "/Add_output_0"], name=prefix + "/Add")
        sd = b.node("Sqrt", [ve], [prefix + "/Sqrt_output_0"], name=prefix + "/Sqrt")
        n = b.node("Div", [d, sd], [prefix + "/Div_output_0"], name=prefix + "/Div")
        m = b.node("Mul", [n, gamma], [prefix + "/Mul_output_0"], name=prefix + "/Mul")
        return b.node("Add", [m, beta], [out or prefix + "/Add_1_output_0"],
                      name=prefix + "/Add_1")

    A = P + "/attention/self"
    q = linear(A + "/query", "hidden", HID, HID)
    k = linear(A + "/key", "hidden", HID, HID)
    v = linear(A + "/value", "hidden", HID, HID)

    # Q and K: static reshape with a constant shape (torch with static sizes).
    heads_shape = b.const(A + "/Constant_output_0",
                          np.array([1, SEQ, HEADS, HDIM], np.int64))
    qr = b.node("Reshape", [q, heads_shape], [A + "/Reshape_output_0"], name=A + "/Reshape")
    qt = b.node("Transpose", [qr], [A + "/Transpose_output_0"], name=A + "/Transpose",
                perm=[0, 2, 1, 3])
    kr = b.node("Reshape", [k, heads_shape], [A + "/Reshape_1_output_0"],
                name=A + "/Reshape_1")
    kt = b.node("Transpose", [kr], [A + "/Transpose_1_output_0"], name=A + "/Transpose_1",
                perm=[0, 2, 3, 1])

    # V: dynamic reshape, x.view(x.size(0), x.size(1), heads, head_dim), as
    # torch.onnx emits it: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
    vshape = b.node("Shape", [v], [A + "/Shape_output_0"], name=A + "/Shape")
    i0 = b.const(A + "/Constant_1_output_0", np.array(0, np.int64))
    i1 = b.const(A + "/Constant_2_output_0", np.array(1, np.int64))
    bs = b.node("Gather", [vshape, i0], [A + "/Gather_output_0"], name=A + "/Gather", axis=0)
    sl = b.node("Gather", [vshape, i1], [A + "/Gather_1_output_0"], name=A + "/Gather_1",
                axis=0)
    ax0 = b.const(A + "/Constant_3_output_0", np.array([0], np.int64))
    bs_u = b.node("Unsqueeze", [bs, ax0], [A + "/Unsqueeze_output_0"], name=A + "/Unsqueeze")
    sl_u = b.node("Unsqueeze", [sl, ax0], [A + "/Unsqueeze_1_output_0"],
                  name=A + "/Unsqueeze_1")
    nh = b.const(A + "/Constant_4_output_0", np.array([HEADS], np.int64))
    hd = b.const(A + "/Constant_5_output_0", np.array([HDIM], np.int64))
    vcat = b.node("Concat", [bs_u, sl_u, nh, hd], [A + "/Concat_output_0"],
                  name=A + "/Concat", axis=0)
    vr = b.node("Reshape", [v, vcat], [A + "/Reshape_2_output_0"], name=A + "/Reshape_2")
    vt = b.node("Transpose", [vr], [A + "/Transpose_2_output_0"], name=A + "/Transpose_2",
                perm=[0, 2, 1, 3])

    scores = b.node("MatMul", [qt, kt], [A + "/MatMul_output_0"], name=A + "/MatMul")
    sqrt_d = b.const(A + "/Constant_6_output_0", np.array(math.sqrt(HDIM), np.float32))
    scores = b.node("Div", [scores, sqrt_d], [A + "/Div_output_0"], name=A + "/Div")

    # Extended attention mask, exactly as BERT builds it.
    axes12 = b.const("/Constant_output_0", np.array([1, 2], np.int64))
    m = b.node("Unsqueeze", ["mask", axes12], ["/Unsqueeze_output_0"], name="/Unsqueeze")
    one = b.const("/Constant_1_output_0", np.array(1.0, np.float32))
    m = b.node("Sub", [one, m], ["/Sub_output_0"], name="/Sub")
    big = b.const("/Constant_2_output_0", np.array(-10000.0, np.float32))
    m = b.node("Mul", [m, big], ["/Mul_output_0"], name="/Mul")
    scores = b.node("Add", [scores, m], [A + "/Add_output_0"], name=A + "/Add")

    probs = b.node("Softmax", [scores], [A + "/Softmax_output_0"], name=A + "/Softmax",
                   axis=-1)
    ctx = b.node("MatMul", [probs, vt], [A + "/MatMul_1_output_0"], name=A + "/MatMul_1")
    ctx = b.node("Transpose", [ctx], [A + "/Transpose_3_output_0"], name=A + "/Transpose_3",
                 perm=[0, 2, 1, 3])
    out_shape = b.const(A + "/Constant_7_output_0", np.array([1, SEQ, HID], np.int64))
    ctx = b.node("Reshape", [ctx, out_shape], [A + "/Reshape_3_output_0"],
                 name=A + "/Reshape_3")

    O = P + "/attention/output"
    att = linear(O + "/dense", ctx, HID, HID)
    att = b.node("Add", [att, "hidden"], [O + "/Add_output_0"], name=O + "/Add")
    ln1 = layer_norm(O + "/LayerNorm", att)

    h = linear(P + "/intermediate/dense", ln1, HID, FFN)
    G = P + "/intermediate/intermediate_act_fn"
    sqrt2 = b.const(G + "/Constant_output_0", np.array(1.4142135, np.float32))
    g = b.node("Div", [h, sqrt2], [G + "/Div_output_0"], name=G + "/Div")
    g = b.node("Erf", [g], [G + "/Erf_output_0"], name=G + "/Erf")
    one_g = b.const(G + "/Constant_1_output_0", np.array(1.0, np.float32))
    g = b.node("Add", [g, one_g], [G + "/Add_output_0"], name=G + "/Add")
    g = b.node("Mul", [h, g], [G + "/Mul_output_0"], name=G + "/Mul")
    half = b.const(G + "/Constant_2_output_0", np.array(0.5, np.float32))
    g = b.node("Mul", [g, half], [G + "/Mul_1_output_0"], name=G + "/Mul_1")

    Q = P + "/output"
    f = linear(Q + "/dense", g, FFN, HID)
    f = b.node("Add", [f, ln1], [Q + "/Add_output_0"], name=Q + "/Add")
    ln2 = layer_norm(Q + "/LayerNorm", f, out="out")
    assert ln2 == "out"

    model = make_model(
        b, "weir_transformer",
        [helper.make_tensor_value_info("hidden", F32, [1, SEQ, HID]),
         helper.make_tensor_value_info("mask", F32, [1, SEQ])],
        [helper.make_tensor_value_info("out", F32, [1, SEQ, HID])],
        "One BERT-style encoder layer in the shape torch.onnx (opset 13) exports it: "
        "Q/K/V MatMul+Add, multi-head attention with the BERT extended mask, "
        "decomposed LayerNorm and erf GELU.")

    # Hand-written reference forward pass.
    w = b.weights
    rng = np.random.RandomState(2303)
    hid = rng.standard_normal((1, SEQ, HID)).astype(np.float32)
    mask = np.ones((1, SEQ), np.float32)
    mask[0, 12:] = 0.0  # last four tokens are padding

    def lin(x, name):
        return x @ w[name + ".weight"] + w[name + ".bias"]

    def ln(x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    pre = "encoder.layer.0."
    split = lambda t: t.reshape(1, SEQ, HEADS, HDIM).transpose(0, 2, 1, 3)  # noqa: E731
    qh = split(lin(hid, pre + "attention.self.query"))
    kh = split(lin(hid, pre + "attention.self.key"))
    vh = split(lin(hid, pre + "attention.self.value"))
    s = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(HDIM)
    s = s + (1.0 - mask[:, None, None, :]) * -10000.0
    p = _softmax(s, -1)
    c = (p @ vh).transpose(0, 2, 1, 3).reshape(1, SEQ, HID)
    a = ln(lin(c, pre + "attention.output.dense") + hid, pre + "attention.output.LayerNorm")
    hh = lin(a, pre + "intermediate.dense")
    gl = 0.5 * hh * (1.0 + _erf(hh / math.sqrt(2.0)))
    out = ln(lin(gl, pre + "output.dense") + a, pre + "output.LayerNorm")

    model, env = verify(model, {"hidden": hid, "mask": mask}, {"out": out},
                        rtol=1e-3, atol=1e-4)
    # Masked keys must get (near) zero attention.
    assert env[A + "/Softmax_output_0"][..., 12:].max() < 1e-6
    return model


# --------------------------------------------------------------------------

MODELS = [
    ("cnn.onnx", build_cnn),
    ("mlp.onnx", build_mlp),
    ("transformer.onnx", build_transformer),
]


def main(argv):
    if len(argv) > 2:
        sys.exit("usage: make_models.py [OUTDIR]")
    outdir = argv[1] if len(argv) == 2 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(outdir, exist_ok=True)
    for fname, build in MODELS:
        model = build()
        data = model.SerializeToString()
        if len(data) >= MAX_BYTES:
            raise AssertionError(f"{fname} is {len(data)} bytes (limit {MAX_BYTES})")
        # Round-trip through the bytes we write, to be sure they are what we checked.
        again = onnx.load_from_string(data)
        onnx.checker.check_model(again, full_check=True)
        path = os.path.join(outdir, fname)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        print(f"{fname}: {len(data)} bytes, {len(model.graph.node)} nodes, "
              f"sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main(sys.argv)
