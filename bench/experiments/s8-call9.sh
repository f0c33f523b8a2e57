#!/usr/bin/env bash
# Session 8, device call 9 (H200): the issue-4 roofline on the H200 with the union of session 6's
# list and the H100 list (bench/experiments/final-s8-h200.txt), then the full
# roofline bench with that cache, within 470 s (the session's device time left).
B=target/release/fdlab
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.memory,memory.total --format=csv > $OUT/gpu.txt
export FDLAB_TUNE_CACHE=$OUT/tune-cache.json
timeout 220 $B tune --reps 7 $(sed 's/^/--strategy /' bench/experiments/final-s8-h200.txt) \
  --json $OUT/tune.json > $OUT/tune.log 2>&1; echo "tune rc=$? after $(( $(date +%s) - t0 )) s"
left=$(( 465 - ($(date +%s) - t0) ))
timeout $left $B bench --backend cuda --suite roofline --reps 20 --json $OUT/roofline.json \
  --plot $OUT/roofline.png > $OUT/roofline.log 2>&1; echo "bench rc=$? after $(( $(date +%s) - t0 )) s"
grep -E "^roofline" $OUT/tune.log | head -20
