#!/usr/bin/python3
"""Runs one zoo model through Weir and compares it with PyTorch.

Usage: run_zoo_model.py NAME

The model (zoo_models.py) is exported in-process with weir.from_torch
(torch.onnx, opset 13, under no_grad), imported, and compiled for the CPU
twice, with the plain expansion and after the auto recipe (which must find
something to do); each run's
output is compared with PyTorch eager's on the same seeded input. The
comparison is relative to the output's scale: the largest difference must
be within 1e-3 of the largest magnitude PyTorch gives (and the output must
not be vanishing, or the comparison would mean nothing). Each stage's time
is printed.
"""

import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_models  # noqa: E402
import weir  # noqa: E402

TOLERANCE = 1e-3


def compare(name, recipe, got, want):
    scale = float(np.abs(want).max())
    if not scale > 1e-3:
        sys.exit(f"{name}: PyTorch's output is vanishing (max |y| = {scale:g}); "
                 "the comparison would mean nothing")
    if got.shape != want.shape:
        sys.exit(f"{name} ({recipe}): Weir's output has shape {got.shape}, "
                 f"PyTorch's {want.shape}")
    if not np.all(np.isfinite(got)):
        sys.exit(f"{name} ({recipe}): Weir's output is not finite")
    error = float(np.abs(got - want).max()) / scale
    print(f"{name} ({recipe}): max |y| {scale:.3g}, "
          f"largest difference {error:.2e} of it")
    if error > TOLERANCE:
        sys.exit(f"{name} ({recipe}): Weir differs from PyTorch by {error:.2e} "
                 f"of the output's scale (tolerance {TOLERANCE:g})")


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in zoo_models.MODELS:
        sys.exit(f"usage: run_zoo_model.py NAME, one of "
                 f"{', '.join(zoo_models.MODELS)}")
    name = sys.argv[1]
    torch.set_num_threads(1)
    model, x = zoo_models.build(name)
    with torch.no_grad():
        want = model(x).numpy()
    start = time.monotonic()
    program = weir.from_torch(model, x)
    print(f"{name}: export and import {time.monotonic() - start:.1f} s")
    workspace = weir.Workspace(program)
    start = time.monotonic()
    steps = workspace.auto()
    print(f"{name}: auto recipe, {steps} steps, {time.monotonic() - start:.1f} s")
    if steps == 0:
        sys.exit(f"{name}: the auto recipe found nothing to do")
    for label, version in (("plain", program), ("auto", workspace.program)):
        start = time.monotonic()
        executable = weir.compile(version, threads=1)
        compiled = time.monotonic()
        got = executable.run({"input_0": x.numpy()})["output_0"]
        print(f"{name} ({label}): compile {compiled - start:.1f} s, "
              f"run {time.monotonic() - compiled:.2f} s")
        compare(name, label, got, want)


if __name__ == "__main__":
    main()
