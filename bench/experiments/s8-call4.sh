#!/usr/bin/env bash
# Session 8, device call 4 (H100): conformance of the shared-row partial-sum march
# (qmarch ... -tNas), then an A/B tune of -tNa against -tNas for the 25-point Laplacian, and
# more tile shapes for the 7-point Laplacian in f32 at 512^3.
B=target/release/fdlab
export FDLAB_TUNE_CACHE=$OUT/tune-cache.json
timeout 150 $B check --backend cuda --strategy qmarch-12x3-r3-c5-v1-t2as --strategy qmarch-8x3-r2-c6-v2-t1as \
  --strategy qmarch-12x3-r3-c5-v1-t2a --strategy qmarch-16x16-r4-c64-v4-t2as --strategy qmarch-32x16-r2-c64-v2-t2as \
  --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$?"; tail -5 $OUT/check.log
timeout 200 $B tune --reps 20 --suite roofline --size 512 $(sed 's/^/--strategy /' bench/experiments/shared-rows-s8.txt) \
  --json $OUT/tune-rows.json > $OUT/tune-rows.log 2>&1; echo "tune rows rc=$?"
timeout 150 $B tune --reps 20 --precision f32 $(sed 's/^/--strategy /' bench/experiments/lap7f32-s8.txt) \
  --json $OUT/tune-lap7.json > $OUT/tune-lap7.log 2>&1; echo "tune lap7 rc=$?"
grep -E "^roofline +lap3d" $OUT/tune-rows.log $OUT/tune-lap7.log
