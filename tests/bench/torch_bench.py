#!/usr/bin/python3
"""Time one model on PyTorch eager for the Weir benchmark.

Loads the module export_models.py saved (NAME.pt), runs it under
torch.no_grad() with torch.set_num_threads(--threads), warms up for
--warmup-s seconds (at least 2 runs), times --runs calls and prints one JSON
line: {"median_ms", "min_ms", "runs", "threads", "version"}. bench.py also sets
OMP_NUM_THREADS and OPENBLAS_NUM_THREADS to the thread count, as this must
happen before torch is imported.
"""

import argparse
import json
import statistics
import time

import os
import sys

import numpy as np
import torch

# The saved modules may be defined in export_models (BertLayer); torch.load
# finds them by module name.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models  # noqa: E402,F401


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="NAME.pt from export_models.py")
    parser.add_argument("--input", required=True, help="input .npy")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup-s", type=float, default=1.0)
    return parser.parse_args()


def time_runs(model, x, runs, warmup_s):
    """Milliseconds of each of `runs` calls, after the warm-up."""
    warmup_end = time.perf_counter() + warmup_s
    count = 0
    while count < 2 or time.perf_counter() < warmup_end:
        model(x)
        count += 1
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        model(x)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    model = torch.load(args.model).eval()
    x = torch.from_numpy(np.load(args.input))
    with torch.no_grad():
        times = time_runs(model, x, args.runs, args.warmup_s)
    print(json.dumps({"median_ms": statistics.median(times), "min_ms": min(times),
                      "runs": len(times), "threads": torch.get_num_threads(),
                      "version": torch.__version__}))


if __name__ == "__main__":
    main()
