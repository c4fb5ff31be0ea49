#!/usr/bin/python3
"""Generate Weir's hostile-input corpus for the ONNX loader.

Usage:
    /usr/bin/python3 tests/fuzz/make_hostile_corpus.py OUTDIR

(Re)creates OUTDIR with one subdirectory per case and writes
OUTDIR/cases.json, a list of

    {"name": ..., "model": "<path of the model, relative to OUTDIR>",
     "expect": "reject", "message": "<lower-case substring>", "why": "...",
     "detail": "<optional second lower-case substring>"}

Every case must make the loader fail with an error whose (lower-cased)
message contains `message`.  Where the case has a `detail` key, the message
should contain that substring too (a more specific word, e.g. "outside").
See tests/fuzz/README.md.

The malformed models are built with onnx's protobuf classes and written as
raw bytes, so nothing here runs onnx.checker on them.  Output is
deterministic: fixed seeds, no timestamps; files are small (< 100 KB).
Needs Debian's python3-onnx (1.12); run it with /usr/bin/python3.
"""

import json
import os
import random
import shutil
import struct
import sys

import onnx
from google.protobuf.message import DecodeError
from onnx import TensorProto, helper

OPSET = 13
IR_VERSION = 8
MAX_FILE = 100 * 1024

# Bytes of the float32 weights [1, 2, 3, 4] used by the external-data cases.
W4 = struct.pack("<4f", 1.0, 2.0, 3.0, 4.0)


# --------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------

def base_model(initializer, x_dims=(4,), graph_name="hostile"):
    """Y = X + W, where W is `initializer` (a TensorProto named "W")."""
    node = helper.make_node("Add", ["X", "W"], ["Y"], name="add")
    graph = helper.make_graph(
        [node], graph_name,
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x_dims))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, list(x_dims))],
        initializer=[initializer] if initializer is not None else [])
    return finish(graph)


def finish(graph):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="weir/tests/fuzz/make_hostile_corpus.py",
                              producer_version="1")
    model.ir_version = IR_VERSION
    return model


def weight(dims=(4,), data_type=TensorProto.FLOAT, raw=None):
    t = TensorProto()
    t.name = "W"
    t.data_type = data_type
    t.dims.extend(dims)
    if raw is not None:
        t.raw_data = raw
    return t


def external_weight(entries, dims=(4,)):
    """W stored externally; `entries` is a list of (key, value) string pairs,
    written in that order (so a case can omit or misspell keys)."""
    t = weight(dims)
    t.data_location = TensorProto.EXTERNAL
    for key, value in entries:
        e = t.external_data.add()
        e.key = key
        e.value = value
    return t


def ext_model(location, offset=None, length=None, dims=(4,)):
    entries = [("location", location)]
    if offset is not None:
        entries.append(("offset", str(offset)))
    if length is not None:
        entries.append(("length", str(length)))
    return base_model(external_weight(entries, dims), x_dims=dims)


def valid_small_model():
    return base_model(weight(raw=W4))


