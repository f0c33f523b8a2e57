#!/usr/bin/env bash
# One device call: the whole conformance suite on the GPU, then compute-sanitizer memcheck and
# racecheck, one run per strategy × precision so that a slow one cannot take the others with it.
# Logs under $OUT. Usage: scripts/device/verify.sh (repo root, binary carried).
#   CHECK_S=0       skip the plain check (e.g. when the same binary was checked before)
#   MEM, RACE       strategy names (default: all of `fdlab check`'s set / its shared-memory ones)
#   PRECS           precisions for the sanitizer runs (default "f32 f64")
#   MEM_S, RACE_S   seconds allowed per sanitizer run
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=${FDLAB:-target/release/fdlab}
O=${OUT:-/tmp/out}
mkdir -p "$O"
ALL="naive-32x4x2 ldg-32x4x2 texture-32x4x2 shared-32x8 pencil-64x4-t64x4 pencil-64x32-t8x32
 naive-256x1x1 ppt4-256x1x1 zmarch-32x4-v1-c64-u2-r2 zmarch-8x3-v2-c5-u3-r3-cs
 zmarch-16x2-v4-c7-u4-r1 zmarch-32x2-v4-c7-u2-r4 zmarch-32x3-v2-c9-u4-r2-cs smarch-64x4-r2-c64-p4
 smarch-12x3-r3-c5-p3 smarch-8x3-r2-c5-p2-v2 smarch-16x2-r3-c6-p3-v4 smarch-32x2-r1-c7-p8
 shared-24x5 pencil-40x6-t8x3 smarch-12x3-r3-c5-p1-l smarch-8x3-r2-c5-p2-v2-l
 smarch-16x2-r2-c7-p2-v2-l2 pencil-128x4-t8x2"
SHARED="shared-32x8 shared-24x5 pencil-64x4-t64x4 pencil-64x32-t8x32 pencil-40x6-t8x3
 smarch-64x4-r2-c64-p4 smarch-12x3-r3-c5-p3 smarch-8x3-r2-c5-p2-v2 smarch-16x2-r3-c6-p3-v4
 smarch-32x2-r1-c7-p8 smarch-12x3-r3-c5-p1-l smarch-8x3-r2-c5-p2-v2-l smarch-16x2-r2-c7-p2-v2-l2
 pencil-128x4-t8x2"
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
if [ "${CHECK_S:-260}" != 0 ]; then
  stamp check | tee "$O/check.log"
  timeout ${CHECK_S:-260} $B check --backend cuda --json "$O/check.json" 2>&1 | tee -a "$O/check.log"
  stamp "check rc=$?" | tee -a "$O/check.log"
fi
# Killed outright at their limit (a SIGTERM'd sanitizer may leave the checked process holding
# the GPU). One summary line per run goes to sanitizers.txt.
for tool in memcheck racecheck; do
  if [ $tool = memcheck ]; then list=${MEM:-$ALL}; lim=${MEM_S:-60}; else list=${RACE:-$SHARED}; lim=${RACE_S:-60}; fi
  for s in $list; do
    for p in ${PRECS:-f32 f64}; do
      stamp "$tool $s $p" >> "$O/$tool.log"
      timeout -s KILL $lim compute-sanitizer --tool $tool $B check --backend cuda --precision $p --strategy $s > /tmp/san.log 2>&1
      rc=$?
      tail -8 /tmp/san.log >> "$O/$tool.log"
      summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|checks passed|FAIL' /tmp/san.log | tr '\n' ' ')
      stamp "$tool $s $p rc=$rc $summary" | tee -a "$O/sanitizers.txt" >> "$O/$tool.log"
    done
  done
done
stamp all done | tee -a "$O/sanitizers.txt"
