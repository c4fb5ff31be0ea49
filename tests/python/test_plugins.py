"""Plugin transformations: the three shipped ones, user plugins (good, broken,
slow), discovery and the command line's --plugins."""

import json
import textwrap
import time

import numpy as np
import pytest
from onnx import TensorProto, helper

import weir
from conftest import (MODELS, SOURCE, make_onnx, run_cli, run_python)


def library_ops(program):
    return [n.op for s in program.states for n in s.nodes if n.kind == "library"]


def write_plugin(folder, name, body):
    path = folder / name
    path.write_text("import weir\n\n" + textwrap.dedent(body))
    return path


def assert_unchanged(ws, h, n):
    assert ws.hash == h
    assert len(ws.history) == n
    assert ws.current == n - 1


# --- shipped plugins -------------------------------------------------------------

def test_shipped_plugins_are_registered():
    shipped = weir.plugins()
    for pid, file in [("fuse-erf-gelu", "fuse_erf_gelu.py"),
                      ("swap-relu-maxpool", "swap_relu_maxpool.py"),
                      ("interchange-map", "interchange_map.py")]:
        assert shipped[pid] == str(SOURCE / "plugins" / file)
        assert weir._weir._plugin_source(pid) == shipped[pid]
    assert weir._weir._plugin_source("expand-all") is None


def test_fuse_erf_gelu_on_the_transformer():
    ws = weir.Workspace(weir.load(str(MODELS / "transformer.onnx")))
    h0 = ws.hash
    before = ws.program.analysis().bytes_moved
    assert "Erf" in library_ops(ws.program)
    (m,) = ws.matches("fuse-erf-gelu")
    assert ws.program.states[0].node(m["erf"]).op == "Erf"
    ws.apply("fuse-erf-gelu", m)
    ops = library_ops(ws.program)
    assert "Erf" not in ops and ops.count("Gelu") == 1
    gelu = next(n for n in ws.program.states[0].nodes if n.op == "Gelu")
    assert gelu.attributes == {"approximate": "none"}
    assert gelu.label.endswith("/Gelu")
    assert ws.program.validate() == []
    assert ws.program.analysis().bytes_moved < before
    report = ws.verify(seed=0)
    assert report.ok
    assert report.tolerance == (False, 1e-6, 1e-7)
    ws.undo()
    assert ws.hash == h0 and "Erf" in library_ops(ws.program)


def test_swap_relu_maxpool_on_the_cnn_is_bit_identical():
    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    h0 = ws.hash
    before = ws.program.analysis()
    (m,) = ws.matches("swap-relu-maxpool")
    assert (m["relu"], m["mid"], m["pool"]) == (12, 13, 14)
    ws.apply("swap-relu-maxpool", m)
    after = ws.program.analysis()
    assert after.flops < before.flops
    assert before.flops - after.flops == 16 * 32 * 32 - 16 * 16 * 16
    assert after.bytes_moved < before.bytes_moved
    # The MaxPool now feeds the Relu.
    state = ws.program.states[0]
    (pool_out,) = state.out_edges(14)
    (into_relu,) = state.out_edges(pool_out.dst)
    assert into_relu.dst == 12
    assert ws.program.container(pool_out.container).shape == [1, 16, 16, 16]
    report = ws.verify(seed=0)
    assert report.ok
    assert report.tolerance[0] is True
    assert all(o.max_abs == 0 for o in report.outputs)
    ws.undo()
    assert ws.hash == h0


