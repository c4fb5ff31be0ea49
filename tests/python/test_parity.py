"""Python and the command line agree: the same recipe gives the same program
hash through ws.replay and `weir optimize`, the auto recipe too, and the
script recipe.as_python() writes reproduces the session."""

import json
import textwrap

import pytest

import weir
from conftest import MODELS, run_cli, run_python


def hand_recipe(ws):
    """A recipe with every kind of step: a matched C++ step, a plugin, a
    whole-program step with a parameter, a movement with parameters."""
    ws.apply("fold-batchnorm", ws.matches("fold-batchnorm")[1])
    ws.apply("swap-relu-maxpool", ws.matches("swap-relu-maxpool")[0])
    ws.apply("expand-all", implementations="Conv=pure")
    entry = next(n for n in ws.program.states[0].nodes
                 if n.kind == "map-entry" and n.label == "residual_add.map")
    ws.apply("interchange-map", {"state": "main", "map": entry.id},
             first=1, second=2)
    for m in ws.matches("map-fusion"):
        ws.apply("map-fusion", m)
    return ws


@pytest.fixture
def recipe_ws(cnn_path):
    return hand_recipe(weir.Workspace(weir.load(str(cnn_path))))


def test_recipe_through_python_and_the_cli_gives_the_same_hash(tmp_path,
                                                              cnn_path,
                                                              recipe_ws):
    ws = recipe_ws
    assert len(ws.history) >= 5
    (tmp_path / "R.json").write_text(ws.recipe.to_json())

    # Python: replay on a fresh import.
    fresh = weir.Workspace(weir.load(str(cnn_path)))
    fresh.replay(weir.Recipe.load(tmp_path / "R.json"))
    assert fresh.hash == ws.hash

    # The command line.
    run = run_cli(["optimize", cnn_path, "--recipe", "R.json", "-o", "S.weir"],
                  tmp_path)
    assert run.returncode == 0, run.stderr
    assert f"hash {ws.hash}" in run.stdout
    steps = [l.split()[2] for l in run.stdout.splitlines()
             if l.startswith("step ")]
    assert steps == [h.transformation for h in ws.history[1:]]
    session = weir.open_session(tmp_path / "S.weir")
    assert session.hash == ws.hash
    assert [h.hash for h in session.history] == [h.hash for h in ws.history]
    assert json.loads((tmp_path / "S.weir").read_text())["hash"] == ws.hash

    # And back: the CLI's session saved from Python opens in the CLI.
    ws.save(tmp_path / "P.weir")
    run = run_cli(["matches", "P.weir", "--transform", "map-fusion"], tmp_path)
    assert run.returncode == 0, run.stderr


def test_verify_in_the_cli_agrees(tmp_path, cnn_path, recipe_ws):
    (tmp_path / "R.json").write_text(recipe_ws.recipe.to_json())
    assert recipe_ws.verify(seed=0).ok
    run = run_cli(["optimize", cnn_path, "--recipe", "R.json", "--verify"],
                  tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "verified" in run.stdout


def test_auto_recipe_through_python_and_the_cli(tmp_path, cnn_path):
    ws = weir.Workspace(weir.load(str(cnn_path)))
    n = ws.auto("cpu")
    assert n == len(ws.history) - 1 and n > 0
    run = run_cli(["optimize", cnn_path, "--recipe", "auto", "-o", "A.weir"],
                  tmp_path)
    assert run.returncode == 0, run.stderr
    assert f"hash {ws.hash}" in run.stdout
    session = weir.open_session(tmp_path / "A.weir")
    assert session.hash == ws.hash
    assert [h.transformation for h in session.history] == [
        h.transformation for h in ws.history]


def test_auto_recipe_on_the_transformer(tmp_path):
    model = MODELS / "transformer.onnx"
    ws = weir.Workspace(weir.load(str(model)))
    ws.auto("cpu")
    run = run_cli(["optimize", model, "--recipe", "auto", "-o", "T.weir"],
                  tmp_path)
    assert run.returncode == 0, run.stderr
    assert weir.open_session(tmp_path / "T.weir").hash == ws.hash


def run_recipe_script(ws, tmp_path, **env):
    script = tmp_path / "recipe_script.py"
    script.write_text(ws.recipe.as_python() + "\nprint(ws.hash)\n")
    run = run_python(script, tmp_path, **env)
    assert run.returncode == 0, run.stderr
    return run.stdout.split()[-1]


def test_recipe_as_python_script_reproduces_the_hash(tmp_path, recipe_ws):
    text = recipe_ws.recipe.as_python()
    assert text.count("ws.apply(") == len(recipe_ws.history) - 1
    assert 'implementations="Conv=pure"' in text
    assert "first=1, second=2" in text
    assert run_recipe_script(recipe_ws, tmp_path) == recipe_ws.hash


def test_recipe_as_python_for_another_model_path(tmp_path, recipe_ws):
    copy = tmp_path / "elsewhere" / "model copy.onnx"
    copy.parent.mkdir()
    copy.write_bytes((MODELS / "cnn.onnx").read_bytes())
    text = recipe_ws.recipe.as_python(model=str(copy))
    assert str(copy) in text
    script = tmp_path / "s.py"
    script.write_text(text + "\nprint(ws.hash)\n")
    run = run_python(script, tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[-1] == recipe_ws.hash


KEYWORD_PARAMS = '''
import weir


@weir.transformation(id="test-keyword-params", tier="movement",
                     summary="relabel a Relu",
                     params=[weir.Param("from", str, "a", "prefix"),
                             weir.Param("to", int, 0, "suffix")])
class KeywordParams:
    pattern = weir.Pattern().node("relu", "library", ops=["Relu"])

    def apply(self, editor, match, params):
        editor.set_label(match.state, match["relu"],
                         params["from"] + str(params["to"]))
'''


def test_recipe_script_with_parameters_named_like_python_keywords(
        tmp_path, cnn_path, plugin_dir):
    # "from" and "to" are natural parameter names; the script must still be
    # valid Python (a keyword cannot be a keyword argument).
    (plugin_dir / "keyword_params.py").write_text(textwrap.dedent(KEYWORD_PARAMS))
    weir.load_plugins([str(plugin_dir)])
    ws = weir.Workspace(weir.load(str(cnn_path)))
    ws.apply("test-keyword-params", ws.matches("test-keyword-params")[0],
             **{"from": "x", "to": 3})
    assert ws.program.states[0].node(12).label == "x3"
    text = ws.recipe.as_python()
    compile(text, "recipe.py", "exec")  # SyntaxError when it is not Python
    assert run_recipe_script(ws, tmp_path,
                             WEIR_PLUGIN_PATH=str(plugin_dir)) == ws.hash
