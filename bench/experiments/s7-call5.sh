#!/usr/bin/env bash
# Session 7, device call 5: the cluster march with block 0's refills deferred (non-blocking
# test of the release barrier, blocking only for the plane needed now): conformance under a
# time limit, then the lap25 tune over base and cluster shapes.
B=target/release/fdlab
timeout 150 $B check --backend cuda --strategy qmarch-8x3-r2-c6-v2-t1a-m2 --strategy qmarch-12x2-r1-c5-v1-t2a-m3 \
  --json $OUT/check-cluster2.json > $OUT/check-cluster2.log 2>&1; echo "check rc=$?"; tail -1 $OUT/check-cluster2.log
timeout 200 $B tune --reps 10 $(sed 's/^/--strategy /' bench/experiments/cluster2-s7.txt) \
  --json $OUT/tune-cluster2.json > $OUT/tune-cluster2.log 2>&1; echo "tune rc=$?"
