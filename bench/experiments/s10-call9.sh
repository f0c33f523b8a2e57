#!/usr/bin/env bash
# Session 10, device call 9 (H100): is the lap7 f32 512³ gap the last wave's tail? At 512³ every
# block count of the winner's family (64 columns of 512 × 8 points, power-of-two chunks, two
# blocks per SM) leaves the last of its waves 97% full on 132 SMs. At 528³ a 528 × 8 tile
# (smarch-132x1-r8, 66 columns) with 132-plane chunks gives 264 blocks: one full wave of two
# per SM. Same kernel family, same run: 512³ winner vs 528³ tail-free shapes (tune medians of 10).
B=target/release/fdlab
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
for n in 512 528; do
  FDLAB_TUNE_CACHE=/tmp/c$n.json timeout 120 $B tune --reps 10 --size $n --precision f32 \
    --strategy smarch-128x1-r8-c64-p1-v4-l --strategy smarch-128x1-r8-c128-p1-v4-l \
    --strategy smarch-132x1-r8-c132-p1-v4-l --strategy smarch-132x1-r8-c132-p1-v4-l2 --strategy smarch-132x1-r8-c66-p1-v4-l \
    --json $OUT/tail-$n.json > $OUT/tail-$n.log 2>&1; echo "tune $n rc=$?"
  python3 -c "
import json
for r in json.load(open('$OUT/tail-$n.json'))['results']:
    if r['case'] in ('lap3d-7pt', 'zdiff-2pt'): print($n, r['case'], r['strategy'], round(r['pct_of_copy'], 1))
"
done
