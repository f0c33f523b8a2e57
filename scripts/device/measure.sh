#!/usr/bin/env bash
# One device call: tune, roofline bench with plot, ncu on the marching kernels, and the
# literal-vs-__constant__ weights comparison. Writes logs/JSON under $OUT (≤ 8 files).
# Usage (on the device machine, repo root, binary carried): scripts/device/measure.sh
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=${FDLAB:-target/release/fdlab}
O=${OUT:-/tmp/out}
mkdir -p "$O"
export FDLAB_TUNE_CACHE=$O/tune-cache.json
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
# CHECK="--strategy …" runs that part of the conformance suite first.
if [ -n "${CHECK:-}" ]; then
  stamp check | tee "$O/check.log"
  timeout ${CHECK_S:-200} $B check --backend cuda $CHECK --json "$O/check.json" 2>&1 | tee -a "$O/check.log"
  stamp "check rc=$?" | tee -a "$O/check.log"
fi
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv
  $B info
  stamp tune
  timeout ${TUNE_S:-240} $B tune --reps 10 --json "$O/tune.json"
  stamp "tune done rc=$?"
} 2>&1 | tee -a "$O/run.log"
stamp roofline | tee -a "$O/run.log"
timeout ${BENCH_S:-120} $B bench --backend cuda --suite roofline --json "$O/roofline.json" --plot "$O/roofline.png" 2>&1 | tee -a "$O/run.log"
# SUITES=1: the published suites (issue 3) with the same binary.
if [ "${SUITES:-0}" = 1 ]; then
  stamp suites | tee -a "$O/run.log"
  timeout ${SUITES_S:-150} $B bench --backend cuda --suite nvidia-derivative --suite laplace-variants --suite amd-laplacian --json "$O/suites.json" 2>&1 | tee -a "$O/run.log"
  stamp "suites rc=$?" | tee -a "$O/run.log"
fi
if [ "${NCU:-1}" = 1 ]; then
  stamp ncu | tee "$O/ncu.txt"
  timeout ${NCU_S:-150} ncu --clock-control none -k regex:${NCU_K:-march} -c ${NCU_C:-40} \
    ${NCU_SECTIONS:-} --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__grid_size,launch__block_size,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio \
    $B bench --backend cuda --suite roofline --size 512 --reps 1 >> "$O/ncu.txt" 2>&1
  stamp "ncu rc=$?" | tee -a "$O/ncu.txt"
fi
if [ "${COEFFS:-1}" = 1 ]; then
  for c in immediate constant; do
    stamp "nvidia-derivative $c" | tee -a "$O/run.log"
    timeout ${COEFF_S:-60} $B bench --backend cuda --suite nvidia-derivative --coefficients $c --json "$O/nv-$c.json" 2>&1 | tee -a "$O/run.log"
  done
fi
# RACE="--strategy …": racecheck over that part of the conformance suite (f32), last, so a
# sanitizer cut short by its time limit cannot hold the GPU while something else is measured.
if [ -n "${RACE:-}" ]; then
  for tool in ${SAN:-racecheck}; do
    stamp $tool | tee -a "$O/check.log"
    timeout -s KILL ${RACE_S:-120} compute-sanitizer --tool $tool $B check --backend cuda --precision f32 $RACE 2>&1 | tail -20 | tee -a "$O/check.log"
    stamp "$tool rc=$?" | tee -a "$O/check.log"
  done
fi
stamp all done
