#!/usr/bin/env bash
# Session 10, device call 4 (H100): the final tune over session 8's curated list plus the split-
# slot shapes of calls 2-3 (bench/experiments/final-s10-h100.txt), all roofline cases and sizes,
# medians of 10; the cache comes back for call 5's roofline bench.
B=target/release/fdlab
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.memory,memory.total --format=csv > $OUT/gpu.txt
export FDLAB_TUNE_CACHE=$OUT/tune-cache.json
timeout 560 $B tune --reps 10 $(sed 's/^/--strategy /' bench/experiments/final-s10-h100.txt) \
  --json $OUT/tune.json > $OUT/tune.log 2>&1; echo "tune rc=$? after $(( $(date +%s) - t0 )) s"
python3 - "$OUT/tune-cache.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps(d)[:3000])
PY
