#!/usr/bin/env bash
# Session 7, device call 8: warp releases with all of warp 0 waiting (call 6's version, where
# thread 0 alone waited, hung at 512^3): conformance, then f64 and f32 tunes, each under a limit.
B=target/release/fdlab
timeout 60 $B check --backend cuda --strategy qmarch-12x3-r3-c5-v1-t2aw --strategy qmarch-8x3-r2-c6-v2-t1aw \
  --json $OUT/check-warp2.json > $OUT/check-warp2.log 2>&1; echo "check rc=$?"; tail -1 $OUT/check-warp2.log
timeout 90 $B tune --reps 10 --precision f64 --strategy qmarch-32x8-r2-c128-v2-t2a --strategy qmarch-32x8-r2-c128-v2-t2aw \
  --strategy qmarch-32x16-r2-c128-v2-t2a --strategy qmarch-32x16-r2-c128-v2-t2aw \
  --json $OUT/tune-warp2-f64.json > $OUT/tune-warp2-f64.log 2>&1; echo "tune f64 rc=$?"
timeout 70 $B tune --reps 10 --precision f32 --strategy qmarch-16x16-r2-c64-v4-t2a --strategy qmarch-16x16-r2-c64-v4-t2aw \
  --strategy qmarch-16x32-r2-c64-v4-t2aw --strategy qmarch-32x16-r2-c64-v4-t2aw \
  --json $OUT/tune-warp2-f32.json > $OUT/tune-warp2-f32.log 2>&1; echo "tune f32 rc=$?"
