#!/usr/bin/env bash
# Session 12, device call 9 (H100): the final binary's roofline run with call 7's cache.
B=target/release/fdlab
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,ecc.mode.current --format=csv > $OUT/gpu-final.txt
cp bench/runs/2026-11-25-h100-roofline-s12/tune-cache.json /tmp/cache.json
FDLAB_TUNE_CACHE=/tmp/cache.json timeout 400 $B bench --backend cuda --suite roofline --reps 20 \
  --json $OUT/roofline-final.json --plot $OUT/roofline-final.png > $OUT/roofline-final.log 2>&1
echo "bench rc=$? after $(( $(date +%s) - t0 )) s"
python3 - $OUT/roofline-final.json <<'PY'
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
