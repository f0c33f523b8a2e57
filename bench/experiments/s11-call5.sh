#!/usr/bin/env bash
# Session 11, device call 5 (H100): (a) the periodic 7-point probe against the interior row,
# same kernels, tunes A B A B (medians of 20), and ncu DRAM bytes of the probe; (b) the whole
# conformance suite on this binary; (c) memcheck and racecheck over the new gradient winner
# (256-wide split pieces) at 272³, where tiles take both the tensor copies and the fallback.
B=target/release/fdlab
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,ecc.mode.current --format=csv > $OUT/gpu.txt
S="--strategy smarch-128x1-r8-c64-p1-v4-l --strategy smarch-128x1-r8-c128-p1-v4-l --strategy smarch-256x1-r8-c64-p1-v2-l --strategy qmarch-128x2-r2-c64-v2 --strategy smarch-256x1-r4-c128-p1-v2-l --strategy smarch-256x1-r4-c64-p1-v2-l"
for round in 1 2; do
  FDLAB_TUNE_CACHE=/tmp/c.json timeout 120 $B tune --reps 20 --case lap3d-7pt --case lap3d-7pt-periodic --size 512 $S --json /tmp/p-r$round.json > /tmp/p.log 2>&1; echo "tune r$round rc=$?"
done
python3 - <<PY
import json, collections
t = collections.defaultdict(list); allr = []
for r in (1, 2):
    rs = json.load(open('/tmp/p-r%d.json' % r))['results']; allr += rs
    for x in rs:
        if x['time_ms']['median'] > 0: t[(x['case'], x['precision'], x['strategy'])].append(x['pct_of_copy'])
for k in sorted(t): print('  %-20s %s %-34s %s' % (k[0], k[1], k[2], ' '.join('%.1f' % p for p in t[k])))
json.dump({'results': allr}, open('$OUT/probe-tunes.json', 'w'), indent=1)
PY
M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
timeout 100 ncu --kill yes --metrics $M -k regex:fdlab_smarch -c 2 $B bench --backend cuda --suite roofline --case lap3d-7pt-periodic --size 512 --precision f32 \
  --strategy smarch-128x1-r8-c128-p1-v4-l --reps 1 > $OUT/ncu-periodic.txt 2>&1; echo "ncu rc=$?"; grep -E "fdlab_|dram__|gpu__time" $OUT/ncu-periodic.txt | tail -4
timeout 300 $B check --backend cuda --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$?"; tail -1 $OUT/check.log; grep -E "FAIL" $OUT/check.log | head -5
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B bench --backend cuda --suite roofline --case gradient-8th --size 272 \
    --strategy qmarch-64x8-r1-c128-v4-w2a-cs --reps 1 > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|gradient" /tmp/san-$tool.log | head -3
done
cat /tmp/san-memcheck.log /tmp/san-racecheck.log > $OUT/sanitizers.log
