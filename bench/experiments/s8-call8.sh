#!/usr/bin/env bash
# Session 8, device call 8 (H100): the final run's winners through the conformance cases again
# with the check that counts a pre-launch refusal over the device's limits as "not run"
# (column `limit`) instead of a failure; the racecheck call 7 had no time for; and a second
# roofline bench with call 6's tune cache (same binary code), to show the run-to-run spread.
B=target/release/fdlab
t0=$(date +%s)
W=$(python3 -c "import json; print(' '.join(sorted({r['strategy'] for r in json.load(open('bench/runs/2026-11-24-h100-roofline-s8-final/roofline.json'))['results'] if r['strategy'].split('-')[0] in ('smarch','qmarch','zmarch','pencil')})))")
timeout 120 $B check --backend cuda $(for s in $W; do echo --strategy $s; done) --json $OUT/check-winners.json \
  > $OUT/check-winners.log 2>&1; echo "check winners rc=$?"; tail -2 $OUT/check-winners.log
timeout 90 compute-sanitizer --tool racecheck $B check --backend cuda --strategy zmarch-256x1-v4-c8-u4-r1 > $OUT/racecheck-zmarch.txt 2>&1
echo "racecheck rc=$? $(grep -E 'checks passed|RACECHECK SUMMARY' $OUT/racecheck-zmarch.txt | tr '\n' ' ')"
export FDLAB_TUNE_CACHE=bench/runs/2026-11-24-h100-roofline-s8-final/tune-cache.json
left=$(( 585 - ($(date +%s) - t0) ))
timeout $left $B bench --backend cuda --suite roofline --reps 20 --json $OUT/roofline-repeat.json \
  --plot $OUT/roofline-repeat.png > $OUT/roofline-repeat.log 2>&1; echo "bench rc=$? after $(( $(date +%s) - t0 )) s"
