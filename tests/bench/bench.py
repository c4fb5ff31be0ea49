#!/usr/bin/python3
"""Weir benchmark driver: Weir vs ONNX Runtime vs PyTorch eager.

For each model it runs, each in a fresh process and on the same input:
  ONNX Runtime (onnxruntime-node) at 1 and 2 threads, keeping its outputs;
  Weir at 1 and 2 threads, the plain expansion (`weir run MODEL --repeat N
  --threads T --expected ...`) and the auto recipe (`weir optimize MODEL
  --recipe auto -o S.weir`, then `weir run S.weir ...`), checking Weir's
  outputs against ONNX Runtime's (rtol 1e-3, atol 1e-4);
  PyTorch eager at 1 and 2 threads, for the models that came from PyTorch.
It prints a table of medians and ratios, how long each model takes to be
ready (import + auto recipe, then compiling the session from an empty and
from a filled compile cache, with peak memory), a table of the bytes moved
(analysis) after each tier of the auto recipe, and writes
build/bench/results.json.
scripts/bench.sh installs what this needs, builds Weir and then calls it.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH_DIR = os.path.join(ROOT, "build", "bench")
MODEL_DIR = os.path.join(BENCH_DIR, "models")
WEIR = os.path.join(ROOT, "build", "release", "app", "weir")
HERE = os.path.join(ROOT, "tests", "bench")
PYTHON = "/usr/bin/python3"
THREADS = (1, 2)
RTOL, ATOL = 1e-3, 1e-4


@dataclass
class Model:
    name: str
    path: str
    from_torch: bool
    # Input name -> constant fill value; other float inputs are uniform [-1, 1).
    fills: dict = field(default_factory=dict)


def bundled(name, **fills):
    return Model(name, os.path.join(ROOT, "resources", "models", name + ".onnx"), False, fills)


def exported(name):
    return Model(name, os.path.join(MODEL_DIR, name + ".onnx"), True)


MODELS = {m.name: m for m in [
    bundled("cnn"), bundled("mlp"), bundled("transformer", mask=1.0),
    exported("resnet18"), exported("resnet50"), exported("mobilenet_v2"), exported("bert"),
    # The zoo: families nobody tuned Weir for.
    exported("densenet121"), exported("efficientnet_b0"), exported("regnet_y_400mf"),
    exported("squeezenet1_0"), exported("alexnet"), exported("googlenet"),
    exported("shufflenet_v2"), exported("transformer_encoder"),
    exported("mobilenet_v3_small"), exported("convnext_tiny"), exported("vit_b_16"),
    exported("gpt2_block"),
]}
QUICK_MODELS = ["cnn", "mlp", "transformer"]


# --- inputs --------------------------------------------------------------------

NP_TYPES = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
            onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32,
            onnx.TensorProto.BOOL: np.bool_}


def graph_inputs(path):
    """(name, numpy dtype, shape with dim_param names) of each real graph input."""
    graph = onnx.load(path, load_external_data=False).graph
    weights = {t.name for t in graph.initializer}
    result = []
    for value in graph.input:
        if value.name in weights:
            continue
        tensor = value.type.tensor_type
        shape = [d.dim_param if d.dim_param else d.dim_value for d in tensor.shape.dim]
        result.append((value.name, NP_TYPES[tensor.elem_type], shape))
    return result


def make_inputs(model, dims):
    """name -> .npy path. Exported models bring their own; others are seeded."""
    if model.from_torch:
        return {"input": os.path.join(MODEL_DIR, model.name + ".input.npy")}
    out_dir = os.path.join(BENCH_DIR, "inputs", model.name)
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    files = {}
    for name, dtype, shape in graph_inputs(model.path):
        concrete = [dims[d] if isinstance(d, str) else d for d in shape]
        if name in model.fills:
            data = np.full(concrete, model.fills[name], dtype)
        elif np.issubdtype(dtype, np.floating):
            data = rng.uniform(-1, 1, concrete).astype(dtype)
        else:
            data = rng.integers(0, 10, concrete).astype(dtype)
        files[name] = os.path.join(out_dir, name + ".npy")
        np.save(files[name], data)
    return files


def symbols(model):
    return {d for _, _, shape in graph_inputs(model.path) for d in shape if isinstance(d, str)}


# --- running the engines ---------------------------------------------------------

def run(cmd, threads, timeout):
    """(returncode, stdout, stderr) of cmd, in a fresh process with t threads."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               NODE_PATH=os.path.join(BENCH_DIR, "node_modules"))
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout} s"
    return p.returncode, p.stdout, p.stderr


