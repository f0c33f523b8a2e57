#!/usr/bin/env bash
# Runs fdlab's tests from a fresh clone: installs NVRTC from PyPI (so every generated CUDA kernel
# is compiled for sm_90 even without a GPU), then `cargo test` over the whole workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

NVRTC_VERSION=13.0.88
PYDEPS="$PWD/target/pydeps"
lib="$PYDEPS/nvidia/cu13/lib"
if [ ! -e "$lib/libnvrtc.so.13" ]; then
    echo "==> installing nvidia-cuda-nvrtc==$NVRTC_VERSION into $PYDEPS"
    mkdir -p "$PYDEPS"
    python3 -m pip install --quiet --disable-pip-version-check --target "$PYDEPS" \
        "nvidia-cuda-nvrtc==$NVRTC_VERSION" ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
        --target "$PYDEPS" "nvidia-cuda-nvrtc==$NVRTC_VERSION"
fi
if [ ! -e "$lib/libnvrtc.so.13" ]; then
    echo "error: libnvrtc.so.13 not found under $lib after installing nvidia-cuda-nvrtc" >&2
    exit 1
fi
export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
# The codegen tests fail (instead of skipping) if NVRTC cannot be loaded.
export FDLAB_REQUIRE_NVRTC=1
SECONDS=0
echo "==> cargo test --workspace (NVRTC from $lib)"
cargo test --workspace "$@"
echo "==> cargo test took ${SECONDS} s; the front's examples on the CPU"
for ex in 01_derivative 02_custom_stencil 03_gradient; do
    FDLAB_BACKEND=cpu cargo run --quiet --profile test -p fdlab --example "$ex"
done
echo "==> python/test.sh (pip install . in a fresh venv, then pytest)"
./python/test.sh
echo "==> scripts/test.sh done: ${SECONDS} s after the NVRTC install"
