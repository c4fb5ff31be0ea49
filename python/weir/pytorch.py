"""PyTorch in directly: export a module in-process through torch.onnx and
import it (`from_torch`), or get back a module whose forward runs the
Weir-compiled program (`compile_module`, DaCeML's wrapper idea).

    import torch, weir
    net = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())
    program = weir.from_torch(net, torch.randn(2, 8))
    fast = weir.compile_module(net, torch.randn(2, 8))
    print(fast(torch.randn(2, 8)))

PyTorch is imported when these are called, not when `weir` is: the rest of
Weir does not need it. The export is torch.onnx's, at opset 13, under
torch.no_grad() (as for inference: exporters then write shape arithmetic
that Weir specializes at load) and in eval mode, which torch.onnx sets for
the export and restores after. Where PyTorch then takes a fused fast path
torch.onnx cannot export (a batch-first attention), it exports again with
grad enabled.
"""

import io
import os
import tempfile
import warnings

from . import _weir

OPSET = 13


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - the suite installs torch
        raise _weir.Error("weir.from_torch needs PyTorch "
                          "(Debian: apt install python3-torch)") from e
    return torch


def _as_tuple(example_inputs):
    torch = _torch()
    if isinstance(example_inputs, torch.Tensor):
        return (example_inputs,)
    inputs = tuple(example_inputs)
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise _weir.Error(f"example input {i} is a {type(x).__name__}, "
                              "not a torch.Tensor")
    return inputs


def _failing_submodule(module, inputs, error_type):
    """The deepest submodule that fails to export on its own with the same
    kind of error, or None. torch.onnx converts operators after tracing the
    whole forward, so its error does not say where the operator was; this
    runs the forward once to capture each submodule's inputs, then exports
    submodules deepest first (only after a failure)."""
    torch = _torch()
    captured, hooks = {}, []
    for name, sub in module.named_modules():
        if name:
            hooks.append(sub.register_forward_pre_hook(
                lambda _m, args, name=name: captured.setdefault(name, args)))
    try:
        with torch.no_grad():
            module(*inputs)
    except Exception:
        return None
    finally:
        for h in hooks:
            h.remove()
    subs = dict(module.named_modules())
    for name in sorted(captured, key=lambda n: -n.count(".")):
        args = captured[name]
        if not all(isinstance(a, torch.Tensor) for a in args):
            continue
        try:
            with warnings.catch_warnings(), torch.no_grad():
                warnings.simplefilter("ignore")
                torch.onnx.export(subs[name], args, io.BytesIO(),
                                  opset_version=OPSET)
        except Exception as e:
            if type(e) is error_type:
                return f"{name}' ({type(subs[name]).__name__})"
    return None


# PyTorch's inference fast paths, which it takes in eval mode under no_grad,
# are fused operators torch.onnx cannot export (torch 1.13: a ViT's
# batch-first attention). With grad enabled PyTorch takes the composite path,
# which exports, so an export that meets one is made again that way.
_FAST_PATH_OPERATORS = ("_native_multi_head_attention",
                        "_transformer_encoder_layer_fwd")


def _export_once(module, inputs, path, dynamic_axes, names, grad):
    torch = _torch()
    input_names, output_names = names
    with torch.set_grad_enabled(grad):
        torch.onnx.export(module, inputs, path, opset_version=OPSET,
                          do_constant_folding=True,
                          input_names=input_names,
                          output_names=output_names,
                          dynamic_axes=dynamic_axes)


def _export(module, inputs, path, dynamic_axes, names):
    try:
        try:
            _export_once(module, inputs, path, dynamic_axes, names, grad=False)
        except Exception as e:
            if not any(op in str(e) for op in _FAST_PATH_OPERATORS):
                raise
            _export_once(module, inputs, path, dynamic_axes, names, grad=True)
    except Exception as e:
        where = (_failing_submodule(module, inputs, type(e)) or
                 f"{type(module).__name__}'")
        message = str(e).strip().splitlines()
        raise _weir.Error(
            f"torch.onnx could not export module '{where}: "
            f"{type(e).__name__}: {message[0] if message else ''}") from e


