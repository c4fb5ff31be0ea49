"""weir's Python API: the issue's example script as written, then programs,
the registry, matches, checks, the history, undo/redo/revert, observers,
recipes, sessions, executables and the GIL."""

import contextlib
import io
import json
import re
import shutil
import sys
import threading
import time

import numpy as np
import pytest
from onnx import TensorProto, helper

import weir
from conftest import MODELS, make_onnx

# The issue's script, verbatim.
ISSUE_SCRIPT = '''\
import numpy as np, weir
ws = weir.Workspace(weir.load("model.onnx"))
ws.apply("expand-all")
for m in ws.matches("map-fusion"):
    ws.apply("map-fusion", m)          # or ws.check("map-fusion", m) -> reason
ws.undo(); ws.redo()
print(ws.program.analysis().bytes_moved, len(ws.history))
exe = ws.compile(target="cpu", threads=2)
out = exe.run({"input": np.random.rand(1, 3, 32, 32).astype(np.float32)})   # dict of numpy arrays
ws.verify(seed=0)
open("recipe.py", "w").write(ws.recipe.as_python())
ws.save("model.weir")
'''

HEX16 = re.compile(r"^[0-9a-f]{16}$")


def load_cnn():
    return weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))


@pytest.fixture(scope="module")
def expanded_cnn():
    """cnn after expand-all (shared, read-only: tests copy what they change)."""
    ws = load_cnn()
    ws.apply("expand-all")
    return ws


# --- the issue's script ------------------------------------------------------

def test_issue_script_runs_verbatim(tmp_path, monkeypatch):
    shutil.copy(MODELS / "cnn.onnx", tmp_path / "model.onnx")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        exec(compile(ISSUE_SCRIPT, "issue_script.py", "exec"), namespace)
    ws, exe, out = namespace["ws"], namespace["exe"], namespace["out"]

    # History: imported, expand-all, then one map-fusion per applied match;
    # undo + redo came back to the last version.
    history = ws.history
    assert history[0].transformation is None
    assert history[1].transformation == "expand-all"
    fused = history[2:]
    assert all(h.transformation == "map-fusion" for h in fused)
    assert ws.current == len(history) - 1 and not ws.can_redo
    printed = stdout.getvalue().split()
    bytes_moved = ws.program.analysis().bytes_moved
    assert printed == [str(bytes_moved), str(len(history))]
    if fused:  # fusing removes an intermediate's write and read
        expanded = weir.Workspace(weir.load("model.onnx"))
        expanded.apply("expand-all")
        assert bytes_moved < expanded.program.analysis().bytes_moved
        assert expanded.hash == history[1].hash

    assert exe.threads == 2
    assert set(out) == {"logits"}
    assert isinstance(out["logits"], np.ndarray)
    assert out["logits"].shape == (1, 10) and out["logits"].dtype == np.float32
    assert np.all(np.isfinite(out["logits"]))

    report = ws.verify(seed=0)
    assert report.ok and bool(report)
    assert [o.name for o in report.outputs] == ["logits"]

    recipe = (tmp_path / "recipe.py").read_text()
    assert recipe.count("ws.apply(") == len(history) - 1
    assert 'ws.apply("expand-all")' in recipe
    assert str(tmp_path / "model.onnx") in recipe

    assert (tmp_path / "model.weir").exists()
    session = weir.open_session("model.weir")
    assert session.hash == ws.hash
    assert len(session.history) == len(history)


# --- programs ------------------------------------------------------------------

def test_transient_memory_falls_with_the_auto_recipe():
    ws = load_cnn()
    ws.apply("expand-all")
    plain = ws.program.memory()
    assert set(plain) == {"allocated", "peak", "buffers"}
    assert 0 < plain["peak"] <= plain["allocated"] and plain["buffers"] > 0
    ws.undo()
    ws.auto("cpu")
    auto = ws.program.memory(dims={"N": 1})
    assert auto["allocated"] < plain["allocated"]
    assert ws.verify().ok


