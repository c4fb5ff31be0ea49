#!/usr/bin/python3
"""Byte-mutation fuzzing of the whole pipeline, as a user's command runs it.

Usage:
    /usr/bin/python3 tests/fuzz/mutate_run.py WEIR MODEL COUNT [SEED]

Writes COUNT copies of MODEL, each with 1 to 20 random bytes replaced, and
runs `WEIR run COPY --random 0 --threads 1` on each (compile cache off,
60 s each). A run either succeeds (exit 0) or is refused with a message
(exit 1, "error" on stderr); anything else — a signal, an abort, an
"internal error" (exit 3), a timeout — is a finding: the copy is kept in
build/fuzz/mutations/ and printed with the end of its stderr. Prints the
counts last. Deterministic for a given SEED (default 1).

Not part of the pass/fail suite: 1,500 runs take about ten minutes here.
Every finding becomes a case of tests/fuzz/make_hostile_corpus.py.
"""

import os
import random
import subprocess
import sys


def main(argv):
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    weir, model, count = argv[1], argv[2], int(argv[3])
    seed = int(argv[4]) if len(argv) == 5 else 1
    source = open(model, "rb").read()
    keep = os.path.join("build", "fuzz", "mutations")
    os.makedirs(keep, exist_ok=True)
    rng = random.Random(seed)
    counts = {"ran": 0, "refused": 0, "findings": 0}
    env = dict(os.environ, WEIR_CACHE_DIR="off")
    for i in range(count):
        data = bytearray(source)
        for _ in range(rng.randint(1, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        path = os.path.join(keep, f"seed{seed}_{i}.onnx")
        with open(path, "wb") as f:
            f.write(data)
        try:
            r = subprocess.run([weir, "run", path, "--random", "0", "--threads", "1"],
                               capture_output=True, text=True, timeout=60, env=env)
            code, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired:
            code, err = None, "timed out after 60 s"
        if code == 0:
            counts["ran"] += 1
        elif code == 1 and "error" in err and "internal error" not in err:
            counts["refused"] += 1
        else:
            counts["findings"] += 1
            print(f"FINDING exit {code}: {path}\n  {err.strip()[-300:]}", flush=True)
            continue
        os.remove(path)
    print(f"{count} mutations of {model} (seed {seed}): {counts['ran']} ran, "
          f"{counts['refused']} refused with a message, {counts['findings']} findings")
    return 1 if counts["findings"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
