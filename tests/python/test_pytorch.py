"""PyTorch in directly: weir.from_torch and weir.compile_module on modules
built here with seeded weights, compared with PyTorch's own forward."""

import io

import numpy as np
import pytest
import torch

import weir


class SmallCnn(torch.nn.Module):
    """Conv-BN-ReLU, a ShuffleNet-style channel split whose size comes from
    x.size(1) (shape arithmetic in the export), pooling and a classifier."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(4, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        half = x.size(1) // 2
        x = x[:, half:] * 2 + x[:, :half]
        return self.fc(x.mean(dim=(2, 3)))


def seeded(module):
    torch.manual_seed(0)
    for p in module.parameters():
        torch.nn.init.uniform_(p, -0.5, 0.5)
    for m in module.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
    return module.eval()


def test_from_torch_imports_with_parameter_names():
    net = seeded(SmallCnn())
    program = weir.from_torch(net, torch.randn(1, 3, 6, 6))
    assert list(program.inputs) == ["input_0"]
    assert list(program.outputs) == ["output_0"]
    names = set(program.containers)
    assert {"fc.weight", "fc.bias"} <= names, sorted(names)


def test_compile_module_matches_pytorch():
    net = seeded(SmallCnn())
    x = torch.randn(2, 3, 6, 6, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = net(x)
    for recipe in (None, "auto"):
        fast = weir.compile_module(net, x, recipe=recipe, threads=1)
        assert isinstance(fast, torch.nn.Module)
        got = fast(x)
        assert isinstance(got, torch.Tensor)
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=f"recipe {recipe}")
    # Another input through the same compiled module.
    y = torch.randn(2, 3, 6, 6, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        np.testing.assert_allclose(fast(y).numpy(), net(y).numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_transformer_encoder_layer_under_no_grad():
    # Its head split is computed from the input's shape at run time; Weir
    # specializes it at load.
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4,
                                             dim_feedforward=64).eval()
    x = torch.randn(10, 1, 32, generator=torch.Generator().manual_seed(3))
    fast = weir.compile_module(layer, x, threads=1)
    with torch.no_grad():
        np.testing.assert_allclose(fast(x).numpy(), layer(x).numpy(),
                                   rtol=1e-3, atol=1e-4)


class BatchFirstAttention(torch.nn.Module):
    """Self-attention with batch-first inputs, as a ViT writes it: in eval
    mode under no_grad PyTorch 1.13 runs it as one fused operator that
    torch.onnx cannot export."""

    def __init__(self):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]


def test_fused_attention_fast_path_exports_with_grad():
    torch.manual_seed(0)
    net = BatchFirstAttention().eval()
    x = torch.randn(1, 5, 16, generator=torch.Generator().manual_seed(4))
    with pytest.raises(Exception, match="_native_multi_head_attention"):
        with torch.no_grad():
            torch.onnx.export(net, (x,), io.BytesIO(), opset_version=13)
    fast = weir.compile_module(net, x, threads=1)
    with torch.no_grad():
        np.testing.assert_allclose(fast(x).numpy(), net(x).numpy(),
                                   rtol=1e-4, atol=1e-5)


def assert_plain_and_auto_match(net, x):
    """`net` compiled with the plain expansion and after the auto recipe
    gives PyTorch's output on `x`."""
    for recipe in (None, "auto"):
        fast = weir.compile_module(net, x, recipe=recipe, threads=1)
        with torch.no_grad():
            np.testing.assert_allclose(fast(x).numpy(), net(x).numpy(),
                                       rtol=1e-4, atol=1e-5,
                                       err_msg=f"recipe {recipe}")