def test_program_containers_have_shapes_dtypes_and_kinds():
    p = weir.load(str(MODELS / "cnn.onnx"))
    assert p.name == "weir_cnn"
    assert p.inputs == ["input"] and p.outputs == ["logits"]
    assert p.symbols == []
    assert list(p.containers) == sorted(p.containers)
    x = p.container("input")
    assert (x.name, x.dtype, x.shape) == ("input", "f32", [1, 3, 32, 32])
    assert x.strides == [3072, 1024, 32, 1]
    assert not x.transient and not x.is_constant
    assert x.nbytes == 1 * 3 * 32 * 32 * 4
    assert x.value() is None
    w = p.containers["conv1.weight"]
    assert (w.dtype, w.shape, w.is_constant) == ("f32", [16, 3, 3, 3], True)
    assert w.nbytes == 16 * 3 * 3 * 3 * 4
    assert p.container("logits").shape == [1, 10]
    assert p.container("relu1_out").transient
    assert p.container("relu1_out").view_of is None
    assert p.container("relu1_out").storage == "host"
    assert "f32[1, 3, 32, 32]" in repr(x)
    with pytest.raises(weir.Error, match="no_such_container"):
        p.container("no_such_container")


def test_program_states_nodes_and_edges_with_memlets():
    p = weir.load(str(MODELS / "cnn.onnx"))
    (state,) = p.states
    assert state.name == "main" and p.state("main").name == "main"
    assert len(state.nodes) == p.node_count == 41
    ops = [n.op for n in state.nodes if n.kind == "library"]
    assert ops[:4] == ["Conv", "BatchNormalization", "Relu", "MaxPool"]
    assert ops.count("Conv") == 3 and ops[-1] == "Gemm"
    conv = state.node(4)
    assert (conv.kind, conv.label, conv.op) == ("library", "conv1", "Conv")
    assert [c for c, _ in conv.inputs] == ["X", "W", "B"]
    assert conv.outputs == [("Y", "f32")]
    assert conv.attributes["kernel_shape"] == [3, 3]
    assert conv.container is None and conv.params is None
    access = state.node(1)
    assert (access.kind, access.container, access.op) == ("access", "input", None)

    ins = state.in_edges(4)
    assert sorted((e.container, e.dst_conn) for e in ins) == [
        ("conv1.bias", "B"), ("conv1.weight", "W"), ("input", "X")]
    (out,) = state.out_edges(4)
    assert (out.src, out.src_conn, out.dst, out.dst_conn) == (4, "Y", 5, "")
    assert out.container == "conv1_out"
    assert out.memlet == "conv1_out[0, 0:16, 0:32, 0:32]"
    assert out.subset == "0, 0:16, 0:32, 0:32"
    assert out.volume == 16 * 32 * 32 and out.wcr is None
    assert len(state.edges) == 41
    with pytest.raises(weir.Error, match="%999"):
        state.node(999)
    with pytest.raises(weir.Error, match="no state 'nope'"):
        p.state("nope")
    assert p.validate() == []
    assert "program weir_cnn" in p.text()
    assert HEX16.match(p.hash)


def test_expanded_program_has_maps_and_tasklets(expanded_cnn):
    state = expanded_cnn.program.states[0]
    kinds = {n.kind for n in state.nodes}
    assert {"map-entry", "map-exit", "tasklet", "access"} <= kinds
    relu = [n for n in state.nodes if n.label == "relu1.map"]
    entry = next(n for n in relu if n.kind == "map-entry")
    assert entry.params == ["i0", "i1", "i2", "i3"]
    assert entry.ranges == ["0", "0:16", "0:32", "0:32"]
    exit_ = state.node(entry.partner)
    assert exit_.kind == "map-exit" and exit_.partner == entry.id
    tasklets = [n for n in state.nodes if n.kind == "tasklet"]
    assert any("max" in t.code for t in tasklets)


