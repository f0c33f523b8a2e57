#!/usr/bin/env bash
# Session 7, device call 3: conformance of the cluster (multicast) strategies under a time
# limit (a protocol error would hang), the lap25 tune over cluster shapes, and ncu DRAM bytes
# of the zigzag d/dz kernel against the upward one.
B=target/release/fdlab
timeout 150 $B check --backend cuda --strategy qmarch-8x3-r2-c6-v2-t1a-m2 --strategy qmarch-12x2-r1-c5-v1-t2a-m3 \
  --json $OUT/check-cluster.json > $OUT/check-cluster.log 2>&1; echo "check rc=$?"; tail -2 $OUT/check-cluster.log
timeout 200 $B tune --reps 10 $(sed 's/^/--strategy /' bench/experiments/cluster-s7.txt) \
  --json $OUT/tune-cluster.json > $OUT/tune-cluster.log 2>&1; echo "tune rc=$?"
grep -E "^roofline +lap3d-25pt" $OUT/tune-cluster.log | tail -4
timeout 120 ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum \
  -k regex:smarch_64x8_r1_c256_p4_v4_b $B bench --backend cuda --suite roofline --precision f32 \
  --strategy smarch-64x8-r1-c256-p4-v4-b --strategy smarch-64x8-r1-c256-p4-v4-b-z --reps 1 > $OUT/ncu-zigzag.txt 2>&1
echo "ncu rc=$?"
