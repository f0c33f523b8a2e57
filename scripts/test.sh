#!/usr/bin/env bash
# Runs fdlab's tests from a fresh clone: installs NVRTC from PyPI (so every generated CUDA kernel
# is compiled for sm_90 even without a GPU), then `cargo test` over the whole workspace, the
# front's examples and python/test.sh (which runs beside the Rust tests).
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
# No incremental cache: a fresh clone gains nothing from writing one, and without it the
# workspace crates compile in about a tenth less CPU time (a later incremental `cargo test`
# rebuilds them once).
export CARGO_INCREMENTAL=0
SECONDS=0
target="${CARGO_TARGET_DIR:-$PWD/target}"
mkdir -p "$target"
echo "==> cargo test --workspace --no-run (builds every test, example and the fdlab binary)"
cargo test --workspace --no-run "$@"
# The Rust tests leave one of the two cores idle at times: the Python package builds (maturin,
# through pip) and is tested meanwhile. Its output is printed at the end. It builds in the
# `pytest` profile (Cargo.toml: the dev profile with the solver crates optimised, for the FWI
# example's test) rather than the release profile with link-time optimisation, which would
# take the CPU from the Rust tests; pytest takes about 20 s.
py_log="$target/python-test.log"
echo "==> python/test.sh in the background (pip install . in a fresh venv, pytest profile, then pytest; log: $py_log)"
MATURIN_PEP517_ARGS="--profile pytest" setsid ./python/test.sh >"$py_log" 2>&1 &
py_pid=$!
trap 'kill -- -"$py_pid" 2>/dev/null || true' EXIT
echo "==> cargo test --workspace (NVRTC from $lib)"
cargo test --workspace "$@"
echo "==> cargo test took ${SECONDS} s; the front's examples on the CPU (built by cargo test)"
for ex in 01_derivative 02_custom_stencil 03_gradient; do
    if [ -x "$target/debug/examples/$ex" ]; then
        FDLAB_BACKEND=cpu "$target/debug/examples/$ex"
    else
        FDLAB_BACKEND=cpu cargo run --quiet --profile test -p fdlab --example "$ex"
    fi
done
echo "==> waiting for python/test.sh"
py_status=0
wait "$py_pid" || py_status=$?
cat "$py_log"
if [ "$py_status" -ne 0 ]; then
    echo "error: python/test.sh failed (exit $py_status)" >&2
    exit "$py_status"
fi
echo "==> scripts/test.sh done: ${SECONDS} s after the NVRTC install"
