#!/usr/bin/env bash
# Session 10, device call 10 (H100): streaming (evict-first, __stcs) vector stores in the queue
# marches, A/B: .ab/fdlab-a (85a9df4 + tests, plain stores) and .ab/fdlab-b (the same with
# __stcs), tune medians of 10 at 512³ over the split-slot winners, alternating A B A B.
for run in 1 2; do for v in a b; do
  FDLAB_TUNE_CACHE=/tmp/c-$v$run.json timeout 100 .ab/fdlab-$v tune --reps 10 --size 512 \
    --strategy qmarch-32x16-r2-c256-v2-w2a --strategy qmarch-32x16-r1-c128-v4-w2a --strategy qmarch-32x16-r2-c256-v4-w2a \
    --json $OUT/ab-$v$run.json > $OUT/ab-$v$run.log 2>&1; echo "$v$run rc=$?"
done; done
python3 - $OUT <<'PY'
import json, sys, collections
t = collections.defaultdict(dict)
for v in ("a1", "b1", "a2", "b2"):
    for r in json.load(open(f"{sys.argv[1]}/ab-{v}.json"))["results"]:
        if r["case"] in ("gradient-8th", "lap3d-25pt", "d1z-8th", "lap3d-7pt"):
            t[(r["case"], r["precision"], r["strategy"], tuple(r["shape"]))][v] = r["pct_of_copy"]
for k, d in sorted(t.items()):
    print(f"{k[0]:12} {k[1]} {k[2]:30} " + " ".join(f"{v}={d.get(v, 0):5.1f}" for v in ("a1", "b1", "a2", "b2")))
PY
