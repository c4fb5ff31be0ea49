#!/usr/bin/python3
"""Seeded inputs and numpy-reference outputs for the bundled sample models.

Usage: /usr/bin/python3 tests/models/make_reference_outputs.py OUTDIR

For each model in resources/models it writes OUTDIR/<model>/<input>.npy and
OUTDIR/<model>/<output>.npy, the outputs computed by the independent numpy
interpreter in make_models.py (run_reference), so `weir run --expected` can
check Weir's whole path (import, expansion, execution) against it.
"""

import os
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "..", "resources", "models")
sys.path.insert(0, MODELS)
from make_models import run_reference  # noqa: E402


def feeds_for(name, rng):
    if name == "cnn":
        return {"input": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)}
    if name == "mlp":
        return {"input": rng.standard_normal((3, 64)).astype(np.float32)}
    if name == "transformer":
        mask = np.ones((1, 16), dtype=np.float32)
        mask[0, 12:] = 0.0  # padded positions, as BERT masks them
        return {"hidden": rng.standard_normal((1, 16, 64)).astype(np.float32),
                "mask": mask}
    raise SystemExit(f"no inputs defined for {name}")


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: make_reference_outputs.py OUTDIR")
    for name in ("cnn", "mlp", "transformer"):
        model = onnx.load(os.path.join(MODELS, name + ".onnx"))
        feeds = feeds_for(name, np.random.default_rng(7))
        values = run_reference(model, feeds)
        out = os.path.join(argv[1], name)
        os.makedirs(out, exist_ok=True)
        for key, array in feeds.items():
            np.save(os.path.join(out, key + ".npy"), array)
        for o in model.graph.output:
            np.save(os.path.join(out, o.name + ".npy"), np.asarray(values[o.name]))
        print(f"{name}: {', '.join(feeds)} -> "
              f"{', '.join(o.name for o in model.graph.output)}")


if __name__ == "__main__":
    main(sys.argv)
