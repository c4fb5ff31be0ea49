#!/usr/bin/env bash
# Benchmarks Weir against ONNX Runtime and PyTorch eager on the bundled sample
# models and four PyTorch models (ResNet-18, ResNet-50, MobileNetV2, a BERT-base
# encoder layer), and checks Weir's outputs against ONNX Runtime's.
#
#   scripts/bench.sh [--models cnn,resnet50,...] [--runs N] [--dim N=1]
#                    [--quick] [--timeout S] [--json FILE]
#   scripts/bench.sh --growth [--sizes 1000,2000,...] [--families chain,...]
#
# --growth runs tests/bench/growth.py instead: optimize and compile times of
# synthetic chains, residual stacks and wide concats as they grow, with a
# plot in build/bench/growth.svg.
#
# Idempotent set-up, each step only when needed: the Debian packages Weir
# needs (scripts/install-deps.sh), python3-torch and python3-torchvision,
# Node.js, onnxruntime-node into build/bench/node_modules, the release build of
# `weir`, the exported models in build/bench/models. Then it runs
# tests/bench/bench.py with the arguments given here (see tests/bench/README.md).
# Works as root or through sudo.
set -euo pipefail

cd "$(dirname "$0")/.."
ORT_VERSION="${WEIR_BENCH_ORT_VERSION:-1.30.0}"
BENCH_DIR=build/bench

for arg in "$@"; do
  if [ "$arg" = "-h" ] || [ "$arg" = "--help" ]; then
    exec /usr/bin/python3 tests/bench/bench.py --help
  fi
done

apt_install() {
  local missing=()
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "bench: installing ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "bench: run as root or install sudo" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

installed_ort_version() {
  local pkg="$BENCH_DIR/node_modules/onnxruntime-node/package.json"
  [ -f "$pkg" ] && node -p "require('./$pkg').version" 2>/dev/null || true
}

scripts/install-deps.sh
# time: GNU time, for the peak memory of each Weir process.
apt_install python3-torch python3-torchvision time
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt_install nodejs npm
fi

if [ "$(installed_ort_version)" != "$ORT_VERSION" ]; then
  echo "bench: installing onnxruntime-node@$ORT_VERSION into $BENCH_DIR"
  mkdir -p "$BENCH_DIR"
  # The package bundles the CPU binaries; skip its optional CUDA download.
  ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$BENCH_DIR" --no-audit --no-fund \
    --loglevel=error "onnxruntime-node@$ORT_VERSION"
fi

[ -f build/release/build.ninja ] || cmake --preset release
# WEIR_BENCH_JOBS=1 builds on one core (ninja's default uses them all).
cmake --build --preset release --target weir ${WEIR_BENCH_JOBS:+-j "$WEIR_BENCH_JOBS"}

if [ "${1:-}" = "--growth" ]; then
  shift
  exec /usr/bin/python3 tests/bench/growth.py "$@"
fi
# bench.py exports the PyTorch models it is asked for that are not in
# build/bench/models yet (tests/bench/export_models.py).
exec /usr/bin/python3 tests/bench/bench.py "$@"
