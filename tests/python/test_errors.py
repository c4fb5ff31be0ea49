"""Errors: weir.Error is a RuntimeError whose message names the problem, and
a failure leaves the workspace exactly as it was."""

import json

import numpy as np
import pytest

import weir
from conftest import MODELS


@pytest.fixture
def ws():
    """cnn with one step applied (so undo/redo/revert have room)."""
    w = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    w.apply("fold-batchnorm", w.matches("fold-batchnorm")[0])
    return w


class Unchanged:
    """with Unchanged(ws): ... — the block must not change the workspace."""

    def __init__(self, ws):
        self.ws = ws

    def __enter__(self):
        self.state = (self.ws.hash, len(self.ws.history), self.ws.current,
                      self.ws.recipe.to_json())
        return self

    def __exit__(self, *exc):
        assert (self.ws.hash, len(self.ws.history), self.ws.current,
                self.ws.recipe.to_json()) == self.state
        assert self.ws.program.hash == self.state[0]
        return False


def raises(ws, *fragments, call):
    """call() raises weir.Error whose message has every fragment; the
    workspace is unchanged. Returns the message."""
    with Unchanged(ws):
        with pytest.raises(weir.Error) as e:
            call()
    message = str(e.value)
    for f in fragments:
        assert f in message, message
    return message


def test_error_is_a_runtime_error():
    assert issubclass(weir.Error, RuntimeError)
    with pytest.raises(RuntimeError):
        weir.transformation_info("nope")


# --- loading -------------------------------------------------------------------

def test_loading_a_missing_file(tmp_path):
    path = tmp_path / "missing.onnx"
    with pytest.raises(weir.Error) as e:
        weir.load(str(path))
    assert "missing.onnx" in str(e.value)
    assert "No such file" in str(e.value) or "cannot open" in str(e.value)


def test_loading_a_file_that_is_not_onnx(tmp_path):
    path = tmp_path / "notes.onnx"
    path.write_text("these are not the protobufs you are looking for\n")
    with pytest.raises(weir.Error) as e:
        weir.load(str(path))
    assert "notes.onnx" in str(e.value)
    assert "not a valid ONNX model" in str(e.value)


# --- transformations, matches, parameters ----------------------------------------

def test_unknown_transformation_lists_the_known_ids(ws):
    msg = raises(ws, "no-such-step", call=lambda: ws.apply("no-such-step"))
    for known in ("expand-all", "fold-batchnorm", "map-fusion",
                  "swap-relu-maxpool"):
        assert known in msg
    msg = raises(ws, "no-such-step", "expand-all",
                 call=lambda: ws.check("no-such-step"))
    with Unchanged(ws), pytest.raises(weir.Error, match="no-such-step"):
        ws.matches("no-such-step")


def test_match_with_a_role_the_pattern_lacks(ws):
    raises(ws, "fold-batchnorm", "conv, mid, bn",
           call=lambda: ws.apply("fold-batchnorm",
                                 {"state": "main", "conv": 18, "mid": 19,
                                  "batchnorm": 24}))


def test_match_with_a_node_that_does_not_exist(ws):
    raises(ws, "%999", "bn", call=lambda: ws.apply(
        "fold-batchnorm", {"state": "main", "conv": 18, "mid": 19, "bn": 999}))
    raises(ws, "no state 'other'", call=lambda: ws.apply(
        "fold-batchnorm", {"state": "other", "conv": 18, "mid": 19, "bn": 24}))
    raises(ws, "node id", call=lambda: ws.apply(
        "fold-batchnorm", {"state": "main", "conv": "18", "mid": 19, "bn": 24}))
    raises(ws, "weir.Match", "int",
           call=lambda: ws.apply("fold-batchnorm", 18))


def test_stale_match_after_the_step_it_names_was_applied(ws):
    # history[1] folded conv1/bn1; its match names nodes that are gone.
    stale = ws.history[1].match
    r = ws.check("fold-batchnorm", stale)
    assert not r and r.reason
    raises(ws, "fold-batchnorm", call=lambda: ws.apply("fold-batchnorm", stale))


def test_whole_program_step_given_a_match(ws):
    raises(ws, "whole program", "no roles",
           call=lambda: ws.apply("expand-all", {"state": "main", "node": 4}))


def test_matched_step_given_no_match_says_so(ws):
    # Not "there is no state ''": the message says a match is needed and
    # which roles it binds.
    msg = raises(ws, "fold-batchnorm", call=lambda: ws.apply("fold-batchnorm"))
    assert "match" in msg and "conv" in msg, msg


