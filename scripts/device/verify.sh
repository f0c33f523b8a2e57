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
for tool in memcheck racecheck; do
  if [ $tool = memcheck ]; then list=${MEM:-smarch}; lim=${MEM_S:-60}; else list=${RACE:-smarch}; lim=${RACE_S:-60}; fi
  for s in $list; do
    stamp "$tool $s" | tee -a "$O/$tool.log"
    timeout -s KILL $lim compute-sanitizer --tool $tool $B check --backend cuda --precision f32 --strategy $s 2>&1 | tail -12 | tee -a "$O/$tool.log"
    stamp "$tool $s rc=$?" | tee -a "$O/$tool.log"
  done
done
stamp all done
