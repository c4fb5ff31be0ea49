"""numpy in and out: inputs are not modified and any layout or safely
castable dtype gives the same result, outputs are ordinary writable arrays
that outlive the executable, constants are read-only views of the weights,
seeded random inputs, and integer and bool data."""

import gc

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import weir
from conftest import MODELS, make_onnx

CNN = str(MODELS / "cnn.onnx")


@pytest.fixture(scope="module")
def cnn_exe():
    return weir.compile(weir.load(CNN), threads=1)


@pytest.fixture
def x():
    return np.random.default_rng(7).random((1, 3, 32, 32), dtype=np.float32)


def logits(exe, value):
    return exe.run({"input": value})["logits"]


def test_run_does_not_modify_its_input(cnn_exe, x):
    before = x.copy()
    flags = (x.flags.c_contiguous, x.flags.writeable)
    out = logits(cnn_exe, x)
    assert np.array_equal(x, before)
    assert (x.flags.c_contiguous, x.flags.writeable) == flags
    assert not np.shares_memory(out, x)


def test_read_only_input_is_accepted(cnn_exe, x):
    expected = logits(cnn_exe, x)
    ro = x.copy()
    ro.flags.writeable = False
    assert np.array_equal(logits(cnn_exe, ro), expected)


def test_non_contiguous_inputs_give_the_contiguous_result(cnn_exe, x):
    expected = logits(cnn_exe, x)
    # Same values, other layouts: Fortran order, a transposed view, a
    # strided slice of a larger array, negative strides, a broadcast.
    fortran = np.asfortranarray(x)
    assert not fortran.flags.c_contiguous
    transposed = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    assert not transposed.flags.c_contiguous
    wide = np.zeros((1, 3, 32, 64), np.float32)
    wide[..., ::2] = x
    sliced = wide[..., ::2]
    assert not sliced.flags.c_contiguous
    flipped = np.ascontiguousarray(x[..., ::-1])[..., ::-1]
    assert flipped.strides[-1] < 0
    for variant in (fortran, transposed, sliced, flipped):
        assert np.array_equal(variant, x)
        assert np.array_equal(logits(cnn_exe, variant), expected)
    row = np.random.default_rng(1).random((1, 1, 1, 32), dtype=np.float32)
    broadcast = np.broadcast_to(row, (1, 3, 32, 32))
    assert broadcast.strides[1] == 0
    assert np.array_equal(logits(cnn_exe, broadcast),
                          logits(cnn_exe, np.ascontiguousarray(broadcast)))


def test_other_float_dtypes_are_converted(cnn_exe, x):
    expected = logits(cnn_exe, x)
    as64 = x.astype(np.float64)
    assert np.array_equal(logits(cnn_exe, as64), expected)
    assert as64.dtype == np.float64  # not converted in place
    big_endian = x.astype(">f4")
    assert np.array_equal(logits(cnn_exe, big_endian), expected)
    half = x.astype(np.float16)
    assert np.array_equal(logits(cnn_exe, half),
                          logits(cnn_exe, half.astype(np.float32)))
    # Nested lists are arrays too (float64, converted).
    assert np.array_equal(logits(cnn_exe, x.tolist()), expected)


def test_outputs_are_writable_arrays_with_the_right_dtype_and_shape(cnn_exe, x):
    out = cnn_exe.run({"input": x})
    assert list(out) == ["logits"]
    y = out["logits"]
    assert type(y) is np.ndarray
    assert y.dtype == np.float32 and y.shape == (1, 10)
    assert y.flags.writeable and y.flags.c_contiguous
    expected = y.copy()
    y[0, 0] = 1234.5
    assert y[0, 0] == np.float32(1234.5)
    # Writing to one result does not change the next run's.
    again = logits(cnn_exe, x)
    assert np.array_equal(again, expected)
    assert not np.shares_memory(again, y)


def test_outputs_survive_the_executable_and_workspace(x):
    ws = weir.Workspace(weir.load(CNN))
    ws.apply("expand-all")
    exe = ws.compile(threads=1)
    y = logits(exe, x)
    expected = y.copy()
    y2 = exe.run({"input": x * 2})["logits"]
    expected2 = y2.copy()
    del exe, ws
    gc.collect()
    # Allocate and run something else over the freed memory.
    other = weir.compile(weir.load(CNN), threads=1)
    for _ in range(3):
        logits(other, -x)
    gc.collect()
    assert np.array_equal(y, expected) and np.array_equal(y2, expected2)
    y += 1  # still writable
    assert np.array_equal(y, expected + 1)


def test_container_value_is_the_onnx_initializer_read_only():
    program = weir.load(CNN)
    model = onnx.load(CNN)
    assert len(model.graph.initializer) > 0
    for init in model.graph.initializer:
        expected = numpy_helper.to_array(init)
        c = program.container(init.name)
        assert c.is_constant
        value = c.value()
        assert isinstance(value, np.ndarray)
        assert value.dtype == expected.dtype and value.shape == expected.shape
        assert np.array_equal(value, expected)
        assert not value.flags.writeable
        assert c.nbytes == expected.nbytes
    w = program.container("conv1.weight").value()
    with pytest.raises(ValueError):
        w[0, 0, 0, 0] = 1.0
    with pytest.raises(ValueError):
        w.flags.writeable = True
    assert program.container("relu1_out").value() is None
    assert program.container("input").value() is None


def test_container_value_outlives_the_program():
    program = weir.load(CNN)
    w = program.container("fc.weight").value()
    expected = w.copy()
    del program
    gc.collect()
    weir.load(CNN)  # reuses freed memory, if it was freed
    assert np.array_equal(w, expected)


