#!/usr/bin/env bash
# Runs the generated temporal-blocking pass kernels (heat and wave) on the CPU, one
# std::thread per CUDA thread and std::barrier for __syncthreads (shared memory and the
# output poisoned with NaN), and compares several passes bit for bit with single steps summed
# in the one-step kernel's order. No GPU needed; g++ with C++20. From the repository root:
#   scripts/temporal-emulation/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
FDLAB_TB_DUMP="$work" cargo test -q -p fdlab-solvers --lib dump_for_emulation -- --ignored >/dev/null
FDLAB_WP_DUMP="$work" cargo test -q -p fdlab-solvers --lib dump_wave_for_emulation -- --ignored >/dev/null
fail=0
for f in "$work"/*.cu; do
  b=$(basename "$f" .cu)
  cp "$f" "$work/kernel.cu"
  # Heat kernels are named s<shape>_…, wave kernels w<shape>_….
  harness="$here/harness.cpp"
  [[ $b == w* ]] && harness="$here/wave_harness.cpp"
  g++ -std=c++20 -O1 -ffp-contract=off -pthread -w -I"$work" -o "$work/bin" "$harness"
  # A heat kernel compiles its grid in: its name ends with the grid and passes to run.
  if [[ $b == *__* ]]; then grids=("$(tr _ ' ' <<< "${b##*__}")")
  elif grep -q "DIM 3" "$f"; then grids=("37 29 23 2" "6 5 4 2" "70 41 19 1"); else grids=("67 1 45 3" "9 1 6 2" "300 1 37 1"); fi
  for g in "${grids[@]}"; do
    # shellcheck disable=SC2086
    "$work/bin" $g "$b" || fail=1
  done
done
exit $fail
