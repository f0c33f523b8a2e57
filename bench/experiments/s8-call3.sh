#!/usr/bin/env bash
# Session 8, device call 3: a second H100 search (bench/experiments/explore-s8-h100-2.txt) around
# call 1's winners for the rows it missed (lap7 f64 and f32 512^3, gradient, lap25 f32, lap2d).
B=target/release/fdlab
export FDLAB_TUNE_CACHE=$OUT/tune-cache.json
timeout 570 $B tune --reps 10 $(sed 's/^/--strategy /' bench/experiments/explore-s8-h100-2.txt) \
  --json $OUT/tune.json > $OUT/tune.log 2>&1; echo "tune rc=$?"
grep -E "^roofline" $OUT/tune.log
