#!/usr/bin/env bash
# Session 10, device call 3 (H100): split slots with the periodic whole-tile test fixed (a halo
# piece that straddles the grid's edge takes the bulk path): conformance of the -wNa entries,
# then a tune (medians of 10, 512³, both precisions) around call 2's gradient and lap25 winners.
B=target/release/fdlab
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
timeout 150 $B check --backend cuda \
  --strategy qmarch-32x3-r3-c5-v1-w2a --strategy qmarch-16x4-r2-c7-v2-w3a --strategy qmarch-8x3-r2-c6-v4-w1a \
  --strategy qmarch-16x16-r2-c128-v4-w2a --strategy qmarch-32x16-r2-c128-v4-w2a --strategy qmarch-32x16-r2-c256-v2-w2a \
  --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$?"; grep -E "FAIL|checks|error|differ" $OUT/check.log | head -12
S=$(sed 's/^/--strategy /' bench/experiments/split2-s10.txt)
FDLAB_TUNE_CACHE=$OUT/cache.json timeout 300 $B tune --reps 10 --size 512 $S --json $OUT/tune.json > $OUT/tune.log 2>&1; echo "tune rc=$?"
python3 - "$OUT/tune.json" <<'PY'
import json, sys, collections
g = collections.defaultdict(list)
for r in json.load(open(sys.argv[1]))["results"]:
    g[(r["case"], r["precision"])].append((r["pct_of_copy"] or 0, r["strategy"]))
for c, v in sorted(g.items()):
    if c[0] in ("gradient-8th", "lap3d-25pt", "fanout-3", "d1z-8th"):
        for p, s in sorted(v, reverse=True)[:6]:
            print(f"{c[0]:14} {c[1]} {p:6.1f} {s}")
PY