def test_analysis_totals_are_ints_and_drop_after_fusion():
    ws = load_cnn()
    a = ws.program.analysis()
    assert isinstance(a.bytes_moved, int) and isinstance(a.flops, int)
    assert a.bytes_moved > 0 and a.flops > 0
    # Totals are the sums of the per-edge and per-node counts.
    assert sum(b for _, b in a.edges.values()) == a.bytes_moved
    assert sum(f for f, _, _ in a.nodes.values()) == a.flops
    assert a.arithmetic_intensity() == pytest.approx(a.flops / a.bytes_moved)

    # swap-relu-maxpool: Relu on a quarter of the values.
    (m,) = ws.matches("swap-relu-maxpool")
    ws.apply("swap-relu-maxpool", m)
    b = ws.program.analysis()
    assert b.flops < a.flops and b.bytes_moved < a.bytes_moved

    # map-fusion: the fused intermediate is neither written nor read.
    ws.apply("expand-all")
    before = ws.program.analysis()
    fusible = ws.matches("map-fusion")
    assert len(fusible) >= 1
    ws.apply("map-fusion", fusible[0])
    after = ws.program.analysis()
    assert after.bytes_moved < before.bytes_moved
    assert after.flops <= before.flops


# --- the registry ----------------------------------------------------------------

TIERS = ["expansion", "fusion", "movement", "tensorize"]


def test_transformations_list_tiers_summaries_and_params():
    ts = weir.transformations()
    ids = [t.id for t in ts]
    for expected in ["expand", "expand-all", "fold-batchnorm", "fold-constants",
                     "map-fusion", "fuse-erf-gelu", "swap-relu-maxpool",
                     "interchange-map"]:
        assert expected in ids
    assert len(set(ids)) == len(ids)
    # By tier, then id.
    keys = [(TIERS.index(t.tier), t.id) for t in ts]
    assert keys == sorted(keys)
    for t in ts:
        assert t.tier in TIERS
        assert t.summary and "\n" not in t.summary
        assert t.description
    info = {t.id: t for t in ts}
    assert info["map-fusion"].tier == "fusion"
    assert info["interchange-map"].tier == "movement"
    (impl,) = info["expand-all"].params
    assert impl["name"] == "implementations" and impl["kind"] == "string"
    assert impl["default"] == ""
    first, second = info["interchange-map"].params
    assert (first["name"], first["kind"], first["default"], first["min"]) == (
        "first", "int", 0, 0)
    assert (second["name"], second["default"]) == ("second", 1)
    assert info["fold-constants"].params[0]["default"] == 64 * 1024 * 1024
    assert info["swap-relu-maxpool"].exact is True
    assert info["fuse-erf-gelu"].exact is False
    assert info["fuse-erf-gelu"].tolerance == (1e-6, 1e-7)
    assert info["fold-batchnorm"].roles == ["conv", "mid", "bn"]
    assert info["expand-all"].roles == []
    # A list of integers is a parameter kind of its own.
    tiles = next(p for p in info["map-tiling"].params if p["name"] == "tiles")
    assert tiles["kind"] == "int-list" and tiles["default"] == []


def test_int_list_parameter_from_python():
    ws = load_cnn()
    ws.apply("expand-all")
    # The first map that tiles=[2, 2, ...] (one 2 per dimension) tiles.
    match, tiles = next((m, [2] * n) for m in ws.matches("map-tiling")
                        for n in range(1, 7)
                        if ws.check("map-tiling", m, tiles=[2] * n))
    # A list, a tuple and the text older recipes hold mean the same.
    text = ", ".join(map(str, tiles))
    for given in (tiles, tuple(tiles), text):
        assert ws.check("map-tiling", match, tiles=given)
    bad = ws.check("map-tiling", match, tiles=tiles[:-1] + [-1])
    assert not bad and "-1 is outside" in bad.reason
    ws.apply("map-tiling", match, tiles=tiles)
    assert ws.recipe.steps[-1]["params"] == {"tiles": tiles}
    with pytest.raises(weir.Error, match="list of int"):
        ws.check("map-tiling", match, tiles=[2, "a"])


