#!/usr/bin/env bash
# Next lead for the 25-point Laplacian (bench/NOTES.md, session 7, item 6): L2 bytes, the block
# barrier and occupancy are ruled out; profile the shared-memory side of the TMA partial-sum
# winner (f64 and f32): shared-memory wavefronts and bank conflicts, pipe utilisation, and the
# stall breakdown. The strategy also runs the 7-point cases (its kernels share the name's
# stem, the hash differs), which come first in the suite: profile the first 10 launches and
# read the lap25 ones (the kernel with the 25-point body; `grep -A` on its hash).
B=target/release/fdlab
for s in qmarch-32x8-r2-c128-v2-t2a:f64 qmarch-16x16-r2-c64-v4-t2a:f32; do
  k=${s%%:*}; p=${s##*:}
  timeout 150 ncu --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section SchedulerStats --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum \
    -k regex:$(echo $k | tr '-' '_') -c 10 $B bench --backend cuda --suite roofline --precision $p --strategy $k --reps 1 \
    > $OUT/ncu-shared-$k.txt 2>&1
  echo "$k rc=$?"
done