def test_random_inputs_are_seeded():
    program = weir.load(CNN)
    a = weir.random_inputs(program, seed=1)
    b = weir.random_inputs(weir.load(CNN), seed=1)
    c = weir.random_inputs(program, seed=2)
    assert list(a) == ["input"]
    x = a["input"]
    assert x.dtype == np.float32 and x.shape == (1, 3, 32, 32)
    assert x.min() >= -1 and x.max() < 1 and x.std() > 0.3
    assert np.array_equal(x, b["input"])
    assert not np.array_equal(x, c["input"])
    assert np.array_equal(weir.random_inputs(program)["input"],
                          weir.random_inputs(program, seed=0)["input"])
    # What verify() draws: the same program on the same seed agrees.
    exe = weir.compile(program, threads=1)
    assert np.array_equal(exe.run(a)["logits"], exe.run(b)["logits"])


def int_and_bool_model(path):
    return make_onnx(
        path,
        [helper.make_node("Add", ["a", "b"], ["c"]),
         helper.make_node("Cast", ["c"], ["nz"], to=TensorProto.BOOL),
         helper.make_node("Not", ["nz"], ["zero"]),
         helper.make_node("Xor", ["zero", "flag"], ["mixed"])],
        [("a", TensorProto.INT64, [2, 3]), ("b", TensorProto.INT64, [2, 3]),
         ("flag", TensorProto.BOOL, [2, 3])],
        [("c", TensorProto.INT64, [2, 3]), ("zero", TensorProto.BOOL, [2, 3]),
         ("mixed", TensorProto.BOOL, [2, 3])])


def test_int64_and_bool_round_trip(tmp_path):
    program = weir.load(str(int_and_bool_model(tmp_path / "ib.onnx")))
    assert [program.container(n).dtype for n in ("a", "flag", "c", "zero")] == [
        "i64", "bool", "i64", "bool"]
    exe = weir.compile(program, threads=1)
    a = np.array([[1, -2, 3], [2**40, 0, -(2**62)]], np.int64)
    b = np.array([[-1, 2, 0], [1, 0, 5]], np.int64)
    flag = np.array([[True, False, True], [False, False, True]])
    out = exe.run({"a": a, "b": b, "flag": flag})
    assert out["c"].dtype == np.int64 and out["zero"].dtype == np.bool_
    assert out["mixed"].dtype == np.bool_
    assert np.array_equal(out["c"], a + b)
    assert np.array_equal(out["zero"], (a + b) == 0)
    assert np.array_equal(out["mixed"], ((a + b) == 0) ^ flag)
    # int32 widens safely to int64; float does not become int.
    out32 = exe.run({"a": a, "b": b.astype(np.int32), "flag": flag})
    assert np.array_equal(out32["c"], a + b)
    with pytest.raises(weir.Error, match="input 'a'.*float64.*i64"):
        exe.run({"a": a.astype(np.float64), "b": b, "flag": flag})
    with pytest.raises(weir.Error, match="input 'flag'.*bool"):
        exe.run({"a": a, "b": b, "flag": flag.astype(np.int64)})
    # Seeded random integers and bools have the program's dtypes.
    r = weir.random_inputs(program, seed=5)
    assert r["a"].dtype == np.int64 and r["flag"].dtype == np.bool_
    assert r["a"].min() >= 0 and r["a"].max() < 10
    assert np.array_equal(exe.run(r)["c"], r["a"] + r["b"])


def test_identity_output_is_a_copy_of_the_input(tmp_path):
    path = make_onnx(tmp_path / "id.onnx",
                     [helper.make_node("Identity", ["x"], ["y"])],
                     [("x", TensorProto.FLOAT, [4, 5])],
                     [("y", TensorProto.FLOAT, [4, 5])])
    exe = weir.compile(weir.load(str(path)), threads=1)
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    y = exe.run({"x": x})["y"]
    assert np.array_equal(y, x) and not np.shares_memory(x, y)
    y[0, 0] = -1
    assert x[0, 0] == 0
    xt = x.T.copy().T  # Fortran layout
    assert np.array_equal(exe.run({"x": xt})["y"], x)


def symbolic_relu(path):
    return make_onnx(path, [helper.make_node("Relu", ["x"], ["y"])],
                     [("x", TensorProto.FLOAT, ["N", 4])],
                     [("y", TensorProto.FLOAT, ["N", 4])])


def test_symbolic_batch_size_from_the_input_or_symbols(tmp_path):
    program = weir.load(str(symbolic_relu(tmp_path / "sym.onnx")))
    assert program.symbols == ["N"]
    assert program.container("x").shape == ["N", 4]
    assert program.container("x").nbytes == "N*16"
    exe = weir.compile(program, threads=1)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(exe.run({"x": x})["y"], np.maximum(x, 0))
    assert np.array_equal(exe.run({"x": x}, symbols={"N": 3})["y"],
                          np.maximum(x, 0))
    with pytest.raises(weir.Error, match="'N'"):
        exe.run({"x": x}, symbols={"N": 2})
    assert weir.random_inputs(program, seed=1, dims={"N": 5})["x"].shape == (5, 4)


def test_random_inputs_size_unbound_symbols_as_one(tmp_path):
    # Documented: "`dims` sizes symbolic dimensions (default 1)", as
    # verify() does.
    program = weir.load(str(symbolic_relu(tmp_path / "sym.onnx")))
    drawn = weir.random_inputs(program, seed=4)
    assert drawn["x"].shape == (1, 4)
    assert np.array_equal(drawn["x"],
                          weir.random_inputs(program, seed=4, dims={"N": 1})["x"])
