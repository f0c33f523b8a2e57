#!/usr/bin/env bash
# Session 11, device call 10 (H100): which untouched points cost? The probes suite (y–z
# 5-point interior: whole rows; d²/dx² interior: row edges only) beside lap7 interior and its
# periodic twin, same kernels, tunes A B (medians of 20), ncu DRAM reads against L2 misses.
B=target/release/fdlab
nvidia-smi --query-gpu=name,ecc.mode.current --format=csv > $OUT/gpu.txt
S="--strategy smarch-128x1-r8-c128-p1-v4-l --strategy smarch-128x1-r8-c64-p1-v4-l --strategy smarch-256x1-r4-c128-p1-v2-l"
for round in 1 2; do
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 150 $B tune --reps 20 --suite probes --suite roofline --case lap3d-7pt --case lap3d-7pt-periodic \
    --case lap3d-yz-5pt --case d2x-3pt --size 512 $S --json /tmp/r$round.json > /tmp/t$round.log 2>&1; echo "tune r$round rc=$?"; tail -2 /tmp/t$round.log
done
python3 - <<PY
import json, collections
t = collections.defaultdict(list); allr = []
for r in (1, 2):
    rs = json.load(open('/tmp/r%d.json' % r))['results']; allr += rs
    for x in rs:
        if x['time_ms']['median'] > 0 and x['shape'][0] == 512: t[(x['case'], x['precision'], x['strategy'])].append(x['pct_of_copy'])
for k in sorted(t): print('  %-20s %s %-32s %s' % (k[0], k[1], k[2], ' '.join('%.1f' % p for p in t[k])))
json.dump({'results': allr}, open('$OUT/probe-tunes.json', 'w'), indent=1)
PY
M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write.sum
for c in lap3d-yz-5pt d2x-3pt; do
  timeout 100 ncu --kill yes --metrics $M -k regex:fdlab_smarch -c 1 $B bench --backend cuda --suite probes --case $c --size 512 --precision f32 \
    --strategy smarch-128x1-r8-c128-p1-v4-l --reps 1 > $OUT/ncu-$c.txt 2>&1; echo "$c rc=$?"; grep -E "^\s+(dram|gpu|lts)__" $OUT/ncu-$c.txt
done
