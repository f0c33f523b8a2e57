#!/usr/bin/env bash
# Session 7, device call 6: warp releases (-tNaw): conformance under a time limit, then the
# lap25 tune over block-barrier and warp-release shapes.
B=target/release/fdlab
timeout 150 $B check --backend cuda --strategy qmarch-12x3-r3-c5-v1-t2aw --strategy qmarch-8x3-r2-c6-v2-t1aw \
  --json $OUT/check-warp.json > $OUT/check-warp.log 2>&1; echo "check rc=$?"; tail -1 $OUT/check-warp.log
timeout 200 $B tune --reps 10 $(sed 's/^/--strategy /' bench/experiments/warp-release-s7.txt) \
  --json $OUT/tune-warp.json > $OUT/tune-warp.log 2>&1; echo "tune rc=$?"