def run_measured(cmd, env_extra, timeout):
    """(returncode, stdout, stderr, wall seconds, peak resident MB) of cmd.
    The peak comes from GNU time (a child's own ru_maxrss starts at this
    process's resident size, which holds the models it read)."""
    env = dict(os.environ, **env_extra)
    start = time.monotonic()
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "weir-bench-peak-kb %M"] + cmd, cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout} s", None, None
    wall = time.monotonic() - start
    peak = re.search(r"^weir-bench-peak-kb (\d+)$", p.stderr, re.M)
    err = re.sub(r"^weir-bench-peak-kb \d+\n?", "", p.stderr, flags=re.M)
    return p.returncode, p.stdout, err, wall, int(peak[1]) / 1024 if peak else None


def failure(code, stderr):
    """A one-line reason for a failed process."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    if code is not None and code < 0:
        return f"crashed (signal {-code})" + (f": {lines[-1]}" if lines else "")
    reason = next((l for l in lines if "error" in l.lower()), lines[-1] if lines else f"exit {code}")
    return re.sub(r"^weir: (error: )?", "", reason)


def json_result(code, stdout, stderr):
    if code != 0:
        return {"error": failure(code, stderr)}
    return json.loads(stdout.strip().splitlines()[-1])


def run_ort(model, inputs, threads, args, out_dir=None):
    cmd = ["node", os.path.join(HERE, "ort_bench.js"), "--model", model.path,
           "--threads", str(threads), "--runs", str(args.runs), "--warmup-s", str(args.warmup_s)]
    for name, path in inputs.items():
        cmd += ["--input", f"{name}={path}"]
    if out_dir:
        cmd += ["--out-dir", out_dir]
    return json_result(*run(cmd, threads, args.timeout))


def run_torch(model, inputs, threads, args):
    cmd = [PYTHON, os.path.join(HERE, "torch_bench.py"),
           "--model", os.path.join(MODEL_DIR, model.name + ".pt"), "--input", inputs["input"],
           "--threads", str(threads), "--runs", str(args.runs), "--warmup-s", str(args.warmup_s)]
    return json_result(*run(cmd, threads, args.timeout))


OUTPUT_LINE = re.compile(r"^(\S+)\s+.*?(?:max abs err (\S+)\s+max rel err (\S+)\s+(ok|MISMATCH)"
                         r"|MISMATCH: (.*))$")


def parse_weir(stdout):
    """Median, compile time and per-output check from `weir run` output."""
    result = {"outputs": {}}
    for line in stdout.splitlines():
        if m := re.match(r"^time\s+([\d.]+) ms", line):
            result["median_ms"] = float(m[1])
        elif m := re.match(r"^compile\s+([\d.]+) ms", line):
            result["compile_ms"] = float(m[1])
        elif m := re.match(r"^engine\s+(.*)$", line):
            result["engine"] = m[1]
        elif m := OUTPUT_LINE.match(line):
            if m[5]:
                result["outputs"][m[1]] = {"ok": False, "problem": m[5]}
            else:
                result["outputs"][m[1]] = {"ok": m[4] == "ok", "max_abs": float(m[2]),
                                           "max_rel": float(m[3])}
    return result


def run_optimize(model, args):
    """`weir optimize --recipe auto`: the session file and the tier table."""
    session = os.path.join(BENCH_DIR, "sessions", model.name + ".weir")
    os.makedirs(os.path.dirname(session), exist_ok=True)
    # The auto recipe needs no plugins (and the release build has no Python
    # module to run them with).
    code, stdout, stderr = run([WEIR, "optimize", model.path, "--recipe", "auto", "-o", session,
                                "--no-plugins"], 1, args.timeout)
    if code != 0:
        return {"error": failure(code, stderr)}
    tiers = {}
    for line in stdout.splitlines():
        if m := re.match(r"^tier (\S+)\s+bytes moved (\S+)\s+FLOPs (\S+)"
                         r"\s+transients (?:allocated (\d+) peak (\d+)|-)", line):
            number = lambda text: int(text) if text and text.isdigit() else text
            tiers[m[1]] = {"bytes_moved": number(m[2]), "flops": number(m[3]),
                           "transients_allocated": number(m[4]),
                           "transients_peak": number(m[5])}
    return {"session": session, "tiers": tiers}


def run_weir(model, inputs, expected, threads, args, path=None):
    cmd = [WEIR, "run", path or model.path, "--threads", str(threads), "--repeat", str(args.runs),
           "--no-plugins"]
    for name in symbols(model):
        cmd += ["--dim", f"{name}={args.dims[name]}"]
    cmd += ["--inputs"] + [f"{n}={p}" for n, p in inputs.items()]
    if expected:
        cmd += ["--expected"] + [f"{n}={p}" for n, p in expected.items()]
    code, stdout, stderr = run(cmd, threads, args.timeout)
    result = parse_weir(stdout)
    # Exit 1 with a time line is an output mismatch; without one, an error.
    if "median_ms" not in result:
        return {"error": failure(code, stderr).replace(model.path + ": ", "")}
    return result


def run_ready(model, args):
    """How long the model takes to be ready, at 2 threads: `weir optimize
    --recipe auto` (import + recipe + save), then `weir run SESSION` (open,
    compile, one run) with an empty compile cache and again with the cache
    it filled."""
    cache = os.path.join(BENCH_DIR, "compile-cache", model.name)
    shutil.rmtree(cache, ignore_errors=True)
    env = {"WEIR_CACHE_DIR": cache, "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"}
    session = os.path.join(BENCH_DIR, "sessions", model.name + ".ready.weir")
    os.makedirs(os.path.dirname(session), exist_ok=True)
    code, out, err, wall, peak = run_measured(
        [WEIR, "optimize", model.path, "--recipe", "auto", "-o", session, "--no-plugins"],
        env, args.timeout)
    if code != 0:
        return {"error": failure(code, err)}
    steps = re.search(r"^total\s+(\d+) steps", out, re.M)
    ready = {"optimize_s": wall, "optimize_peak_mb": peak,
             "steps": int(steps[1]) if steps else None}
    loop_ir = os.path.join(BENCH_DIR, "sessions", model.name + ".loop")
    for name in ("cold", "warm"):
        cmd = [WEIR, "run", session, "--threads", "2", "--no-plugins"]
        for sym in symbols(model):
            cmd += ["--dim", f"{sym}={args.dims[sym]}"]
        if name == "cold":
            cmd += ["--loop-ir", loop_ir]
        code, out, err, wall, peak = run_measured(cmd, env, args.timeout)
        if code not in (0, 1) or "compile" not in out:
            ready[name] = {"error": failure(code, err)}
            continue
        m = re.search(r"^compile\s+([\d.]+) ms \((\d+) pieces?, (\d+) from", out, re.M)
        ready[name] = {"wall_s": wall, "peak_mb": peak,
                       "compile_s": float(m[1]) / 1e3 if m else None,
                       "pieces": int(m[2]) if m else None,
                       "cached": int(m[3]) if m else None}
    # Bounds guards the proof left in the compiled code (`checked A[...]`
    # in the loop IR; codegen/lower/bounds_proof.h): 0 is the goal.
    if os.path.exists(loop_ir):
        with open(loop_ir) as f:
            ready["guards"] = f.read().count("checked ")
    return ready


# --- one model -------------------------------------------------------------------

def output_files(directory):
    if not os.path.isdir(directory):
        return {}
    return {f[:-4]: os.path.join(directory, f) for f in sorted(os.listdir(directory))
            if f.endswith(".npy")}


def check(weir_runs):
    """Worst output comparison over the Weir runs that produced one."""
    outputs = [o for r in weir_runs for o in r.get("outputs", {}).values()]
    if not outputs:
        return None
    return {"ok": all(o["ok"] for o in outputs),
            "max_abs": max(o.get("max_abs", float("inf")) for o in outputs),
            "max_rel": max(o.get("max_rel", float("inf")) for o in outputs)}


def ort_vs_torch(model, expected):
    """Max abs difference of ORT's output from PyTorch eager's (export sanity)."""
    torch_file = os.path.join(MODEL_DIR, model.name + ".torch.npy")
    if not model.from_torch or "output" not in expected:
        return None
    return float(np.abs(np.load(expected["output"]) - np.load(torch_file)).max())


def bench_model(model, args):
    inputs = make_inputs(model, args.dims)
    ort_dir = os.path.join(BENCH_DIR, "outputs", model.name, "ort")
    for f in output_files(ort_dir).values():
        os.remove(f)
    row = {"model": model.name, "path": os.path.relpath(model.path, ROOT),
           "ort": {}, "weir": {}, "auto": {}, "torch": {}}
    for t in THREADS:
        progress(f"{model.name}: onnxruntime {t}t")
        row["ort"][t] = run_ort(model, inputs, t, args, ort_dir if t == 1 else None)
    expected = output_files(ort_dir)
    for t in THREADS:
        progress(f"{model.name}: weir {t}t (plain expansion)")
        row["weir"][t] = run_weir(model, inputs, expected, t, args)
    progress(f"{model.name}: weir optimize --recipe auto")
    row["optimize"] = run_optimize(model, args)
    progress(f"{model.name}: time to ready (optimize, compile cold and warm)")
    row["ready"] = run_ready(model, args)
    for t in THREADS:
        if "error" in row["optimize"]:
            row["auto"][t] = {"error": "optimize: " + row["optimize"]["error"]}
            continue
        progress(f"{model.name}: weir {t}t (auto)")
        row["auto"][t] = run_weir(model, inputs, expected, t, args, row["optimize"]["session"])
    if model.from_torch:
        for t in THREADS:
            progress(f"{model.name}: pytorch {t}t")
            row["torch"][t] = run_torch(model, inputs, t, args)
    row["check"] = check(list(row["weir"].values()) + list(row["auto"].values())) \
        if expected else None
    row["ort_output_max_abs"] = max((float(np.abs(np.load(f)).max()) for f in expected.values()),
                                    default=None)
    row["ort_vs_torch_max_abs"] = ort_vs_torch(model, expected)
    for t in THREADS:
        row[f"weir_over_ort_{t}t"] = ratio(row["weir"][t], row["ort"][t])
        row[f"auto_over_ort_{t}t"] = ratio(row["auto"][t], row["ort"][t])
        row[f"auto_over_torch_{t}t"] = ratio(row["auto"][t], row["torch"].get(t, {}))
    return row


def ratio(a, b):
    if "median_ms" in a and "median_ms" in b and b["median_ms"] > 0:
        return a["median_ms"] / b["median_ms"]
    return None


def progress(message):
    print(f"  .. {message}", file=sys.stderr, flush=True)


# --- report ----------------------------------------------------------------------

def ms(result):
    if not result:
        return "-"
    if "median_ms" not in result:
        return "FAIL"
    value = result["median_ms"]
    return f"{value:.3f}" if value < 1 else f"{value:.2f}" if value < 100 else f"{value:.1f}"


def check_text(row):
    runs = [(f"{t}t", r) for t, r in row["weir"].items()] + \
           [(f"auto {t}t", r) for t, r in row["auto"].items()]
    errors = [f"weir {name}: {r['error']}" for name, r in runs if "error" in r]
    if errors and len(errors) == len(runs) and len({e.split(': ', 1)[1] for e in errors}) == 1:
        return "weir error: " + row["weir"][1]["error"]
    if row["check"]:
        c = row["check"]
        text = f"{'match' if c['ok'] else 'MISMATCH'} (max abs err {c['max_abs']:.2g})"
        if row["ort_output_max_abs"] is not None and row["ort_output_max_abs"] < 10 * ATOL:
            text += f" [weak: outputs below {row['ort_output_max_abs']:.1g}]"
    elif "error" in row["ort"].get(1, {}):
        text = "no ORT outputs: " + row["ort"][1]["error"]
    else:
        text = "-"
    return "; ".join([text] + errors)


def aligned(head, lines):
    widths = [max(len(str(x[i])) for x in [head] + lines) for i in range(len(head) - 1)]
    out = []
    for cells in [head] + lines:
        padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        out.append("  ".join(padded + [cells[-1]]))
    out.insert(1, "-" * max(len(l) for l in out[:1]))
    return "\n".join(out)


def table(rows):
    head = ["model", "plain 1t", "plain 2t", "auto 1t", "auto 2t", "ort 1t", "ort 2t",
            "torch 1t", "torch 2t", "auto/ort 1t", "auto/ort 2t", "auto/torch 2t",
            "compile s", "check vs ORT (rtol 1e-3, atol 1e-4)"]
    lines = []
    for r in rows:
        compile_s = [x["compile_ms"] / 1e3 for x in r["auto"].values() if "compile_ms" in x]
        lines.append([r["model"], ms(r["weir"][1]), ms(r["weir"][2]), ms(r["auto"][1]),
                      ms(r["auto"][2]), ms(r["ort"][1]), ms(r["ort"][2]),
                      ms(r["torch"].get(1)), ms(r["torch"].get(2)),
                      fmt_ratio(r["auto_over_ort_1t"]), fmt_ratio(r["auto_over_ort_2t"]),
                      fmt_ratio(r["auto_over_torch_2t"]),
                      f"{compile_s[0]:.1f}" if compile_s else "-", check_text(r)])
    return aligned(head, lines)


def ready_table(rows):
    """Import + auto recipe, then opening the session and compiling it from
    an empty and from a filled compile cache."""
    head = ["model", "optimize s", "steps", "open+compile cold s", "compile cold s",
            "open+compile warm s", "compile warm s", "pieces", "optimize+cold s",
            "ort session s", "warm/ort", "peak MB", "guards", "note"]
    lines = []
    for r in rows:
        g = r.get("ready", {})
        if "error" in g:
            lines.append([r["model"]] + ["-"] * 12 + [g["error"]])
            continue
        cold, warm = g.get("cold", {}), g.get("warm", {})
        num = lambda v, f="{:.2f}": f.format(v) if isinstance(v, (int, float)) else "-"
        peak = max([v for v in (g.get("optimize_peak_mb"), cold.get("peak_mb"),
                                warm.get("peak_mb")) if v] or [0])
        total = g["optimize_s"] + cold["compile_s"] if cold.get("compile_s") else None
        note = "; ".join(x["error"] for x in (cold, warm) if "error" in x)
        # The peer: ONNX Runtime's session creation (load and graph
        # optimization) at 2 threads, in the same bench run.
        ort_ms = r.get("ort", {}).get(2, {}).get("session_ms")
        ort_s = ort_ms / 1e3 if ort_ms else None
        warm_ratio = (f"{warm['wall_s'] / ort_s:.1f}x"
                      if ort_s and warm.get("wall_s") else "-")
        lines.append([r["model"], num(g.get("optimize_s")), num(g.get("steps"), "{}"),
                      num(cold.get("wall_s")), num(cold.get("compile_s")),
                      num(warm.get("wall_s")), num(warm.get("compile_s")),
                      num(cold.get("pieces"), "{}"), num(total), num(ort_s),
                      warm_ratio, f"{peak:.0f}", num(g.get("guards"), "{}"), note])
    return aligned(head, lines)


def megabytes(value):
    return f"{value / 1e6:.2f}" if isinstance(value, int) else str(value)


def tier_table(rows, key):
    """`key` (bytes moved, transient memory) after each tier of the auto
    recipe, and the change the tiers after expansion made (the plain
    expansion is the baseline)."""
    tiers = ["import", "expansion", "fusion", "movement", "tensorize"]
    head = ["model"] + [f"{t} MB" for t in tiers] + ["auto vs plain"]
    lines = []
    for r in rows:
        got = {t: v for t, v in r.get("optimize", {}).get("tiers", {}).items()
               if v.get(key) is not None}
        cells = [megabytes(got[t][key]) if t in got else "-" for t in tiers]
        plain = got.get("expansion", {}).get(key)
        last = [got[t][key] for t in tiers if t in got][-1:] or [None]
        change = "-"
        if isinstance(plain, int) and isinstance(last[0], int) and plain:
            change = f"{100.0 * (last[0] - plain) / plain:+.1f}%"
        lines.append([r["model"]] + cells + [change])
    return aligned(head, lines)


def fmt_ratio(x):
    return f"{x:.2f}x" if x is not None else "-"


def failures(rows):
    notes = []
    for r in rows:
        for engine in ("ort", "torch"):
            for t, res in r[engine].items():
                if "error" in res:
                    notes.append(f"{r['model']} {engine} {t}t: {res['error']}")
    return notes


def metadata(args):
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "weir_commit": commit + ("-dirty" if dirty else ""), "runs": args.runs,
            "warmup_s": args.warmup_s, "dims": args.dims, "host": platform.node(),
            "cpus": os.cpu_count(), "rtol": RTOL, "atol": ATOL}


# --- main ------------------------------------------------------------------------

def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help="comma-separated subset of " + ", ".join(MODELS))
    parser.add_argument("--runs", type=int, help="timed runs per configuration (default 20)")
    parser.add_argument("--warmup-s", type=float, help="ORT/torch warm-up seconds (default 1)")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                        help="size of a symbolic dimension (default N=1)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per process")
    parser.add_argument("--quick", action="store_true",
                        help=f"3 runs, short warm-up, models {','.join(QUICK_MODELS)} "
                             "unless --models says otherwise")
    parser.add_argument("--json", default=os.path.join(BENCH_DIR, "results.json"))
    args = parser.parse_args()
    args.runs = args.runs or (3 if args.quick else 20)
    args.warmup_s = args.warmup_s if args.warmup_s is not None else (0.2 if args.quick else 1.0)
    args.dims = {"N": 1} | dict(parse_dim(d) for d in args.dim)
    names = args.models.split(",") if args.models else QUICK_MODELS if args.quick else list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    args.names = names
    return args


def parse_dim(text):
    name, _, value = text.partition("=")
    if not name or not value.isdigit():
        sys.exit(f"bench: --dim takes NAME=N, got '{text}'")
    return name, int(value)


def ensure_exported(names):
    """Export the PyTorch models that are missing (export_models.py skips the rest)."""
    wanted = [n for n in names if MODELS[n].from_torch]
    if wanted:
        subprocess.run([PYTHON, os.path.join(HERE, "export_models.py"), "--out", MODEL_DIR,
                        "--models", ",".join(wanted)], cwd=ROOT, check=True)


def main():
    args = parse_args()
    if not os.access(WEIR, os.X_OK):
        sys.exit(f"bench: {WEIR} not found; build it with scripts/bench.sh")
    ensure_exported(args.names)
    print(f"bench: {', '.join(args.names)}; median of {args.runs} runs; "
          f"threads {', '.join(map(str, THREADS))}", file=sys.stderr)
    rows = [bench_model(MODELS[n], args) for n in args.names]
    print()
    print(f"median latency in ms over {args.runs} runs; plain = every operator expanded, "
          "auto = the auto recipe; auto/ort = Weir (auto) time / ONNX Runtime time "
          "(below 1 means Weir is faster)")
    print(table(rows))
    print()
    print("time to ready at 2 threads: weir optimize --recipe auto (import + recipe + save);"
          " weir run SESSION (open, compile, one run) from an empty compile cache (cold)"
          " and again (warm); ort session = ONNX Runtime's session creation at 2 threads;"
          " warm/ort = open+compile warm over it; peak = largest resident set of the three")
    print(ready_table(rows))
    print()
    print("bytes moved (analysis, MB) after each tier of the auto recipe")
    print(tier_table(rows, "bytes_moved"))
    print()
    print("transient memory the CPU backend allocates (MB) after each tier")
    print(tier_table(rows, "transients_allocated"))
    print()
    print("peak of live transient memory (MB) after each tier")
    print(tier_table(rows, "transients_peak"))
    for note in failures(rows):
        print("failed:", note)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"meta": metadata(args), "models": rows}, f, indent=2)
    print(f"\nwritten {os.path.relpath(args.json, ROOT)}")


if __name__ == "__main__":
    main()