def nested_if_model(depth):
    """A model whose main graph holds If nodes nested `depth` levels deep
    (each then_branch holds the next If).  All branches are well formed.

    Each level costs three protobuf message levels on the then-branch path
    (NodeProto -> AttributeProto -> GraphProto), plus ModelProto and the main
    GraphProto at the top."""
    def leaf(tag):
        c = helper.make_node(
            "Constant", [], [f"y_{tag}"], name=f"const_{tag}",
            value=helper.make_tensor(f"c_{tag}", TensorProto.FLOAT, [1], [0.0]))
        return helper.make_graph(
            [c], f"leaf_{tag}", [],
            [helper.make_tensor_value_info(f"y_{tag}", TensorProto.FLOAT, [1])])

    graph = leaf(f"then_{depth}")
    for level in range(depth, 0, -1):
        out = f"y_if_{level}"
        node = helper.make_node("If", ["cond"], [out], name=f"if_{level}",
                                then_branch=graph, else_branch=leaf(f"else_{level}"))
        outputs = [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1])]
        if level == 1:
            graph = helper.make_graph(
                [node], "nested", [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                outputs)
        else:
            graph = helper.make_graph([node], f"branch_{level - 1}", [], outputs)
    return finish(graph)


def parses(data):
    """Does protobuf (the C++-backed implementation, when available) accept it?"""
    m = onnx.ModelProto()
    try:
        m.ParseFromString(data)
    except DecodeError:
        return False
    return True


# --------------------------------------------------------------------------
# Corpus writer
# --------------------------------------------------------------------------

class Corpus:
    def __init__(self, root):
        self.root = root
        self.cases = []

    def case(self, name, message, why, model_bytes=None, model_name="model.onnx",
             detail=None, expect="reject"):
        """Create OUTDIR/name/, write model_bytes (if given) and register it.
        `expect` is "reject" (the import fails), "unrunnable" (the import
        succeeds, for viewing, and running is refused) or "unexpandable"
        (the import succeeds and expanding the damaged node fails)."""
        d = os.path.join(self.root, name)
        os.mkdir(d)
        if model_bytes is not None:
            self.write(os.path.join(name, model_name), model_bytes)
        entry = {"name": name, "model": f"{name}/{model_name}", "expect": expect,
                 "message": message, "why": why}
        if detail is not None:
            entry["detail"] = detail
        assert message == message.lower() and (detail is None or detail == detail.lower())
        assert all(c["name"] != name for c in self.cases), name
        self.cases.append(entry)
        return d

    def write(self, rel, data):
        if isinstance(data, onnx.ModelProto):
            data = data.SerializeToString()
        assert len(data) < MAX_FILE, (rel, len(data))
        with open(os.path.join(self.root, rel), "wb") as f:
            f.write(data)


def build(root):
    c = Corpus(root)
    ser = lambda m: m.SerializeToString()  # noqa: E731

    # Shared bait: a file just outside every case directory.  A loader that
    # follows "../secret.bin" (or a symlink to it) would read it and succeed.
    c.write("secret.bin", W4)

    # ---- 1-3: not a protobuf / not a whole one ----------------------------
    c.case("empty_file", "parse",
           "0-byte file; protobuf itself accepts it as an empty ModelProto, the "
           "loader must still report a parse failure", b"")

    garbage = random.Random(17).randbytes(17)
    assert not parses(garbage), "pick another seed: the garbage parses"
    c.case("garbage_17_bytes", "parse", "17 seeded random bytes that are not a ModelProto",
           garbage)

    whole = ser(valid_small_model())
    half = whole[:len(whole) // 2]
    assert parses(whole) and not parses(half)
    c.case("truncated_half", "parse",
           f"a valid model cut to {len(half)} of its {len(whole)} bytes", half)

    # ---- 4-12, 19: external data ------------------------------------------
    d = c.case("ext_parent_traversal", "external data",
               "location '../secret.bin' escapes the model directory (secret.bin exists "
               "there)", ser(ext_model("../secret.bin", 0, 16)), detail="outside")

    d = c.case("ext_dotdot_via_subdir", "external data",
               "location 'x/../../secret.bin' with subdirectory x present "
               "(CVE-2024-27318 style normalisation bypass)",
               ser(ext_model("x/../../secret.bin", 0, 16)), detail="outside")
    os.mkdir(os.path.join(d, "x"))

    c.case("ext_absolute_path", "external data",
           "absolute location '/etc/hostname'", ser(ext_model("/etc/hostname")),
           detail="outside")

    d = c.case("ext_symlink_outside", "external data",
               "location is a symlink in the model directory pointing to ../secret.bin",
               ser(ext_model("link.bin", 0, 16)), detail="symlink")
    os.symlink(os.path.join("..", "secret.bin"), os.path.join(d, "link.bin"))

    d = c.case("ext_symlink_inside", "external data",
               "location is a symlink to weights.bin in the same directory (no symlinks "
               "at all)", ser(ext_model("alias.bin", 0, 16)), detail="symlink")
    c.write("ext_symlink_inside/weights.bin", W4)
    os.symlink("weights.bin", os.path.join(d, "alias.bin"))

    d = c.case("ext_hardlink", "external data",
               "location hard.bin is a hard link to weights.bin (st_nlink == 2)",
               ser(ext_model("hard.bin", 0, 16)), detail="hardlink")
    c.write("ext_hardlink/weights.bin", W4)
    os.link(os.path.join(d, "weights.bin"), os.path.join(d, "hard.bin"))

    c.case("ext_offset_past_end", "external data",
           "offset 64 in a 16-byte data file", ser(ext_model("weights.bin", 64, 16)),
           detail="past the end")
    c.write("ext_offset_past_end/weights.bin", W4)

    c.case("ext_offset_plus_length_past_end", "external data",
           "offset 8 + length 16 > 16-byte data file", ser(ext_model("weights.bin", 8, 16)),
           detail="past the end")
    c.write("ext_offset_plus_length_past_end/weights.bin", W4)

    c.case("ext_offset_length_int64_wrap", "external data",
           "offset 2^63-1 with length 16: offset+length overflows int64",
           ser(ext_model("weights.bin", 2**63 - 1, 16)))
    c.write("ext_offset_length_int64_wrap/weights.bin", W4)

    for name, off, ln, why in [
        ("ext_offset_not_a_number", "abc", "16", "offset 'abc' is not a number"),
        ("ext_length_trailing_junk", "0", "16xyz",
         "length '16xyz' (strtoll would silently accept the 16)"),
        ("ext_offset_negative", "-8", "16", "offset '-8' is negative"),
        ("ext_length_negative", "0", "-16", "length '-16' is negative"),
        ("ext_length_empty", "0", "", "length '' is not a number"),
    ]:
        c.case(name, "external data", why, ser(ext_model("weights.bin", off, ln)))
        c.write(f"{name}/weights.bin", W4)

    c.case("ext_location_missing", "external data",
           "data_location EXTERNAL but no 'location' entry",
           ser(base_model(external_weight([("offset", "0"), ("length", "16")]))))

    d = c.case("ext_location_is_directory", "external data",
               "location names a directory, not a file", ser(ext_model("sub", 0, 16)))
    os.mkdir(os.path.join(d, "sub"))

    c.case("ext_location_embedded_nul", "external data",
           "location 'weights.bin\\0../../secret.bin': a C-string truncation would read "
           "weights.bin", ser(ext_model("weights.bin\0../../secret.bin", 0, 16)))
    c.write("ext_location_embedded_nul/weights.bin", W4)

    c.case("ext_file_does_not_exist", "external data",
           "location 'does_not_exist.bin' is absent", ser(ext_model("does_not_exist.bin")))

    # ---- 13-16, 20: tensor sizes, types and data --------------------------
    c.case("dims_element_count_overflow", "overflow",
           "initializer dims [2^40, 2^40] (2^80 elements overflow int64) and no data; the "
           "element count must be checked before the (missing) data",
           ser(base_model(weight(dims=(2**40, 2**40)), x_dims=(1,))))

    c.case("dims_negative", "negative", "initializer dims [4, -1]",
           ser(base_model(weight(dims=(4, -1), raw=W4))))

    c.case("data_type_undefined", "data_type", "initializer data_type 0 (UNDEFINED)",
           ser(base_model(weight(data_type=TensorProto.UNDEFINED, raw=W4))))

    c.case("data_type_999", "data_type", "initializer data_type 999 (not a TensorProto type)",
           ser(base_model(weight(data_type=999, raw=W4))))

    c.case("raw_data_too_short", "raw data",
           "dims [4] float32 need 16 bytes of raw_data, only 8 given",
           ser(base_model(weight(raw=W4[:8]))))

    c.case("declared_size_too_large", "too large",
           "initializer [65536, 65536] float32 (16 GiB) stored externally in a 16-byte "
           "file; the size cap must be checked before the file size or any allocation",
           ser(ext_model("weights.bin", dims=(65536, 65536))))
    c.write("declared_size_too_large/weights.bin", W4)

    # ---- 17: nesting ------------------------------------------------------
    m20 = ser(nested_if_model(20))
    assert parses(m20), "20-level nesting should be within protobuf's recursion limit"
    c.case("nested_if_20", "nested too deep",
           "If subgraphs nested 20 levels deep: parses, but exceeds the loader's limit of 16",
           m20)

    # Nesting d costs 3d + 5 message levels (ModelProto, GraphProto, then
    # Node/Attribute/Graph per level, then the leaf's Node/Attribute/Tensor);
    # libprotobuf's default recursion limit of 100 first bites at d = 32.
    c.case("nested_if_40", "model",
           "If subgraphs nested 40 levels deep (125 protobuf message levels): libprotobuf's "
           "default recursion limit (100) fails the parse; either a parse error or the "
           "nesting limit is fine", ser(nested_if_model(40)))

    # ---- 18, 21: graph structure ------------------------------------------
    g = helper.make_graph(
        [helper.make_node("Add", ["X", "ghost"], ["Y"], name="add")], "hostile",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])])
    c.case("undefined_node_input", "missing",
           "node input 'ghost' is not a graph input, initializer or node output",
           ser(finish(g)))

    c.case("graph_input_negative_dim", "negative", "graph input X has dim_value -3",
           ser(base_model(weight(raw=W4), x_dims=(-3, 4))))

    # proto2 strings are not checked for UTF-8 by protobuf; names end up in
    # JSON and messages, so the loader must refuse them itself.
    m = valid_small_model()
    m.graph.node[0].name = "add"
    raw = ser(m).replace(b"\x1a\x03add", b"\x1a\x03\xff\xfe\xfd", 1)
    # (NodeProto.name is field 3: tag 0x1a)
    assert raw != ser(m), "node name bytes not found"
    c.case("node_name_not_utf8", "utf-8",
           "the node's name is the bytes ff fe fd, which are not UTF-8", raw)

    # (22, a model importing only an unknown opset domain and using no ops,
    # is left out: it is arguably valid, and there is no agreed message.)

    # ---- declared shapes that disagree with the operators ------------------
    # The class of mutated cnn.onnx files that corrupted the heap: a value
    # declared wider than its operator computes sized a buffer the next
    # operator indexed by the computed shape (issue 19).
    def pooled(declared_p, declared_y):
        nodes = [helper.make_node("MaxPool", ["X"], ["P"], name="pool",
                                  kernel_shape=[2, 2], strides=[2, 2]),
                 helper.make_node("Relu", ["P"], ["Y"], name="relu")]
        g = helper.make_graph(
            nodes, "hostile",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 8, 8])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, declared_y)],
            value_info=[helper.make_tensor_value_info("P", TensorProto.FLOAT,
                                                      declared_p)])
        return ser(finish(g))

    c.case("declared_shape_differs", "value 'p' is declared [1, 2, 27, 4]",
           "value_info declares P as [1, 2, 27, 4]; MaxPool computes [1, 2, 4, 4]",
           pooled([1, 2, 27, 4], [1, 2, 4, 4]), detail="node 'pool' (maxpool) computes")
    c.case("declared_output_shape_differs", "value 'y' is declared [1, 2, 4, 5]",
           "the graph output Y is declared [1, 2, 4, 5]; Relu computes [1, 2, 4, 4]",
           pooled([1, 2, 4, 4], [1, 2, 4, 5]), detail="disagree")
    c.case("declared_rank_differs", "value 'p' is declared [1, 2, 4]",
           "value_info declares P with rank 3; MaxPool computes rank 4",
           pooled([1, 2, 4], [1, 2, 4, 4]))

    # Shape inference that cannot finish (MatMul of [2, 3] by [4, 5]) leaves
    # Y's rank unknown: the model opens, and running it is refused.
    g = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")], "hostile",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor("B", TensorProto.FLOAT, [4, 5], [1.0] * 20)])
    c.case("shapes_not_inferred", "were not verified",
           "MatMul's inner dimensions differ (3 vs 4), so Y's rank is unknown",
           ser(finish(g)), detail="rank of value 'y'", expect="unrunnable")

    # A byte mutation of cnn.onnx that dropped an Add's second input: the
    # expansion read a connector that is not there (an internal error).
    g = helper.make_graph(
        [helper.make_node("Add", ["X"], ["Y"], name="add")], "hostile",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])])
    c.case("binary_op_one_input", "has 1 inputs; it needs at least 2",
           "an Add with one input", ser(finish(g)), detail="node 'add' (add)",
           expect="unexpandable")

    # The structure-aware fuzzer's first find: LayerNormalization with axis
    # -131072 makes ONNX 1.12's shape inference index outside a vector and
    # crash the process. ONNX's passes run in a child process
    # (onnx/onnx_passes.h), so the crash is a refusal naming the pass.
    g = helper.make_graph(
        [helper.make_node("LayerNormalization", ["X", "W", "B"],
                          ["Y", "Mean", "InvStdDev"], name="ln",
                          axis=-131072)], "hostile",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("W", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("B", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("Mean", TensorProto.FLOAT, [3, 1]),
         helper.make_tensor_value_info("InvStdDev", TensorProto.FLOAT, [3, 1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    c.case("onnx_pass_crashes", "crashed on this model",
           "LayerNormalization axis -131072: ONNX's shape inference crashes",
           ser(m), detail="shape inference")

    # ---- 23: not a regular file -------------------------------------------
    d = c.case("model_is_directory", "not a regular file",
               "the model path is a directory (named model.onnx)", model_name="model.onnx")
    os.mkdir(os.path.join(d, "model.onnx"))

    # ---- positive control (not a case): well-formed external data --------
    # Proves the external-data rejections above are for their stated reasons.
    os.mkdir(os.path.join(root, "control_external"))
    c.write("control_external/weights.bin", b"\0" * 8 + W4)
    c.write("control_external/model.onnx",
            ser(ext_model("weights.bin", offset=8, length=len(W4))))

    return c.cases


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: make_hostile_corpus.py OUTDIR")
    root = os.path.abspath(argv[1])
    if os.path.lexists(root):
        # Only ever delete something that looks like a previous corpus.
        if (not os.path.isdir(root) or os.path.islink(root)
                or (os.listdir(root) and not os.path.isfile(os.path.join(root, "cases.json")))):
            sys.exit(f"refusing to delete {root}: not empty and not a corpus "
                     "(no cases.json)")
        shutil.rmtree(root)
    os.makedirs(root)
    cases = build(root)
    with open(os.path.join(root, "cases.json"), "w", encoding="utf-8") as f:
        json.dump(cases, f, indent=2, ensure_ascii=True)
        f.write("\n")
    for case in cases:
        assert os.path.lexists(os.path.join(root, case["model"])), case
    print(f"{len(cases)} cases in {root}")


if __name__ == "__main__":
    main(sys.argv)
