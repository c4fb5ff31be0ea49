"""Review fixes: a plugin file that fails leaves nothing registered, a reload
drops the plugins a file no longer defines, a missing plugin folder given
explicitly is reported, misaligned numpy inputs are copied, and input names
must be strings."""

import sys
import textwrap
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

import weir
from conftest import make_onnx

registry = sys.modules["weir.plugins"]  # weir.plugins is the function


def write_plugin(folder, name, body):
    path = folder / name
    path.write_text("import weir\n" + body)
    return path


def plugin_class(pid, summary="test"):
    return textwrap.dedent(f'''
        @weir.transformation(id="{pid}", tier="fusion", summary="{summary}")
        class Plugin_{pid.replace("-", "_")}:
            def apply(self, editor, match, params):
                pass
    ''')


def transformation_ids():
    return [t.id for t in weir.transformations()]


# --- plugins -----------------------------------------------------------------

def test_plugin_file_raising_after_a_registration_leaves_nothing(plugin_dir):
    path = write_plugin(plugin_dir, "half.py", plugin_class("test-half")
                        + "\nraise RuntimeError('broken after the class')\n")
    with pytest.warns(UserWarning, match="broken after the class"):
        loaded = weir.load_plugins([str(plugin_dir)])
    assert "test-half" not in weir.plugins()
    assert "test-half" not in transformation_ids()
    assert weir._weir._plugin_source("test-half") is None
    assert loaded == []
    (message,) = [m for f, m in weir.plugin_errors() if f == str(path)]
    assert "RuntimeError: broken after the class" in message

    # Fixed, the file loads, and its plugin is registered.
    write_plugin(plugin_dir, "half.py", plugin_class("test-half"))
    assert weir.load_plugins([str(plugin_dir)]) == ["test-half"]
    assert weir.plugins()["test-half"] == str(path)
    assert str(path) not in [f for f, _ in weir.plugin_errors()]


def test_reload_that_fails_drops_what_it_registered_and_keeps_the_rest(
        plugin_dir):
    path = write_plugin(plugin_dir, "two.py", plugin_class("test-one")
                        + plugin_class("test-two"))
    assert weir.load_plugins([str(plugin_dir)]) == ["test-one", "test-two"]
    write_plugin(plugin_dir, "two.py", plugin_class("test-one")
                 + "\nraise ValueError('half way')\n")
    with pytest.warns(UserWarning, match="half way"):
        loaded = weir.load_plugins([str(plugin_dir)])
    assert "test-one" not in weir.plugins()
    assert "test-one" not in transformation_ids()
    assert loaded == []
    # Registered by the earlier load and not touched by this one.
    assert weir.plugins()["test-two"] == str(path)


def test_reload_drops_a_renamed_plugin(plugin_dir):
    path = write_plugin(plugin_dir, "renamed.py", plugin_class("test-old-name"))
    assert weir.load_plugins([str(plugin_dir)]) == ["test-old-name"]
    assert "test-old-name" in transformation_ids()

    write_plugin(plugin_dir, "renamed.py", plugin_class("test-new-name"))
    assert weir.load_plugins([str(plugin_dir)]) == ["test-new-name"]
    assert "test-old-name" not in weir.plugins()
    assert "test-old-name" not in transformation_ids()
    assert weir._weir._plugin_source("test-old-name") is None
    assert weir.plugins()["test-new-name"] == str(path)
    assert "test-new-name" in transformation_ids()


def test_reload_keeps_plugins_of_other_files(plugin_dir):
    write_plugin(plugin_dir, "a.py", plugin_class("test-a"))
    write_plugin(plugin_dir, "b.py", plugin_class("test-b"))
    assert weir.load_plugins([str(plugin_dir)]) == ["test-a", "test-b"]
    write_plugin(plugin_dir, "b.py", plugin_class("test-b2"))
    assert weir.load_plugins([str(plugin_dir)]) == ["test-a", "test-b2"]
    assert {"test-a", "test-b2"} <= set(weir.plugins())
    assert "test-b" not in weir.plugins()


def test_missing_plugin_folder_given_explicitly_is_listed(plugin_dir):
    missing = plugin_dir / "not-there"
    with pytest.warns(UserWarning,
                      match="weir: plugin not loaded: .*not-there: no such"):
        assert weir.load_plugins([str(missing), str(plugin_dir)]) == []
    (message,) = [m for f, m in weir.plugin_errors() if f == str(missing)]
    assert message == f"{missing}: no such folder"
    # Reported once, however often it is asked for; forgotten once it exists.
    with pytest.warns(UserWarning):
        weir.load_plugins([str(missing)])
    assert [f for f, _ in weir.plugin_errors()].count(str(missing)) == 1
    missing.mkdir()
    write_plugin(missing, "late.py", plugin_class("test-late"))
    assert weir.load_plugins([str(missing)]) == ["test-late"]
    assert str(missing) not in [f for f, _ in weir.plugin_errors()]


def test_missing_default_plugin_folder_is_silent(plugin_dir, monkeypatch):
    missing = str(plugin_dir / "default-not-there")
    monkeypatch.setattr(registry, "plugin_paths", lambda: [missing])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert weir.load_plugins() == []
    assert missing not in [f for f, _ in weir.plugin_errors()]


# --- numpy inputs ------------------------------------------------------------

@pytest.fixture(scope="module")
def relu_exe(tmp_path_factory):
    path = make_onnx(tmp_path_factory.mktemp("relu") / "relu.onnx",
                     [helper.make_node("Relu", ["x"], ["y"])],
                     [("x", TensorProto.FLOAT, [2, 3])],
                     [("y", TensorProto.FLOAT, [2, 3])])
    return weir.compile(weir.load(str(path)), threads=1)


def test_misaligned_input_gives_the_aligned_result(relu_exe):
    x = np.array([[-1.5, 2.0, -3.0], [4.25, -0.5, 6.0]], dtype=np.float32)
    misaligned = np.frombuffer(b"\0" + x.tobytes(), dtype=np.float32,
                               offset=1).reshape(2, 3)
    assert misaligned.flags.c_contiguous and not misaligned.flags.aligned
    assert np.array_equal(misaligned, x)
    expected = relu_exe.run({"x": x})["y"]
    assert np.array_equal(expected, np.maximum(x, 0))
    assert np.array_equal(relu_exe.run({"x": misaligned})["y"], expected)
    # The zero-filled example of the review, too.
    zeros = np.frombuffer(b"\0" + bytes(24), dtype=np.float32,
                          offset=1).reshape(2, 3)
    assert not zeros.flags.aligned
    assert np.array_equal(relu_exe.run({"x": zeros})["y"],
                          np.zeros((2, 3), np.float32))


@pytest.mark.parametrize("key", [b"x", 0, None, ("x",)])
def test_input_name_that_is_not_a_string_is_a_weir_error(relu_exe, key):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(weir.Error) as e:
        relu_exe.run({key: x})
    message = str(e.value)
    assert "input names are strings" in message
    assert repr(key) in message
