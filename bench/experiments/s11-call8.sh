#!/usr/bin/env bash
# Session 11, device call 8 (H100): the final binary's roofline run, the periodic probe row
# included (its cache entry tuned here among the interior row's winners), with call 4's cache.
B=target/release/fdlab
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,ecc.mode.current --format=csv > $OUT/gpu.txt
cp bench/runs/2026-11-25-h100-roofline-s11/tune-cache.json /tmp/cache.json
FDLAB_TUNE_CACHE=/tmp/cache.json timeout 100 $B tune --reps 20 --case lap3d-7pt-periodic --size 512 \
  --strategy smarch-128x1-r8-c128-p1-v4-l --strategy smarch-128x1-r8-c64-p1-v4-l \
  --strategy smarch-256x1-r4-c128-p1-v2-l --strategy smarch-256x1-r4-c64-p1-v2-l > /tmp/t.log 2>&1; echo "tune rc=$?"
cp /tmp/cache.json $OUT/tune-cache.json
FDLAB_TUNE_CACHE=/tmp/cache.json timeout 400 $B bench --backend cuda --suite roofline --reps 20 \
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
