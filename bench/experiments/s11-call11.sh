#!/usr/bin/env bash
# Session 11, device call 11 (H100): edge sectors written whole again (smarch -m), the caller's
# edge values now loaded with the step's copies, a whole step before their stores. Conformance
# and sanitizers of the -m entries, tunes A B of lap7 and the d²/dx² probe with and without -m,
# ncu DRAM bytes.
B=target/release/fdlab
nvidia-smi --query-gpu=name,ecc.mode.current --format=csv > $OUT/gpu.txt
M="smarch-8x3-r2-c5-p1-v2-l-m smarch-4x2-r3-c6-p2-v4-m smarch-128x1-r8-c128-p1-v4-l-m smarch-128x1-r8-c64-p1-v4-l-m smarch-256x1-r4-c64-p1-v2-l-m smarch-256x1-r4-c128-p1-v2-l-m smarch-256x1-r4-c128-p1-v4-l-m"
timeout 200 $B check --backend cuda $(for s in $M; do echo --strategy $s; done) --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$?"; tail -1 $OUT/check.log; grep FAIL $OUT/check.log | head -3
args() { for s in $1; do echo --strategy $s --strategy $s-m; done; }
A="smarch-128x1-r8-c64-p1-v4-l smarch-128x1-r8-c128-p1-v4-l smarch-256x1-r4-c64-p1-v2-l smarch-256x1-r4-c128-p1-v2-l"
A1024="smarch-256x1-r4-c128-p1-v4-l smarch-256x1-r4-c64-p1-v2-l"
for round in 1 2; do
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 150 $B tune --reps 20 --suite roofline --suite probes --case lap3d-7pt --case d2x-3pt --size 512 $(args "$A") --json /tmp/m512-r$round.json > /tmp/a.log 2>&1; echo "512 r$round rc=$?"
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 150 $B tune --reps 20 --case lap3d-7pt --size 1024 $(args "$A1024") --json /tmp/m1024-r$round.json > /tmp/b.log 2>&1; echo "1024 r$round rc=$?"
done
python3 - <<PY
import json, collections
t = collections.defaultdict(list); allr = []
for f in ['m512-r1', 'm1024-r1', 'm512-r2', 'm1024-r2']:
    rs = json.load(open('/tmp/%s.json' % f))['results']; allr += rs
    for x in rs:
        if x['time_ms']['median'] > 0 and x['shape'][0] >= 512: t[(x['case'], x['shape'][0], x['precision'], x['strategy'])].append(x['pct_of_copy'])
for k in sorted(t): print('  %-10s %4d %s %-36s %s' % (k[0], k[1], k[2], k[3], ' '.join('%.1f' % p for p in t[k])))
json.dump({'results': allr}, open('$OUT/merge-tunes.json', 'w'), indent=1)
PY
timeout 100 ncu --kill yes --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum -k regex:fdlab_smarch -c 1 $B bench --backend cuda --suite roofline \
  --case lap3d-7pt --size 512 --precision f32 --strategy smarch-128x1-r8-c128-p1-v4-l-m --reps 1 > $OUT/ncu-merge.txt 2>&1; echo "ncu rc=$?"; grep -E "^\s+(dram|gpu|lts)__" $OUT/ncu-merge.txt
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B check --backend cuda --precision f32 \
    --strategy smarch-8x3-r2-c5-p1-v2-l-m --strategy smarch-4x2-r3-c6-p2-v4-m > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|checks passed" /tmp/san-$tool.log | head -3
done
cat /tmp/san-memcheck.log /tmp/san-racecheck.log | grep -vE "^\s*$" | tail -40 > $OUT/sanitizers.log