def from_torch(module, example_inputs, dynamic_axes=None, path=None,
               input_names=None, output_names=None):
    """Exports `module` on `example_inputs` (a tensor or a tuple of them)
    with torch.onnx (opset 13, under no_grad) and imports it: returns a
    weir.Program. Parameters keep their names where the export keeps them
    ("fc.weight"); inputs are `input_0`, `input_1`, ... and outputs
    `output_0`, ... unless `input_names` / `output_names` say otherwise.
    `dynamic_axes` is torch.onnx's ({"input_0": {0: "N"}}: a symbolic
    batch). The ONNX file goes to `path` when given (a session saved from
    the program refers to it), else to a temporary file removed once it is
    imported. A failure to export is a weir.Error naming the submodule
    whose forward was running ("module 'head.sampler'")."""
    torch = _torch()
    if not isinstance(module, torch.nn.Module):
        raise _weir.Error(f"from_torch takes a torch.nn.Module, not a "
                          f"{type(module).__name__}")
    inputs = _as_tuple(example_inputs)
    input_names = list(input_names or
                       [f"input_{i}" for i in range(len(inputs))])
    if len(input_names) != len(inputs):
        raise _weir.Error(f"{len(input_names)} input names for "
                          f"{len(inputs)} example inputs")
    with torch.no_grad():
        outputs = module(*inputs)
    count = len(outputs) if isinstance(outputs, (tuple, list)) else 1
    output_names = list(output_names or
                        [f"output_{i}" for i in range(count)])
    names = (input_names, output_names)
    if path is not None:
        _export(module, inputs, os.fspath(path), dynamic_axes, names)
        return _weir.load(os.fspath(path))
    with tempfile.TemporaryDirectory(prefix="weir-torch-") as folder:
        onnx_path = os.path.join(folder, type(module).__name__ + ".onnx")
        _export(module, inputs, onnx_path, dynamic_axes, names)
        return _weir.load(onnx_path)


def compile_module(module, example_inputs, recipe="auto", threads=0,
                   dynamic_axes=None):
    """`module` exported (from_torch), optimized by `recipe` ("auto", or
    None for the plain expansion) and compiled for the CPU: returns a
    torch.nn.Module whose forward takes and returns CPU tensors and runs
    Weir's code. Contiguous float32 inputs are passed without a copy, and
    the outputs are tensors over the buffers Weir wrote. The wrapper holds
    the Weir program as `.program` and the executable as `.executable`."""
    program = from_torch(module, example_inputs, dynamic_axes=dynamic_axes)
    if recipe == "auto":
        ws = _weir.Workspace(program)
        ws.auto()
        program = ws.program
    elif recipe is not None:
        raise _weir.Error(f"compile_module knows the recipe 'auto' or None, "
                          f"not {recipe!r}")
    executable = _weir.compile(program, threads=threads)
    return _compiled_module_class()(program, executable)


_COMPILED_MODULE = None


def _compiled_module_class():
    """The wrapper class, made once PyTorch is imported (it derives from
    torch.nn.Module)."""
    global _COMPILED_MODULE
    if _COMPILED_MODULE is not None:
        return _COMPILED_MODULE
    torch = _torch()

    class CompiledModule(torch.nn.Module):
        """A Weir-compiled program behind torch.nn.Module's interface."""

        def __init__(self, program, executable):
            super().__init__()
            self.program = program
            self.executable = executable

        def forward(self, *inputs):
            names = list(self.program.inputs)
            if len(inputs) != len(names):
                raise _weir.Error(f"the compiled module takes {len(names)} "
                                  f"inputs, got {len(inputs)}")
            feed = {}
            for name, x in zip(names, inputs):
                if x.device.type != "cpu":
                    raise _weir.Error(f"input '{name}' is on {x.device}; "
                                      "the compiled module runs on the CPU")
                feed[name] = x.detach().numpy()
            out = self.executable.run(feed)
            results = [torch.from_numpy(out[n]) for n in self.program.outputs]
            return results[0] if len(results) == 1 else tuple(results)

    _COMPILED_MODULE = CompiledModule
    return CompiledModule
