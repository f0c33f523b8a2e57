#!/usr/bin/env bash
# Session 12, device call 6 (H100): the 128 × 8 tiles' -m with and without the write-back
# (FDLAB_EXP_NO_WRITEBACK: the edge reads alone), tunes of lap7 f32 512³ and the d²/dx² probe,
# ncu DRAM reads against L2 misses.
B=target/release/fdlab
nvidia-smi --query-gpu=name,ecc.mode.current --format=csv > $OUT/gpu.txt
S="--strategy smarch-128x1-r8-c128-p1-v4-l --strategy smarch-128x1-r8-c128-p1-v4-l-m --strategy smarch-128x1-r8-c64-p1-v4-l --strategy smarch-128x1-r8-c64-p1-v4-l-m --strategy smarch-128x1-r8-c128-p1-v4-l-m2"
for round in 1 2 3; do
  for wb in 1 0; do
    if [ $wb = 1 ]; then unset FDLAB_EXP_NO_WRITEBACK; else export FDLAB_EXP_NO_WRITEBACK=1; fi
    FDLAB_TUNE_CACHE=/tmp/c.json timeout 100 $B tune --reps 20 --suite roofline --suite probes --case lap3d-7pt --case d2x-3pt --size 512 --precision f32 $S --json /tmp/w$wb-r$round.json > /tmp/a.log 2>&1; echo "wb$wb r$round rc=$?"
  done
done
unset FDLAB_EXP_NO_WRITEBACK
python3 - <<PY
import json, collections, glob
t = collections.defaultdict(list); allr = []
for f in sorted(glob.glob('/tmp/w*-r*.json')):
    wb = f.split('/tmp/w')[1][0]
    for x in json.load(open(f))['results']:
        x['write_back'] = wb == '1'; allr.append(x)
        if x['time_ms']['median'] > 0: t[(x['case'], x['strategy'], 'wb' if wb == '1' else 'reads')].append(x['pct_of_copy'])
for k in sorted(t): print('  %-10s %-36s %-5s %s' % (k[0], k[1], k[2], ' '.join('%.1f' % p for p in t[k])))
json.dump({'results': allr}, open('$OUT/wb-tunes.json', 'w'), indent=1)
PY
M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
for wb in 1 0; do
  if [ $wb = 1 ]; then unset FDLAB_EXP_NO_WRITEBACK; else export FDLAB_EXP_NO_WRITEBACK=1; fi
  timeout 60 ncu --kill yes --clock-control none --metrics $M -k regex:fdlab_smarch -c 1 $B bench --backend cuda --suite roofline \
    --case lap3d-7pt --size 512 --precision f32 --strategy smarch-128x1-r8-c128-p1-v4-l-m --reps 1 > /tmp/ncu.txt 2>&1; echo "ncu wb$wb rc=$?"; grep -E "^\s+(dram|gpu|lts)__" /tmp/ncu.txt
  cat /tmp/ncu.txt >> $OUT/ncu.txt
done
