#!/usr/bin/env bash
# Session 12, device call 8 (H100): the final commit's whole conformance suite (the -e entries
# with every copy mode included), memcheck and racecheck over the -e entries after the fix
# that moved the bulk kernels' parking buffer past their mbarriers.
B=target/release/fdlab
t0=$(date +%s)
nvidia-smi --query-gpu=name,ecc.mode.current --format=csv > $OUT/gpu.txt
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B check --backend cuda --precision f32 \
    --strategy smarch-8x3-r2-c5-p1-v2-l-e --strategy smarch-4x2-r3-c2-p2-v4-l2-e --strategy smarch-12x3-r3-c5-p3-e --strategy smarch-8x3-r2-c5-p1-v2-b-e > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|checks passed" /tmp/san-$tool.log | head -3
done
cat /tmp/san-memcheck.log /tmp/san-racecheck.log | grep -vE "^\s*$" | tail -40 > $OUT/sanitizers.log
timeout 400 $B check --backend cuda --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$?"; tail -1 $OUT/check.log; grep FAIL $OUT/check.log | head -3
echo "total $(( $(date +%s) - t0 )) s"
