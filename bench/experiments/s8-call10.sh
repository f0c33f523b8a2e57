#!/usr/bin/env bash
# Session 8, device call 10 (H100): the final binary (check's `limit` column as a function,
# the built-in search with the H100 shapes) through the whole conformance suite and the run-A
# winners' exact shapes.
B=target/release/fdlab
timeout 280 $B check --backend cuda --json $OUT/check.json > $OUT/check.log 2>&1
echo "check rc=$?"; tail -1 $OUT/check.log
W=$(python3 -c "import json; print(' '.join(sorted({r['strategy'] for r in json.load(open('bench/runs/2026-11-24-h100-roofline-s8-final/roofline.json'))['results'] if r['strategy'].split('-')[0] in ('smarch','qmarch','zmarch','pencil')})))")
timeout 150 $B check --backend cuda $(for s in $W; do echo --strategy $s; done) --json $OUT/check-winners.json \
  > $OUT/check-winners.log 2>&1; echo "check winners rc=$?"; tail -2 $OUT/check-winners.log
