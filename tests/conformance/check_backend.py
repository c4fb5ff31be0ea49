#!/usr/bin/python3
"""The CPU backend against the ONNX conformance data.

Usage: check_backend.py WEIR FILTER KNOWN_DIFFERENCES

Runs `WEIR conformance --json --filter FILTER` (import, expand-all, the LLVM
JIT, every test data set) and fails when a test that expanded did not
reproduce its expected outputs, unless KNOWN_DIFFERENCES lists it (the file
conformance.node_run reads, "test_name: reason" per line). A test whose
operators do not all expand yet is counted, not failed: coverage is tracked
by the totals printed here and in the README, correctness by this check.
"""

import json
import subprocess
import sys


def known(path):
    names = set()
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                names.add(line.split(":", 1)[0])
    return names


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[2])
    weir, filter_file, differences = sys.argv[1:]
    run = subprocess.run([weir, "conformance", "--json", "--jobs", "2",
                          "--filter", filter_file],
                         capture_output=True, text=True)
    if run.returncode not in (0, 1) or not run.stdout.strip():
        sys.exit(f"weir conformance exited {run.returncode}: {run.stderr[-2000:]}")
    report = json.loads(run.stdout)
    allowed = known(differences)
    wrong = [t for t in report["tests"]
             if t["status"] == "fail"
             and not t["reason"].startswith("not expandable")
             and t["name"].split("/")[-1] not in allowed]
    unexpandable = sum(t["status"] == "fail" and
                       t["reason"].startswith("not expandable")
                       for t in report["tests"])
    print(f"conformance on the CPU backend: {report['passed']} passed, "
          f"{unexpandable} not expandable yet, {report['skipped']} skipped "
          f"by the filter, {len(wrong)} wrong")
    for t in wrong:
        print(f"  {t['name']}: {t['reason']}")
    if report["passed"] == 0:
        sys.exit("no conformance test passed: the test data is missing?")
    if wrong:
        sys.exit(f"{len(wrong)} expanded tests did not reproduce their "
                 "expected outputs on the CPU backend")


if __name__ == "__main__":
    main()