def test_transformation_info_and_its_errors():
    t = weir.transformation_info("map-fusion")
    assert t.id == "map-fusion"
    assert t.roles == ["first_exit", "array", "second_entry"]
    assert "map-fusion" in repr(t) and "fusion" in repr(t)
    with pytest.raises(weir.Error) as e:
        weir.transformation_info("no-such-transformation")
    msg = str(e.value)
    assert "no-such-transformation" in msg
    assert "expand-all" in msg and "map-fusion" in msg  # lists known ids


def test_transformation_info_matches_and_checks_a_program():
    p = weir.load(str(MODELS / "cnn.onnx"))
    t = weir.transformation_info("fold-batchnorm")
    ms = t.matches(p)
    assert [m.roles for m in ms] == [{"conv": 4, "mid": 5, "bn": 10},
                                     {"conv": 18, "mid": 19, "bn": 24}]
    assert t.check(p, ms[0])
    bad = t.check(p, {"state": "main", "conv": 4, "mid": 5, "bn": 99})
    assert not bad and "%99" in bad.reason


# --- matches and checks --------------------------------------------------------

def test_match_indexing_str_and_equality():
    ws = load_cnn()
    m0, m1 = ws.candidates("fold-batchnorm")
    assert m0.state == "main"
    assert (m0["conv"], m0["mid"], m0["bn"]) == (4, 5, 10)
    assert list(m0.roles) == ["conv", "mid", "bn"]
    assert str(m0) == "main: conv=%4 mid=%5 bn=%10"
    assert repr(m0) == "<Match main: conv=%4 mid=%5 bn=%10>"
    same = weir.Match("main", {"conv": 4, "mid": 5, "bn": 10})
    assert m0 == same and hash(m0) == hash(same)
    assert m0 != m1
    assert len({m0, same, m1}) == 2
    assert ws.candidates("fold-batchnorm")[0] == m0
    with pytest.raises(weir.Error, match="nope"):
        m0["nope"]
    # The fold applies at a hand-made match as at the listed one.
    h = ws.hash
    ws.apply("fold-batchnorm", same)
    by_hand = ws.hash
    ws.undo()
    assert ws.hash == h
    ws.apply("fold-batchnorm", {"state": "main", "bn": 10, "conv": 4, "mid": 5})
    assert ws.hash == by_hand


def test_matches_are_those_that_apply_candidates_all(expanded_cnn):
    ws = expanded_cnn
    candidates = ws.candidates("map-fusion")
    applicable = list(ws.matches("map-fusion"))
    assert set(applicable) == {m for m in candidates
                               if ws.check("map-fusion", m)}
    assert 0 < len(applicable) < len(candidates)
    assert set(ws.all_candidates()) == {t.id for t in weir.transformations()}
    assert ws.all_candidates()["map-fusion"] == candidates


def test_check_returns_check_result_with_reason():
    ws = load_cnn()
    ok = ws.check("fold-batchnorm", ws.candidates("fold-batchnorm")[0])
    assert isinstance(ok, weir.CheckResult)
    assert ok.ok and bool(ok) and ok.reason == "" and str(ok) == "applies"
    bad = ws.check("fold-batchnorm", {"state": "main", "conv": 4, "mid": 5,
                                      "bn": 99})
    assert not bad.ok and not bool(bad)
    assert "%99" in bad.reason and str(bad) == bad.reason
    assert bad.reason in repr(bad)
    # A check never changes the workspace.
    assert len(ws.history) == 1


def test_check_reason_of_a_map_with_one_dimension(expanded_cnn):
    ws = expanded_cnn
    state = ws.program.states[0]
    gemm = next(n for n in state.nodes
                if n.kind == "map-entry" and n.label == "conv1.gemm")
    assert len(gemm.params) == 1
    r = ws.check("interchange-map", {"state": "main", "map": gemm.id})
    assert not r
    assert "conv1.gemm" in r.reason and "one dimension" in r.reason


