#!/usr/bin/env bash
# Session 7, device call 4: why the cluster (multicast) march is 25% slower: ncu sections of
# the first launch of the plain and the cluster kernel (lap7 f64 512^3, the first roofline
# case), and deeper rings for the cluster kernel.
B=target/release/fdlab
S="--strategy qmarch-32x8-r2-c128-v2-t2a --strategy qmarch-32x8-r2-c128-v2-t2a-m2"
for k in 'qmarch_32x8_r2_c128_v2_t2a_[0-9a-f]' 'qmarch_32x8_r2_c128_v2_t2a_m2_'; do
  timeout 100 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    --section MemoryWorkloadAnalysis -k regex:$k -c 1 $B bench --backend cuda --suite roofline --precision f64 $S --reps 1 \
    > $OUT/ncu-$(echo $k | tr -dc 'a-z0-9_').txt 2>&1
  echo "ncu rc=$?"
done
timeout 150 $B tune --reps 10 --precision f64 --strategy qmarch-32x8-r2-c128-v2-t2a --strategy qmarch-32x8-r2-c128-v2-t3a-m2 \
  --strategy qmarch-32x8-r2-c128-v2-t4a-m2 --strategy qmarch-32x4-r2-c128-v2-t3a-m2 --strategy qmarch-32x4-r2-c128-v2-t2a \
  --json $OUT/tune-cluster-deep.json > $OUT/tune-cluster-deep.log 2>&1; echo "tune rc=$?"
grep -E "^roofline +lap3d" $OUT/tune-cluster-deep.log | tail -4
