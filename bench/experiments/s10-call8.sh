#!/usr/bin/env bash
# Session 10, device call 8 (H100): the final binary through the whole conformance suite
# (every strategy of the conformance set, the split-slot entries included) and the session's
# winners at their exact shapes.
B=target/release/fdlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.memory --format=csv > $OUT/gpu.txt
$B --version
timeout 330 $B check --backend cuda --json $OUT/check.json > $OUT/check.log 2>&1
echo "check rc=$?"; tail -1 $OUT/check.log; grep -E "FAIL" $OUT/check.log | head
W=$(python3 -c "import json; print(' '.join(sorted({r['strategy'] for r in json.load(open('bench/runs/2026-11-25-h100-roofline-s10/roofline-repeat.json'))['results'] if r['strategy'].split('-')[0] in ('smarch','qmarch','zmarch','pencil')})))")
timeout 200 $B check --backend cuda $(for s in $W; do echo --strategy $s; done) --json $OUT/check-winners.json \
  > $OUT/check-winners.log 2>&1; echo "check winners rc=$?"; tail -2 $OUT/check-winners.log