def test_bad_parameter_name_type_and_value(ws):
    raises(ws, "'nope'", "unknown", "implementations",
           call=lambda: ws.apply("expand-all", nope=1))
    raises(ws, "implementations", "string", "int",
           call=lambda: ws.apply("expand-all", implementations=3))
    raises(ws, "implementations", "list",
           call=lambda: ws.apply("expand-all", implementations=["Conv=pure"]))
    raises(ws, "Conv", "nonsense",
           call=lambda: ws.apply("expand-all", implementations="Conv=nonsense"))


def test_out_of_range_parameter_of_a_plugin(ws):
    ws.apply("expand-all")
    entry = next(n for n in ws.program.states[0].nodes
                 if n.kind == "map-entry" and len(n.params) >= 2)
    match = {"state": "main", "map": entry.id}
    assert ws.check("interchange-map", match)
    msg = raises(ws, "'first'", "-1",
                 call=lambda: ws.apply("interchange-map", match, first=-1))
    assert "outside" in msg or "at least" in msg or "minimum" in msg
    r = ws.check("interchange-map", match, first=-1)
    assert not r and "first" in r.reason
    raises(ws, "'first'", "float",
           call=lambda: ws.apply("interchange-map", match, first=1.5))
    raises(ws, "'first'", "bool",
           call=lambda: ws.apply("interchange-map", match, first=True))
    raises(ws, "positions 7", call=lambda: ws.apply("interchange-map", match,
                                                    first=7))


# --- history ---------------------------------------------------------------------

def test_undo_at_the_first_version_and_redo_at_the_last(ws):
    raises(ws, "nothing to redo", call=ws.redo)
    ws.undo()
    raises(ws, "nothing to undo", call=ws.undo)


def test_revert_out_of_range(ws):
    raises(ws, "no version 2", "2 versions", call=lambda: ws.revert(2))
    raises(ws, "no version 99", call=lambda: ws.revert(99))
    with Unchanged(ws), pytest.raises((weir.Error, TypeError, IndexError)):
        ws.revert(-1)


# --- running ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def exe():
    return weir.compile(weir.load(str(MODELS / "cnn.onnx")), threads=1)


def good_input():
    return np.zeros((1, 3, 32, 32), np.float32)


def test_run_with_a_missing_input(exe):
    with pytest.raises(weir.Error, match="input 'input'.*missing"):
        exe.run({})


def test_run_with_a_wrong_shape(exe):
    with pytest.raises(weir.Error) as e:
        exe.run({"input": np.zeros((1, 3, 32, 31), np.float32)})
    assert "input 'input'" in str(e.value)
    assert "[1, 3, 32, 31]" in str(e.value) and "[1, 3, 32, 32]" in str(e.value)
    with pytest.raises(weir.Error, match="rank 4"):
        exe.run({"input": np.zeros((3, 32, 32), np.float32)})


def test_run_with_a_name_that_is_not_an_input(exe):
    with pytest.raises(weir.Error) as e:
        exe.run({"input": good_input(), "image": good_input()})
    assert "'image' is not an input" in str(e.value)
    assert "inputs: input" in str(e.value)
    with pytest.raises(weir.Error, match="'logits' is not an input"):
        exe.run({"input": good_input(), "logits": np.zeros((1, 10), np.float32)})


@pytest.mark.parametrize("bad", [
    np.full((1, 3, 32, 32), "a"),
    np.zeros((1, 3, 32, 32), np.complex64),
    np.zeros((1, 3, 32, 32), np.complex128),
    np.zeros((1, 3, 32, 32), object),
    np.zeros((1, 3, 32, 32), "datetime64[s]"),
], ids=["str", "complex64", "complex128", "object", "datetime"])
def test_run_with_a_dtype_that_cannot_be_cast(exe, bad):
    with pytest.raises(weir.Error) as e:
        exe.run({"input": bad})
    msg = str(e.value)
    assert "input 'input'" in msg and "f32" in msg
    assert str(bad.dtype) in msg


def test_run_with_something_that_is_not_an_array(exe):
    with pytest.raises(weir.Error, match="input 'input'"):
        exe.run({"input": "a string"})
    with pytest.raises(weir.Error, match="input 'input'"):
        exe.run({"input": None})


def test_run_failures_leave_the_executable_usable(exe):
    with pytest.raises(weir.Error):
        exe.run({"input": np.zeros((2, 3, 32, 32), np.float32)})
    x = np.random.default_rng(3).random((1, 3, 32, 32), dtype=np.float32)
    assert np.array_equal(exe.run({"input": x})["logits"],
                          exe.run({"input": x})["logits"])


