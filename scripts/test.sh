#!/usr/bin/env bash
# README command 2: install what is missing, build everything and run the
# whole test suite; then build the ASan+UBSan preset and run the suite again
# under it (the hostile-input corpus must be rejected without a sanitizer
# report). WEIR_SKIP_ASAN=1 skips the second half.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

cmake --preset default >/dev/null
cmake --build --preset default -j "$jobs"
# The suite's compile cache (WEIR_CACHE_DIR in CMakePresets.json) starts
# empty, so every run compiles what it tests.
rm -rf build/default/test-cache
ctest --preset default -j "$jobs"

if [ "${WEIR_SKIP_ASAN:-0}" != 1 ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  rm -rf build/asan/test-cache
  ctest --preset asan -j "$jobs"
fi