# --- history, undo, redo, revert, observers -------------------------------------

def test_history_entries_describe_each_version():
    ws = load_cnn()
    m = ws.candidates("fold-batchnorm")[0]
    ws.apply("fold-batchnorm", m)
    ws.apply("expand-all", implementations="Conv=pure")
    h = ws.history
    assert [e.index for e in h] == [0, 1, 2]
    assert [e.current for e in h] == [False, False, True]
    assert h[0].transformation is None and h[0].match is None
    assert h[0].params == {} and str(h[0]) == "imported"
    assert h[1].transformation == "fold-batchnorm" and h[1].match == m
    assert h[1].params == {}
    assert h[2].transformation == "expand-all"
    assert h[2].params == {"implementations": "Conv=pure"}
    assert str(h[1]).startswith("fold-batchnorm at main")
    assert all(HEX16.match(e.hash) for e in h)
    assert len({e.hash for e in h}) == 3
    assert h[2].hash == ws.hash
    assert h[1].exact is False  # fold-batchnorm rounds differently
    assert h[1].seconds >= 0 and h[2].seconds > 0
    assert "HistoryEntry 1" in repr(h[1])


def test_undo_redo_revert_return_to_earlier_hashes():
    ws = load_cnn()
    h0 = ws.hash
    assert not ws.can_undo and not ws.can_redo
    ws.apply("swap-relu-maxpool", ws.matches("swap-relu-maxpool")[0])
    h1 = ws.hash
    ws.apply("expand-all")
    h2 = ws.hash
    assert len({h0, h1, h2}) == 3
    ws.undo()
    assert (ws.hash, ws.current, ws.can_redo) == (h1, 1, True)
    assert ws.program.hash == h1
    ws.undo()
    assert (ws.hash, ws.current, ws.can_undo) == (h0, 0, False)
    ws.redo()
    ws.redo()
    assert ws.hash == h2 and not ws.can_redo
    ws.revert(0)
    assert ws.hash == h0 and len(ws.history) == 3  # later versions stay
    ws.revert(2)
    assert ws.hash == h2
    ws.revert(1)
    assert ws.hash == h1 and len(ws.recipe) == 1
    # A new step after going back drops the versions redo() would reach.
    ws.apply("fold-batchnorm", ws.matches("fold-batchnorm")[0])
    assert len(ws.history) == 3 and not ws.can_redo
    assert [e.transformation for e in ws.history][1:] == [
        "swap-relu-maxpool", "fold-batchnorm"]


def test_apply_returns_the_workspace():
    ws = load_cnn()
    assert ws.apply("expand-all") is ws


def test_on_change_reports_every_change_until_removed():
    ws = load_cnn()
    events = []
    oid = ws.on_change(lambda kind, a, b: events.append((kind, a, b)))
    ws.apply("swap-relu-maxpool", ws.matches("swap-relu-maxpool")[0])
    ws.apply("expand-all")
    ws.undo()
    ws.redo()
    ws.revert(0)
    ws.redo()
    with pytest.raises(weir.Error):
        ws.apply("fold-batchnorm", {"state": "main", "conv": 4, "mid": 5,
                                    "bn": 99})
    assert events == [("applied", 0, 1), ("applied", 1, 2), ("undone", 2, 1),
                      ("redone", 1, 2), ("reverted", 2, 0), ("redone", 0, 1)]
    ws.remove_observer(oid)
    ws.redo()
    assert len(events) == 6
    other = []
    ws.on_change(lambda *args: other.append(args))
    ws.undo()
    assert other == [("undone", 2, 1)]


# --- recipes and sessions -------------------------------------------------------

