#!/usr/bin/env bash
# README command 2: install what is missing, build everything and run the
# whole test suite; then build the ASan+UBSan preset and run the hostile-input
# corpus and the IR unit tests under it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

cmake --preset default >/dev/null
cmake --build --preset default -j "$jobs"
ctest --preset default -j "$jobs"

if [ "${WEIR_SKIP_ASAN:-0}" != 1 ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ctest --preset asan -j "$jobs" -L 'unit|fuzz'
fi
