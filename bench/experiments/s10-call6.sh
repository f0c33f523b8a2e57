#!/usr/bin/env bash
# Session 10, device call 6 (H100): more split-slot shapes for the f32 gradient (tune, medians
# of 10, f32 512³, own cache); the gradient's entry of call 4's cache replaced where one is
# faster; then the roofline bench again (repeat on the same machine, median of 20, checked).
B=target/release/fdlab
D=bench/runs/2026-11-25-h100-roofline-s10
t0=$(date +%s)
S=$(sed 's/^/--strategy /' bench/experiments/gradient-s10.txt)
FDLAB_TUNE_CACHE=$OUT/explore-cache.json timeout 150 $B tune --reps 10 --size 512 --precision f32 $S \
  --json $OUT/tune-gradient.json > $OUT/tune-gradient.log 2>&1; echo "tune rc=$? after $(( $(date +%s) - t0 )) s"
python3 - $D/tune-cache.json $OUT/explore-cache.json /tmp/tune-cache.json $OUT/tune-gradient.json <<'PY'
import json, sys
base, new = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for k, e in new["entries"].items():
    if "d1x/8+d1y/8+d1z/8" in k and k in base["entries"]:
        print("gradient: call 4", base["entries"][k]["strategy"], round(base["entries"][k]["gbps"]), "| call 6", e["strategy"], round(e["gbps"]))
        if e["gbps"] > base["entries"][k]["gbps"]:
            base["entries"][k] = e
json.dump(base, open(sys.argv[3], "w"), indent=2)
for r in sorted(json.load(open(sys.argv[4]))["results"], key=lambda r: -(r["pct_of_copy"] or 0)):
    if r["case"] == "gradient-8th":
        print(f'{r["pct_of_copy"]:6.1f} {r["strategy"]}')
PY
cp /tmp/tune-cache.json $OUT/tune-cache-repeat.json
FDLAB_TUNE_CACHE=/tmp/tune-cache.json timeout 330 $B bench --backend cuda --suite roofline --reps 20 \
  --json $OUT/roofline-repeat.json --plot $OUT/roofline-repeat.png > $OUT/roofline-repeat.log 2>&1
echo "bench rc=$? after $(( $(date +%s) - t0 )) s"
python3 - $OUT/roofline-repeat.json <<'PY'
import json, sys
seen = set()
for r in json.load(open(sys.argv[1]))["results"]:
    k = (r["case"], r["precision"], tuple(r["shape"]))
    if k in seen: continue
    seen.add(k)
    print(f'{r["case"]:12} {r["precision"]} {"x".join(map(str, r["shape"])):14} {r["pct_of_copy"]:5.1f}% {r["strategy"]} chk={r["checked"]}')
PY
