#!/usr/bin/env bash
# Session 12, device call 5 (H100): edge halves staged through registers (smarch -l -m), and
# an ablation without the write-back. Conformance and sanitizers of the -m entries, tunes of
# lap7 (512³ f32/f64, 1024³) and the d²/dx² probe, ncu of the f64 256 × 4 tile.
B=target/release/fdlab
nvidia-smi --query-gpu=name,ecc.mode.current --format=csv > $OUT/gpu.txt
F="smarch-8x3-r2-c5-p1-v2-l-m smarch-4x2-r3-c6-p2-v4-l2-m2 smarch-8x2-r3-c2-p1-v2-l-m3 smarch-256x1-r4-c64-p1-v2-l-m smarch-128x1-r8-c64-p1-v4-l-m2"
timeout 150 $B check --backend cuda $(for s in $F; do echo --strategy $s; done) --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$?"; tail -1 $OUT/check.log; grep FAIL $OUT/check.log | head -3
args() { for s in $1; do echo --strategy $s --strategy $s-m --strategy $s-m2; done; }
A="smarch-128x1-r8-c64-p1-v4-l smarch-128x1-r8-c128-p1-v4-l smarch-256x1-r4-c64-p1-v2-l smarch-256x1-r4-c128-p1-v2-l"
A1024="smarch-256x1-r4-c128-p1-v4-l smarch-256x1-r4-c64-p1-v2-l"
for round in 1 2; do
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 160 $B tune --reps 20 --suite roofline --suite probes --case lap3d-7pt --case d2x-3pt --size 512 $(args "$A") --json /tmp/m512-r$round.json > /tmp/a.log 2>&1; echo "512 r$round rc=$?"
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 100 $B tune --reps 20 --case lap3d-7pt --size 1024 $(args "$A1024") --json /tmp/m1024-r$round.json > /tmp/b.log 2>&1; echo "1024 r$round rc=$?"
done
FDLAB_EXP_NO_WRITEBACK=1 FDLAB_TUNE_CACHE=/tmp/c.json timeout 100 $B tune --reps 20 --case lap3d-7pt --size 512 --strategy smarch-256x1-r4-c64-p1-v2-l --strategy smarch-256x1-r4-c64-p1-v2-l-m --strategy smarch-128x1-r8-c128-p1-v4-l --strategy smarch-128x1-r8-c128-p1-v4-l-m --json /tmp/x512-nowb.json > /tmp/c.log 2>&1; echo "nowb rc=$?"
python3 - <<PY
import json, collections, glob
t = collections.defaultdict(list); allr = []
for f in sorted(glob.glob('/tmp/[mx]*-*.json')):
    tag = 'nowb' if 'nowb' in f else ''
    rs = json.load(open(f))['results']
    for x in rs:
        x['ablation'] = tag; allr.append(x)
        if x['time_ms']['median'] > 0: t[(x['case'], x['shape'][0], x['precision'], x['strategy'], tag)].append(x['pct_of_copy'])
for k in sorted(t): print('  %-10s %4d %s %-36s %-4s %s' % (k[0], k[1], k[2], k[3], k[4], ' '.join('%.1f' % p for p in t[k])))
json.dump({'results': allr}, open('$OUT/m-tunes.json', 'w'), indent=1)
PY
for s in smarch-256x1-r4-c64-p1-v2-l smarch-256x1-r4-c64-p1-v2-l-m; do
  timeout 90 ncu --kill yes --clock-control none --section WarpStateStats --section SpeedOfLight --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum -k regex:fdlab_smarch -c 1 $B bench --backend cuda --suite roofline \
    --case lap3d-7pt --size 512 --precision f64 --strategy $s --reps 1 > /tmp/ncu.txt 2>&1; echo "ncu $s rc=$?"
  grep -E "Duration|dram__bytes|lts__|Warp Cycles Per Issued|Memory Throughput|Active Threads|spends" /tmp/ncu.txt | head -20
  cat /tmp/ncu.txt >> $OUT/ncu.txt
done
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B check --backend cuda --precision f32 \
    --strategy smarch-8x3-r2-c5-p1-v2-l-m --strategy smarch-4x2-r3-c6-p2-v4-l2-m2 --strategy smarch-8x2-r3-c2-p1-v2-l-m3 > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|checks passed" /tmp/san-$tool.log | head -3
done
cat /tmp/san-memcheck.log /tmp/san-racecheck.log | grep -vE "^\s*$" | tail -40 > $OUT/sanitizers.log
