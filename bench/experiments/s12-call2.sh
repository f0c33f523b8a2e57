#!/usr/bin/env bash
# Session 12, device call 2 (H100): edge sectors written whole with the caller values copied
# through shared memory (smarch -l -m), with and without a 32-byte L2 fetch granularity. Conformance and sanitizers of the -m entries, tunes
# A B of lap7 (512³ f32/f64, 1024³) and the d²/dx² probe, ncu DRAM bytes.
B=target/release/fdlab
nvidia-smi --query-gpu=name,ecc.mode.current --format=csv > $OUT/gpu.txt
F="smarch-8x3-r2-c5-p1-v2-l-m smarch-4x2-r3-c6-p2-v4-l2-m smarch-128x1-r8-c128-p1-v4-l-m smarch-256x1-r4-c64-p1-v2-l-m smarch-256x1-r4-c128-p1-v2-l-m"
timeout 150 $B check --backend cuda $(for s in $F; do echo --strategy $s; done) --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$?"; tail -1 $OUT/check.log; grep FAIL $OUT/check.log | head -3
args() { for s in $1; do echo --strategy $s --strategy $s-m; done; }
A="smarch-128x1-r8-c64-p1-v4-l smarch-128x1-r8-c128-p1-v4-l smarch-256x1-r4-c64-p1-v2-l smarch-256x1-r4-c128-p1-v2-l"
A1024="smarch-256x1-r4-c128-p1-v4-l smarch-256x1-r4-c64-p1-v2-l"
for round in 1 2; do
  for g in 0 32; do
    if [ $g = 0 ]; then unset FDLAB_L2_FETCH_GRANULARITY; else export FDLAB_L2_FETCH_GRANULARITY=$g; fi
    FDLAB_TUNE_CACHE=/tmp/c.json timeout 120 $B tune --reps 20 --suite roofline --suite probes --case lap3d-7pt --case d2x-3pt --size 512 $(args "$A") --json /tmp/f512-g$g-r$round.json > /tmp/a.log 2>&1; echo "512 g$g r$round rc=$?"
    FDLAB_TUNE_CACHE=/tmp/c.json timeout 100 $B tune --reps 20 --case lap3d-7pt --size 1024 $(args "$A1024") --json /tmp/f1024-g$g-r$round.json > /tmp/b.log 2>&1; echo "1024 g$g r$round rc=$?"
  done
done
unset FDLAB_L2_FETCH_GRANULARITY
python3 - <<PY
import json, collections, glob
t = collections.defaultdict(list); allr = []
for f in sorted(glob.glob('/tmp/f*-g*-r*.json')):
    g = f.split('-g')[1].split('-')[0]
    rs = json.load(open(f))['results']
    for x in rs:
        x['l2_fetch_granularity'] = int(g); allr.append(x)
        if x['time_ms']['median'] > 0: t[(x['case'], x['shape'][0], x['precision'], x['strategy'], g)].append(x['pct_of_copy'])
for k in sorted(t): print('  %-10s %4d %s %-36s g%-3s %s' % (k[0], k[1], k[2], k[3], k[4], ' '.join('%.1f' % p for p in t[k])))
json.dump({'results': allr}, open('$OUT/m-tunes.json', 'w'), indent=1)
PY
M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
for s in smarch-128x1-r8-c128-p1-v4-l smarch-128x1-r8-c128-p1-v4-l-m; do for g in 0 32; do
  if [ $g = 0 ]; then unset FDLAB_L2_FETCH_GRANULARITY; else export FDLAB_L2_FETCH_GRANULARITY=$g; fi
  timeout 60 ncu --kill yes --metrics $M -k regex:fdlab_smarch -c 1 $B bench --backend cuda --suite roofline \
    --case lap3d-7pt --size 512 --precision f32 --strategy $s --reps 1 > /tmp/ncu.txt 2>&1; echo "ncu $s g$g rc=$?"; grep -E "^\s+(dram|gpu|lts)__" /tmp/ncu.txt
  cat /tmp/ncu.txt >> $OUT/ncu.txt
done; done
unset FDLAB_L2_FETCH_GRANULARITY
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B check --backend cuda --precision f32 \
    --strategy smarch-8x3-r2-c5-p1-v2-l-m --strategy smarch-4x2-r3-c6-p2-v4-l2-m > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|checks passed" /tmp/san-$tool.log | head -3
done
cat /tmp/san-memcheck.log /tmp/san-racecheck.log | grep -vE "^\s*$" | tail -40 > $OUT/sanitizers.log
