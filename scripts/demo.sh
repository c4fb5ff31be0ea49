#!/usr/bin/env bash
# README command 1: install what is missing, build Weir, and run its main job
# on the bundled sample CNN.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target weir
./build/default/app/weir inspect resources/models/cnn.onnx
