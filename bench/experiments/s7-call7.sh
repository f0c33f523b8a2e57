#!/usr/bin/env bash
# Session 7, device call 7: the warp-release tune of call 6 ran past its limit; bench one
# strategy at a time (f64 roofline cases) under a short limit to see which one hangs.
B=target/release/fdlab
for s in qmarch-32x8-r2-c128-v2-t2a qmarch-32x8-r2-c128-v2-t2aw qmarch-32x16-r2-c128-v2-t2aw qmarch-32x16-r2-c128-v2-t2a; do
  timeout 30 $B bench --backend cuda --suite roofline --precision f64 --strategy $s --reps 10 > $OUT/bench-$s.log 2>&1
  echo "$s rc=$?"; grep -E "^roofline +lap3d" $OUT/bench-$s.log | grep -- "$s" | awk '{print $2, $6, $(NF-1)}'
done
