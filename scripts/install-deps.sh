#!/usr/bin/env bash
# Installs every Debian 12 package Weir and its tests need. Idempotent: when
# everything is present it changes nothing and makes no network call. Works as
# root (no sudo needed) or through sudo for other users.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git clang-format
  # the design card's libraries
  nlohmann-json3-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  llvm-19-dev
  qt6-base-dev qt6-svg-dev
  libgraphviz-dev
  pybind11-dev python3-dev
  libopenblas-dev
  # tests: GoogleTest, ONNX conformance data, Debian's Python with onnx+numpy
  libgtest-dev libgmock-dev libonnx-testdata
  # the GUI tests render text offscreen with DejaVu; the screenshot test
  # runs the real X11 (xcb) platform on a virtual X server
  fonts-dejavu-core xvfb xauth
  python3-onnx python3-numpy python3-pytest
  # weir.from_torch / compile_module and their tests (Debian's torch 1.13)
  python3-torch python3-torchvision
  # scripts/fuzz.sh: libFuzzer and the sanitizers of the LLVM Weir uses
  clang-19 libclang-rt-19-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
