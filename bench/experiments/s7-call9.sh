#!/usr/bin/env bash
# Session 7, device call 9: one row per thread (twice the warps per SM, same tile) for the
# lap25 TMA partial-sum march.
B=target/release/fdlab
timeout 150 $B tune --reps 10 $(sed 's/^/--strategy /' bench/experiments/occupancy-s7.txt) \
  --json $OUT/tune-occupancy.json > $OUT/tune-occupancy.log 2>&1; echo "tune rc=$?"
grep -E "^roofline +lap3d-25pt" $OUT/tune-occupancy.log
