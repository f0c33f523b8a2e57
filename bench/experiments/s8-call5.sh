#!/usr/bin/env bash
# Session 8, device call 5 (H100): ncu evidence for the rows still missed on the H100 — DRAM
# bytes read and written against the minimum, L2 bytes, achieved occupancy, issue activity and
# stall reasons — for the winners of calls 1-4, with lap25 f64 (same tile bytes, 94%) as the
# control for lap25 f32 and the fan-out kernel as the control for the gradient. Launches of
# one strategy cover several cases in suite order (lap7, lap25, zdiff, d1x, d1y, d1z,
# gradient, fanout), about five launches each; the hash in the kernel name changes per case.
B=target/release/fdlab
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
prof() { # name precision count strategy
  timeout 150 ncu --metrics $M --section WarpStateStats --section Occupancy -k regex:$(echo $4 | tr '-' '_') -c $3 \
    $B bench --backend cuda --suite roofline --size 512 --precision $2 --strategy $4 --reps 1 > $OUT/ncu-$1.txt 2>&1
  echo "$1 rc=$?"
}
prof lap25-f32 f32 12 qmarch-32x16-r2-c64-v4-t2a
prof lap25-f64 f64 12 qmarch-32x16-r2-c256-v2-t2a
prof lap7-f32 f32 6 smarch-128x1-r8-c128-p1-v4-l2
timeout 200 ncu --metrics $M -k regex:smarch_64x8_r1_c256_p2_v4 -c 60 $B bench --backend cuda --suite roofline --size 512 \
  --precision f32 --strategy smarch-64x8-r1-c256-p2-v4 --reps 1 > $OUT/ncu-gradient.txt 2>&1; echo "gradient rc=$?"
for f in $OUT/ncu-*.txt; do echo "== $f"; grep -E "fdlab_|dram__bytes|gpu__time|warps_active|issue_active|lts__t_bytes" $f | head -60; done
