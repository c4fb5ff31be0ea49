#!/usr/bin/python3
"""How optimize and compile times grow with the program: synthetic models.

Three families of ONNX models, each at several sizes (ONNX nodes):
  chain     x -> Relu -> Sigmoid -> Neg -> Abs -> ... (one long chain)
  residual  blocks of Conv 1x1 -> Relu -> Conv 1x1 -> Add(skip) -> Relu
  concat    DenseNet-style blocks of 12 layers: each layer reads the Concat
            of every earlier one in its block
For each, at 2 threads: `weir optimize --recipe auto` (import + recipe +
save) and `weir run SESSION` from an empty compile cache (its compile
line). It prints seconds per node for every size, the ratio of the largest
size's per-node time to the smallest's (the goal is at most 2), and writes
build/bench/growth.svg, a plot of milliseconds per node against size.

    tests/bench/growth.py [--sizes 1000,2000,5000,10000,20000]
                          [--families chain,residual,concat] [--timeout S]

Run with Debian's Python (onnx, numpy); scripts/bench.sh --growth runs it
after building Weir.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH_DIR = os.path.join(ROOT, "build", "bench", "growth")
WEIR = os.environ.get("WEIR_BENCH_BINARY") or os.path.join(ROOT, "build", "release", "app", "weir")


def chain(nodes):
    ops = ["Relu", "Sigmoid", "Neg", "Abs"]
    made, last = [], "x"
    for i in range(nodes):
        out = "y" if i == nodes - 1 else f"t{i}"
        made.append(helper.make_node(ops[i % 4], [last], [out], name=f"/n{i}/{ops[i % 4]}"))
        last = out
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1024])
    return helper.make_graph(made, "chain", [x], [y])


def residual(nodes):
    blocks = max(1, nodes // 5)
    rng = np.random.default_rng(0)
    made, inits, last = [], [], "x"
    c = 16
    for b in range(blocks):
        w1, w2 = f"w{b}a", f"w{b}b"
        for w in (w1, w2):
            inits.append(numpy_helper.from_array(
                (rng.standard_normal((c, c, 1, 1)) * 0.2).astype(np.float32), w))
        p = f"/block{b}"
        made += [
            helper.make_node("Conv", [last, w1], [f"{p}/a"], name=f"{p}/conv1"),
            helper.make_node("Relu", [f"{p}/a"], [f"{p}/b"], name=f"{p}/relu1"),
            helper.make_node("Conv", [f"{p}/b", w2], [f"{p}/c"], name=f"{p}/conv2"),
            helper.make_node("Add", [f"{p}/c", last], [f"{p}/d"], name=f"{p}/add"),
            helper.make_node("Relu", [f"{p}/d"], ["y" if b == blocks - 1 else f"{p}/e"],
                             name=f"{p}/relu2"),
        ]
        last = f"{p}/e"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, 8, 8])
    return helper.make_graph(made, "residual", [x], [y], initializer=inits)


def concat(nodes):
    # DenseNet-style dense blocks of BLOCK layers. Layer i of a block:
    # ReduceMean over channels, Relu, and the Concat of the block's input
    # and every earlier layer's feature (up to BLOCK + 1 inputs); a
    # ReduceMean over channels after each block is its transition, as
    # DenseNet's blocks end in one. So the Concats stay as wide as a real
    # network's (DenseNet-121's blocks have 6 to 24 layers) and the
    # program grows with the node count, not with its square.
    block = 12
    layers = max(1, nodes // 3)
    made, last = [], "x"
    features = [last]
    for i in range(layers):
        p = f"/layer{i}"
        if i > 0 and i % block == 0:
            made.append(helper.make_node("ReduceMean", [last], [f"{p}/transition"],
                                         name=f"{p}/transition", axes=[1], keepdims=1))
            last = f"{p}/transition"
            features = [last]
        made.append(helper.make_node("ReduceMean", [last], [f"{p}/m"], name=f"{p}/mean",
                                     axes=[1], keepdims=1))
        made.append(helper.make_node("Relu", [f"{p}/m"], [f"{p}/r"], name=f"{p}/relu"))
        features.append(f"{p}/r")
        out = "y" if i == layers - 1 else f"{p}/cat"
        made.append(helper.make_node("Concat", list(features), [out], name=f"{p}/concat",
                                     axis=1))
        last = out
    channels = (1 if layers > block else 2) + (layers - 1) % block + 1
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 4, 4])
    return helper.make_graph(made, "concat", [x], [y])


FAMILIES = {"chain": chain, "residual": residual, "concat": concat}


def timed(cmd, env, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", time.monotonic() - start
    return p.returncode, p.stdout + p.stderr, time.monotonic() - start


def measure(family, size, timeout):
    os.makedirs(BENCH_DIR, exist_ok=True)
    graph = FAMILIES[family](size)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(BENCH_DIR, f"{family}{size}.onnx")
    onnx.save(model, path)
    cache = os.path.join(BENCH_DIR, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, WEIR_CACHE_DIR=cache)
    session = path[:-5] + ".weir"
    code, out, opt_s = timed([WEIR, "optimize", path, "--recipe", "auto", "-o", session,
                              "--no-plugins"], env, timeout)
    row = {"family": family, "size": size, "nodes": len(graph.node)}
    if code != 0:
        row["error"] = "optimize timed out" if code is None else "optimize failed"
        return row
    row["optimize_s"] = opt_s
    code, out, run_s = timed([WEIR, "run", session, "--threads", "2", "--no-plugins"],
                             env, timeout)
    m = re.search(r"^compile\s+([\d.]+) ms", out, re.M)
    if code is None or not m:
        row["error"] = "run timed out" if code is None else "run failed"
        return row
    row["compile_s"] = float(m[1]) / 1e3
    return row


def svg(rows, path):
    """Milliseconds per node against nodes (log x), one line per family
    and measure."""
    w, h, pad = 640, 360, 50
    series = {}
    for r in rows:
        for key in ("optimize_s", "compile_s"):
            if key in r:
                series.setdefault(f"{r['family']} {key[:-2]}", []).append(
                    (r["nodes"], 1e3 * r[key] / r["nodes"]))
    if not series:
        return
    xs = [x for s in series.values() for x, _ in s]
    ys = [y for s in series.values() for _, y in s]
    lx0, lx1 = np.log10(min(xs)), np.log10(max(xs)) + 1e-9
    y1 = max(ys) * 1.1
    px = lambda x: pad + (np.log10(x) - lx0) / (lx1 - lx0) * (w - 2 * pad)
    py = lambda y: h - pad - y / y1 * (h - 2 * pad)
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
             f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle" font-size="12">'
             'ONNX nodes (log)</text>',
             f'<text x="14" y="{h / 2}" font-size="12" transform="rotate(-90 14 {h / 2})" '
             'text-anchor="middle">ms per node</text>',
             f'<text x="{pad}" y="{pad - 8}" font-size="10">{y1:.2f}</text>']
    for x in sorted(set(xs)):
        parts.append(f'<text x="{px(x):.1f}" y="{h - pad + 14}" font-size="10" '
                     f'text-anchor="middle">{x}</text>')
    for i, (name, points) in enumerate(sorted(series.items())):
        color = colors[i % len(colors)]
        line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in sorted(points))
        parts.append(f'<polyline points="{line}" fill="none" stroke="{color}" '
                     'stroke-width="2"/>')
        parts.append(f'<text x="{w - pad - 150}" y="{pad + 14 * i}" font-size="11" '
                     f'fill="{color}">{name}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,2000,5000,10000,20000")
    parser.add_argument("--families", default="chain,residual,concat")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per process")
    args = parser.parse_args()
    if not os.access(WEIR, os.X_OK):
        sys.exit(f"growth: {WEIR} not found; build it with scripts/bench.sh")
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for family in args.families.split(","):
        for size in sizes:
            print(f"  .. {family} {size}", file=sys.stderr, flush=True)
            rows.append(measure(family, size, args.timeout))
            if "error" in rows[-1]:
                break  # larger sizes take longer still
    print(f"{'family':9} {'nodes':>6} {'optimize s':>11} {'ms/node':>8} "
          f"{'compile s':>10} {'ms/node':>8}  note")
    for r in rows:
        cells = []
        for key in ("optimize_s", "compile_s"):
            v = r.get(key)
            cells += ["-", "-"] if v is None else [f"{v:.2f}", f"{1e3 * v / r['nodes']:.3f}"]
        print(f"{r['family']:9} {r['nodes']:>6} {cells[0]:>11} {cells[1]:>8} "
              f"{cells[2]:>10} {cells[3]:>8}  {r.get('error', '')}")
    for family in args.families.split(","):
        done = [r for r in rows if r["family"] == family and "compile_s" in r]
        if len(done) >= 2:
            first, last = done[0], done[-1]
            for key in ("optimize_s", "compile_s"):
                growth = (last[key] / last["nodes"]) / (first[key] / first["nodes"])
                print(f"{family}: {key[:-2]} time per node grows {growth:.2f}x from "
                      f"{first['nodes']} to {last['nodes']} nodes (goal: at most 2x)")
    out = os.path.join(ROOT, "build", "bench", "growth.svg")
    svg(rows, out)
    print(f"written {os.path.relpath(out, ROOT)}")


if __name__ == "__main__":
    main()
