#!/usr/bin/env bash
# Session 12, device call 7 (H100): lap7 re-tuned among its winners ± -e on session 11's
# cache, the final roofline run (median of 20, plot), sanitizers over the -e entries.
B=target/release/fdlab
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,ecc.mode.current --format=csv > $OUT/gpu.txt
cp bench/runs/2026-11-25-h100-roofline-s11/tune-cache-final.json /tmp/cache.json
S=""
for s in smarch-128x1-r8-c64-p1-v4-l smarch-128x1-r8-c128-p1-v4-l smarch-128x1-r8-c128-p1-v4-l2 smarch-256x1-r4-c64-p1-v2-l smarch-256x1-r4-c128-p1-v2-l smarch-256x1-r4-c128-p1-v4-l; do S="$S --strategy $s --strategy $s-e"; done
FDLAB_TUNE_CACHE=/tmp/cache.json timeout 150 $B tune --reps 20 --case lap3d-7pt --size 512 $S --json $OUT/tune-512.json > /tmp/t.log 2>&1; echo "tune 512 rc=$?"
FDLAB_TUNE_CACHE=/tmp/cache.json timeout 150 $B tune --reps 20 --case lap3d-7pt --size 1024 $S --json $OUT/tune-1024.json > /tmp/t2.log 2>&1; echo "tune 1024 rc=$?"
cp /tmp/cache.json $OUT/tune-cache.json
python3 - $OUT/tune-512.json $OUT/tune-1024.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    for x in json.load(open(f))['results']:
        if x['time_ms']['median'] > 0: print('  tune %4d %s %-34s %.1f' % (x['shape'][0], x['precision'], x['strategy'], x['pct_of_copy']))
PY
FDLAB_TUNE_CACHE=/tmp/cache.json timeout 330 $B bench --backend cuda --suite roofline --reps 20 \
  --json $OUT/roofline.json --plot $OUT/roofline.png > $OUT/roofline.log 2>&1
echo "bench rc=$? after $(( $(date +%s) - t0 )) s"
python3 - $OUT/roofline.json <<'PY'
import json, sys
seen = set()
d = json.load(open(sys.argv[1]))
print("copy", round(d["meta"]["copy_gbps"]), d["meta"]["git_sha"])
for r in d["results"]:
    k = (r["case"], r["precision"], tuple(r["shape"]))
    if k in seen: continue
    seen.add(k)
    print(f'{r["case"]:18} {r["precision"]} {"x".join(map(str, r["shape"])):14} {r["pct_of_copy"]:5.1f}% {r["strategy"]} chk={r["checked"]} graph={r.get("graph_us")}')
PY
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $B check --backend cuda --precision f32 \
    --strategy smarch-8x3-r2-c5-p1-v2-l-e --strategy smarch-4x2-r3-c2-p2-v4-l2-e --strategy smarch-12x3-r3-c5-p3-e --strategy smarch-8x3-r2-c5-p1-v2-b-e > /tmp/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|checks passed" /tmp/san-$tool.log | head -3
done
cat /tmp/san-memcheck.log /tmp/san-racecheck.log | grep -vE "^\s*$" | tail -40 > $OUT/sanitizers.log
echo "total $(( $(date +%s) - t0 )) s"
