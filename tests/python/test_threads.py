"""The workspace and the plugin machinery under concurrency and interruption:
calls from several threads take turns; a change from inside a running step
is refused; Ctrl+C in a plugin stops the call; the registry never runs
plugin code under its lock; misused editors and limits give clear errors."""

import subprocess
import sys
import textwrap
import threading
import time

import pytest

import weir
from conftest import MODELS, SOURCE


@pytest.fixture
def registered():
    ids = []
    yield ids
    for pid in ids:
        weir.unregister(pid)


def run_script(tmp_path, code, cwd=None, timeout=60):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, str(script)], cwd=cwd or tmp_path,
                          capture_output=True, text=True, timeout=timeout)


def test_a_change_from_another_thread_waits_for_the_running_step(registered):
    @weir.transformation(id="test-sleepy", tier="fusion", summary="sleeps")
    class Sleepy:
        def can_apply(self, program, match, params):
            time.sleep(0.5)  # releases the GIL, as any I/O would
            return True

        def apply(self, editor, match, params):
            pass
    registered.append("test-sleepy")

    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    ws.apply("expand-all")
    expanded = ws.hash
    outcome = {}

    def step():
        ws.apply("test-sleepy")
        outcome["a"] = time.monotonic()

    t = threading.Thread(target=step)
    t.start()
    time.sleep(0.1)
    start = time.monotonic()
    ws.undo()  # waits until the step has ended, then undoes it
    waited = time.monotonic() - start
    t.join()
    assert "a" in outcome and waited > 0.2
    assert [h.transformation for h in ws.history] == [None, "expand-all",
                                                      "test-sleepy"]
    assert ws.current == 1 and ws.hash == expanded
    assert ws.program.validate() == []


def test_plugin_changing_the_workspace_from_inside_a_step_fails_it(registered):
    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    ws.apply("expand-all")

    @weir.transformation(id="test-meddler", tier="fusion", summary="undoes")
    class Meddler:
        def apply(self, editor, match, params):
            ws.undo()
    registered.append("test-meddler")

    before, n = ws.hash, len(ws.history)
    with pytest.raises(weir.Error, match="test-meddler.*busy"):
        ws.apply("test-meddler")
    assert ws.hash == before and len(ws.history) == n


def test_keyboard_interrupt_in_a_plugin_stops_the_call(registered):
    @weir.transformation(id="test-interrupted", tier="fusion", summary="^C")
    class Interrupted:
        def can_apply(self, program, match, params):
            raise KeyboardInterrupt

        def apply(self, editor, match, params):
            pass
    registered.append("test-interrupted")

    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    before = ws.hash
    with pytest.raises(KeyboardInterrupt):
        ws.apply("test-interrupted")
    with pytest.raises(KeyboardInterrupt):
        ws.matches("test-interrupted")
    assert ws.hash == before and len(ws.history) == 1


def test_observer_removing_itself_keeps_the_others():
    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    heard = []
    ids = {}

    def once(kind, a, b):
        heard.append(("once", kind))
        ws.remove_observer(ids["once"])

    ids["once"] = ws.on_change(once)
    ws.on_change(lambda kind, a, b: heard.append(("always", kind)))
    ws.apply("expand-all")
    ws.undo()
    assert heard == [("once", "applied"), ("always", "applied"),
                     ("always", "undone")]


def test_unregister_runs_plugin_code_outside_the_registry_lock(tmp_path):
    run = run_script(tmp_path, """
        import weir

        @weir.transformation(id="test-has-del", tier="fusion", summary="s")
        class D:
            def apply(self, editor, match, params):
                pass
            def __del__(self):
                print("del sees", "test-has-del" in
                      [t.id for t in weir.transformations()])

        weir.unregister("test-has-del")
        print("done")
    """, timeout=30)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["del", "sees", "False", "done"]


@pytest.mark.parametrize("limit", [float("inf"), 1e10, 0, -1])
def test_time_limits_out_of_range_are_refused(limit):
    with pytest.raises(weir.Error, match="time_limit"):
        @weir.transformation(id="test-limit", tier="fusion", summary="s",
                             time_limit=limit)
        class Limit:
            def apply(self, editor, match, params):
                pass
    assert "test-limit" not in weir.plugins()


def test_editor_kept_past_apply_refuses_edits(registered):
    kept = []

    @weir.transformation(id="test-keeper", tier="fusion", summary="keeps")
    class Keeper:
        def apply(self, editor, match, params):
            kept.append(editor)
    registered.append("test-keeper")

    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    ws.apply("test-keeper")
    with pytest.raises(weir.Error, match="apply\\(\\) has ended"):
        kept[0].add_container("late", "f32", [1])
    with pytest.raises(weir.Error, match="apply\\(\\) has ended"):
        kept[0].program


def test_cli_imports_nothing_from_the_current_folder(tmp_path, cli):
    (tmp_path / "warnings.py").write_text(
        "open('hijacked', 'w').write('yes')\n")
    run = subprocess.run([cli, "transforms"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "expand-all" in run.stdout
    assert not (tmp_path / "hijacked").exists()


def test_cli_commands_on_a_session_with_a_plugin_step(tmp_path, cli):
    ws = weir.Workspace(weir.load(str(MODELS / "cnn.onnx")))
    (match,) = ws.matches("swap-relu-maxpool")
    ws.apply("swap-relu-maxpool", match)
    ws.save(str(tmp_path / "s.weir"))
    for command in (["validate"], ["inspect"], ["print"]):
        run = subprocess.run([cli] + command + [str(tmp_path / "s.weir")],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, (command, run.stderr)
