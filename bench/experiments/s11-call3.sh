#!/usr/bin/env bash
# Session 11, device call 3 (H100): smarch L2 hints (-e evict-first loads of points no
# neighbour reads, -cs streaming stores). Conformance of the hinted entries first, then tune
# rounds A B A B (medians of 20), then ncu DRAM bytes of plain against -e-cs at 512³ f32.
B=target/release/fdlab
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
timeout 200 $B check --backend cuda --strategy smarch-12x3-r3-c5-p1-l-e-cs --strategy smarch-16x2-r2-c7-p2-v2-l2-cs \
  --strategy smarch-128x1-r8-c64-p1-v4-l-e-cs --strategy smarch-256x1-r4-c64-p1-v2-l-e-cs > $OUT/check.log 2>&1; echo "check rc=$?"; tail -3 $OUT/check.log
W="smarch-128x1-r8-c64-p1-v4-l smarch-128x1-r8-c128-p1-v4-l"
S32=""; for w in $W; do for h in "" -e -cs -e-cs; do S32="$S32 --strategy $w$h"; done; done
S64=""; for h in "" -e -cs -e-cs; do S64="$S64 --strategy smarch-256x1-r4-c64-p1-v2-l$h --strategy smarch-256x1-r4-c128-p1-v2-l$h"; done
for round in 1 2; do
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 120 $B tune --reps 20 --case lap3d-7pt --size 512 --precision f32 $S32 --json /tmp/f32-512-r$round.json > /tmp/a.log 2>&1; echo "f32-512 r$round rc=$?"
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 120 $B tune --reps 20 --case lap3d-7pt --size 1024 --precision f64 $S64 --json /tmp/f64-1024-r$round.json > /tmp/b.log 2>&1; echo "f64-1024 r$round rc=$?"
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 120 $B tune --reps 20 --case lap3d-7pt --size 512 --precision f64 $S64 --json /tmp/f64-512-r$round.json > /tmp/c.log 2>&1; echo "f64-512 r$round rc=$?"
done
python3 - <<PY
import json, collections
out = {}
for tag in ['f32-512', 'f64-1024', 'f64-512']:
    t = collections.defaultdict(list)
    for r in (1, 2):
        try: rs = json.load(open('/tmp/%s-r%d.json' % (tag, r)))['results']
        except Exception as e: print(tag, r, e); continue
        out['%s-r%d' % (tag, r)] = rs
        for x in rs:
            if x['time_ms']['median'] > 0: t[x['strategy']].append(x['pct_of_copy'])
    print(tag)
    for s, v in sorted(t.items(), key=lambda kv: -sum(kv[1]) / len(kv[1])):
        print('  %-40s %s' % (s, ' '.join('%.1f' % p for p in v)))
json.dump(out, open('$OUT/tunes.json', 'w'))
PY
M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
for s in smarch-128x1-r8-c64-p1-v4-l smarch-128x1-r8-c64-p1-v4-l-e-cs; do
  timeout 100 ncu --kill yes --metrics $M -k regex:fdlab_smarch -c 2 $B bench --backend cuda --suite roofline --case lap3d-7pt --size 512 --precision f32 \
    --strategy $s --reps 1 > $OUT/ncu-$s.txt 2>&1; echo "ncu $s rc=$?"
  grep -E "fdlab_|dram__|gpu__time|lts__" $OUT/ncu-$s.txt | tail -6
done
