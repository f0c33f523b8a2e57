#!/usr/bin/env bash
# Builds fdlab and runs `fdlab bench` on the best backend present (a CUDA GPU when one is
# usable, else the CPU), writing JSON and a roofline plot under bench/runs/<date>-<host>/.
# Extra arguments go to `fdlab bench` (e.g. --suite amd-laplacian --size 256).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p fdlab
# On a GPU host NVRTC comes with the CUDA toolkit.
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
out="bench/runs/$(date -u +%F)-$(hostname -s)"
mkdir -p "$out"
./target/release/fdlab info
./target/release/fdlab bench --json "$out/bench.json" --plot "$out/roofline.png" "$@"
echo "results: $out/bench.json, $out/roofline.png"
