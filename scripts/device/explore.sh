#!/usr/bin/env bash
# One device call for an exploration: time the strategies listed in $LIST (one per line) on
# every roofline case with `fdlab tune --strategy …` (no winners cache touched: a private one),
# $CHECK's conformance strategies are checked first; profile $NCU_STRATS with ncu on the 512³ f64 cases, then compute-sanitizer over the
# strategies in $SAN_STRATS (f32 and f64). Logs and JSON under $OUT.
# Usage (repo root, binary carried): LIST=bench/experiments/explore-1.txt scripts/device/explore.sh
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=${FDLAB:-target/release/fdlab}
O=${OUT:-/tmp/out}
mkdir -p "$O"
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
export FDLAB_TUNE_CACHE=/tmp/explore-cache.json
# CHECK="--strategy …": that part of the conformance suite first.
if [ -n "${CHECK:-}" ]; then
  timeout ${CHECK_S:-120} $B check --backend cuda $CHECK --json "$O/check.json" > "$O/check.log" 2>&1
  stamp "check rc=$? $(tail -1 "$O/check.log")"
fi
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv
  stamp explore
  args=$(sed 's/^/--strategy /' "${LIST:?LIST=file of strategies}" | tr '\n' ' ')
  timeout ${EXPLORE_S:-300} $B tune --reps ${REPS:-10} $args --json "$O/explore.json" ${TUNE_ARGS:-}
  stamp "explore rc=$?"
} 2>&1 | grep -v '^  skipped' | tee "$O/explore.log"
if [ -n "${NCU_STRATS:-}" ]; then
  stamp ncu | tee "$O/ncu.txt"
  args=$(for s in $NCU_STRATS; do echo -n "--strategy $s "; done)
  timeout ${NCU_S:-120} ncu --clock-control none -k regex:march -c ${NCU_C:-24} \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_op_read_hit_rate.pct,l1tex__t_sector_hit_rate.pct,l1tex__t_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size \
    $B bench --backend cuda --suite roofline --size 512 --precision ${NCU_PREC:-f64} --reps 1 $args >> "$O/ncu.txt" 2>&1
  stamp "ncu rc=$?" | tee -a "$O/ncu.txt"
fi
for s in ${SAN_STRATS:-}; do
  for tool in memcheck racecheck; do
    for p in f32 f64; do
      timeout -s KILL ${SAN_S:-60} compute-sanitizer --tool $tool $B check --backend cuda --precision $p --strategy $s > /tmp/san.log 2>&1
      rc=$?
      summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|checks passed|FAIL' /tmp/san.log | tr '\n' ' ')
      stamp "$tool $s $p rc=$rc $summary" | tee -a "$O/sanitizers.txt"
    done
  done
done
stamp all done
