#!/usr/bin/env bash
# Session 10, device call 5 (H100): the issue-4 roofline bench with call 4's tune cache
# (median of 20, every output checked against the CPU, chart), then the new winners (split
# slots) through conformance, memcheck and racecheck.
B=target/release/fdlab
D=bench/runs/2026-11-25-h100-roofline-s10
t0=$(date +%s)
cp $D/tune-cache.json /tmp/tune-cache.json
export FDLAB_TUNE_CACHE=/tmp/tune-cache.json
timeout 330 $B bench --backend cuda --suite roofline --reps 20 --json $OUT/roofline.json \
  --plot $OUT/roofline.png > $OUT/roofline.log 2>&1; echo "bench rc=$? after $(( $(date +%s) - t0 )) s"
W="--strategy qmarch-32x16-r2-c256-v2-w2a --strategy qmarch-32x16-r2-c256-v4-w2a"
timeout 100 $B check --backend cuda $W --json $OUT/check-winners.json > $OUT/check-winners.log 2>&1
echo "check winners rc=$?"; tail -1 $OUT/check-winners.log
for tool in memcheck racecheck; do
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 9 $B check --backend cuda --precision f32 $W \
    > $OUT/san-$tool.log 2>&1; echo "$tool f32 rc=$? after $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|checks" $OUT/san-$tool.log | tail -2
done
grep -E "^roofline" $OUT/roofline.log | awk '{print $2, $3, $4, $5, $(NF-1)}'