def relu_pool_and_more(path):
    """Relu whose output feeds a MaxPool and also a Neg."""
    return make_onnx(
        path,
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("MaxPool", ["r"], ["y"], name="pool",
                          kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("Neg", ["r"], ["z"], name="neg")],
        [("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [("y", TensorProto.FLOAT, [1, 2, 2, 2]),
         ("z", TensorProto.FLOAT, [1, 2, 4, 4])])


def test_swap_relu_maxpool_refused_when_relu_output_is_read_elsewhere(tmp_path):
    ws = weir.Workspace(weir.load(str(relu_pool_and_more(tmp_path / "m.onnx"))))
    (m,) = ws.candidates("swap-relu-maxpool")
    r = ws.check("swap-relu-maxpool", m)
    assert not r and "'r'" in r.reason and "elsewhere" in r.reason
    assert list(ws.matches("swap-relu-maxpool")) == []
    h = ws.hash
    with pytest.raises(weir.Error, match="elsewhere"):
        ws.apply("swap-relu-maxpool", m)
    assert_unchanged(ws, h, 1)


def small_relu(path, shape):
    return make_onnx(path, [helper.make_node("Relu", ["x"], ["y"])],
                     [("x", TensorProto.FLOAT, shape)],
                     [("y", TensorProto.FLOAT, shape)])


def map_entries(ws, label_part=""):
    return [n for n in ws.program.states[0].nodes
            if n.kind == "map-entry" and label_part in n.label]


def test_interchange_map_swaps_two_dimensions(tmp_path):
    ws = weir.Workspace(weir.load(str(small_relu(tmp_path / "r.onnx", [3, 5, 7]))))
    ws.apply("expand-all")
    (entry,) = map_entries(ws)
    assert entry.params == ["i0", "i1", "i2"]
    assert entry.ranges == ["0:3", "0:5", "0:7"]
    h = ws.hash
    match = {"state": "main", "map": entry.id}
    assert ws.check("interchange-map", match, first=0, second=2)
    ws.apply("interchange-map", match, first=0, second=2)
    moved = ws.program.states[0].node(entry.id)
    assert moved.params == ["i2", "i1", "i0"]
    assert moved.ranges == ["0:7", "0:5", "0:3"]
    partner = ws.program.states[0].node(moved.partner)
    assert partner.params == moved.params and partner.ranges == moved.ranges
    assert ws.history[-1].params == {"first": 0, "second": 2}
    assert ws.verify(seed=2).ok
    step = ws.verify_step(2, seed=2)  # the interchange alone: bit-identical
    assert step.ok and step.tolerance[0] is True
    assert all(o.max_abs == 0 for o in step.outputs)
    x = np.linspace(-1, 1, 105, dtype=np.float32).reshape(3, 5, 7)
    assert np.array_equal(ws.compile(threads=1).run({"x": x})["y"],
                          np.maximum(x, 0))
    ws.undo()
    assert ws.hash == h


def test_interchange_map_on_the_expanded_cnn():
    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    ws.apply("expand-all")
    (entry,) = map_entries(ws, "bn1.normalize")
    ws.apply("interchange-map", {"state": "main", "map": entry.id})
    assert ws.program.states[0].node(entry.id).params == ["i1", "i0", "i2", "i3"]
    assert ws.verify(seed=0).ok


def test_interchange_map_refuses_a_one_dimensional_map(tmp_path):
    ws = weir.Workspace(weir.load(str(small_relu(tmp_path / "r.onnx", [16]))))
    ws.apply("expand-all")
    (entry,) = map_entries(ws)
    assert len(entry.params) == 1
    match = {"state": "main", "map": entry.id}
    r = ws.check("interchange-map", match)
    assert not r
    assert entry.label in r.reason and "one dimension" in r.reason
    h = ws.hash
    with pytest.raises(weir.Error, match="one dimension"):
        ws.apply("interchange-map", match)
    assert_unchanged(ws, h, 2)


# --- user plugins -------------------------------------------------------------------

GOOD = '''
@weir.transformation(id="test-relabel", tier="movement",
                     summary="Renames a Relu",
                     params=[weir.Param("label", str, "renamed", "new label")])
class Relabel:
    """Gives a Relu node another label (a harmless edit)."""
    pattern = weir.Pattern().node("relu", "library", ops=["Relu"])

    def can_apply(self, program, match, params):
        if not params["label"]:
            return "an empty label is not allowed"
        return True

    def apply(self, editor, match, params):
        editor.set_label(match.state, match["relu"], params["label"])
'''


def test_user_plugin_applies_with_parameters(plugin_dir):
    write_plugin(plugin_dir, "relabel.py", GOOD)
    assert weir.load_plugins([str(plugin_dir)]) == ["test-relabel"]
    assert weir.plugins()["test-relabel"] == str(plugin_dir / "relabel.py")
    info = weir.transformation_info("test-relabel")
    assert info.tier == "movement" and info.summary == "Renames a Relu"
    # The tier is declared once: the description gets it in front.
    assert info.description.startswith(
        "Data movement (tier 3). Gives a Relu node another label")
    assert info.params[0]["name"] == "label"
    assert info.params[0]["default"] == "renamed"
    assert info.roles == ["relu"] and info.exact

    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    h0 = ws.hash
    ms = ws.matches("test-relabel")
    assert [m["relu"] for m in ms] == [12, 26]
    refused = ws.check("test-relabel", ms[0], label="")
    assert not refused and refused.reason == "an empty label is not allowed"
    ws.apply("test-relabel", ms[0], label="first_relu")
    assert ws.program.states[0].node(12).label == "first_relu"
    assert ws.hash != h0
    assert ws.history[1].transformation == "test-relabel"
    assert ws.history[1].params == {"label": "first_relu"}
    assert ws.verify(seed=0).ok
    ws.undo()
    assert ws.hash == h0


def check_failure(ws, transformation, match, *fragments, **params):
    """apply() raises weir.Error naming every fragment; nothing changes."""
    h, n = ws.hash, len(ws.history)
    with pytest.raises(weir.Error) as e:
        ws.apply(transformation, match, **params)
    for f in fragments:
        assert f in str(e.value)
    assert_unchanged(ws, h, n)
    return str(e.value)


@pytest.fixture
def cnn_ws():
    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    ws.apply("fold-batchnorm", ws.matches("fold-batchnorm")[0])
    return ws


def test_plugin_raising_in_apply_fails_the_step(plugin_dir, cnn_ws):
    write_plugin(plugin_dir, "raises.py", '''
        @weir.transformation(id="test-raises", tier="fusion", summary="raises")
        class Raises:
            pattern = weir.Pattern().node("relu", "library", ops=["Relu"])

            def apply(self, editor, match, params):
                editor.set_label(match.state, match["relu"], "half done")
                raise ValueError("kaboom 42")
    ''')
    weir.load_plugins([str(plugin_dir)])
    m = cnn_ws.matches("test-raises")[0]
    msg = check_failure(cnn_ws, "test-raises", m, "test-raises", "ValueError",
                        "kaboom 42")
    assert "apply" in msg
    assert cnn_ws.program.states[0].node(12).label == "relu1"


INVALID = '''
@weir.transformation(id="test-dangling", tier="fusion",
                     summary="removes the access node after a Relu")
class Dangling:
    pattern = weir.Pattern().node("relu", "library", ops=["Relu"])

    def apply(self, editor, match, params):
        (out,) = editor.out_edges(match.state, match["relu"])
        editor.remove_node(match.state, out.dst)


@weir.transformation(id="test-missing-container", tier="fusion",
                     summary="an edge naming a container that is not there")
class MissingContainer:
    pattern = weir.Pattern().node("relu", "library", ops=["Relu"])

    def apply(self, editor, match, params):
        (out,) = editor.out_edges(match.state, match["relu"])
        editor.add_edge(match.state, match["relu"], "Y", out.dst, "",
                        "no_such_container")


@weir.transformation(id="test-unwritten", tier="fusion",
                     summary="removes the Relu; its output is never written")
class Unwritten:
    pattern = weir.Pattern().node("relu", "library", ops=["Relu"])

    def apply(self, editor, match, params):
        editor.remove_node(match.state, match["relu"])
'''


def test_plugin_leaving_a_dangling_connector_is_refused(plugin_dir, cnn_ws):
    write_plugin(plugin_dir, "invalid.py", INVALID)
    weir.load_plugins([str(plugin_dir)])
    m = cnn_ws.matches("test-dangling")[0]
    check_failure(cnn_ws, "test-dangling", m, "test-dangling",
                  "invalid program", "relu1")


def test_plugin_naming_a_missing_container_is_refused(plugin_dir, cnn_ws):
    write_plugin(plugin_dir, "invalid.py", INVALID)
    weir.load_plugins([str(plugin_dir)])
    m = cnn_ws.matches("test-missing-container")[0]
    check_failure(cnn_ws, "test-missing-container", m,
                  "test-missing-container", "no_such_container")


def test_plugin_leaving_a_transient_read_but_never_written_is_refused(
        plugin_dir, cnn_ws):
    # Removing the Relu leaves its output container 'relu1_out' read by the
    # MaxPool but written by nothing: the program reads uninitialized memory
    # (verify() then reports a mismatch). The result must not be accepted.
    write_plugin(plugin_dir, "invalid.py", INVALID)
    weir.load_plugins([str(plugin_dir)])
    m = cnn_ws.matches("test-unwritten")[0]
    check_failure(cnn_ws, "test-unwritten", m, "relu1_out")


def test_plugin_past_its_time_limit_is_stopped(plugin_dir, cnn_ws):
    write_plugin(plugin_dir, "slow.py", '''
        @weir.transformation(id="test-forever", tier="fusion", summary="loops",
                             time_limit=0.5)
        class Forever:
            pattern = weir.Pattern().node("relu", "library", ops=["Relu"])

            def apply(self, editor, match, params):
                while True:
                    pass


        @weir.transformation(id="test-forever-check", tier="fusion",
                             summary="loops in can_apply", time_limit=0.5)
        class ForeverCheck:
            pattern = weir.Pattern().node("relu", "library", ops=["Relu"])

            def can_apply(self, program, match, params):
                while True:
                    pass

            def apply(self, editor, match, params):
                pass
    ''')
    weir.load_plugins([str(plugin_dir)])
    m = cnn_ws.candidates("test-forever")[0]
    start = time.monotonic()
    msg = check_failure(cnn_ws, "test-forever", m, "test-forever", "time limit")
    assert "0.5" in msg
    assert time.monotonic() - start < 5
    start = time.monotonic()
    r = cnn_ws.check("test-forever-check", m)
    assert not r and "test-forever-check" in r.reason
    assert "time limit" in r.reason
    assert time.monotonic() - start < 5
    # No stray PluginTimeLimit arrives later; the workspace keeps working.
    total = 0
    for i in range(300000):
        total += i
    time.sleep(0.3)
    cnn_ws.apply("expand-all")
    assert len(cnn_ws.history) == 3 and cnn_ws.verify(seed=0).ok


def test_plugin_raising_in_can_apply_gives_the_reason(plugin_dir, cnn_ws):
    write_plugin(plugin_dir, "badcheck.py", '''
        @weir.transformation(id="test-bad-check", tier="fusion",
                             summary="raises in can_apply")
        class BadCheck:
            pattern = weir.Pattern().node("relu", "library", ops=["Relu"])

            def can_apply(self, program, match, params):
                raise KeyError("no-such-key-7")

            def apply(self, editor, match, params):
                pass
    ''')
    weir.load_plugins([str(plugin_dir)])
    m = cnn_ws.candidates("test-bad-check")[0]
    r = cnn_ws.check("test-bad-check", m)
    assert not r
    assert "test-bad-check" in r.reason
    assert "KeyError" in r.reason and "no-such-key-7" in r.reason
    assert list(cnn_ws.matches("test-bad-check")) == []
    check_failure(cnn_ws, "test-bad-check", m, "no-such-key-7")


def test_plugin_file_with_a_syntax_error_is_listed_and_skipped(plugin_dir):
    write_plugin(plugin_dir, "a_broken.py", "def oops(:\n    pass\n")
    write_plugin(plugin_dir, "b_fine.py", GOOD)
    with pytest.warns(UserWarning, match="a_broken.py"):
        loaded = weir.load_plugins([str(plugin_dir)])
    assert loaded == ["test-relabel"]  # the next file still loads
    errors = [e for e in weir.plugin_errors()
              if e[0] == str(plugin_dir / "a_broken.py")]
    assert len(errors) == 1
    assert "SyntaxError" in errors[0][1] and "a_broken.py" in errors[0][1]
    # The process goes on: the good plugin works.
    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    ws.apply("test-relabel", ws.matches("test-relabel")[0])
    assert len(ws.history) == 2


def test_plugin_error_location_points_into_the_plugin_file(plugin_dir):
    # The message ends with "(line N of FILE)"; for a syntax error that must
    # be the plugin's line, not a frame inside importlib.
    write_plugin(plugin_dir, "broken.py", "def oops(:\n    pass\n")
    with pytest.warns(UserWarning):
        weir.load_plugins([str(plugin_dir)])
    (message,) = [m for f, m in weir.plugin_errors()
                  if f == str(plugin_dir / "broken.py")]
    assert "importlib" not in message
    assert "line 3" in message  # line 1 is the "import weir" write_plugin adds


def test_plugin_raising_at_import_is_listed(plugin_dir):
    write_plugin(plugin_dir, "raises_at_import.py",
                 "raise ImportError('needs torch')\n")
    with pytest.warns(UserWarning, match="needs torch"):
        assert weir.load_plugins([str(plugin_dir)]) == []
    (message,) = [m for f, m in weir.plugin_errors()
                  if f == str(plugin_dir / "raises_at_import.py")]
    assert "ImportError: needs torch" in message
    assert "raises_at_import.py" in message


def test_reloading_a_plugin_file_replaces_the_plugin(plugin_dir):
    path = write_plugin(plugin_dir, "versioned.py", '''
        @weir.transformation(id="test-versioned", tier="fusion", summary="v1")
        class V:
            pattern = weir.Pattern().node("relu", "library", ops=["Relu"])

            def apply(self, editor, match, params):
                editor.set_label(match.state, match["relu"], "v1")
    ''')
    weir.load_plugins([str(plugin_dir)])
    assert weir.transformation_info("test-versioned").summary == "v1"
    path.write_text(path.read_text().replace('"v1"', '"v2"'))
    weir.load_plugins([str(plugin_dir)])
    assert weir.transformation_info("test-versioned").summary == "v2"
    assert [t.id for t in weir.transformations()].count("test-versioned") == 1
    assert weir.plugins()["test-versioned"] == str(path)
    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    ws.apply("test-versioned", ws.matches("test-versioned")[0])
    assert ws.program.states[0].node(12).label == "v2"


def test_load_plugins_returns_the_ids_a_reload_registers(plugin_dir):
    # "Returns the ids registered" — a reload registers its ids again.
    write_plugin(plugin_dir, "again.py", """
        @weir.transformation(id="test-again", tier="fusion", summary="again")
        class Again:
            def apply(self, editor, match, params):
                pass
    """)
    assert weir.load_plugins([str(plugin_dir)]) == ["test-again"]
    assert weir.load_plugins([str(plugin_dir)]) == ["test-again"]


def test_plugin_errors_forget_a_file_once_it_loads(plugin_dir):
    path = write_plugin(plugin_dir, "fixed_later.py", "def oops(:\n    pass\n")
    for _ in range(2):
        with pytest.warns(UserWarning):
            weir.load_plugins([str(plugin_dir)])
    listed = [f for f, _ in weir.plugin_errors() if f == str(path)]
    assert listed == [str(path)]  # once, however often it failed
    write_plugin(plugin_dir, "fixed_later.py", GOOD)
    assert weir.load_plugins([str(plugin_dir)]) == ["test-relabel"]
    assert str(path) not in [f for f, _ in weir.plugin_errors()]


def test_plugin_id_clashing_with_a_builtin_is_refused(plugin_dir):
    with pytest.raises(weir.Error) as e:
        @weir.transformation(id="expand-all", tier="fusion", summary="clash")
        class Clash:  # noqa: F841
            def apply(self, editor, match, params):
                pass
    assert "expand-all" in str(e.value) and "built-in" in str(e.value)
    info = weir.transformation_info("expand-all")
    assert info.tier == "expansion" and info.summary != "clash"
    assert "expand-all" not in weir.plugins()

    write_plugin(plugin_dir, "clash.py", '''
        @weir.transformation(id="map-fusion", tier="fusion", summary="clash")
        class Clash:
            def apply(self, editor, match, params):
                pass
    ''')
    with pytest.warns(UserWarning, match="built-in"):
        assert weir.load_plugins([str(plugin_dir)]) == []
    (message,) = [m for f, m in weir.plugin_errors()
                  if f == str(plugin_dir / "clash.py")]
    assert "map-fusion" in message and "built-in" in message
    assert weir.transformation_info("map-fusion").summary != "clash"


# --- discovery ----------------------------------------------------------------------

def discovery_plugin(folder, pid):
    folder.mkdir(parents=True, exist_ok=True)
    write_plugin(folder, pid.replace("-", "_") + ".py", f'''
        @weir.transformation(id="{pid}", tier="movement", summary="{pid}")
        class P:
            def apply(self, editor, match, params):
                pass
    ''')


def test_discovery_from_the_plugin_path_and_home(tmp_path):
    d1, d2 = tmp_path / "d1", tmp_path / "d2"
    home = tmp_path / "home"
    user = home / ".local" / "share" / "weir" / "plugins"
    discovery_plugin(d1, "disc-one")
    discovery_plugin(d2, "disc-two")
    discovery_plugin(user, "disc-home")
    code = ("import json, weir\n"
            "print(json.dumps([weir.plugins(), weir.plugin_paths(),\n"
            "                  [t.id for t in weir.transformations()]]))\n")
    run = run_python(code, tmp_path, home=home, WEIR_PLUGIN_PATH=f"{d1}:{d2}")
    assert run.returncode == 0, run.stderr
    found, paths, ids = json.loads(run.stdout)
    assert found["disc-one"] == str(d1 / "disc_one.py")
    assert found["disc-two"] == str(d2 / "disc_two.py")
    assert found["disc-home"] == str(user / "disc_home.py")
    assert {"fuse-erf-gelu", "swap-relu-maxpool", "interchange-map"} <= set(found)
    assert paths == [str(SOURCE / "plugins"), str(d1), str(d2), str(user)]
    assert {"disc-one", "disc-two", "disc-home"} <= set(ids)

    run = run_python(code, tmp_path, home=home, WEIR_PLUGIN_PATH=f"{d1}:{d2}",
                     WEIR_NO_PLUGINS="1")
    assert run.returncode == 0, run.stderr
    found, _, ids = json.loads(run.stdout)
    assert found == {}
    assert not {"disc-one", "disc-two", "disc-home", "swap-relu-maxpool",
                "fuse-erf-gelu", "interchange-map"} & set(ids)
    assert "expand-all" in ids and "map-fusion" in ids


# --- the command line ----------------------------------------------------------------

CLI_PLUGIN = '''
@weir.transformation(id="cli-relabel", tier="movement",
                     summary="Relabel a Relu from the command line")
class CliRelabel:
    pattern = weir.Pattern().node("relu", "library", ops=["Relu"])

    def apply(self, editor, match, params):
        editor.set_label(match.state, match["relu"], "cli_" + str(match["relu"]))
'''


def test_cli_transforms_lists_a_plugin_from_a_folder(tmp_path):
    folder = tmp_path / "cli_plugins"
    folder.mkdir()
    write_plugin(folder, "cli_relabel.py", CLI_PLUGIN)
    run = run_cli(["transforms", "--plugins", folder], tmp_path)
    assert run.returncode == 0, run.stderr
    line = next(l for l in run.stdout.splitlines() if "cli-relabel" in l)
    assert line.split()[0] == "movement"
    assert "Relabel a Relu from the command line" in line
    assert "swap-relu-maxpool" in run.stdout and "expand-all" in run.stdout
    without = run_cli(["transforms"], tmp_path)
    assert without.returncode == 0 and "cli-relabel" not in without.stdout


def test_cli_optimize_with_a_plugin_step(tmp_path, cnn_path, plugin_dir):
    folder = plugin_dir
    write_plugin(folder, "cli_relabel.py", CLI_PLUGIN)
    weir.load_plugins([str(folder)])
    ws = weir.Workspace(weir.load(str(cnn_path)))
    ws.apply("cli-relabel", ws.matches("cli-relabel")[1])
    ws.apply("swap-relu-maxpool", ws.matches("swap-relu-maxpool")[0])
    ws.apply("expand-all")
    ws.recipe.save(tmp_path / "R.json")

    run = run_cli(["optimize", cnn_path, "--recipe", "R.json", "--plugins",
                   folder, "-o", "S.weir"], tmp_path)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert any(l.split()[:3] == ["step", "1", "cli-relabel"] for l in lines)
    assert any(l.split()[:3] == ["step", "2", "swap-relu-maxpool"]
               for l in lines)
    assert ws.hash in lines[-2] and "3 steps" in lines[-2]
    assert (tmp_path / "S.weir").exists()
    session = weir.open_session(tmp_path / "S.weir")
    assert session.hash == ws.hash
    assert [h.hash for h in session.history] == [h.hash for h in ws.history]
    session.revert(1)
    assert session.program.states[0].node(26).label == "cli_26"

    # Without the folder the step is unknown: an error, no session.
    run = run_cli(["optimize", cnn_path, "--recipe", "R.json", "-o",
                   "T.weir"], tmp_path)
    assert run.returncode != 0
    assert "cli-relabel" in run.stderr
    assert not (tmp_path / "T.weir").exists()


def test_plugin_id_taken_by_another_plugin_file_is_refused(plugin_dir):
    body = '''
        @weir.transformation(id="test-twice", tier="fusion", summary="%s")
        class Twice:
            def apply(self, editor, match, params):
                pass
    '''
    write_plugin(plugin_dir, "a_first.py", body % "first")
    write_plugin(plugin_dir, "b_second.py", body % "second")
    with pytest.warns(UserWarning):
        assert weir.load_plugins([str(plugin_dir)]) == ["test-twice"]
    assert weir.transformation_info("test-twice").summary == "first"
    (message,) = [m for f, m in weir.plugin_errors()
                  if f == str(plugin_dir / "b_second.py")]
    assert "taken by the plugin in" in message and "a_first.py" in message


def test_unregister_removes_a_plugin_everywhere(plugin_dir):
    write_plugin(plugin_dir, "gone.py", GOOD)
    assert weir.load_plugins([str(plugin_dir)]) == ["test-relabel"]
    assert weir.unregister("test-relabel") is True
    assert "test-relabel" not in weir.plugins()
    assert "test-relabel" not in [t.id for t in weir.transformations()]
    with pytest.raises(weir.Error, match="test-relabel"):
        weir.transformation_info("test-relabel")
    assert weir.unregister("test-relabel") is False
