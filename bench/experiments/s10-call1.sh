#!/usr/bin/env bash
# Session 10, device call 1 (H100): the queue march's partial-sum ring filled by 1-D bulk row
# copies (`qmarch … -bNa`, periodic images), flat stencils stored on arrival. Conformance of the
# new paths, then a tune (medians of 10, f32, 512³) of bulk-s10.txt against the smarch
# gradient winners and the TMA lap25 winner in the same run.
B=target/release/fdlab
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
timeout 150 $B check --backend cuda \
  --strategy qmarch-12x3-r3-c5-v1-b2a --strategy qmarch-8x3-r2-c6-v2-b3 --strategy qmarch-16x4-r2-c7-v4-b1a \
  --strategy qmarch-12x3-r3-c5-v1-t2a --strategy qmarch-32x8-r1-c128-v4-b2a --strategy qmarch-32x16-r2-c64-v4-b2a \
  --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$?"; tail -9 $OUT/check.log
S=$(sed 's/^/--strategy /' bench/experiments/bulk-s10.txt)
FDLAB_TUNE_CACHE=$OUT/cache.json timeout 330 $B tune --reps 10 --size 512 --precision f32 $S --json $OUT/tune.json > $OUT/tune.log 2>&1; echo "tune rc=$?"
python3 - "$OUT/tune.json" <<'PY'
import json, sys, collections
g = collections.defaultdict(list)
for r in json.load(open(sys.argv[1]))["results"]:
    g[r["case"]].append((r["pct_of_copy"] or 0, r["strategy"], r["checked"]))
for c, v in sorted(g.items()):
    for p, s, k in sorted(v, reverse=True)[:6]:
        print(f"{c:16} {p:6.1f} {s} {'chk' if k else ''}")
PY
