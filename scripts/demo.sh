#!/usr/bin/env bash
# README command 1: install what is missing, build Weir, and run its main job
# on the bundled sample CNN: inspect it, then expand every operator, compile it
# for the CPU with LLVM, run it (median of 20 runs), and check the outputs
# against the reference interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target weir
./build/default/app/weir inspect resources/models/cnn.onnx
./build/default/app/weir run resources/models/cnn.onnx --random 0 --repeat 20 --check