def test_recipe_json_roundtrip_and_replay(tmp_path):
    ws = load_cnn()
    ws.apply("fold-batchnorm", ws.matches("fold-batchnorm")[0])
    ws.apply("expand-all")
    ws.apply("interchange-map", {"state": "main",
                                 "map": next(n.id for n in ws.program.states[0].nodes
                                             if n.label == "relu2.map"
                                             and n.kind == "map-entry")},
             first=1, second=3)
    recipe = ws.recipe
    assert len(recipe) == 3 and "3 steps" in repr(recipe)
    steps = recipe.steps
    assert [s["transformation"] for s in steps] == [
        "fold-batchnorm", "expand-all", "interchange-map"]
    assert steps[0]["labels"] == {"conv": "conv1", "mid": "conv1_out",
                                  "bn": "bn1"}
    assert steps[2]["params"] == {"first": 1, "second": 3}

    text = recipe.to_json()
    doc = json.loads(text)
    assert doc["format"] == "weir-recipe" and len(doc["steps"]) == 3
    assert weir.Recipe.parse(text).to_json() == text
    recipe.save(tmp_path / "r.json")
    loaded = weir.Recipe.load(tmp_path / "r.json")
    assert loaded.to_json() == text

    fresh = load_cnn()
    fresh.replay(loaded)
    assert fresh.hash == ws.hash
    assert len(fresh.history) == 4
    assert [h.hash for h in fresh.history] == [h.hash for h in ws.history]

    # Recipe of a partial history: only up to the current version.
    ws.undo()
    assert len(ws.recipe) == 2


def test_replay_is_all_or_nothing():
    ws = load_cnn()
    bad = weir.Recipe.parse(json.dumps({
        "format": "weir-recipe", "version": 1,
        "steps": [{"transformation": "expand-all"},
                  {"transformation": "no-such-step"}]}))
    h = ws.hash
    with pytest.raises(weir.Error, match="no-such-step"):
        ws.replay(bad)
    assert ws.hash == h and len(ws.history) == 1


def test_session_save_and_open(tmp_path, cnn_path):
    ws = weir.Workspace(weir.load(str(cnn_path)))
    assert ws.model_path.endswith("cnn.onnx")
    ws.apply("swap-relu-maxpool", ws.matches("swap-relu-maxpool")[0])
    ws.apply("expand-all")
    ws.save(tmp_path / "plain.weir")
    ws.save(tmp_path / "snap.weir", snapshot=True)
    doc = json.loads((tmp_path / "plain.weir").read_text())
    assert doc["format"] == "weir-session" and doc["hash"] == ws.hash
    assert len(doc["recipe"]["steps"]) == 2

    opened = weir.open_session(tmp_path / "plain.weir")
    assert opened.hash == ws.hash and len(opened.history) == 3
    assert [h.hash for h in opened.history] == [h.hash for h in ws.history]

    # Without the model, only the snapshot can open it.
    cnn_path.unlink()
    with pytest.raises(weir.Error, match="missing"):
        weir.open_session(tmp_path / "plain.weir")
    with pytest.raises(weir.Error, match="snapshot"):
        weir.open_session(tmp_path / "snap.weir")
    snap = weir.open_session(tmp_path / "snap.weir", use_snapshot=True)
    assert snap.hash == ws.hash
    assert snap.program.name == "weir_cnn"
    out = snap.compile(threads=1).run(weir.random_inputs(snap.program, seed=1))
    ref = ws.compile(threads=1).run(weir.random_inputs(ws.program, seed=1))
    assert np.array_equal(out["logits"], ref["logits"])


def test_compile_checked_guards_every_access_and_agrees(cnn_path):
    ws = weir.Workspace(weir.load(str(cnn_path)))
    inputs = weir.random_inputs(ws.program, seed=3)
    plain = ws.compile(threads=1)
    checked = ws.compile(threads=1, checked=True)
    assert "checked " not in plain.loop_ir
    assert "checked " in checked.loop_ir
    assert np.array_equal(plain.run(inputs)["logits"],
                          checked.run(inputs)["logits"])


def test_open_session_snapshot_when_model_changed(tmp_path, cnn_path):
    ws = weir.Workspace(weir.load(str(cnn_path)))
    ws.apply("expand-all")
    ws.save(tmp_path / "s.weir", snapshot=True)
    shutil.copy(MODELS / "mlp.onnx", cnn_path)  # same name, other model
    with pytest.raises(weir.Error, match="changed"):
        weir.open_session(tmp_path / "s.weir")
    assert weir.open_session(tmp_path / "s.weir", use_snapshot=True).hash == ws.hash


