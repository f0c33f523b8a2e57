#!/usr/bin/env bash
# Session 8, device call 7 (H100): the whole conformance suite on the H100, then the final
# run's winners (their exact tile shapes) through the conformance cases, plain and under
# compute-sanitizer memcheck and racecheck.
B=target/release/fdlab
t0=$(date +%s)
timeout 280 $B check --backend cuda --json $OUT/check.json > $OUT/check.log 2>&1
echo "check rc=$? after $(( $(date +%s) - t0 )) s"; tail -2 $OUT/check.log
W=$(python3 -c "import json; print(' '.join(sorted({r['strategy'] for r in json.load(open('bench/runs/2026-11-24-h100-roofline-s8-final/roofline.json'))['results'] if r['strategy'].split('-')[0] in ('smarch','qmarch','zmarch','pencil')})))")
echo "winners: $W"
timeout 120 $B check --backend cuda $(for s in $W; do echo --strategy $s; done) --json $OUT/check-winners.json \
  > $OUT/check-winners.log 2>&1; echo "check winners rc=$?"; tail -1 $OUT/check-winners.log
for tool in memcheck racecheck; do
  for s in $W; do
    el=$(( $(date +%s) - t0 )); [ $el -gt 540 ] && { echo "[${el}s] $tool $s not run (time)" >> $OUT/sanitizers.txt; continue; }
    timeout 90 compute-sanitizer --tool $tool $B check --backend cuda --strategy $s > $OUT/san.tmp 2>&1; rc=$?
    echo "[$(( $(date +%s) - t0 ))s] $tool $s rc=$rc $(grep -E 'checks passed|FAIL' $OUT/san.tmp | tail -1) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.tmp | tail -1)" >> $OUT/sanitizers.txt
  done
done
rm -f $OUT/san.tmp; cat $OUT/sanitizers.txt
