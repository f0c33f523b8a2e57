#!/usr/bin/env bash
# Builds fdlab and runs `fdlab bench` on the best backend present (a CUDA GPU when one is
# usable, else the CPU). Results go to fdlab-results/<date>-<host>/ (git-ignored): bench.json
# and a roofline chart roofline.png. Extra arguments go to `fdlab bench`
# (e.g. --suite amd-laplacian --size 256).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p fdlab-cli
bin="${CARGO_TARGET_DIR:-target}/release/fdlab"
# On a GPU host NVRTC comes with the CUDA toolkit.
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
out="fdlab-results/$(date -u +%Y-%m-%dT%H%M)-$(hostname -s)"
mkdir -p "$out"
echo "==> results will be written to $out/"
"$bin" info
"$bin" bench --json "$out/bench.json" --plot "$out/roofline.png" "$@"
echo "==> results: $out/bench.json, $out/roofline.png"
