#!/usr/bin/env bash
# Session 12, device call 10 (H100): lap7 f64 re-tuned with the 128 × 8 thread shape ± -e
# beside the 256 × 4 winners (on call 7's cache), then the roofline bench again.
B=target/release/fdlab
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,ecc.mode.current --format=csv > $OUT/gpu-b.txt
cp bench/runs/2026-11-25-h100-roofline-s12/tune-cache.json /tmp/cache.json
S=""
for s in smarch-128x1-r8-c64-p1-v2-l smarch-128x1-r8-c128-p1-v2-l smarch-256x1-r4-c64-p1-v2-l smarch-256x1-r4-c128-p1-v2-l; do S="$S --strategy $s --strategy $s-e"; done
for n in 512 1024; do
  FDLAB_TUNE_CACHE=/tmp/cache.json timeout 100 $B tune --reps 20 --case lap3d-7pt --precision f64 --size $n $S --json $OUT/tune-f64-$n.json > /tmp/t.log 2>&1; echo "tune $n rc=$?"
done
cp /tmp/cache.json $OUT/tune-cache-b.json
python3 - $OUT/tune-f64-512.json $OUT/tune-f64-1024.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    for x in json.load(open(f))['results']:
        if x['time_ms']['median'] > 0: print('  tune %4d %s %-34s %.1f' % (x['shape'][0], x['precision'], x['strategy'], x['pct_of_copy']))
PY
FDLAB_TUNE_CACHE=/tmp/cache.json timeout 330 $B bench --backend cuda --suite roofline --reps 20 \
  --json $OUT/roofline-b.json --plot $OUT/roofline-b.png > $OUT/roofline-b.log 2>&1
echo "bench rc=$? after $(( $(date +%s) - t0 )) s"
python3 - $OUT/roofline-b.json <<'PY'
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