# --- executables -----------------------------------------------------------------

def test_executable_exposes_loop_ir_llvm_ir_and_cpp():
    ws = load_cnn()
    exe = ws.compile(threads=1)
    assert exe.threads == 1
    assert exe.program.node_count > ws.program.node_count  # expanded
    assert any(n.kind == "map-entry" for n in exe.program.states[0].nodes)
    assert ws.program.node_count == 41  # compiling expands a copy
    for text in (exe.loop_ir, exe.llvm_ir, exe.optimized_llvm_ir, exe.cpp()):
        assert isinstance(text, str) and len(text) > 1000
    assert "weir_cnn" in exe.loop_ir and "weir_cnn" in exe.cpp()
    # The LLVM IR is that of the pieces the program was compiled in.
    assert "define void @weir_piece_" in exe.llvm_ir
    assert "weir_piece_" in exe.optimized_llvm_ir
    assert "conv1" in exe.loop_ir and "relu1" in exe.loop_ir
    assert "define" in exe.llvm_ir
    assert "extern \"C\"" in exe.cpp()
    assert exe.compile_seconds >= 0


def test_compile_module_function_and_executable_program_are_equivalent():
    p = weir.load(str(MODELS / "cnn.onnx"))
    inputs = weir.random_inputs(p, seed=4)
    a = weir.compile(p, threads=1).run(inputs)["logits"]
    b = weir.Workspace(p).compile(threads=1).run(inputs)["logits"]
    assert np.array_equal(a, b)


def test_run_in_two_threads_gives_the_single_threaded_results():
    exe = load_cnn().compile(threads=1)
    rng = np.random.default_rng(0)
    xs = [rng.random((1, 3, 32, 32), dtype=np.float32) for _ in range(2)]
    expected = [exe.run({"input": x})["logits"].copy() for x in xs]
    assert not np.array_equal(expected[0], expected[1])
    results = [[], []]
    errors = []
    start = threading.Barrier(2)

    def work(i):
        try:
            start.wait()
            for _ in range(20):
                results[i].append(exe.run({"input": xs[i]})["logits"])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    for i in range(2):
        assert len(results[i]) == 20
        for r in results[i]:
            assert np.array_equal(r, expected[i])


def test_run_releases_the_gil(tmp_path):
    # A long run (a 384^3 MatMul, pure loops) in one thread; another thread
    # counts while it runs. With the switch interval at 100 s the counting
    # thread only gets the interpreter when run() releases it.
    n = 384
    make_onnx(tmp_path / "mm.onnx", [helper.make_node("MatMul", ["a", "b"], ["c"])],
              [("a", TensorProto.FLOAT, [n, n]), ("b", TensorProto.FLOAT, [n, n])],
              [("c", TensorProto.FLOAT, [n, n])])
    exe = weir.compile(weir.load(str(tmp_path / "mm.onnx")), threads=1,
                       impl={"MatMul": "pure"})
    a = np.random.default_rng(1).random((n, n), dtype=np.float32)
    counter = [0]
    seen = []
    done = threading.Event()
    result = {}

    def worker():
        try:
            before = counter[0]
            result.update(exe.run({"a": a, "b": a}))
            seen.append((before, counter[0]))
        finally:
            done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(100)
    try:
        t = threading.Thread(target=worker)
        t.start()
        deadline = time.monotonic() + 60
        while not done.is_set() and time.monotonic() < deadline:
            counter[0] += 1
            time.sleep(0.0001)
        t.join(60)
    finally:
        sys.setswitchinterval(old)
    ((before, after),) = seen
    assert after - before > 10, "the other thread never ran during run()"
    assert np.allclose(result["c"], a @ a, rtol=1e-4, atol=1e-3)