def test_verify_with_bad_inputs_changes_nothing(ws):
    raises(ws, "'image' is not an input",
           call=lambda: ws.verify(inputs={"image": good_input()}))


# --- compile ------------------------------------------------------------------------

def test_compile_for_a_target_that_is_not_available(ws):
    raises(ws, "'gpu'", "not available", "cpu",
           call=lambda: ws.compile(target="gpu"))
    raises(ws, "gemm engine 'fast'", "openblas",
           call=lambda: ws.compile(gemm="fast"))
    with pytest.raises(weir.Error, match="'gpu'"):
        weir.compile(ws.program, target="gpu")


# --- sessions and recipes --------------------------------------------------------

def test_open_session_on_corrupted_files(tmp_path, ws):
    ws.save(tmp_path / "good.weir")
    text = (tmp_path / "good.weir").read_text()

    (tmp_path / "garbage.weir").write_bytes(b"\x00\x01 not json")
    with pytest.raises(weir.Error, match="garbage.weir.*not a Weir session"):
        weir.open_session(tmp_path / "garbage.weir")

    (tmp_path / "cut.weir").write_text(text[: len(text) // 2])
    with pytest.raises(weir.Error, match="cut.weir.*not a Weir session"):
        weir.open_session(tmp_path / "cut.weir")

    (tmp_path / "other.weir").write_text(json.dumps({"format": "something"}))
    with pytest.raises(weir.Error, match="not a Weir session"):
        weir.open_session(tmp_path / "other.weir")

    doc = json.loads(text)
    doc["hash"] = "0123456789abcdef"
    (tmp_path / "hash.weir").write_text(json.dumps(doc))
    with pytest.raises(weir.Error) as e:
        weir.open_session(tmp_path / "hash.weir")
    assert "0123456789abcdef" in str(e.value) and ws.hash in str(e.value)

    doc = json.loads(text)
    doc["recipe"]["steps"][0]["match"]["roles"][2][1] = 999
    (tmp_path / "node.weir").write_text(json.dumps(doc))
    with pytest.raises(weir.Error, match="%999"):
        weir.open_session(tmp_path / "node.weir")

    with pytest.raises(weir.Error, match="missing.weir"):
        weir.open_session(tmp_path / "missing.weir")


def test_truncated_snapshot_session_gives_a_readable_message(tmp_path, ws):
    # A snapshot holds the weights as base64; a truncated one must give a
    # message that names the problem, not one that quotes kilobytes of it.
    ws.save(tmp_path / "snap.weir", snapshot=True)
    text = (tmp_path / "snap.weir").read_text()
    longest = max(text.splitlines(keepends=True), key=len)
    assert len(longest) > 10000  # the weights, one base64 string
    cut = text.index(longest) + len(longest) // 2
    (tmp_path / "cut.weir").write_text(text[:cut])
    with pytest.raises(weir.Error) as e:
        weir.open_session(tmp_path / "cut.weir", use_snapshot=True)
    message = str(e.value)
    assert "cut.weir" in message and "not a Weir session" in message
    assert len(message) < 1000, f"{len(message)} characters"


def test_bad_recipes(tmp_path, ws):
    with pytest.raises(weir.Error, match="not valid JSON"):
        weir.Recipe.parse("{not json")
    with pytest.raises(weir.Error):
        weir.Recipe.load(tmp_path / "missing.json")
    with Unchanged(ws), pytest.raises(weir.Error, match="does-not-exist"):
        ws.replay(weir.Recipe.parse(json.dumps({
            "format": "weir-recipe", "version": 1,
            "steps": [{"transformation": "does-not-exist"}]})))


def test_saving_a_workspace_without_a_model_file(tmp_path, ws):
    mem = weir.Workspace(ws.program)
    assert mem.model_path == ""
    with pytest.raises(weir.Error, match="snapshot"):
        mem.save(tmp_path / "x.weir")
    assert not (tmp_path / "x.weir").exists()
    with pytest.raises(weir.Error, match="model"):
        mem.recipe.as_python()
    mem.save(tmp_path / "y.weir", snapshot=True)
    assert weir.open_session(tmp_path / "y.weir", use_snapshot=True).hash == mem.hash


def test_program_lookups_name_what_is_missing(ws):
    p = ws.program
    with pytest.raises(weir.Error, match="'nope'"):
        p.container("nope")
    with pytest.raises(weir.Error, match="'nope'"):
        p.state("nope")
    with pytest.raises(weir.Error, match="%12345"):
        p.states[0].node(12345)
