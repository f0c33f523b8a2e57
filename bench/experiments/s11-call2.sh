#!/usr/bin/env bash
# Session 11, device call 2 (H100): shapes for lap7 f32 512³ that re-read fewer chunk-boundary
# planes from DRAM (smaller tiles, longer chunks, more blocks per SM), and lap7 f64 1024³
# variants; two rounds each (tune medians of 20), case-filtered.
B=target/release/fdlab
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
args() { sed 's/^/--strategy /' $1 | tr '\n' ' '; }
F32=$(args bench/experiments/lap7-f32-512-s11.txt); F64=$(args bench/experiments/lap7-f64-1024-s11.txt)
for round in 1 2; do
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 200 $B tune --reps 20 --case lap3d-7pt --size 512 --precision f32 $F32 --json $OUT/f32-512-r$round.json > $OUT/f32-512-r$round.log 2>&1; echo "f32 r$round rc=$?"
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 200 $B tune --reps 20 --case lap3d-7pt --size 1024 --precision f64 $F64 --json $OUT/f64-1024-r$round.json > /tmp/f64-r$round.log 2>&1; echo "f64 r$round rc=$?"
done
python3 - <<PY
import json, collections
for tag in ['f32-512', 'f64-1024']:
    t = collections.defaultdict(list)
    for r in (1, 2):
        try: rs = json.load(open('$OUT/%s-r%d.json' % (tag, r)))['results']
        except Exception as e: print(tag, r, e); continue
        for x in rs:
            if x['time_ms']['median'] > 0: t[x['strategy']].append(x['pct_of_copy'])
    print(tag)
    for s, v in sorted(t.items(), key=lambda kv: -max(kv[1])):
        print('  %-36s %s' % (s, ' '.join('%.1f' % p for p in v)))
PY
grep -iE "skip|limit|fail" $OUT/f32-512-r1.log | head -10
