#!/usr/bin/env bash
# Runs fdlab on a GPU host that has no Rust toolchain, with a binary built elsewhere
# (`cargo build --release -p fdlab-cli`, then copy target/release/fdlab over).
# Usage: FDLAB=path/to/fdlab OUT=dir scripts/device-run.sh [check|roofline|suites|all]
# Writes JSON, PNG and logs under $OUT; the tune cache goes to $OUT/tune-cache.json.
set -uo pipefail
bin="${FDLAB:-./fdlab}"
out="${OUT:?set OUT to the folder for the results}"
mkdir -p "$out"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export FDLAB_TUNE_CACHE="${FDLAB_TUNE_CACHE:-$out/tune-cache.json}"
what="${1:-all}"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.memory,ecc.mode.current \
    --format=csv >"$out/gpu.txt" 2>&1 || true
"$bin" info | tee "$out/info.txt"
if [[ $what == check || $what == all ]]; then
    "$bin" check --backend cuda --json "$out/check.json" >"$out/check.log" 2>&1
    tail -n 5 "$out/check.log"
fi
if [[ $what == roofline || $what == all ]]; then
    "$bin" tune --suite roofline >"$out/tune.log" 2>&1
    "$bin" bench --backend cuda --suite roofline --reps 20 \
        --json "$out/roofline.json" --plot "$out/roofline.png" 2>&1 | tee "$out/roofline.log"
fi
if [[ $what == suites || $what == all ]]; then
    "$bin" bench --backend cuda --suite nvidia-derivative --suite laplace-variants \
        --suite amd-laplacian --reps 20 --json "$out/published.json" 2>&1 | tee "$out/published.log"
fi
