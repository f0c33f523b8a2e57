#!/usr/bin/env bash
# Session 8, device call 1: the issue-4 roofline on an H100 (the issue allows H100 or H200;
# sessions 1-7 measured only the H200). Tune over session 6's curated list, then the full
# roofline bench with that cache, within one call's 600 s.
B=target/release/fdlab
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.memory,memory.total --format=csv > $OUT/gpu.txt
export FDLAB_TUNE_CACHE=$OUT/tune-cache.json
timeout 330 $B tune --reps 10 $(sed 's/^/--strategy /' bench/experiments/final-s6.txt) \
  --json $OUT/tune.json > $OUT/tune.log 2>&1; echo "tune rc=$? after $(( $(date +%s) - t0 )) s"
left=$(( 585 - ($(date +%s) - t0) ))
timeout $left $B bench --backend cuda --suite roofline --reps 20 --json $OUT/roofline.json \
  --plot $OUT/roofline.png > $OUT/roofline.log 2>&1; echo "bench rc=$? after $(( $(date +%s) - t0 )) s"
grep -E "^roofline" $OUT/tune.log | head -20
