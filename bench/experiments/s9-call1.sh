#!/usr/bin/env bash
# Session 9, device call 1 (H100): the queue marches unrolled by the queue length with rotated
# register names (no per-plane queue moves). Conformance of every qmarch path on the new
# binary, then an A/B tune (medians of 10) of the same candidates on the old binary (fdlab-base,
# built from 47598d4) and the new one.
B=target/release/fdlab
A=target/release/fdlab-base
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
timeout 170 $B check --backend cuda \
  --strategy qmarch-12x3-r3-c5-v1 --strategy qmarch-8x3-r2-c6-v2 --strategy qmarch-16x4-r2-c7-v4 \
  --strategy qmarch-12x3-r3-c5-v1-t1 --strategy qmarch-8x3-r2-c6-v2-t3 \
  --strategy qmarch-12x3-r3-c5-v1-t2a --strategy qmarch-8x3-r2-c6-v2-t1a \
  --strategy qmarch-32x16-r2-c64-v4-t2a --strategy qmarch-32x8-r2-c64-v4 --strategy qmarch-64x2-r4-c32-v2 \
  --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$?"; tail -4 $OUT/check.log
S=$(sed 's/^/--strategy /' bench/experiments/rotate-s9.txt)
FDLAB_TUNE_CACHE=$OUT/cache-new.json timeout 200 $B tune --reps 10 --size 512 $S --json $OUT/tune-new.json > $OUT/tune-new.log 2>&1; echo "tune new rc=$?"
FDLAB_TUNE_CACHE=$OUT/cache-base.json timeout 180 $A tune --reps 10 --size 512 $S --json $OUT/tune-base.json > $OUT/tune-base.log 2>&1; echo "tune base rc=$?"
grep -E "^roofline +(lap3d|gradient)" $OUT/tune-new.log | sort -k4 -k2 | head -60
