#!/usr/bin/env bash
# Session 10, device call 2 (H100): split slots for the partial-sum queue march
# (`qmarch … -wNa`: interior + other-axis halo rows, x halo columns apart, each piece one
# tensor copy that wraps on its own; bulk row copies for tiles cut by a periodic edge).
# Conformance of the new entries and two tuned shapes, memcheck/racecheck on one small one,
# then a tune (medians of 10, f32, 512³) of split-s10.txt against the smarch gradient
# winners and the TMA lap25 winner in the same run.
B=target/release/fdlab
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
timeout 150 $B check --backend cuda \
  --strategy qmarch-32x3-r3-c5-v1-w2a --strategy qmarch-16x4-r2-c7-v2-w3a --strategy qmarch-8x3-r2-c6-v4-w1a \
  --strategy qmarch-32x8-r1-c128-v4-w2a --strategy qmarch-32x16-r2-c64-v4-w2a \
  --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$?"; grep -E "FAIL|checks|error" $OUT/check.log | head -20
S=$(sed 's/^/--strategy /' bench/experiments/split-s10.txt)
FDLAB_TUNE_CACHE=$OUT/cache.json timeout 240 $B tune --reps 10 --size 512 --precision f32 $S --json $OUT/tune.json > $OUT/tune.log 2>&1; echo "tune rc=$?"
python3 - "$OUT/tune.json" <<'PY'
import json, sys, collections
g = collections.defaultdict(list)
for r in json.load(open(sys.argv[1]))["results"]:
    g[r["case"]].append((r["pct_of_copy"] or 0, r["strategy"]))
for c, v in sorted(g.items()):
    if c in ("gradient-8th", "lap3d-25pt", "fanout-3", "lap3d-7pt", "d1z-8th"):
        for p, s in sorted(v, reverse=True)[:8]:
            print(f"{c:14} {p:6.1f} {s}")
PY
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B check --backend cuda --precision f32 \
    --strategy qmarch-32x3-r3-c5-v1-w2a > $OUT/san-$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|checks" $OUT/san-$tool.log | tail -2
done
