#!/usr/bin/env bash
# One device call: the whole conformance suite on the GPU, then memcheck and racecheck over
# subsets (f32). Logs under $OUT. Usage: scripts/device/verify.sh (repo root, binary carried).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=${FDLAB:-target/release/fdlab}
O=${OUT:-/tmp/out}
mkdir -p "$O"
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
stamp check | tee "$O/check.log"
timeout ${CHECK_S:-260} $B check --backend cuda --json "$O/check.json" 2>&1 | tee -a "$O/check.log"
stamp "check rc=$?" | tee -a "$O/check.log"
# Sanitizers last and killed outright at their limit (a SIGTERM'd sanitizer may leave the
# checked process holding the GPU).
stamp memcheck | tee "$O/memcheck.log"
timeout -s KILL ${MEM_S:-180} compute-sanitizer --tool memcheck --leak-check full $B check --backend cuda --precision f32 ${MEM:---strategy smarch} 2>&1 | tail -60 | tee -a "$O/memcheck.log"
stamp "memcheck rc=$?" | tee -a "$O/memcheck.log"
stamp racecheck | tee "$O/racecheck.log"
timeout -s KILL ${RACE_S:-120} compute-sanitizer --tool racecheck $B check --backend cuda --precision f32 ${RACE:---strategy smarch} 2>&1 | tail -60 | tee -a "$O/racecheck.log"
stamp "racecheck rc=$?" | tee -a "$O/racecheck.log"
stamp all done
