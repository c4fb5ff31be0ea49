#!/usr/bin/env bash
# README command 1: install what is missing, build Weir, and run its main job
# on the bundled sample CNN: inspect it; optimize it with the auto recipe
# (fold constants, remove identities, fold batch norms, expand every
# operator), verifying the result against the unoptimized model and saving
# the session; then compile the session's program for the CPU with LLVM, run
# it (median of 20 runs) and check the outputs against the reference
# interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target weir
./build/default/app/weir inspect resources/models/cnn.onnx
./build/default/app/weir optimize resources/models/cnn.onnx --recipe auto \
  --verify -o build/cnn.weir
./build/default/app/weir run build/cnn.weir --random 0 --repeat 20 --check