class Upsampling(torch.nn.Module):
    """A decoder's upsampling as exporters write it: nearest by 2, bilinear
    (align_corners off and on) and bicubic to a fixed size, so Resize with
    constant scales and sizes and four coordinate transformations."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        f = torch.nn.functional.interpolate
        a = f(x, scale_factor=2, mode="nearest")
        b = f(x, scale_factor=2, mode="bilinear", align_corners=False)
        c = f(x, size=(12, 12), mode="bilinear", align_corners=True)
        d = f(x, size=(9, 7), mode="bicubic", align_corners=False)
        return a.sum(dim=(2, 3)) + b.mean(dim=(2, 3)) + c[:, :, ::3, ::3].flatten(2).mean(2) + d.flatten(2)[:, :, :5].sum(2)


def test_upsampling_matches_pytorch():
    torch.manual_seed(0)
    net = Upsampling().eval()
    x = torch.randn(1, 3, 6, 5, generator=torch.Generator().manual_seed(5))
    assert_plain_and_auto_match(net, x)


class Recurrent(torch.nn.Module):
    """A two-layer bidirectional LSTM over a batch-first sequence, then a
    GRU and an Elman RNN (ReLU) over its output: torch.onnx writes ONNX
    LSTM, GRU and RNN nodes with biases, initial states and both
    directions."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(6, 5, num_layers=2, bidirectional=True,
                                  batch_first=True)
        self.gru = torch.nn.GRU(10, 4)
        self.rnn = torch.nn.RNN(4, 3, nonlinearity="relu")

    def forward(self, x):
        y, _ = self.lstm(x)
        z, h = self.gru(y.transpose(0, 1))
        w, _ = self.rnn(z, h[:, :, :3].contiguous())
        return w.sum(0) + h[0, :, :3]


def test_recurrent_layers_match_pytorch():
    torch.manual_seed(0)
    net = Recurrent().eval()
    x = torch.randn(2, 7, 6, generator=torch.Generator().manual_seed(6))
    assert_plain_and_auto_match(net, x)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_matches_pytorch(mode, tmp_path):
    # torch.onnx at opset 13 cannot export grid_sample, so the model is
    # written with onnx.helper (GridSample, opset 16) and PyTorch's own
    # grid_sample is the oracle: every padding mode, both align_corners,
    # sampling positions reaching past the edges.
    import onnx
    from onnx import TensorProto, helper
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(2, 3, 5, 4, generator=gen)
    grid = torch.rand(2, 6, 3, 2, generator=gen) * 2.6 - 1.3
    for padding in ("zeros", "border", "reflection"):
        for align in (0, 1):
            node = helper.make_node("GridSample", ["X", "grid"], ["Y"],
                                    mode=mode, padding_mode=padding,
                                    align_corners=align)
            graph = helper.make_graph(
                [node], "grid_sample",
                [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3, 5, 4]),
                 helper.make_tensor_value_info("grid", TensorProto.FLOAT, [2, 6, 3, 2])],
                [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3, 6, 3])])
            path = tmp_path / f"{mode}_{padding}_{align}.onnx"
            onnx.save(helper.make_model(
                graph, opset_imports=[helper.make_opsetid("", 16)]), str(path))
            got = weir.compile(weir.load(str(path)), threads=1).run(
                {"X": x.numpy(), "grid": grid.numpy()})["Y"]
            want = torch.nn.functional.grid_sample(
                x, grid, mode=mode, padding_mode=padding,
                align_corners=bool(align)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5,
                                       err_msg=f"{mode} {padding} {align}")


class Unexportable(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Sequential(torch.nn.Identity(), Sampler())

    def forward(self, x):
        return self.head(x)


class Sampler(torch.nn.Module):
    def forward(self, x):
        grid = torch.zeros(1, 2, 2, 2)
        # GridSample exists in ONNX from opset 16; torch.onnx refuses it at 13.
        return torch.nn.functional.grid_sample(x, grid, align_corners=False)


def test_an_export_failure_names_the_module():
    with pytest.raises(weir.Error, match=r"module 'head\.1'"):
        weir.from_torch(Unexportable(), torch.randn(1, 1, 4, 4))


def test_bad_arguments_are_refused_with_a_message():
    with pytest.raises(weir.Error, match="torch.nn.Module"):
        weir.from_torch(lambda x: x, torch.randn(2))
    with pytest.raises(weir.Error, match="not a torch.Tensor"):
        weir.from_torch(torch.nn.ReLU(), [np.zeros(2)])
    with pytest.raises(weir.Error, match="recipe"):
        weir.compile_module(torch.nn.ReLU(), torch.randn(2), recipe="fast")
