#!/usr/bin/env bash
# Session 10, device call 11 (H100): streaming stores (-cs) for the gradient: conformance of the
# -cs entries and winner, memcheck/racecheck on the winner, a tune of the gradient's split
# shapes with and without -cs (own cache; the gradient entry of call 4's cache replaced where
# faster), then the roofline bench (median of 20, checked, chart): the final run.
B=target/release/fdlab
D=bench/runs/2026-11-25-h100-roofline-s10
t0=$(date +%s)
$B --version
W="--strategy qmarch-32x16-r1-c128-v4-w2a-cs --strategy qmarch-8x3-r2-c6-v4-w1a-cs --strategy qmarch-16x4-r2-c7-v4-cs"
timeout 120 $B check --backend cuda $W --json $OUT/check-cs.json > $OUT/check-cs.log 2>&1
echo "check -cs rc=$?"; tail -1 $OUT/check-cs.log
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $B check --backend cuda --precision f32 \
    --strategy qmarch-32x16-r1-c128-v4-w2a-cs > $OUT/san-cs-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $OUT/san-cs-$tool.log
done
FDLAB_TUNE_CACHE=$OUT/explore-cache.json timeout 100 $B tune --reps 10 --size 512 --precision f32 \
  --strategy qmarch-32x16-r1-c128-v4-w2a-cs --strategy qmarch-32x16-r2-c256-v2-w2a-cs \
  --strategy qmarch-32x16-r1-c128-v4-w2a --strategy qmarch-32x16-r2-c256-v2-w2a \
  --json $OUT/tune-cs.json > $OUT/tune-cs.log 2>&1; echo "tune rc=$? after $(( $(date +%s) - t0 )) s"
python3 - $D/tune-cache-repeat.json $OUT/explore-cache.json /tmp/tune-cache.json $OUT/tune-cs.json <<'PY'
import json, sys
base, new = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for k, e in new["entries"].items():
    if "d1x/8+d1y/8+d1z/8" in k and k in base["entries"]:
        print("gradient: before", base["entries"][k]["strategy"], round(base["entries"][k]["gbps"]), "| now", e["strategy"], round(e["gbps"]))
        if e["gbps"] > base["entries"][k]["gbps"]:
            base["entries"][k] = e
json.dump(base, open(sys.argv[3], "w"), indent=2)
for r in json.load(open(sys.argv[4]))["results"]:
    if r["case"] in ("gradient-8th", "lap3d-25pt"):
        print(f'{r["case"]:12} {r["pct_of_copy"]:6.1f} {r["strategy"]}')
PY
cp /tmp/tune-cache.json $OUT/tune-cache-final.json
FDLAB_TUNE_CACHE=/tmp/tune-cache.json timeout 330 $B bench --backend cuda --suite roofline --reps 20 \
  --json $OUT/roofline-final.json --plot $OUT/roofline-final.png > $OUT/roofline-final.log 2>&1
echo "bench rc=$? after $(( $(date +%s) - t0 )) s"
python3 - $OUT/roofline-final.json <<'PY'
import json, sys
seen = set()
for r in json.load(open(sys.argv[1]))["results"]:
    k = (r["case"], r["precision"], tuple(r["shape"]))
    if k in seen: continue
    seen.add(k)
    print(f'{r["case"]:12} {r["precision"]} {"x".join(map(str, r["shape"])):14} {r["pct_of_copy"]:5.1f}% {r["strategy"]} chk={r["checked"]}')
PY
